#pragma once
/// @file
/// One simulated run of convoy-sim: a machine, a route plan, a workload and a cost model in;
/// counts, predicted time and memory out (tools/sim/README.md). The engines are the
/// library's own (termination::engine) over aggregation::timed_network.
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/router/route_plan.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim_bound.hpp"
#include "sim_link_counts.hpp"
#include "sim_model.hpp"
#include "sim_workload.hpp"

namespace convoy::sim {

/// The machine: ranks placed on nodes and sockets, as the topology module emulates them.
struct machine_config {
  int ranks = 0;                ///< 0: the product of a Cartesian --mesh
  std::vector<int> node_sizes;  ///< ranks per node (ragged allowed); empty: one node
  int ranks_per_node = 0;       ///< alternative to node_sizes (last node takes the rest)
  int sockets_per_node = 1;     ///< ranks of a node split over this many sockets
  bool cyclic = false;          ///< ranks go round-robin over nodes (mpirun --map-by node)
};

/// The route plan, from the same options as the library (conveyor_options).
struct plan_config {
  std::string mesh = "auto";   ///< mesh spec (base::parse_mesh_spec)
  std::vector<int> dim_order;  ///< stage order over the mesh dimensions
  int tensor = 0;              ///< 1, 2, 3: bale's tensor routes instead of a mesh
  int n_local = 0;             ///< tensor 2 and 3: local group (0: ranks of node 0)
};

/// Where the timed network keeps link buffers (aggregation::buffer_memory; the results do
/// not depend on it): `automatic` takes heap above heap_above_ranks ranks, else pages.
enum class buffer_memory_choice { pages, heap, automatic };
inline constexpr int heap_above_ranks = 4096;

struct run_config {
  machine_config machine;
  plan_config plan;
  std::size_t buffer_bytes = base::default_buffer_bytes;
  int n_buffers = 2;
  workload_kind workload = workload_kind::uniform;
  std::uint64_t items_per_rank = 1000;  ///< not for workload_kind::traffic
  std::string traffic_file;             ///< workload_kind::traffic: the matrix (README)
  /// workload_kind::traffic without a file: the matrix itself (a replay's estimate).
  std::shared_ptr<const traffic_matrix> traffic;
  /// Count every link's items, bytes and full/partial buffers (run_result::links).
  bool count_links = false;
  std::size_t item_bytes = 8;
  int batch = 64;  ///< items a rank pushes per step before it advances
  std::uint64_t seed = 1;
  int route_table_max_ranks = 4096;
  /// FIFO per pair is checked when ranks × items_per_rank is at most this (SIM-1).
  std::uint64_t fifo_check_max_items =
      std::uint64_t{1} << 23;  ///< engine_options: per-rank first-hop table up to this P
  cost_model model = cost_model::defaults();
  buffer_memory_choice buffer_memory = buffer_memory_choice::pages;
  /// Called now and then during the run with the items (queries) pulled so far on any rank
  /// and the items of the whole run (convoy-sim's progress line); may be empty.
  std::function<void(std::uint64_t pulled, std::uint64_t items)> on_progress;
};

/// Traffic per link class or per stage.
struct traffic {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  std::uint64_t items = 0;  ///< per stage only: items put into the stage's buffers
};

struct run_result {
  std::string plan_name;
  int ranks = 0;
  int nodes = 0;
  int stages = 0;
  int max_hops = 0;
  std::uint64_t items = 0;          ///< pushed (= pulled: checked); request-reply: queries
  std::uint64_t replies = 0;        ///< request-reply: replies pulled (= queries: checked)
  std::uint64_t network_items = 0;  ///< items and replies with source != destination (z)
  std::uint64_t item_hops = 0;      ///< sum over them of route_hops (independent oracle)
  std::uint64_t messages = 0;
  std::uint64_t bytes_injected = 0;  ///< every message's bytes, headers included
  traffic per_class[aggregation::n_link_classes];
  std::vector<traffic> per_stage;
  std::vector<int> tag_bytes;  ///< per stage
  double mean_fill = 0;        ///< mean of bytes / buffer_bytes over sent buffers
  std::size_t max_queued = 0;
  std::size_t max_in_flight = 0;
  std::size_t memory_bytes_per_rank = 0;  ///< max over ranks of the engine's bound
  double predicted_seconds = 0;           ///< max over ranks of the clock at COMPLETE
  /// Messages (buffers and returned credits) on the critical path: the longest causal
  /// chain that reached the rank whose clock is predicted_seconds.
  std::uint32_t critical_path_messages = 0;
  double mean_rank_seconds = 0;
  double wall_seconds = 0;           ///< the simulation loop
  double setup_seconds = 0;          ///< plan, engines and network
  std::uint64_t steps = 0;           ///< rank steps the event loop took
  bool heap_buffers = false;         ///< the timed network's buffers were heap blocks, not pages
  std::vector<double> rank_seconds;  ///< every rank's clock at COMPLETE
  std::vector<link_count> links;     ///< run_config::count_links: per link of every rank
  time_bound bound;                  ///< the floor of predicted_seconds (sim_bound.hpp)
  bool simulated = true;             ///< false: bound_only (no engines ran; counts are zero)
};

/// Builds the plan of `c` (machine and plan parts). Throws convoy::error on bad input.
[[nodiscard]] std::shared_ptr<const router::route_plan> make_sim_plan(const run_config& c,
                                                                      std::vector<int>& node_of,
                                                                      std::vector<int>& socket_of);

/// The plan, the machine and lower_bound for `c` without running the engines (convoy-sim
/// --bound): any P the plan can be built for; `items` is what the ranks would push, the
/// other counts stay zero. Throws convoy::error on bad input.
[[nodiscard]] run_result bound_only(const run_config& c);

/// A run that failed: the oracle saw a lost, repeated, misrouted or reordered item, the
/// simulation stalled, or an engine returned an error (convoy-sim exits 1; a bad
/// configuration is a plain convoy::error, exit 2).
struct run_failure : convoy::error {
  using convoy::error::error;
};

/// Runs `c` to completion. Checks exactly-once delivery against an independent oracle
/// (SIM-1, request-reply SIM-8) and termination (SIM-2); throws run_failure naming the
/// violation, or convoy::error for a bad configuration.
[[nodiscard]] run_result run(const run_config& c);

}  // namespace convoy::sim
