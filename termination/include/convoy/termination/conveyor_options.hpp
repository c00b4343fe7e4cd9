#pragma once
/// @file
/// How a conveyor is laid over the ranks and buffered (conveyor_options), and the
/// collective builders that turn options into a route plan and an engine of each kind over
/// MPI: the conveyor core's factory (termination/README.md, "The conveyor core"). The C++
/// API names all of this in convoy's top namespace (conveyor_api/options.hpp).
/// Settings precedence: explicit option > environment (base/settings.hpp) > tuning file
/// > built-in default.
#include <mpi.h>

#include <convoy/aggregation/codec.hpp>
#include <convoy/aggregation/compressing_transport.hpp>
#include <convoy/aggregation/transport.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/termination/bulk_engine.hpp>
#include <convoy/termination/elastic_engine.hpp>
#include <convoy/termination/engine.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace convoy::termination {

/// Builds the transport of an engine on `comm` for `plan` (collective).
using transport_factory = std::function<std::unique_ptr<aggregation::transport>(
    MPI_Comm comm, const std::shared_ptr<const router::route_plan>& plan)>;

/// How a conveyor moves its items (conveyor_api/README.md, API-18, API-21).
enum class conveyor_kind {
  /// The streaming engine (termination/engine.hpp): items travel hop by hop along the
  /// route plan (mesh or tensor) as buffers fill; advance is local (Maley & DeVinney 2019,
  /// sec. 4.2-4.3).
  streaming,
  /// Bulk-synchronous (bale's simple conveyor, Maley & DeVinney 2019, sec. 4.1): one buffer per
  /// rank,
  /// exchanged all at once by MPI_Alltoallv; advance is collective while WORKING or
  /// ENDGAME. Rigid items only. Ignores the route fields (mesh, dim_order, tensor_order,
  /// n_local), n_buffers and steady_period; buffer_bytes is one per-rank buffer.
  bulk,
  /// Elastic items of any size up to `item_bound` (elastic_engine; Maley & DeVinney 2019,
  /// sec. 4.4.1): an item that fits a buffer travels in the streaming engine, a larger one
  /// sends a ticket there and its bytes through a large-item channel (CONVOY_LARGE). Always
  /// elastic and steady. Route fields as the streaming kind. Never combines.
  elastic,
  /// Broadcast (termination/README.md, BCAST-1..8): the streaming engine with every item
  /// sent by broadcast() to every rank, the sender included, along a tree over the mesh;
  /// push() returns error_mode. Rigid items, a mesh or tensor order 1 or 2 (tensor order 3
  /// throws). With `dim_order` empty the mesh's stages run outermost dimension first (node
  /// first): a copy crosses to each other node once, then spreads on the node (API-91).
  /// Never combines. broadcaster<T> builds it.
  broadcast,
  /// The streaming kind combining from its first cycle (TERM-20..27): `combine` must be
  /// set (else the constructor throws); set_combine turns it off and on between cycles as
  /// on the streaming kind. combining_conveyor<K, V, Op> builds it.
  combining,
};
/// "streaming", "bulk", "elastic", "broadcast", "combining".
[[nodiscard]] const char* to_string(conveyor_kind kind) noexcept;

/// How a conveyor is laid over the ranks and buffered. Zero/empty fields take their value
/// from the settings (base::settings: CONVOY_MESH, CONVOY_BUFFER_BYTES, CONVOY_N_BUFFERS,
/// then the tuning file, CONVOY_TUNE_FILE), else the built-in defaults.
struct conveyor_options {
  /// How items move (streaming by default): the one field that selects the engine and
  /// what its items are.
  conveyor_kind kind = conveyor_kind::streaming;
  /// Mesh spec ("auto", "node,core", "8x4x2", ...; see base/README.md). Used unless
  /// tensor_order is set. Empty: CONVOY_MESH, else the tuning file's mesh, else "auto".
  std::string mesh;
  /// Stage order over the mesh dimensions (empty: innermost first, Wesolowski et al. 2014, sec.
  /// V.C).
  std::vector<int> dim_order;
  /// 1, 2 or 3: bale's tensor routing (Maley & DeVinney 2019, sec. 4.3.1) instead of a mesh.
  int tensor_order = 0;
  /// Tensor group size; 0: node_group_size() of the discovered machine (layout_choice.hpp).
  int n_local = 0;
  /// Bytes per buffer, header included (0: setting or 16384; the broadcast kind without a
  /// setting: broadcast_buffer_bytes); bulk: per-rank buffer.
  std::size_t buffer_bytes = 0;
  int n_buffers = 0;      ///< buffers per link (0: setting or 2)
  bool steady = false;    ///< never hold an item indefinitely (Maley & DeVinney 2019, sec. 3.6)
  int steady_period = 1;  ///< advance() calls a partly filled buffer may wait
  /// The elastic kind: largest item accepted; 0: the largest that fits a buffer.
  std::size_t item_bound = 0;
  /// The engine, and so every link buffer, exists only from begin() to reset() (bale's
  /// convey_opt_DYNAMIC); untyped_conveyor builds it at begin and drops it at reset.
  bool dynamic = false;
  /// Allocator hook: the link buffers that go through MPI come from here, one collective
  /// grab per engine (aggregation/README.md, AGG-11). Null: the transports allocate.
  std::shared_ptr<aggregation::buffer_source> buffers;
  /// The transport (e.g. a decorator over the MPI transport). Empty:
  /// aggregation::make_transport with CONVOY_TRANSPORT and `buffers`. Streaming only.
  transport_factory make_transport;
  /// Compression (Maley & DeVinney 2019, sec. 3.6): buffers on links that leave the node go through
  /// this codec — aggregation::compressing_transport around the transport, told the cycle's rigid
  /// item size by the engine (elastic items are never compressed); bulk: the exchange's buffers to
  /// other nodes (aggregation::bulk_exchange). Null: none. E.g.
  /// std::make_shared<aggregation::standard_codec>(). Every rank uses the same codec.
  std::shared_ptr<aggregation::codec> codec;
  /// Sees every compressing transport built for `codec` (dynamic conveyors: one per
  /// begin), e.g. to read its statistics or change its codec. Optional; streaming only.
  std::function<void(aggregation::compressing_transport&)> on_compressing;
  /// The hang watchdog (termination/README.md, TERM-15): seconds a rank may spend in a
  /// cycle without progress before one rank prints a diagnosis naming the likely culprit.
  /// 0: CONVOY_WATCHDOG (default off); negative: off whatever the setting. Streaming and
  /// elastic engines; the bulk kind, whose advance is collective, has none (a positive value
  /// throws there; the setting is ignored).
  double watchdog_seconds = 0;
  /// Abort the job (MPI_Abort, non-zero exit) after the diagnosis; also CONVOY_WATCHDOG_ABORT=1.
  bool watchdog_abort = false;
  /// Combining (termination/README.md, TERM-20..24): where each item keeps its key and its
  /// value, and the fold; updates with equal destination and key are merged while they
  /// wait in a send buffer. `fn` null: off. The combining kind needs it, the streaming kind
  /// may have it; the bulk, elastic and broadcast kinds throw when it is set.
  /// combining_conveyor<K, V, Op> sets it.
  aggregation::combine_spec combine;
  /// Entries of the hold-back cache in front of each combining out-link that leaves the
  /// node (TERM-27): hot keys fold across buffers; 12 + item bytes each (rounded up to 8),
  /// per such link. 0: none. Unset: CONVOY_COMBINE_CACHE, else each such link gets up to
  /// base::default_combine_cache_entries as a rank's caches fit in
  /// base::default_combine_cache_budget.
  std::optional<std::size_t> combine_cache_entries;
  /// Settings resolved before (base::settings::from_env(comm): rank 0's environment and
  /// tuning file, the same on every rank) for the zero fields above; null: the builders
  /// below resolve them (collective). untyped_conveyor keeps here the ones it resolved, so
  /// that its dynamic engines are built under the same settings as the first.
  std::shared_ptr<const base::settings> settings;
};

/// Builds the route plan described by `options` for the ranks of `comm` (collective:
/// runs topology discovery) with the settings `s` (base::settings::from_env(comm)).
/// Throws convoy::error on an invalid mesh or tensor setting.
std::shared_ptr<const router::route_plan> make_plan(MPI_Comm comm, const conveyor_options& options,
                                                    const base::settings& s);
/// As above with options.settings, else resolving the settings first (collective).
std::shared_ptr<const router::route_plan> make_plan(MPI_Comm comm, const conveyor_options& options);
/// Resolves zero fields of `options` against the settings `s` and the defaults. Pure.
/// buffer_bytes stays 0 for the broadcast kind when neither options nor settings give one:
/// the engine's builder sets broadcast_buffer_bytes of its plan.
termination::engine_options resolve_engine_options(const conveyor_options& options,
                                                   const base::settings& s);
/// The broadcast kind's default buffer at most (BCAST-8), and the bytes a rank's send
/// buffers (its lanes: Σ_d (s_d - 1) out-links and the loopback, times n_buffers) may take
/// in all under that default.
inline constexpr std::size_t broadcast_buffer_bytes_max = std::size_t{256} << 10;
inline constexpr std::size_t broadcast_buffer_budget = std::size_t{4} << 20;
/// The broadcast kind's default buffer (BCAST-8): the largest power of two from
/// base::default_buffer_bytes up to broadcast_buffer_bytes_max whose lanes × n_buffers fit
/// in broadcast_buffer_budget (the lanes from the plan's mesh sizes, else rank 0's peers).
[[nodiscard]] std::size_t broadcast_buffer_bytes(const router::route_plan& plan, int n_buffers);
/// An engine over MPI for the calling rank of `comm` (collective). The transport comes
/// from `make_transport`, else options.make_transport, else aggregation::make_transport
/// with CONVOY_TRANSPORT and options.buffers (shared memory on the node, MPI point-to-point
/// off it); with options.codec it is wrapped by a compressing transport (off-node links). Uses
/// options.settings, else resolves the settings once (base::settings::from_env) for the
/// plan and the engine. Throws convoy::error.
std::unique_ptr<termination::engine> make_mpi_engine(MPI_Comm comm, const conveyor_options& options,
                                                     const transport_factory& make_transport = {});
/// As above over a plan built before (e.g. by make_plan, once for several engines: no
/// topology discovery). Throws convoy::error if the plan does not span `comm`.
std::unique_ptr<termination::engine> make_mpi_engine(MPI_Comm comm,
                                                     std::shared_ptr<const router::route_plan> plan,
                                                     const conveyor_options& options,
                                                     const transport_factory& make_transport = {});
/// As above with settings resolved before (base::settings::from_env(comm)): no settings
/// collective.
std::unique_ptr<termination::engine> make_mpi_engine(MPI_Comm comm,
                                                     std::shared_ptr<const router::route_plan> plan,
                                                     const conveyor_options& options,
                                                     const base::settings& s,
                                                     const transport_factory& make_transport = {});
/// The bulk kind of `options` (conveyor_kind::bulk) on `comm`, collective: an exchange of
/// buffer_bytes per rank (else the settings' buffer bytes; rank 0's value), its buffers
/// from options.buffers, options.codec on the buffers to other nodes; steady and dynamic
/// as options says. The one construction path of untyped_conveyor's bulk kind and the C
/// façade's simple conveyors. Throws convoy::error (another kind, combine or make_transport set,
/// MPI).
std::unique_ptr<bulk_engine> make_bulk_engine(MPI_Comm comm, const conveyor_options& options,
                                              const base::settings& s);
/// As above, resolving the settings first (collective).
std::unique_ptr<bulk_engine> make_bulk_engine(MPI_Comm comm, const conveyor_options& options);

}  // namespace convoy::termination
