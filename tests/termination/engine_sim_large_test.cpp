// The engine under simulation at large P (issue 12): the conveyor contract
// (termination/README.md TERM-1..4) on the shapes — 3-D and 4-D meshes, bale's
// 3-hop tensor route and ragged nodes — at 512 and 4 096 ranks, 100 random schedules each.
#include <algorithm>
#include <chrono>
#include <convoy/router/route_plan.hpp>
#include <convoy/topology/mesh.hpp>
#include <convoy_test/plans.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim_harness.hpp"
#include "sim_workloads.hpp"

namespace convoy_test {
namespace {

using convoy::router::make_tensor_plan;

plan_ptr ragged_of(int total_ranks) {
  std::vector<int> sizes;
  int total = 0;
  for (int n = 0; total < total_ranks; ++n) {
    sizes.push_back(std::min(5 + (n * 7) % 11, total_ranks - total));
    total += sizes.back();
  }
  return ragged_plan(sizes);
}

// A ragged cluster of P = 4 096: 64 nodes of 48 to 80 ranks (sizes cycle around 64), each
// node's ranks spread over 4 sockets as evenly as they go, as a node x socket x core mesh
// with holes (TOPO-9, ROUTE-6): 64 + 3 + ~19 links per rank.
plan_ptr ragged_cluster_4096() {
  const int deltas[] = {-16, 8, 0, 16, -8};
  std::vector<int> sizes;
  int total = 0;
  for (int n = 0; n < 64; ++n) {
    const int size = n == 63 ? 4096 - total : 64 + deltas[n % 5];
    sizes.push_back(size);
    total += size;
  }
  std::vector<std::vector<int>> coords;
  int widest_socket = 0;
  for (int n = 0; n < 64; ++n)
    for (int c = 0; c < sizes[static_cast<std::size_t>(n)]; ++c) {
      const int per_socket = (sizes[static_cast<std::size_t>(n)] + 3) / 4;
      coords.push_back({n, c / per_socket, c % per_socket});
      widest_socket = std::max(widest_socket, per_socket);
    }
  const convoy::topology::mesh m({{"node", 64}, {"socket", 4}, {"core", widest_socket}}, coords);
  return convoy::router::make_mesh_plan(m);
}

struct large_case {
  const char* label;
  plan_ptr (*make)();
};

// Schedules per shape: 100, or CONVOY_SIM_SCHEDULES (a longer or shorter run on demand).
int schedules() {
  const char* s = std::getenv("CONVOY_SIM_SCHEDULES");
  return s != nullptr ? std::max(1, std::atoi(s)) : 100;
}

// One simulation per shape: every begin..reset cycle on it is a new random schedule (the
// generators run on), which also exercises reuse at scale (TERM-8).
void run_schedules(const large_case& c, int n) {
  const plan_ptr plan = c.make();
  simulation sim(plan, small_buffers(2, 128), 1000);
  for (int s = 0; s < n; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto wl = make_workload(s % 3 == 2 ? pattern::all_to_one : pattern::uniform,
                                  sim.n_ranks(), 1 + s % 3, sim.rng());
    cycle_options o;
    o.try_unpull = false;
    o.rest_idle = std::getenv("SIM3_NOREST") == nullptr;
    const auto res = run_cycle(sim, wl, sizeof(tracer), o);
    ASSERT_TRUE(res.failure.empty()) << c.label << " schedule " << s << ": " << res.failure;
    ASSERT_TRUE(res.completed) << c.label << " schedule " << s;
    ASSERT_EQ(res.pulled, n_items(wl)) << c.label << " schedule " << s;
    if (std::getenv("SIM3_DIAG")) {
      std::uint64_t msgs = 0;
      for (int r = 0; r < sim.n_ranks(); ++r) msgs += sim.at(r).stats().buffers_sent;
      std::printf("DIAG %s s%d turns %llu items %llu rounds %llu msgs %llu t %.3f\n", c.label, s,
                  (unsigned long long)res.turns, (unsigned long long)res.pulled,
                  (unsigned long long)res.rounds, (unsigned long long)msgs,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  }
}

class EngineSimLarge : public testing::TestWithParam<large_case> {};

// TERM-1, TERM-2, TERM-3, TERM-4 at scale.
TEST_P(EngineSimLarge, HundredSchedules) { run_schedules(GetParam(), schedules()); }

std::string label(const testing::TestParamInfo<large_case>& info) { return info.param.label; }

INSTANTIATE_TEST_SUITE_P(
    Ranks512, EngineSimLarge,
    testing::Values(large_case{"mesh8x8x8",
                               [] {
                                 return mesh_plan({8, 8, 8});
                               }},
                    large_case{"mesh4x4x4x8",
                               [] {
                                 return mesh_plan({4, 4, 4, 8});
                               }},
                    large_case{"tensor3_n8",
                               []() -> plan_ptr { return make_tensor_plan(3, 512, 8); }},
                    large_case{"ragged", []() -> plan_ptr { return ragged_of(512); }}),
    label);

INSTANTIATE_TEST_SUITE_P(Ranks4096, EngineSimLarge,
                         testing::Values(large_case{"mesh16x16x16",
                                                    [] {
                                                      return mesh_plan({16, 16, 16});
                                                    }},
                                         large_case{"mesh8x8x8x8",
                                                    [] {
                                                      return mesh_plan({8, 8, 8, 8});
                                                    }},
                                         large_case{"tensor3_n16",
                                                    []() -> plan_ptr {
                                                      return make_tensor_plan(3, 4096, 16);
                                                    }},
                                         large_case{"ragged_cluster", ragged_cluster_4096}),
                         label);

// TERM-1, TERM-2, TERM-3, TERM-4 at P = 65 536 (issue 12): one random schedule on a 4^8
// mesh (8 stages, 24 out-links per rank). Above the first-hop table's limit, as the library
// is above its own, push asks the plan for each item's first hop.
TEST(EngineSimHuge, OneScheduleAt65536Ranks) {
  const char* items = std::getenv("CONVOY_SIM_ITEMS");
  const int per_rank = items != nullptr ? std::max(0, std::atoi(items)) : 2;
  auto o = small_buffers(2, 128);
  o.route_table_max_ranks = 4096;
  simulation sim(mesh_plan({4, 4, 4, 4, 4, 4, 4, 4}), o, 65536);
  ASSERT_EQ(sim.n_ranks(), 65536);
  const auto wl = make_workload(pattern::uniform, sim.n_ranks(), per_rank, sim.rng());
  cycle_options c;
  c.rest_idle = true;
  const auto res = run_cycle(sim, wl, sizeof(tracer) + 8, c);
  ASSERT_TRUE(res.failure.empty()) << res.failure;
  ASSERT_TRUE(res.completed) << "no termination in " << res.rounds << " rounds";
  ASSERT_EQ(res.pulled, n_items(wl));
  std::printf("P = 65536: %llu items, %llu rounds\n", static_cast<unsigned long long>(res.pulled),
              static_cast<unsigned long long>(res.rounds));
}

}  // namespace
}  // namespace convoy_test
