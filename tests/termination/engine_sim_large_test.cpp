// The engine under simulation at large P: the conveyor contract
// (termination/README.md TERM-1..4, TERM-8, TERM-11) on these shapes — 3-D and 4-D
// meshes, bale's 3-hop tensor route and ragged nodes — at 512 ranks, 48 random schedules
// each, every one of the 12 schedule kinds (pattern and item count × item size) four times;
// at 4 096 ranks, 12, every kind once (the ragged cluster runs twice with two seeds, kinds
// 0-5 and 6-11); and one random schedule at 65 536 ranks. CONVOY_SIM_SCHEDULES=N runs more.
#include <algorithm>
#include <convoy/aggregation/transport.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/topology/mesh.hpp>
#include <convoy_test/plans.hpp>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "sim_harness.hpp"
#include "sim_workloads.hpp"

namespace convoy_test {
namespace {

using convoy::router::make_tensor_plan;

// Ragged nodes of 5 to 15 ranks as a node x core mesh with holes.
plan_ptr ragged_of(int total_ranks) {
  std::vector<int> sizes;
  int total = 0;
  for (int n = 0; total < total_ranks; ++n) {
    sizes.push_back(std::min(5 + (n * 7) % 11, total_ranks - total));
    total += sizes.back();
  }
  return ragged_plan(sizes);
}

// A ragged cluster of 4 096 ranks: 64 nodes of 48 to 80 ranks (sizes cycle around 64), each
// node's ranks spread evenly over 4 sockets, as a node x socket x core mesh with holes
// (TOPO-9, ROUTE-6): about 63 + 3 + 19 links per rank.
plan_ptr ragged_cluster_4096() {
  const int deltas[] = {-16, 8, 0, 16, -8};
  std::vector<std::vector<int>> coords;
  int total = 0, widest = 0;
  for (int n = 0; n < 64; ++n) {
    const int size = n == 63 ? 4096 - total : 64 + deltas[n % 5];
    const int per_socket = (size + 3) / 4;
    for (int c = 0; c < size; ++c) coords.push_back({n, c / per_socket, c % per_socket});
    widest = std::max(widest, per_socket);
    total += size;
  }
  const convoy::topology::mesh m({{"node", 64}, {"socket", 4}, {"core", widest}}, coords);
  return convoy::router::make_mesh_plan(m);
}

plan_ptr mesh8x8x8() { return mesh_plan({8, 8, 8}); }
plan_ptr mesh4x4x4x8() { return mesh_plan({4, 4, 4, 8}); }
plan_ptr tensor3_n8() { return make_tensor_plan(3, 512, 8); }
plan_ptr ragged_512() { return ragged_of(512); }
plan_ptr mesh16x16x16() { return mesh_plan({16, 16, 16}); }
plan_ptr mesh8x8x8x8() { return mesh_plan({8, 8, 8, 8}); }
plan_ptr tensor3_n16() { return make_tensor_plan(3, 4096, 16); }

// A shape's schedules, or a share of them: `schedules` from kind `first` on.
struct large_case {
  const char* label;
  plan_ptr (*make)();
  std::uint64_t seed = 1000;
  int schedules = 48;
  int first = 0;
};

void PrintTo(const large_case& c, std::ostream* os) { *os << c.label; }

// CONVOY_SIM_SCHEDULES=N runs N schedules per case instead (a longer run on demand).
int schedules(const large_case& c) {
  const char* s = std::getenv("CONVOY_SIM_SCHEDULES");
  return s != nullptr ? std::max(1, std::atoi(s)) : c.schedules;
}

// One simulation per case: every begin..reset cycle on it is a new random schedule (the
// generators run on) with its own item size, which also exercises reuse at scale (TERM-8).
// Uniform traffic of 1 or 2 items per rank, or everyone to one rank with 3 each; pulls
// are put back now and then (TERM-11); ranks with nothing to do rest (cycle_options).
void run_schedules(const large_case& c) {
  simulation sim(c.make(), small_buffers(2, 128), c.seed);
  cycle_options o;
  o.rest_idle = true;
  o.max_rounds = 3000;  // the slowest schedule (all to one rank) takes ~400
  for (int s = c.first; s < c.first + schedules(c); ++s) {
    const auto wl = make_workload(s % 3 == 2 ? pattern::all_to_one : pattern::uniform,
                                  sim.n_ranks(), 1 + s % 3, sim.rng());
    const std::size_t bytes = sizeof(tracer) + static_cast<std::size_t>(s % 4) * 7;
    const auto res = run_cycle(sim, wl, bytes, o);
    ASSERT_TRUE(res.failure.empty()) << c.label << " schedule " << s << ": " << res.failure;
    ASSERT_TRUE(res.completed) << c.label << " schedule " << s << " did not terminate";
    ASSERT_EQ(res.pulled, n_items(wl)) << c.label << " schedule " << s;
  }
}

class EngineSimLarge : public testing::TestWithParam<large_case> {};

// TERM-60 (TERM-1, TERM-2, TERM-3, TERM-4 at scale), every item checked byte by byte.
TEST_P(EngineSimLarge, RandomSchedules) { run_schedules(GetParam()); }

std::string label(const testing::TestParamInfo<large_case>& info) { return info.param.label; }

INSTANTIATE_TEST_SUITE_P(Ranks512, EngineSimLarge,
                         testing::Values(large_case{"mesh8x8x8", mesh8x8x8},
                                         large_case{"mesh4x4x4x8", mesh4x4x4x8},
                                         large_case{"tensor3_n8", tensor3_n8},
                                         large_case{"ragged", ragged_512}),
                         label);

INSTANTIATE_TEST_SUITE_P(
    Ranks4096, EngineSimLarge,
    testing::Values(large_case{"mesh16x16x16", mesh16x16x16, 1000, 12},
                    large_case{"mesh8x8x8x8", mesh8x8x8x8, 1000, 12},
                    large_case{"tensor3_n16", tensor3_n16, 1000, 12},
                    large_case{"ragged_cluster_a", ragged_cluster_4096, 1000, 6},
                    large_case{"ragged_cluster_b", ragged_cluster_4096, 2000, 6, 6}),
    label);

// Buffers for many endpoints from large chunks, all given back when the last endpoint is
// gone: one allocation per 64 MiB instead of one per link.
class chunk_source final : public convoy::aggregation::buffer_source {
 public:
  std::byte* grab(std::size_t bytes) override {
    if (chunks_.empty() || used_ + bytes > chunk_bytes) {
      chunks_.push_back(std::make_unique<std::byte[]>(std::max(bytes, chunk_bytes)));
      used_ = 0;
    }
    std::byte* p = chunks_.back().get() + used_;
    used_ += (bytes + 63) / 64 * 64;
    return p;
  }
  void release(std::byte* /*block*/) noexcept override {}

 private:
  static constexpr std::size_t chunk_bytes = std::size_t{64} << 20;
  std::vector<std::unique_ptr<std::byte[]>> chunks_;
  std::size_t used_ = 0;
};

// TERM-60 (TERM-1, TERM-2, TERM-3, TERM-4) at P = 65 536: one random schedule of 8
// uniform items per rank (CONVOY_SIM_ITEMS=N: N) on a 4^8 mesh (8 stages, 24 out-links per rank).
// Above the first-hop table's limit, as the library is above its own, push asks the plan
// for each item's first hop; each endpoint's buffers come in one block (chunk_source).
TEST(EngineSimHuge, OneScheduleAt65536Ranks) {
  const char* items = std::getenv("CONVOY_SIM_ITEMS");
  const int per_rank = items != nullptr ? std::max(0, std::atoi(items)) : 8;
  auto o = small_buffers(2, 128);
  o.route_table_max_ranks = 4096;
  simulation sim(mesh_plan({4, 4, 4, 4, 4, 4, 4, 4}), o, 65536, std::make_shared<chunk_source>());
  ASSERT_EQ(sim.n_ranks(), 65536);
  const auto wl = make_workload(pattern::uniform, sim.n_ranks(), per_rank, sim.rng());
  cycle_options c;
  c.rest_idle = true;
  const auto res = run_cycle(sim, wl, sizeof(tracer) + 8, c);
  ASSERT_TRUE(res.failure.empty()) << res.failure;
  ASSERT_TRUE(res.completed) << "no termination in " << res.rounds << " rounds";
  ASSERT_EQ(res.pulled, n_items(wl));
  RecordProperty("items", std::to_string(res.pulled));
  RecordProperty("rounds", std::to_string(res.rounds));
}

}  // namespace
}  // namespace convoy_test
