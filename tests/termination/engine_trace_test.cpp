// The trace (termination/README.md, TERM-17) against the engine's counters (TERM-16) under
// simulation: per out-link, the sends the file marks full and partial are the link's
// buffers_full and buffers_partial; per in-link, the items of the receives are its
// items_received. Rigid, elastic and combining engines (a combining lane keeps its limit at
// 0, so a partial buffer of it looks full by its fill alone).
#include <gtest/gtest.h>

#include <convoy_test/plans.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "combine_checker.hpp"
#include "sim_harness.hpp"
#include "sim_workloads.hpp"

namespace convoy_test {
namespace {

using convoy::termination::engine_options;
using convoy::termination::engine_stats;
using json = nlohmann::json;
namespace fs = std::filesystem;

// (rank, stage, peer) -> counts, from the counters or from the trace files.
struct link_counts {
  std::map<std::tuple<int, int, int>, std::uint64_t> full, partial, items_received;
};

link_counts from_counters(simulation& sim) {
  link_counts c;
  for (int r = 0; r < sim.n_ranks(); ++r) {
    const engine_stats s = sim.at(r).stats(true);
    for (int k = 0; k < static_cast<int>(s.stages.size()); ++k)
      for (const auto& l : s.stages[static_cast<std::size_t>(k)].links) {
        if (l.buffers_full) c.full[{r, k, l.peer}] = l.buffers_full;
        if (l.buffers_partial) c.partial[{r, k, l.peer}] = l.buffers_partial;
        if (l.items_received) c.items_received[{r, k, l.peer}] = l.items_received;
      }
  }
  return c;
}

// Every rank's file in `dir`; a receive without "items" fails the test.
link_counts from_trace(const std::string& dir, int n_ranks) {
  link_counts c;
  for (int r = 0; r < n_ranks; ++r) {
    std::ifstream in(dir + "/convoy-trace.0." + std::to_string(r) + ".json");
    const json d = json::parse(in);
    const auto& outs = d.at("otherData").at("out_links");
    const auto& ins = d.at("otherData").at("in_links");
    const int n_out = static_cast<int>(outs.size());
    for (const auto& e : d.at("traceEvents")) {
      if (e.at("ph") != "i") continue;
      const int tid = e.at("tid");
      const json& a = e.at("args");
      if (e.at("name") == "send") {
        const auto& l = outs.at(static_cast<std::size_t>(tid - 1));
        auto& m = a.at("full").get<bool>() ? c.full : c.partial;
        ++m[{r, l[0].get<int>(), l[1].get<int>()}];
      } else if (e.at("name") == "receive") {
        const auto& l = ins.at(static_cast<std::size_t>(tid - 1 - n_out));
        EXPECT_TRUE(a.contains("items")) << e;
        EXPECT_FALSE(a.contains("full")) << "a receiver cannot know: " << e;
        const std::uint64_t n = a.value("items", std::uint64_t{0});
        if (n) c.items_received[{r, l[0].get<int>(), l[1].get<int>()}] += n;
      }
    }
  }
  return c;
}

// Runs `cycle` on a simulation of `plan` whose engines trace into a fresh directory, then
// compares the files (written when the engines are freed) with the counters.
template <class Cycle>
void expect_trace_matches_counters(const std::string& name, const plan_ptr& plan, engine_options o,
                                   Cycle cycle) {
  const std::string dir = ::testing::TempDir() + "engine_trace_test/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  o.trace.dir = dir;
  link_counts counted;
  int n_ranks = 0;
  {
    simulation sim(plan, o, 7);
    const schedule_result res = cycle(sim);
    ASSERT_TRUE(res.failure.empty()) << res.failure;
    ASSERT_TRUE(res.completed);
    counted = from_counters(sim);
    n_ranks = sim.n_ranks();
  }
  const link_counts traced = from_trace(dir, n_ranks);
  EXPECT_FALSE(counted.full.empty()) << name << ": no full buffer, the case proves little";
  EXPECT_FALSE(counted.partial.empty()) << name << ": no partial buffer";
  EXPECT_EQ(traced.full, counted.full) << name;
  EXPECT_EQ(traced.partial, counted.partial) << name;
  EXPECT_EQ(traced.items_received, counted.items_received) << name;
  fs::remove_all(dir);
}

TEST(EngineTrace, SendsFullAndPartialAndItemsReceivedAreTheCounters) {  // TERM-16, TERM-17
  const plan_ptr plan = mesh_plan({3, 2});
  for (bool elastic : {false, true}) {
    engine_options o = small_buffers(2, 256);
    o.mode =
        elastic ? convoy::termination::item_mode::elastic : convoy::termination::item_mode::rigid;
    expect_trace_matches_counters(elastic ? "elastic" : "rigid", plan, o, [](simulation& sim) {
      const workload wl = make_workload(pattern::uniform, sim.n_ranks(), 200, sim.rng());
      return run_cycle(sim, wl, 24);
    });
  }
  const kv_layout lay{16, 0, 8, 8, 8};
  engine_options o = small_buffers(2, 256);
  o.combine = spec_of(lay);
  expect_trace_matches_counters("combining", plan, o, [&](simulation& sim) {
    const zipf_keys z(4 * static_cast<std::uint64_t>(sim.n_ranks()), 1.0);
    const keyed_workload w = make_keyed(sim.n_ranks(), 300, z, sim.rng());
    return basic_cycle_driver<combine_checker>(sim, w.dests, lay.item_bytes, {},
                                               combine_checker(lay, w, sim.n_ranks()))
        .run();
  });
}

}  // namespace
}  // namespace convoy_test
