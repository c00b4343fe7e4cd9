#pragma once
/// @file
/// convoy-sim --from-stats (tools/sim/README.md "Replaying a measured run"): a measured
/// run's machine, mesh, buffers and traffic turned into simulator runs — one on the
/// measured machine whose per-link counts are checked against the measurement, and
/// optionally one at another P with the same per-rank traffic pattern — and the report of
/// predicted vs measured.
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim_run.hpp"
#include "sim_stats.hpp"
#include "sim_workload.hpp"

namespace convoy::sim {

/// Which of the user's options replace the measured run's (the rest comes from the stats).
struct replay_request {
  bool scale = false;       ///< --ranks, --nodes, --ppn, --mesh or --dim-order: a second run
  bool mesh_given = false;  ///< --mesh for the scaled run
  bool dim_order_given = false;
  bool sockets_given = false;  ///< --sockets for the scaled run (else the measured nodes')
  bool buffer_bytes_given = false, n_buffers_given = false, item_bytes_given = false;
  bool fit_app = true;  ///< the application's per-item time from cycle - advance
};

struct replay_setup {
  run_config check;                  ///< the measured machine, mesh and estimated traffic
  std::optional<run_config> scaled;  ///< the user's machine and mesh, the pattern tiled
  std::string mesh_text;             ///< the mesh spec that reproduces the measured links
  std::string app_source;            ///< where check.model.app_s comes from
};

/// The estimated traffic matrix (gravity model): rank s sends pushes[s] items, spread over
/// the destinations in proportion to weights[d], T[s][d] = pushes[s] * weights[d] / Σ
/// weights, rounded by systematic sampling so that each row sums to pushes[s] and every
/// entry is the floor or the ceiling of its share (exact when the shares are integers).
/// Throws convoy::error when items are pushed but every weight is 0, or on more than
/// traffic_max_items items.
[[nodiscard]] traffic_matrix gravity_matrix(const std::vector<std::uint64_t>& pushes,
                                            const std::vector<std::uint64_t>& weights);

/// Builds the runs of a replay of `conveyor` from `run` over the options of `base` (model,
/// seed, batch, buffer memory, and the options `req` names). Throws convoy::error naming
/// the problem: a kind or item size the simulator cannot replay, a placement or links that
/// no mesh of the simulator reproduces, a scaled machine without a mesh.
[[nodiscard]] replay_setup setup_replay(const measured_run& run, const measured_conveyor& conveyor,
                                        const run_config& base, const replay_request& req);

/// Prints the comparison of `check` (the result of setup.check) with the measurement per
/// stage and link class (intra-node, inter-node): items, bytes, buffers, full and partial
/// buffers per cycle, the largest per-link error, and the time per cycle.
void print_replay(std::ostream& out, const measured_run& run, const measured_conveyor& conveyor,
                  const replay_setup& setup, const run_result& check);
/// The same as a JSON object (the "replay" key of --json).
[[nodiscard]] std::string replay_json_text(const measured_run& run,
                                           const measured_conveyor& conveyor,
                                           const replay_setup& setup, const run_result& check);

}  // namespace convoy::sim
