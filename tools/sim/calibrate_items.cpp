// Per-item engine costs for convoy-calibrate (calibrate_items.hpp): the engine's own push,
// forward and pull, over termination::simulation (as bench/micro_engine.cpp).
#include "calibrate_items.hpp"

#include <algorithm>
#include <chrono>
#include <convoy/base/error.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/termination/simulation.hpp>
#include <convoy/topology/mesh.hpp>
#include <cstddef>
#include <memory>
#include <vector>

namespace {

using namespace convoy;
using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

struct timings {
  double push = 0, pull = 0, forward = 0;
  std::uint64_t forwarded = 0, pulled = 0;
};

// Rank 0 pushes `items` items to rank `dest`; every other rank only advances and pulls.
// push() calls are timed at rank 0, pull() calls at `dest`, advance() at `forwarders`.
timings drive(const std::shared_ptr<const router::route_plan>& plan, int dest,
              const std::vector<int>& forwarders, std::uint64_t items) {
  termination::engine_options o;
  termination::simulation sim(plan, o, 1);
  const int p = sim.n_ranks();
  std::vector<std::byte> item(8, std::byte{1});
  for (int r = 0; r < p; ++r)
    if (sim.at(r).begin(item.size()) != 1) throw convoy::error("calibrate: begin failed");
  timings t;
  std::uint64_t pushed = 0;
  std::vector<bool> done(static_cast<std::size_t>(p), false);
  for (std::uint64_t round = 0; std::find(done.begin(), done.end(), false) != done.end(); ++round) {
    if (round > 100'000'000) throw convoy::error("calibrate: the engines did not terminate");
    for (int r = 0; r < p; ++r) {
      if (done[static_cast<std::size_t>(r)]) continue;
      auto& e = sim.at(r);
      if (r == 0) {
        const auto t0 = clock_type::now();
        for (; pushed < items; ++pushed)
          if (e.push(item.data(), dest) <= 0) break;
        t.push += since(t0);
      }
      const bool fwd = std::find(forwarders.begin(), forwarders.end(), r) != forwarders.end();
      const auto t1 = clock_type::now();
      const int rc = e.advance(r != 0 || pushed == items);
      if (fwd) t.forward += since(t1);
      if (rc < 0) throw convoy::error("calibrate: advance failed: " + e.last_message());
      const auto t2 = clock_type::now();
      termination::item_view v;
      while (e.pull(v) > 0) ++t.pulled;
      if (r == dest) t.pull += since(t2);
      if (rc == termination::done) done[static_cast<std::size_t>(r)] = true;
    }
    sim.network().deliver_all();
  }
  if (t.pulled != items) throw convoy::error("calibrate: items lost in the engine");
  for (const int r : forwarders)
    for (const auto& s : sim.at(r).stats().stages) t.forwarded += s.items;
  return t;
}

}  // namespace

item_costs measure_item_costs(std::uint64_t items) {
  item_costs c;
  const auto n = static_cast<double>(items);
  // Push and pull: one hop, rank 0 to rank 1.
  const timings direct = drive(router::make_tensor_plan(1, 2, 2), 1, {}, items);
  c.push_s = direct.push / n;
  c.pull_s = direct.pull / n;
  // Forward: 2x2 mesh, rank 0 to rank 3 through rank 1 or 2 (Wesolowski et al. 2014, sec. III.B).
  const std::vector<int> shape{2, 2};
  const timings mesh =
      drive(router::make_mesh_plan(topology::mesh::cartesian(shape)), 3, {1, 2}, items);
  c.forward_s = mesh.forwarded ? mesh.forward / static_cast<double>(mesh.forwarded) : 0.0;
  return c;
}
