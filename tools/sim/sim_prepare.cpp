// What run() and bound_only() share (sim_prepare.hpp), and bound_only() itself: the lower
// bound of a configuration without simulating it.
#include "sim_prepare.hpp"

#include <algorithm>
#include <convoy/base/error.hpp>
#include <string>
#include <utility>

namespace convoy::sim {

aggregation::buffer_memory memory_of(const run_config& c, int ranks) {
  const bool heap =
      c.buffer_memory == buffer_memory_choice::heap ||
      (c.buffer_memory == buffer_memory_choice::automatic && ranks > heap_above_ranks);
  return heap ? aggregation::buffer_memory::heap : aggregation::buffer_memory::pages;
}

prepared prepare(const run_config& c) {
  if (c.item_bytes < 8) throw convoy::error("--item-bytes must be at least 8 (the oracle's tag)");
  if (c.batch < 1) throw convoy::error("--batch must be at least 1");
  if (c.items_per_rank >= (std::uint64_t{1} << 43))
    throw convoy::error("--items must be below 2^43");
  prepared x;
  x.plan = make_sim_plan(c, x.node_of, x.socket_of);
  run_result& res = x.res;
  res.plan_name = x.plan->name();
  res.ranks = x.plan->n_ranks();
  res.nodes = x.node_of.empty() ? 0 : *std::max_element(x.node_of.begin(), x.node_of.end()) + 1;
  res.stages = x.plan->n_stages();
  res.max_hops = x.plan->max_hops();
  res.heap_buffers = memory_of(c, res.ranks) == aggregation::buffer_memory::heap;
  if (c.workload == workload_kind::traffic) {
    if (c.traffic_file.empty() && !c.traffic)
      throw convoy::error("the traffic workload needs a traffic-matrix file (--traffic FILE)");
    if (c.traffic_file.empty() && c.traffic->rows.size() != static_cast<std::size_t>(res.ranks))
      throw convoy::error("the traffic matrix has " + std::to_string(c.traffic->rows.size()) +
                          " rows for " + std::to_string(res.ranks) + " ranks");
    x.matrix = c.traffic_file.empty() ? *c.traffic : load_traffic(c.traffic_file, res.ranks);
  } else if (!c.traffic_file.empty() || c.traffic) {
    throw convoy::error("a traffic-matrix file belongs to the traffic workload");
  }
  res.bound = lower_bound(c, *x.plan, x.node_of, x.socket_of, &x.matrix);
  return x;
}

run_result bound_only(const run_config& c) {
  prepared x = prepare(c);
  x.res.simulated = false;
  x.res.items = c.workload == workload_kind::traffic
                    ? x.matrix.total
                    : c.items_per_rank * static_cast<std::uint64_t>(x.res.ranks);
  return std::move(x.res);
}

}  // namespace convoy::sim
