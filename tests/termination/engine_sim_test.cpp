// The engine under simulation: the conveyor contract (termination/README.md, TERM-1..7)
// on many plans, traffic patterns and random schedules, P from 1 to 4096.
#include <convoy/base/error.hpp>
#include <convoy/router/forwarding.hpp>
#include <convoy/router/memory.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy_test/plans.hpp>
#include <memory>
#include <string>
#include <vector>

#include "sim_harness.hpp"
#include "sim_workloads.hpp"

namespace convoy_test {
namespace {

using convoy::router::make_tensor_plan;
using convoy::termination::engine_options;

// TERM-1, TERM-2, TERM-3, TERM-4 (and AGG-25: delivery windows with unpulls) for every small plan x
// pattern over 100 random schedules each.
TEST(EngineSim, ContractOnSmallPlansEveryPatternHundredSchedules) {
  const pattern patterns[] = {pattern::uniform,  pattern::all_to_one, pattern::one_to_all,
                              pattern::self,     pattern::nobody,     pattern::one_sender,
                              pattern::imbalance};
  std::uint64_t items = 0;
  for (const auto& pc : small_plans()) {
    for (pattern pat : patterns) {
      for (std::uint64_t seed = 1; seed <= 100; ++seed) {
        engine_options o = small_buffers(seed % 2 ? 1 : 2, seed % 3 ? 128 : 512);
        if (seed % 7 == 0) o.route_table_max_ranks = 0;  // first hops from the plan, per item
        simulation sim(pc.plan, o, seed);
        const auto wl = make_workload(pat, sim.n_ranks(), 40, sim.rng());
        const auto res = run_cycle(sim, wl, sizeof(tracer) + seed % 5);
        ASSERT_TRUE(res.failure.empty())
            << pc.label << " " << name(pat) << " seed " << seed << ": " << res.failure;
        ASSERT_TRUE(res.completed) << pc.label << " " << name(pat) << " seed " << seed
                                   << " did not terminate in " << res.rounds << " rounds";
        // Every item of the workload went through, whatever the harness counted.
        ASSERT_EQ(res.pulled, n_items(wl)) << pc.label << " " << name(pat) << " seed " << seed;
        items += n_items(wl);
      }
    }
  }
  // At least the uniform pattern's traffic: 40 items per rank, 142 ranks over the 15 plans.
  EXPECT_GE(items, 40u * 142u * 100u);
}

// TERM-1..4 by the bulk pull (conveyor_engine::pull_batch): every small plan x four patterns,
// batches of 1 to 8 items or the rest of a window, the last item of a batch now and then put
// back and pulled again: the contract as by pull().
TEST(EngineSim, BatchPullsKeepTheContract) {
  const pattern patterns[] = {pattern::uniform, pattern::all_to_one, pattern::self,
                              pattern::imbalance};
  cycle_options c;
  c.batches = true;
  for (const auto& pc : small_plans())
    for (pattern pat : patterns)
      for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        engine_options o = small_buffers(seed % 2 ? 1 : 2, seed % 3 ? 128 : 512);
        if (seed % 7 == 0) o.route_table_max_ranks = 0;
        simulation sim(pc.plan, o, seed);
        const auto wl = make_workload(pat, sim.n_ranks(), 40, sim.rng());
        const auto res = run_cycle(sim, wl, sizeof(tracer) + seed % 5, c);
        const std::string at = pc.label + " " + name(pat) + " seed " + std::to_string(seed);
        ASSERT_TRUE(res.failure.empty()) << at << ": " << res.failure;
        ASSERT_TRUE(res.completed) << at << " did not terminate in " << res.rounds << " rounds";
        ASSERT_EQ(res.pulled, n_items(wl)) << at;
      }
}

// TERM-1, TERM-2, TERM-3, TERM-4: P from 1 to 4096 on the default (innermost-first) TRAM order of
// Cartesian meshes.
TEST(EngineSim, RankCountsFromOneTo4096) {
  const std::vector<std::vector<int>> shapes = {{1},    {2},       {3},          {2, 2},
                                                {5, 3}, {4, 4, 4}, {2, 3, 5, 7}, {64, 64}};
  for (const auto& shape : shapes) {
    const plan_ptr plan = mesh_plan(shape);
    const std::uint64_t seeds = plan->n_ranks() > 1000 ? 1 : 3;
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
      simulation sim(plan, small_buffers(), seed);
      const auto wl = make_workload(pattern::uniform, sim.n_ranks(), 3, sim.rng());
      const auto res = run_cycle(sim, wl, sizeof(tracer));
      ASSERT_TRUE(res.failure.empty()) << plan->name() << ": " << res.failure;
      ASSERT_TRUE(res.completed) << plan->name();
    }
  }
}

// TERM-1, TERM-2, TERM-3, TERM-8. An engine is reusable: several begin..reset cycles with different
// item sizes.
TEST(EngineSim, ReuseAcrossCyclesWithDifferentItemSizes) {
  const plan_ptr plan = make_tensor_plan(3, 18, 3);
  simulation sim(plan, small_buffers(2, 256), 7);
  for (std::size_t bytes : {16u, 17u, 64u, 200u, 16u}) {
    const auto wl = make_workload(pattern::uniform, sim.n_ranks(), 30, sim.rng());
    const auto res = run_cycle(sim, wl, bytes);
    ASSERT_TRUE(res.failure.empty()) << bytes << ": " << res.failure;
    ASSERT_TRUE(res.completed) << bytes;
  }
  EXPECT_EQ(sim.at(3).stats(true).begins, 5u);
  EXPECT_EQ(sim.at(3).stats().begins, 1u);
}

// TERM-9. Misuse: every illegal call returns its negative code and changes nothing: a round
// after the misuse (and with misuse between its calls) still delivers every item intact.
TEST(EngineSim, MisuseIsRejectedAndChangesNothing) {
  simulation sim(mesh_plan({2, 2}), small_buffers(), 3);
  auto& e = sim.at(0);
  const std::uint64_t item[4] = {1, 2, 3, 4};
  convoy::termination::item_view v;
  EXPECT_EQ(e.push(item, 1), convoy::termination::error_state);
  EXPECT_EQ(e.pull(v), convoy::termination::error_state);
  EXPECT_EQ(e.unpull(), convoy::termination::error_state);
  EXPECT_EQ(e.advance(false), convoy::termination::error_state);
  EXPECT_EQ(e.reset(), 1);  // no-op in DORMANT
  EXPECT_EQ(e.current_state(), state::dormant);
  EXPECT_EQ(e.begin(0), convoy::termination::error_size);
  EXPECT_EQ(e.begin(1 << 20), convoy::termination::error_size);
  EXPECT_EQ(e.current_state(), state::dormant);
  for (int r = 0; r < 4; ++r) ASSERT_EQ(sim.at(r).begin(sizeof item), 1);
  EXPECT_EQ(e.begin(sizeof item), convoy::termination::error_state);
  EXPECT_EQ(e.begin(sizeof item / 2), convoy::termination::error_state);
  EXPECT_EQ(e.push(item, 4), convoy::termination::error_rank);
  EXPECT_EQ(e.push(item, -1), convoy::termination::error_rank);
  EXPECT_EQ(e.push(nullptr, 1), convoy::termination::error_argument);
  EXPECT_EQ(e.epush(item, 8, 1), convoy::termination::error_elastic);
  EXPECT_EQ(e.unpull(), convoy::termination::error_unpull);
  EXPECT_EQ(e.reset(), convoy::termination::error_state);
  EXPECT_EQ(e.stats().pushes, 0u);
  EXPECT_EQ(e.current_state(), state::working);

  // A correct round on the same engines: every item of `wl` arrives once, intact, in order.
  const workload wl = {{1, 2, 3, 0}, {0}, {}, {0, 0, 3}};
  contract_checker items(sizeof item);
  std::vector<std::size_t> next(4, 0);
  std::string failure;
  bool all = false;
  for (int round = 0; round < 10000 && !all; ++round) {
    all = true;
    for (int r = 0; r < 4; ++r) {
      auto& x = sim.at(r);
      const auto& dests = wl[static_cast<std::size_t>(r)];
      auto& i = next[static_cast<std::size_t>(r)];
      if (x.current_state() == state::working && i < dests.size()) {
        const int rc = x.push(items.next(r, dests[i]), dests[i]);
        ASSERT_GE(rc, 0);
        if (rc == 1) items.pushed(r, dests[i++]);
        EXPECT_EQ(x.push(item, 4), convoy::termination::error_rank);  // between pushes
      }
      while (x.pull(v) == 1) {
        const std::string why = items.check(r, v);
        if (failure.empty()) failure = why;
      }
      const int rc = x.advance(i == dests.size());
      ASSERT_GE(rc, 0) << x.last_message();
      if (x.current_state() == state::endgame || x.current_state() == state::cleanup) {
        EXPECT_EQ(x.push(item, 1), convoy::termination::error_state);  // push after done
        EXPECT_EQ(x.advance(false), convoy::termination::error_state);
      }
      if (x.current_state() == state::complete) {
        EXPECT_EQ(x.push(item, 1), convoy::termination::error_state);
        EXPECT_EQ(x.advance(false), convoy::termination::done);
      }
      if (rc != convoy::termination::done) all = false;
      sim.network().deliver_all();
    }
  }
  ASSERT_TRUE(all);
  EXPECT_EQ(failure, "");
  EXPECT_EQ(items.missing(), "");
  EXPECT_EQ(items.n_pulled(), n_items(wl));
  EXPECT_EQ(e.stats().pushes, wl[0].size());
  EXPECT_EQ(e.advance(true), convoy::termination::done);
  EXPECT_EQ(e.pull(v), 0);   // legal in COMPLETE, fails
  EXPECT_EQ(e.unpull(), 0);  // legal in COMPLETE, fails
  EXPECT_EQ(e.begin(8), convoy::termination::error_state);
  for (int r = 0; r < 4; ++r) ASSERT_EQ(sim.at(r).reset(), 1);
}

// TERM-5. Bounded memory and backpressure: everyone pushes to rank 0, which does not pull.
// Pushes fail once the paths toward rank 0 are full; no rank's buffer memory ever
// exceeds its stated maximum; once rank 0 pulls, everything gets through.
TEST(EngineSim, HotSpotBackpressureKeepsMemoryBounded) {
  const plan_ptr plan = mesh_plan({4, 4});
  simulation sim(plan, small_buffers(2, 256), 11);
  for (int r = 0; r < 16; ++r) ASSERT_EQ(sim.at(r).begin(sizeof(tracer)), 1);
  std::vector<std::uint32_t> sent(16, 0);
  std::uint64_t refused = 0;
  for (int round = 0; round < 200; ++round) {
    for (int r = 1; r < 16; ++r) {
      auto& e = sim.at(r);
      for (int k = 0; k < 50; ++k) {
        tracer t{r, 0, sent[static_cast<std::size_t>(r)], 0};
        t.check = checksum(t);
        const int rc = e.push(&t, 0);
        ASSERT_GE(rc, 0);
        if (rc == 0) {
          ++refused;
          break;
        }
        ++sent[static_cast<std::size_t>(r)];
      }
      ASSERT_GE(e.advance(false), 0);
      ASSERT_LE(e.memory_bytes(), e.max_memory_bytes());
    }
    ASSERT_GE(sim.at(0).advance(false), 0);
    sim.network().deliver_all();
  }
  EXPECT_GT(refused, 0u) << "a receiver that never pulls must stop the senders";
  std::uint64_t total = 0;
  for (auto s : sent) total += s;
  // Everything accepted fits in the buffers on the way: bounded by the links' capacity.
  std::uint64_t capacity_items = 0;
  for (int r = 0; r < 16; ++r)
    capacity_items += convoy::router::link_buffer_bytes(*plan, r, 256, 2) / sizeof(tracer);
  EXPECT_LE(total, capacity_items);
  // Now rank 0 drains and everybody finishes.
  std::vector<std::uint32_t> seen(16, 0);
  bool all = false;
  for (int round = 0; round < 100000 && !all; ++round) {
    all = true;
    for (int r = 0; r < 16; ++r) {
      auto& e = sim.at(r);
      convoy::termination::item_view v;
      while (e.pull(v) == 1) {
        tracer t;
        std::memcpy(&t, v.data, sizeof t);
        ASSERT_EQ(t.seq, seen[static_cast<std::size_t>(t.src)]++);
      }
      const int rc = e.advance(true);
      ASSERT_GE(rc, 0);
      if (rc != convoy::termination::done) all = false;
    }
    sim.network().deliver_all();
  }
  ASSERT_TRUE(all);
  EXPECT_EQ(seen, sent);
}

// TERM-6. A dependent chain: a token passed around the ring K times. Without steady mode the
// token waits in a partly filled buffer forever (the loop cannot finish); with steady
// mode (TRAM periodic dispatch) it always moves on.
int token_ring_rounds(bool steady, int p, int laps, int max_rounds) {
  engine_options o = small_buffers(2, 4096);
  o.steady = steady;
  simulation sim(mesh_plan({p}), o, 5);
  for (int r = 0; r < p; ++r) sim.at(r).begin(sizeof(int));
  std::vector<int> forwarded(static_cast<std::size_t>(p), 0);
  const int hops_per_rank = laps;
  int token = 0;
  if (sim.at(0).push(&token, 1 % p) != 1) return -1;
  forwarded[0] = 1;
  int done_ranks = 0;
  for (int round = 0; round < max_rounds; ++round) {
    for (int r = 0; r < p; ++r) {
      auto& e = sim.at(r);
      convoy::termination::item_view v;
      while (e.pull(v) == 1) {
        int t;
        std::memcpy(&t, v.data, sizeof t);
        ++t;
        if (forwarded[static_cast<std::size_t>(r)] < hops_per_rank) {
          if (e.push(&t, (r + 1) % p) != 1) return -2;
          ++forwarded[static_cast<std::size_t>(r)];
        }
      }
      if (e.current_state() == state::complete) continue;
      if (e.advance(forwarded[static_cast<std::size_t>(r)] >= hops_per_rank) ==
          convoy::termination::done)
        ++done_ranks;
      sim.network().deliver_all();
    }
    if (done_ranks == p) return round;
  }
  return -3;
}

TEST(EngineSim, DependentChainNeedsSteadyMode) {
  EXPECT_EQ(token_ring_rounds(false, 6, 3, 2000), -3) << "without steady mode the token must stall";
  const int rounds = token_ring_rounds(true, 6, 3, 2000);
  EXPECT_GT(rounds, 0) << "steady mode must deliver the token (" << rounds << ")";
}

// TERM-7. Two engines at once: queries and replies (Maley & DeVinney 2019, Fig. 4), with unpull
// when the reply cannot be pushed.
TEST(EngineSim, TwoEnginesQueryReply) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const plan_ptr plan = make_tensor_plan(3, 8, 2);
    simulation q(plan, small_buffers(1, 128), seed), rsp(plan, small_buffers(1, 128), seed + 99);
    const int p = 8, n = 300;
    struct packet {
      std::int64_t slot, value;
    };
    std::vector<std::vector<std::int64_t>> index(p), gathered(p, std::vector<std::int64_t>(n, -1));
    std::mt19937_64 rng(seed);
    for (auto& v : index)
      for (int i = 0; i < n; ++i) v.push_back(static_cast<std::int64_t>(rng() % 1000));
    for (int r = 0; r < p; ++r) {
      ASSERT_EQ(q.at(r).begin(sizeof(packet)), 1);
      ASSERT_EQ(rsp.at(r).begin(sizeof(packet)), 1);
    }
    std::vector<int> i(p, 0);
    std::vector<bool> finished(p, false);
    int n_finished = 0;
    for (int round = 0; round < 100000 && n_finished < p; ++round) {
      for (int r : q.round_order()) {
        if (finished[static_cast<std::size_t>(r)]) continue;
        auto& qe = q.at(r);
        auto& re = rsp.at(r);
        auto& ir = i[static_cast<std::size_t>(r)];
        // while (convey_advance(r, !convey_advance(q, i == n)))
        const int qa = qe.advance(ir == n);
        ASSERT_GE(qa, 0);
        const int ra = re.advance(qa == convoy::termination::done);
        ASSERT_GE(ra, 0);
        if (ra == convoy::termination::done) {
          finished[static_cast<std::size_t>(r)] = true;
          ++n_finished;
          continue;
        }
        for (; ir < n; ++ir) {
          const auto g = index[static_cast<std::size_t>(r)][static_cast<std::size_t>(ir)];
          packet pk{ir, g / p};
          if (qe.push(&pk, static_cast<int>(g % p)) != 1) break;
        }
        convoy::termination::item_view v;
        while (qe.pull(v) == 1) {
          packet pk;
          std::memcpy(&pk, v.data, sizeof pk);
          pk.value = pk.value * p + r + 1000000;  // "array[value]" on the owner
          if (re.push(&pk, v.from) != 1) {
            ASSERT_EQ(qe.unpull(), 1);
            break;
          }
        }
        while (re.pull(v) == 1) {
          packet pk;
          std::memcpy(&pk, v.data, sizeof pk);
          gathered[static_cast<std::size_t>(r)][static_cast<std::size_t>(pk.slot)] = pk.value;
        }
        q.jitter(4);
        rsp.jitter(4);
      }
    }
    ASSERT_EQ(n_finished, p) << "seed " << seed;
    for (int r = 0; r < p; ++r)
      for (int k = 0; k < n; ++k)
        ASSERT_EQ(gathered[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)],
                  index[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)] + 1000000)
            << "seed " << seed << " rank " << r << " slot " << k;
  }
}

// Steady mode delivers while nobody is in the endgame (TERM-6).
TEST(EngineSim, SteadyDeliversWithoutEndgame) {
  engine_options o = small_buffers(2, 1024);
  o.steady = true;
  simulation sim(make_tensor_plan(3, 18, 3), o, 9);
  for (int r = 0; r < 18; ++r) ASSERT_EQ(sim.at(r).begin(sizeof(tracer)), 1);
  std::mt19937_64 rng(1);
  std::vector<int> pushed_to(18, 0), got(18, 0);
  for (int r = 0; r < 18; ++r) {
    tracer t{r, static_cast<int>(rng() % 18), 0, 0};
    t.check = checksum(t);
    ASSERT_EQ(sim.at(r).push(&t, t.dst), 1);
    ++pushed_to[static_cast<std::size_t>(t.dst)];
  }
  for (int round = 0; round < 50; ++round)
    for (int r = 0; r < 18; ++r) {
      ASSERT_EQ(sim.at(r).advance(false), convoy::termination::ok);
      convoy::termination::item_view v;
      while (sim.at(r).pull(v) == 1) ++got[static_cast<std::size_t>(r)];
      sim.network().deliver_all();
    }
  EXPECT_EQ(got, pushed_to);
  for (int r = 0; r < 18; ++r) EXPECT_EQ(sim.at(r).current_state(), state::working);
}

// TERM-6. An explicit flush sends a partly filled buffer at once, without steady mode.
TEST(EngineSim, ExplicitFlushSendsPartialBuffers) {
  simulation sim(mesh_plan({4}), small_buffers(2, 4096), 2);
  for (int r = 0; r < 4; ++r) ASSERT_EQ(sim.at(r).begin(sizeof(tracer)), 1);
  tracer t{0, 3, 0, 0};
  t.check = checksum(t);
  ASSERT_EQ(sim.at(0).push(&t, 3), 1);
  convoy::termination::item_view v;
  ASSERT_EQ(sim.at(0).advance(false), convoy::termination::ok);
  sim.network().deliver_all();
  ASSERT_EQ(sim.at(3).advance(false), convoy::termination::ok);
  EXPECT_EQ(sim.at(3).pull(v), 0) << "an unflushed item of a non-steady engine must wait";
  ASSERT_EQ(sim.at(0).flush(), 1);
  sim.network().deliver_all();
  ASSERT_EQ(sim.at(3).advance(false), convoy::termination::ok);
  ASSERT_EQ(sim.at(3).pull(v), 1);
  EXPECT_EQ(v.from, 0);
  EXPECT_EQ(sim.at(1).stats().buffers_sent, 0u);
  EXPECT_EQ(sim.at(0).stats().stages.at(0).buffers, 1u);
  EXPECT_EQ(sim.at(2).reset(), convoy::termination::error_state);
}

// TERM-14. sending() while a lane holds a record or the transport holds a posted buffer,
// and not once it has left (the receiver's release included).
TEST(EngineSim, SendingUntilEverythingPostedHasLeft) {
  simulation sim(mesh_plan({4}), small_buffers(2, 4096), 3);
  for (int r = 0; r < 4; ++r) ASSERT_EQ(sim.at(r).begin(sizeof(tracer)), 1);
  EXPECT_FALSE(sim.at(0).sending());
  tracer t{0, 2, 0, 0};
  t.check = checksum(t);
  ASSERT_EQ(sim.at(0).push(&t, 2), 1);
  EXPECT_TRUE(sim.at(0).sending()) << "a partly filled lane";
  ASSERT_EQ(sim.at(0).advance(false), convoy::termination::ok);
  EXPECT_TRUE(sim.at(0).sending()) << "not flushed: still in its lane";
  ASSERT_EQ(sim.at(0).flush(), 1);
  EXPECT_TRUE(sim.at(0).sending()) << "posted, not delivered";
  sim.network().deliver_all();
  convoy::termination::item_view v;
  for (int round = 0; round < 4 && v.from < 0; ++round) {
    ASSERT_EQ(sim.at(2).advance(false), convoy::termination::ok);
    if (sim.at(2).pull(v) == 1) break;
  }
  ASSERT_EQ(v.from, 0);
  for (int round = 0; round < 4; ++round) {  // the release travels back; the sender sees it
    ASSERT_EQ(sim.at(2).advance(false), convoy::termination::ok);
    sim.network().deliver_all();
    ASSERT_EQ(sim.at(0).advance(false), convoy::termination::ok);
  }
  EXPECT_FALSE(sim.at(0).sending());
  EXPECT_FALSE(sim.at(2).sending());
  EXPECT_FALSE(sim.at(1).sending());
}

// At most, the tables of TERM-13 on rank r of a rigid engine: on each in-link with one
// byte of tag or none that is not single-source (ROUTE-23), a 256-entry source table of 4
// bytes, and before the last stage a 256-entry step table of 8 bytes (ROUTE-24).
std::size_t run_tables_bytes(const plan_ptr& plan, int r) {
  const convoy::router::forwarder f(plan, r);
  std::size_t n = 0;
  for (std::size_t i = 0; i < f.in_links().size(); ++i) {
    const int stage = f.in_links()[i].stage;
    const int tb = plan->tag_bytes(stage);
    if (tb > 1 || f.single_source(static_cast<int>(i)) >= 0) continue;
    if (stage + 1 < plan->n_stages())
      n += std::size_t{256} * (8 + 4);
    else if (tb == 1)
      n += std::size_t{256} * 4;
  }
  return n;
}

// TERM-5, TERM-13. Memory: the engine reports the router's formula plus its fixed costs:
// n_buffers loopback buffers, an 8-byte first-hop entry per rank and the tables of TERM-13
// (none above the table limit).
TEST(EngineSim, MemoryMatchesFormula) {
  for (const auto& pc : small_plans()) {
    for (const bool table : {true, false}) {
      engine_options o = small_buffers(4, 512);
      if (!table) o.route_table_max_ranks = 0;
      simulation sim(pc.plan, o, 1);
      const std::size_t p = static_cast<std::size_t>(sim.n_ranks());
      for (int r = 0; r < sim.n_ranks(); ++r)
        EXPECT_EQ(sim.at(r).max_memory_bytes(),
                  convoy::router::link_buffer_bytes(*pc.plan, r, 512, 4) + std::size_t{4} * 512 +
                      (table ? 8 * p + run_tables_bytes(pc.plan, r) : 0))
            << pc.label << " rank " << r << (table ? " with" : " without") << " route table";
    }
  }
}

TEST(EngineSim, BadOptionsThrowWithMessage) {
  const plan_ptr plan = mesh_plan({4});
  auto make = [&](engine_options o) {
    convoy::aggregation::sim_network net(4, 1);
    convoy::termination::engine e(plan, 0, net.endpoint(0), std::move(o));
  };
  engine_options o;
  o.n_buffers = 0;
  EXPECT_THROW(make(o), convoy::error);
  o = {};
  o.buffer_bytes = 8;
  try {
    make(o);
    FAIL() << "capacity 8 accepted";
  } catch (const convoy::error& ex) {
    EXPECT_NE(std::string(ex.what()).find("buffer_bytes 8 is too small"), std::string::npos)
        << ex.what();
  }
}

}  // namespace
}  // namespace convoy_test
