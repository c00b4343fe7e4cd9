#pragma once
/// @file
/// A lower bound on convoy-sim's predicted time from the plan, the machine, the workload and
/// the cost model alone, without running the engines (tools/sim/README.md "Lower bound"):
/// what a run must at least cost, so that shapes too large to simulate still get a floor.
#include <convoy/aggregation/timed_network.hpp>
#include <convoy/router/route_plan.hpp>
#include <cstdint>
#include <vector>

#include "sim_model.hpp"
#include "sim_workload.hpp"

namespace convoy::sim {

struct run_config;

/// Two floors of run_result::predicted_seconds, each a sum of charges the timed network
/// makes on one clock or one port:
/// - cpu: a rank's clock. Dimension-ordered termination closes every link with a buffer, so
///   the rank posts at least one buffer on each out-link and polls at least one on each
///   in-link (alpha of the link's class each, per engine plane), and it pushes its items
///   (push_s + app_s each). Evaluated on ranks 0, P/2 and P - 1; the largest is kept.
/// - nic: node 0's NIC. Every item of node 0's ranks whose destination is on another node
///   leaves node 0 at least once, from node 0, carrying at least its payload bytes:
///   beta_off x item_bytes x those items (counted from the workload's own destinations).
struct time_bound {
  double seconds = 0;      ///< max(cpu_seconds, nic_seconds)
  double cpu_seconds = 0;  ///< of `rank`
  double nic_seconds = 0;  ///< of node 0
  int rank = 0;            ///< the sampled rank with the largest cpu_seconds
  /// That rank's out- plus in-links per link class (times the planes: 2 for request-reply).
  std::uint64_t link_ends[aggregation::n_link_classes] = {};
  std::uint64_t offnode_items = 0;  ///< node 0's items with a destination on another node
};

/// The bound for `c` on `plan` with ranks on nodes `node_of` and sockets `socket_of`;
/// `matrix` is the traffic workload's matrix (else unused).
[[nodiscard]] time_bound lower_bound(const run_config& c, const router::route_plan& plan,
                                     const std::vector<int>& node_of,
                                     const std::vector<int>& socket_of,
                                     const traffic_matrix* matrix);

}  // namespace convoy::sim
