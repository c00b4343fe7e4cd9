#pragma once
/// @file
/// Choosing a conveyor's layout under a memory limit: the route (tensor order and group
/// size, a mesh, or the bulk-synchronous all-to-all), the buffer capacity and the buffers
/// per link, with the memory each choice costs. This is bale's convey_new / convey_new_elastic
/// / biconvey_new choice (Maley & DeVinney 2019, sec. 4.3, 4.6; bale's convey_parameters) in
/// one place, used by the C façade and available to C++ users.
///
/// The decision (choose_layout) is pure: the machine and the settings come in
/// layout_inputs, and the route plans' cost is measured through a layout_meter (collective
/// over MPI, or over every rank of a plan without MPI, for tests and tools). A tuning-file
/// entry can drive it through layout_inputs::preferred.
#include <mpi.h>

#include <convoy/aggregation/packing.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/termination/conveyor_options.hpp>
#include <convoy/topology/machine.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace convoy::termination {

/// The bytes of header the engine adds to every buffer (aggregation::buffer_header).
inline constexpr std::size_t buffer_header_bytes = aggregation::header_bytes;

/// The group size of bale's tensor routes when the caller gives none (API-1): the greatest
/// common divisor of the node sizes, so that a group of n_local consecutive ranks never
/// straddles two nodes; 1 if some node's ranks are not consecutive (cyclic placement).
/// Ragged nodes (3,3,2) give 1, (4,2) give 2, equal nodes (4,4) give 4. Always divides
/// the rank count.
[[nodiscard]] std::size_t node_group_size(const topology::machine& m);

/// The kinds a generic constructor chooses among.
enum class layout_kind {
  tensor,  ///< bale's tensor routes of order 1-3 over the engine
  mesh,    ///< a mesh route over the engine (CONVOY_MESH)
  bulk     ///< bale's simple conveyor: one buffer per rank, all-to-all exchange
};
[[nodiscard]] const char* to_string(layout_kind k) noexcept;

/// A route (kind, order, n_local, mesh) and the bytes its built engine used beyond the
/// buffer model: route and tag tables, loopback buffers (API-8).
struct route_extra {
  layout_kind kind = layout_kind::tensor;
  int order = 1;
  std::size_t n_local = 1;
  std::string mesh;
  std::size_t bytes = 0;
};

/// What the caller asks for.
struct layout_request {
  std::size_t max_bytes = SIZE_MAX;  ///< buffer memory per rank at most (SIZE_MAX: no limit)
  std::size_t n_local = 0;     ///< tensor group size; 0: CONVEY_NLOCAL, else node_group_size()
  bool elastic = false;        ///< items of any size up to item_bound (never bulk)
  std::size_t item_bound = 0;  ///< elastic: largest item; two buffers of it when > payload_bytes
  bool allow_bulk = true;      ///< the bulk kind may be chosen (rigid items only)
  std::size_t max_payload_bytes = 0;  ///< largest payload_bytes to consider (0: none)
  /// Bytes that built engines used beyond the buffer model, per route (choose_and_build
  /// measures them): added to that route's model, so that a route whose fixed costs alone
  /// exceed the limit gives way to one that fits.
  std::vector<route_extra> measured_extra;
};

/// A chosen layout and what it costs.
struct layout_plan {
  layout_kind kind = layout_kind::tensor;
  int order = 1;                  ///< tensor: 1..3; mesh: 0
  std::size_t n_local = 1;        ///< tensor group size (1 for order 1)
  std::string mesh;               ///< mesh: the spec
  std::size_t payload_bytes = 0;  ///< bytes of records per buffer: buffer_bytes less the header
                                  ///< (bale's `capacity`)
  int n_buffers = 2;              ///< buffers per link
  /// Modelled buffer memory on the worst rank: router::link_buffer_bytes of that rank,
  /// plus two item_bound buffers for elastic items larger than a buffer; bulk:
  /// bulk_memory_bytes().
  std::size_t memory_bytes = 0;
  std::string note;  ///< why the request was adjusted (e.g. an n_local that does not divide)
  /// The note is about a setting the user gave (CONVEY_NLOCAL): shown even when the caller
  /// did not ask for alerts, since a setting never passes silently.
  bool note_is_warning = false;
  /// The settings the choice was made under (the collective choose_layout and
  /// choose_and_build set them; null otherwise): options() hands them on, so that the
  /// conveyor built from this layout does not resolve them again.
  std::shared_ptr<const base::settings> settings;

  /// The conveyor options of this layout (tensor_order, n_local, mesh, buffer_bytes with
  /// header, n_buffers, settings; bulk: the bulk kind and its per-rank buffer_bytes); the
  /// caller adds steady, elastic, dynamic, buffers.
  [[nodiscard]] conveyor_options options() const;
};

/// The inputs besides the request: the ranks, their nodes, the settings, a preferred layout.
struct layout_inputs {
  int n_ranks = 1;
  /// node_group_size() of the machine: the group size when neither the request nor
  /// CONVEY_NLOCAL gives one.
  std::size_t node_group = 1;
  /// CONVEY_NLOCAL, CONVEY_BUFFER_SIZE, CONVOY_MESH.
  convoy::base::settings settings;
  /// The engine's default buffer bytes, header included, for when CONVEY_BUFFER_SIZE is
  /// unset (resolve_engine_options: CONVOY_BUFFER_BYTES, the tuning file, 16384).
  std::size_t engine_buffer_bytes = base::default_buffer_bytes;
  /// Tried first, as is, when it fits the request (a tuning-file entry naming the
  /// measured-fastest layout). Its memory_bytes is recomputed.
  std::optional<layout_plan> preferred;
};

/// The worst rank of a candidate's route plan: the plan and the rank with the most links
/// (ties: the lowest rank).
struct metered_plan {
  std::shared_ptr<const router::route_plan> plan;
  int worst_rank = 0;
};
/// Builds the route plan of a candidate (its kind, order, n_local, mesh) and finds its
/// worst rank. Throws convoy::error on an invalid candidate.
using layout_meter = std::function<metered_plan(const layout_plan& candidate)>;

/// Collective over `comm`: make_plan (under `settings`, else rank 0's resolved for each
/// candidate), then router::link_count on every rank and an MPI_Allreduce (MAXLOC) for the
/// worst.
[[nodiscard]] layout_meter collective_meter(MPI_Comm comm,
                                            std::shared_ptr<const base::settings> settings = {});
/// No MPI: plans over the ranks of `m` (tensor plans, or meshes built from `m`), every
/// rank counted.
[[nodiscard]] layout_meter machine_meter(const topology::machine& m);

/// Bytes of the bulk kind's buffers: one send and one receive buffer per rank, each
/// rounded up to 64 bytes (bale's simple conveyor).
[[nodiscard]] std::size_t bulk_memory_bytes(std::size_t capacity, std::size_t n_ranks) noexcept;

/// Up to this many ranks the layout choice tries the fewest hops first (API-8): with few
/// ranks every link's buffers fill and a second hop saves no message (the bench kinds
/// tensor1..3 measure the orders, bench/README.md). Beyond it bale's order, most hops first
/// (fewer peers, fuller buffers: Wesolowski et al. 2014, sec. V), until a tuning file says
/// otherwise.
inline constexpr int direct_first_ranks = 8;

/// The choice (API-2). Routes (Maley & DeVinney 2019, sec. 4.3): a mesh if CONVOY_MESH is set; else
/// the tensor orders that apply — order 3 when the group is proper (1 < n_local < P) and the middle
/// dimension P / n_local^2 is at least sqrt(n_local), order 2 when the group is proper, order 1
/// always — fewest hops first up to direct_first_ranks ranks, most hops first beyond. The capacity
/// is CONVEY_BUFFER_SIZE, else the engine's resolved default (less its header), at most
/// max_payload_bytes. With max_bytes < SIZE_MAX it is a hard limit: fewer buffers per link
/// (2, then 1), then the next route in that order, then halved capacities down to 32
/// bytes (64 elastic), the bulk kind being tried at each capacity when allowed; the first
/// candidate whose memory fits is returned. Without a limit nothing is metered
/// (memory_bytes 0) and the first route is returned. Throws convoy::error naming max_bytes if
/// none fits, or naming an invalid setting.
[[nodiscard]] layout_plan choose_layout(const layout_request& request, const layout_inputs& inputs,
                                        const layout_meter& meter);

/// Collective over `comm`: choose_layout over rank 0's settings, the discovered machine
/// (only when the group size comes from it) and the collective meter.
[[nodiscard]] layout_plan choose_layout(MPI_Comm comm, const layout_request& request);

/// Collective over `comm`: chooses a layout and calls `build(plan)`, which builds the
/// conveyor (keeping it) and returns the memory it measures on this rank
/// (max_memory_bytes). While the worst rank's measured memory exceeds max_bytes (the
/// engine's fixed costs beyond the model: loopback buffers, first-hop table, staging),
/// the capacity is shrunk in proportion and the choice and the build run again, at most
/// six times. Returns the plan built last. Throws convoy::error if nothing fits.
layout_plan choose_and_build(MPI_Comm comm, const layout_request& request,
                             const std::function<std::size_t(const layout_plan&)>& build);

}  // namespace convoy::termination
