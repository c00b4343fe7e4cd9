#pragma once
// Building engines in two steps, so that a conveyor agrees on its buffers once per
// construction and builds as many engines as it needs over that agreement (a DYNAMIC
// conveyor builds one at every begin). Private to the core; the public builders
// (conveyor_options.hpp: make_mpi_engine, make_bulk_engine) are these two steps in a row.
#include <mpi.h>

#include <convoy/base/settings.hpp>
#include <convoy/termination/conveyor_options.hpp>
#include <convoy/termination/engine.hpp>
#include <memory>

namespace convoy::termination::detail {

/// The engine's item mode for `o.kind`: elastic, broadcast, or rigid for the others.
/// Throws convoy::error for a combining kind without `o.combine`, or `o.combine` on a kind
/// that does not combine (bulk, elastic, broadcast).
[[nodiscard]] termination::item_mode item_mode_of(const conveyor_options& o);

/// resolve_engine_options(o, s) made the same on every rank of `comm` (collective: one
/// MPI_Bcast): the buffer size and count (a receive buffer holds a whole sent buffer; the
/// bulk kind's MPI_Alltoallv counts need one size) and the watchdog's period and mode (its
/// board is collective). Rank 0's values win where `o` differs between ranks.
[[nodiscard]] termination::engine_options agreed_engine_options(MPI_Comm comm,
                                                                const conveyor_options& o,
                                                                const base::settings& s);

/// An engine over MPI with options agreed before (agreed_engine_options over the same
/// `o`, `s` and `comm`): the status board, trace set-up, transport and engine; collective.
[[nodiscard]] std::unique_ptr<termination::engine> build_mpi_engine(
    MPI_Comm comm, std::shared_ptr<const router::route_plan> plan, const conveyor_options& o,
    const base::settings& s, termination::engine_options agreed,
    const transport_factory& make_transport = {});

}  // namespace convoy::termination::detail
