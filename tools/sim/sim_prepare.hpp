#pragma once
// What run() and bound_only() share (sim_run.hpp): the checks of a configuration, its plan
// and machine, its traffic matrix, the result's header and the lower bound.
#include <convoy/aggregation/timed_network.hpp>
#include <convoy/router/route_plan.hpp>
#include <memory>
#include <vector>

#include "sim_run.hpp"

namespace convoy::sim {

/// The buffer memory of a run of `ranks` ranks (run_config::buffer_memory).
aggregation::buffer_memory memory_of(const run_config& c, int ranks);

// What run() and bound_only() share: the checks, the plan, the machine, the traffic matrix,
// the result's header and the bound.
struct prepared {
  std::shared_ptr<const router::route_plan> plan;
  std::vector<int> node_of, socket_of;
  traffic_matrix matrix;
  run_result res;
};

/// Checks `c` and prepares its run. Throws convoy::error naming what is wrong.
prepared prepare(const run_config& c);

}  // namespace convoy::sim
