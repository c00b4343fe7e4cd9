#pragma once
// The trace recorder's set-up over MPI (termination/README.md, TERM-17): rank 0's
// directory checked once, the conveyor's index, and every rank's clock offset to rank 0.
// Private to termination/.
#include <mpi.h>

#include <convoy/base/settings.hpp>
#include <convoy/termination/trace.hpp>

namespace convoy::termination::detail {

/// Collective over `comm`. Off (an empty dir) unless rank 0's settings name CONVOY_TRACE.
/// Rank 0 creates the directory if needed and checks that it can write a file there; if not,
/// every rank throws the same convoy::error ("CONVOY_TRACE='<dir>': ..."). On: every rank gets
/// rank 0's directory and event count, the conveyor's index (the first whose rank-0 file does
/// not exist in the directory yet; rank 0 reserves it by creating that file) and its clock
/// offset to rank 0, measured by ping-pongs on a duplicate of `comm` (the best of 5 round trips
/// per rank; the error bound is half of it). Off costs one MPI_Bcast.
[[nodiscard]] termination::trace_options make_trace_options(MPI_Comm comm, const base::settings& s);

}  // namespace convoy::termination::detail
