// The engine's counters (termination/README.md, TERM-16) under simulation, against an oracle
// that walks every pushed item's route through the plan (router::route_plan::next_hop):
// items per link sent and received, items forwarded, buffers and bytes equal at both ends of
// every link, full + partial = buffers sent, credit stalls under a hot spot.
#include <convoy/router/route_plan.hpp>
#include <convoy_test/plans.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "sim_harness.hpp"
#include "sim_workloads.hpp"

namespace convoy_test {
namespace {

using convoy::router::make_tensor_plan;
using convoy::termination::engine_options;
using convoy::termination::engine_stats;
using convoy::termination::link_stats;

// (rank, stage, peer) -> items, from the routes of the workload's items.
struct route_oracle {
  std::map<std::tuple<int, int, int>, std::uint64_t> sent, received;
  std::vector<std::uint64_t> forwarded;

  route_oracle(const convoy::router::route_plan& plan, const workload& wl)
      : forwarded(static_cast<std::size_t>(plan.n_ranks()), 0) {
    for (int src = 0; src < static_cast<int>(wl.size()); ++src)
      for (int dst : wl[static_cast<std::size_t>(src)]) {
        int at = src, first = 0;
        for (;;) {
          const convoy::router::hop h = plan.next_hop(at, dst, first);
          if (h.stage >= plan.n_stages()) break;
          ++sent[{at, h.stage, h.rank}];
          ++received[{h.rank, h.stage, at}];
          if (at != src) ++forwarded[static_cast<std::size_t>(at)];
          at = h.rank;
          first = h.stage + 1;
        }
      }
  }
  [[nodiscard]] std::uint64_t of(const std::map<std::tuple<int, int, int>, std::uint64_t>& m, int r,
                                 int s, int peer) const {
    const auto it = m.find({r, s, peer});
    return it == m.end() ? 0 : it->second;
  }
};

// The link of `peer` on `stage` in `s`, or null.
const link_stats* find_link(const engine_stats& s, int stage, int peer) {
  for (const auto& l : s.stages[static_cast<std::size_t>(stage)].links)
    if (l.peer == peer) return &l;
  return nullptr;
}

// Checks every rank's counters of the cycle just run against the oracle of `wl`; empty if
// they agree, else the first difference.
std::string check_counters(simulation& sim, const convoy::router::route_plan& plan,
                           const workload& wl, bool cumulative) {
  const route_oracle o(plan, wl);
  std::vector<engine_stats> st;
  st.reserve(static_cast<std::size_t>(sim.n_ranks()));
  for (int r = 0; r < sim.n_ranks(); ++r) st.push_back(sim.at(r).stats(cumulative));
  for (int r = 0; r < sim.n_ranks(); ++r) {
    const engine_stats& s = st[static_cast<std::size_t>(r)];
    const std::string at = "rank " + std::to_string(r);
    if (s.items_forwarded != o.forwarded[static_cast<std::size_t>(r)])
      return at + ": items_forwarded " + std::to_string(s.items_forwarded) + ", routes say " +
             std::to_string(o.forwarded[static_cast<std::size_t>(r)]);
    if (s.stages.size() != static_cast<std::size_t>(plan.n_stages())) return at + ": stages";
    std::uint64_t buffers = 0, stalls = 0;
    for (int k = 0; k < plan.n_stages(); ++k) {
      const auto& ss = s.stages[static_cast<std::size_t>(k)];
      std::uint64_t stage_items = 0, stage_buffers = 0, stage_bytes = 0;
      int last_peer = -1;
      for (const link_stats& l : ss.links) {
        const std::string link =
            at + " stage " + std::to_string(k) + " peer " + std::to_string(l.peer);
        if (l.peer <= last_peer || l.peer == r) return link + ": links not by ascending peer";
        last_peer = l.peer;
        if (l.items_sent != o.of(o.sent, r, k, l.peer))
          return link + ": items_sent " + std::to_string(l.items_sent) + ", routes say " +
                 std::to_string(o.of(o.sent, r, k, l.peer));
        if (l.items_received != o.of(o.received, r, k, l.peer))
          return link + ": items_received " + std::to_string(l.items_received) + ", routes say " +
                 std::to_string(o.of(o.received, r, k, l.peer));
        // The other end: what it received from this rank on this stage is what was sent.
        const link_stats* back = find_link(st[static_cast<std::size_t>(l.peer)], k, r);
        const std::uint64_t posted = l.buffers_full + l.buffers_partial;
        if (posted > 0 || l.items_sent > 0) {
          if (!back) return link + ": the peer has no link back";
          if (back->buffers_received != posted || back->bytes_received != l.bytes_sent ||
              back->items_received != l.items_sent)
            return link + ": sent " + std::to_string(posted) + " buffers, " +
                   std::to_string(l.bytes_sent) + " bytes; the peer received " +
                   std::to_string(back->buffers_received) + ", " +
                   std::to_string(back->bytes_received);
        }
        stage_items += l.items_sent;
        stage_buffers += posted;
        stage_bytes += l.bytes_sent;
        stalls += l.credit_stalls;
      }
      if (stage_items != ss.items || stage_buffers != ss.buffers || stage_bytes != ss.bytes)
        return at + " stage " + std::to_string(k) + ": links do not add up to the stage";
      buffers += stage_buffers;
    }
    if (buffers != s.buffers_sent) return at + ": full + partial != buffers_sent";
    if (stalls != s.credit_stalls) return at + ": link stalls do not add up";
  }
  return {};
}

// TERM-16: per link, items sent and received are those of the items' routes; both ends of a
// link agree on buffers, bytes and items; forwarded items are the routes' middle hops. Rigid
// and elastic, several plans and patterns, random schedules; per cycle and cumulative.
TEST(EngineCounters, PerLinkCountsMatchTheRoutes) {
  const std::vector<std::pair<std::string, plan_ptr>> plans = {
      {"line5", mesh_plan({5})},
      {"mesh2x4", mesh_plan({2, 4})},
      {"mesh3x3x3", mesh_plan({3, 3, 3})},
      {"ragged_4_2_3", ragged_plan({4, 2, 3})},
      {"tensor2_p8_n4", make_tensor_plan(2, 8, 4)},
      {"tensor3_p12_n2", make_tensor_plan(3, 12, 2)},
  };
  const pattern patterns[] = {pattern::uniform, pattern::all_to_one, pattern::imbalance,
                              pattern::self};
  for (const auto& [label, plan] : plans)
    for (pattern pat : patterns)
      for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        engine_options o = small_buffers(seed % 2 ? 1 : 2, seed % 3 ? 128 : 512);
        o.mode = seed % 3 == 0 ? convoy::termination::item_mode::elastic
                               : convoy::termination::item_mode::rigid;
        simulation sim(plan, o, seed);
        workload all(static_cast<std::size_t>(sim.n_ranks()));
        for (int cycle = 0; cycle < 2; ++cycle) {
          const auto wl = make_workload(pat, sim.n_ranks(), 30, sim.rng());
          const auto res = run_cycle(sim, wl, sizeof(tracer) + seed % 4);
          ASSERT_TRUE(res.failure.empty() && res.completed) << label << ": " << res.failure;
          const std::string why = check_counters(sim, *plan, wl, false);
          ASSERT_TRUE(why.empty())
              << label << " " << name(pat) << " seed " << seed << " cycle " << cycle << ": " << why;
          for (std::size_t r = 0; r < wl.size(); ++r)
            all[r].insert(all[r].end(), wl[r].begin(), wl[r].end());
        }
        const std::string why = check_counters(sim, *plan, all, true);
        ASSERT_TRUE(why.empty()) << label << " " << name(pat) << " seed " << seed
                                 << " cumulative: " << why;
      }
}

// TERM-16: one sender, one receiver, N items of R bytes per record in buffers of C bytes:
// every buffer but the last is posted full, the last (the stage's closing buffer) partial.
TEST(EngineCounters, FullAndPartialBuffers) {
  const auto plan = mesh_plan({2});
  const engine_options o = small_buffers(2, 256);
  simulation sim(plan, o, 7);
  workload wl(2);
  wl[0].assign(500, 1);
  const auto res = run_cycle(sim, wl, 16);
  ASSERT_TRUE(res.failure.empty() && res.completed) << res.failure;
  const link_stats l = sim.at(0).stats().stages[0].links.at(0);
  EXPECT_EQ(l.peer, 1);
  EXPECT_EQ(l.items_sent, 500u);
  // A buffer holds at most (256 - 16) / 16 = 15 records: at least 500 / 15 - 1 are full.
  EXPECT_GE(l.buffers_full, 500u / 15u - 1u);
  EXPECT_GE(l.buffers_partial, 1u);
  EXPECT_LE(l.buffers_full + l.buffers_partial, 500u / 10u + 2u);
  const link_stats back = sim.at(1).stats().stages[0].links.at(0);
  EXPECT_EQ(back.buffers_received, l.buffers_full + l.buffers_partial);
  EXPECT_EQ(back.items_received, 500u);
}

// TERM-16: without per-link counters (engine_options::link_counters, convoy-sim's setting)
// every per-stage and per-rank count is the same as with them, and the links are empty.
TEST(EngineCounters, WithoutLinkCountersTheStagesAgree) {
  const auto plan = mesh_plan({3, 4});
  engine_options with = small_buffers(1, 128);
  engine_options without = with;
  without.link_counters = false;
  simulation a(plan, with, 11), b(plan, without, 11);
  const auto wl = make_workload(pattern::all_to_one, 12, 200, a.rng());
  (void)make_workload(pattern::all_to_one, 12, 200, b.rng());  // the same schedule in both
  ASSERT_TRUE(run_cycle(a, wl, 16).completed);
  ASSERT_TRUE(run_cycle(b, wl, 16).completed);
  std::uint64_t stalls = 0;
  for (int r = 0; r < 12; ++r) {
    const engine_stats x = a.at(r).stats(), y = b.at(r).stats();
    EXPECT_EQ(x.pushes, y.pushes) << r;
    EXPECT_EQ(x.pulls, y.pulls) << r;
    EXPECT_EQ(x.buffers_sent, y.buffers_sent) << r;
    EXPECT_EQ(x.bytes_sent, y.bytes_sent) << r;
    EXPECT_EQ(x.buffers_received, y.buffers_received) << r;
    EXPECT_EQ(x.items_forwarded, y.items_forwarded) << r;
    EXPECT_EQ(x.credit_stalls, y.credit_stalls) << r;
    stalls += y.credit_stalls;
    ASSERT_EQ(x.stages.size(), y.stages.size());
    for (std::size_t k = 0; k < x.stages.size(); ++k) {
      EXPECT_EQ(x.stages[k].items, y.stages[k].items) << r << " stage " << k;
      EXPECT_EQ(x.stages[k].buffers, y.stages[k].buffers) << r << " stage " << k;
      EXPECT_EQ(x.stages[k].bytes, y.stages[k].bytes) << r << " stage " << k;
      EXPECT_FALSE(x.stages[k].links.empty()) << r << " stage " << k;
      EXPECT_TRUE(y.stages[k].links.empty()) << r << " stage " << k;
    }
  }
  EXPECT_GT(stalls, 0u);  // the hot spot with one buffer per link stalls: counted without links
}

// TERM-16: a hot spot with one buffer per link makes senders wait for a free buffer: credit
// stalls are counted (per episode, so at most once per failed push), and none without
// contention (one item per sender).
TEST(EngineCounters, CreditStallsUnderAHotSpot) {
  const auto plan = mesh_plan({6});
  simulation sim(plan, small_buffers(1, 128), 3);
  workload wl(6);
  for (int r = 1; r < 6; ++r) wl[static_cast<std::size_t>(r)].assign(400, 0);
  ASSERT_TRUE(run_cycle(sim, wl, 16).completed);
  std::uint64_t stalls = 0;
  for (int r = 1; r < 6; ++r) stalls += sim.at(r).stats().credit_stalls;
  EXPECT_GT(stalls, 0u);
  simulation calm(plan, small_buffers(2, 4096), 3);
  workload one(6);
  for (int r = 1; r < 6; ++r) one[static_cast<std::size_t>(r)].assign(1, 0);
  ASSERT_TRUE(run_cycle(calm, one, 16).completed);
  for (int r = 0; r < 6; ++r) EXPECT_EQ(calm.at(r).stats().credit_stalls, 0u) << r;
}

// TERM-16: time in advance and in the cycle are counted, and the cycle covers the advances.
TEST(EngineCounters, AdvanceAndCycleTime) {
  const auto plan = mesh_plan({2, 2});
  simulation sim(plan, small_buffers(), 5);
  const auto wl = make_workload(pattern::uniform, 4, 50, sim.rng());
  ASSERT_TRUE(run_cycle(sim, wl, 16).completed);
  for (int r = 0; r < 4; ++r) {
    const engine_stats s = sim.at(r).stats();
    EXPECT_GT(s.advances, 0u);
    EXPECT_GT(s.advance_seconds, 0.0);
    EXPECT_GE(s.cycle_seconds, s.advance_seconds);
    EXPECT_GT(s.memory_high_water, 0u);
  }
}

}  // namespace
}  // namespace convoy_test
