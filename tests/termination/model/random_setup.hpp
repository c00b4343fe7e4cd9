#pragma once
// Random plans and engine options for the model-based test: 1-D, 2-D and 3-D meshes (with
// random holes, rank placement and dimension order), bale's tensor plans of order 1-3, and
// buffers small enough that backpressure is common.
#include <convoy/router/route_plan.hpp>
#include <convoy/termination/engine.hpp>
#include <cstdint>
#include <memory>
#include <random>
#include <string>

namespace convoy_test::model {

struct setup {
  std::shared_ptr<const convoy::router::route_plan> plan;
  convoy::termination::engine_options options;
  std::string label;  // plan and options, for failure reports
};

// A setup of 1..max_ranks ranks, drawn from `rng`.
setup random_setup(std::mt19937_64& rng, int max_ranks);

}  // namespace convoy_test::model
