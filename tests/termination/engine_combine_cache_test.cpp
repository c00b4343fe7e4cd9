// Combining engines with hold-back caches (termination/README.md TERM-27) under
// simulation: every key's total at its owner equals the sum of every value pushed for it
// (the sequential oracle of combine_checker.hpp) through evictions from tiny caches, drains
// stopped by backpressure, steady dispatch, flush and several cycles; every rank
// terminates (TERM-4 checked after every advance); held items keep sending() true.
#include <gtest/gtest.h>

#include <convoy/aggregation/combine_cache.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/router/forwarding.hpp>
#include <convoy/termination/conveyor_options.hpp>
#include <convoy/termination/engine.hpp>
#include <convoy_test/plans.hpp>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "combine_checker.hpp"
#include "sim_harness.hpp"
#include "sim_workloads.hpp"

namespace convoy_test {
namespace {

using convoy::termination::engine_options;

constexpr kv_layout sum16{16, 0, 8, 8, 8};  // an 8-byte key, an 8-byte sum

engine_options cached(std::size_t entries, engine_options o) {
  o.combine_cache_entries = entries;
  return combining(sum16, o);
}

// TERM-27 with TERM-20, 22: every small plan x Zipf 0 and 1.2 x caches of 2 and 64 entries,
// one or two buffers per link of 256 or 512 bytes (drains stopped by a full lane), steady
// dispatch in one schedule of three.
TEST(EngineCombineCache, OwnersTotalsEqualTheOracleOnEveryPlan) {
  std::uint64_t combined = 0;
  for (const auto& [label, plan] : small_plans())
    for (double skew : {0.0, 1.2})
      for (std::size_t entries : {2u, 64u})
        for (std::uint64_t seed = 1; seed <= 3; ++seed) {
          engine_options o = small_buffers(seed == 1 ? 1 : 2, seed == 3 ? 512 : 256);
          o.steady = seed == 2;
          simulation sim(plan, cached(entries, o), seed * 17 + entries);
          const zipf_keys z(8 * static_cast<std::uint64_t>(sim.n_ranks()), skew);
          const auto w = make_keyed(sim.n_ranks(), 150, z, sim.rng());
          const std::string why = run_keyed(sim, w, sum16);
          ASSERT_TRUE(why.empty()) << label << " skew " << skew << " entries " << entries
                                   << " seed " << seed << ": " << why;
          combined += totals(sim).combined;
        }
  EXPECT_GT(combined, 0u);
}

// TERM-27: hot keys fold across buffers — a cache sends fewer records than the buffers'
// tables alone, with the same totals; several cycles on one simulation.
TEST(EngineCombineCache, FoldsAcrossBuffersOverSeveralCycles) {
  const plan_ptr plan = mesh_plan({2, 3});
  std::uint64_t pulls[2] = {0, 0};
  for (int with = 0; with < 2; ++with) {
    simulation sim(plan, cached(with ? 1024 : 0, small_buffers(2, 1024)), 29);
    const zipf_keys z(4096, 1.0);
    cycle_options c;
    c.max_rounds = 1000000;
    for (int cycle = 0; cycle < 3; ++cycle) {
      const auto w = make_keyed(sim.n_ranks(), 3000, z, sim.rng());
      const std::string why = run_keyed(sim, w, sum16, c);
      ASSERT_TRUE(why.empty()) << "cache " << with << " cycle " << cycle << ": " << why;
    }
    pulls[with] = totals(sim).pulls;
  }
  EXPECT_LT(pulls[1] * 4, pulls[0] * 3)
      << pulls[1] << " records with a cache, " << pulls[0] << " without";
}

// TERM-27: caches only on the out-links that engine_options::combine_cache_link names (over
// MPI, those that leave the node), here the last stage's: memory counts one cache per
// chosen link; the earlier stage sends exactly the records of the tables alone, and fewer
// records cross the last stage; every total equals the oracle. The folds' bar alone
// decides (a saved record's worth fixed), so that both runs make the same choices.
TEST(EngineCombineCache, CachesOnlyOnTheChosenLinks) {
  const plan_ptr plan = mesh_plan({2, 3});
  const int last = plan->n_stages() - 1;
  std::vector<std::vector<std::uint64_t>> sent[2];  // [with][stage][rank x link]
  std::size_t extra = 0;
  for (int with = 0; with < 2; ++with) {
    engine_options o = cached(with ? 1024 : 0, small_buffers(2, 1024));
    o.combine_gate.saved_record_ns = 1e9;
    o.combine_cache_link = [plan, last](int rank, int peer) {
      const convoy::router::forwarder f(plan, rank);
      for (const auto& l : f.out_links())
        if (l.peer == peer) return l.stage == last;
      ADD_FAILURE() << "rank " << rank << " has no out-link to " << peer;
      return false;
    };
    simulation sim(plan, o, 31);
    const zipf_keys z(4096, 1.0);
    cycle_options c;
    c.max_rounds = 1000000;
    const auto w = make_keyed(sim.n_ranks(), 3000, z, sim.rng());
    ASSERT_EQ(run_keyed(sim, w, sum16, c), "") << "cache " << with;
    sent[with].resize(static_cast<std::size_t>(plan->n_stages()));
    for (int r = 0; r < sim.n_ranks(); ++r) {
      const auto st = sim.at(r).stats(true);
      for (std::size_t s = 0; s < st.stages.size(); ++s)
        for (const auto& l : st.stages[s].links) sent[with][s].push_back(l.items_sent);
    }
    if (with == 0) extra = sim.at(0).max_memory_bytes();
    if (with == 1) extra = sim.at(0).max_memory_bytes() - extra;
  }
  std::size_t chosen = 0;
  const convoy::router::forwarder f0(plan, 0);
  for (const auto& l : f0.out_links()) chosen += l.stage == last ? 1 : 0;
  ASSERT_GT(chosen, 0u);
  ASSERT_LT(chosen, static_cast<std::size_t>(f0.n_out_links()));
  EXPECT_EQ(extra, chosen * convoy::aggregation::combine_cache::bytes_for(1024, 16));
  for (int s = 0; s < last; ++s)
    EXPECT_EQ(sent[1][static_cast<std::size_t>(s)], sent[0][static_cast<std::size_t>(s)])
        << "stage " << s << " has no cache";
  const auto sum = [](const std::vector<std::uint64_t>& v) {
    return std::accumulate(v.begin(), v.end(), std::uint64_t{0});
  };
  const auto& lasts = sent[1][static_cast<std::size_t>(last)];
  const auto& plain = sent[0][static_cast<std::size_t>(last)];
  EXPECT_LT(sum(lasts) * 4, sum(plain) * 3)
      << sum(lasts) << " records with caches, " << sum(plain) << " without";
}

// TERM-27: the entries a stage's close drains (one record per key, none of which folds) go
// into plain buffers that the gate does not judge: every buffer of the pushes folds half
// its records (each key pushed twice in a row), so no buffer of the cycle fails, while the
// drain fills several buffers past the gate's sample. The folds' bar alone decides.
TEST(EngineCombineCache, DrainedEntriesAreNotJudged) {
  engine_options o = cached(4096, small_buffers(2, 8192));
  o.combine_gate.saved_record_ns = 1e9;
  simulation sim(mesh_plan({2}), o, 43);
  keyed_workload w;
  w.dests.resize(2);
  w.keys.resize(2);
  std::vector<std::uint64_t> keys;  // rank 1's keys: every record crosses the link
  for (std::uint64_t k = 0; keys.size() < 2000; ++k)
    if (owner_of(k, 2) == 1) keys.push_back(k);
  for (int round = 0; round < 3; ++round)
    for (const std::uint64_t k : keys)
      for (int twice = 0; twice < 2; ++twice) {
        w.keys[0].push_back(k);
        w.dests[0].push_back(1);
      }
  cycle_options c;
  c.max_rounds = 1000000;
  ASSERT_EQ(run_keyed(sim, w, sum16, c), "");
  const combine_totals t = totals(sim);
  EXPECT_EQ(t.stops, 0u) << "buffers judged to fail";
  EXPECT_LT(t.pulls * 10, keys.size() * 11) << "a key's records fold into one but for evictions";
  ASSERT_GE(keys.size() * 16, 2 * 8192) << "the drain fills several buffers";
}

// Pushes {key, 1} for keys 0..n-1 from rank 0 to rank 1 of a 2-rank line with a cache.
void push_keys(simulation& sim, int n) {
  for (int r = 0; r < 2; ++r) ASSERT_EQ(sim.at(r).begin(16), 1);
  for (std::uint64_t k = 0; k < static_cast<std::uint64_t>(n); ++k) {
    const std::uint64_t item[2] = {k, 1};
    ASSERT_EQ(sim.at(0).push(item, 1), 1);
  }
}

// Rank 1's pulls (their counts summed) over `rounds` advances of both ranks, not done.
std::uint64_t pull_for(simulation& sim, int rounds) {
  std::uint64_t counted = 0;
  for (int round = 0; round < rounds; ++round) {
    for (int r = 0; r < 2; ++r) {
      EXPECT_GE(sim.at(r).advance(false), 0);
      convoy::termination::item_view v;
      while (sim.at(r).pull(v) > 0) {
        std::uint64_t n = 0;
        std::memcpy(&n, v.data + 8, 8);
        counted += n;
      }
    }
    sim.network().deliver_all();
  }
  return counted;
}

// TERM-27: held items are in no buffer, yet sending() is true; flush() drains the cache
// and posts, so they arrive while rank 0 still pushes; steady dispatch does the same
// within its period; the cycles then terminate.
TEST(EngineCombineCache, FlushAndSteadyDrainTheCaches) {
  for (const bool steady : {false, true}) {
    engine_options o = cached(64, small_buffers(2, 8192));
    o.steady = steady;
    o.steady_period = 4;
    simulation sim(mesh_plan({2}), o, 31);
    push_keys(sim, 5);
    EXPECT_TRUE(sim.at(0).sending()) << "five items held in the cache";
    EXPECT_EQ(pull_for(sim, 2), 0u) << "held items left before a flush";
    if (!steady) {
      ASSERT_EQ(sim.at(0).flush(), 1);
    }
    EXPECT_EQ(pull_for(sim, 12), 5u) << (steady ? "steady" : "flush");
    EXPECT_FALSE(sim.at(0).sending());
    int done = 0;
    for (int round = 0; round < 100 && done < 2; ++round) {
      done = 0;
      for (int r = 0; r < 2; ++r) done += sim.at(r).advance(true) == convoy::termination::done;
      sim.network().deliver_all();
    }
    EXPECT_EQ(done, 2);
  }
}

// TERM-27: the close of a stage drains its out-links' caches first, through one buffer of
// 256 bytes per link (a drain of 64 held records needs several buffers, each waiting for
// credit), with nothing flushed before.
TEST(EngineCombineCache, StageCloseDrainsThroughBackpressure) {
  simulation sim(mesh_plan({2}), cached(64, small_buffers(1, 256)), 37);
  push_keys(sim, 60);
  std::uint64_t counted = 0;
  int done = 0;
  for (int round = 0; round < 1000 && done < 2; ++round) {
    done = 0;
    for (int r = 0; r < 2; ++r) {
      done += sim.at(r).advance(true) == convoy::termination::done;
      convoy::termination::item_view v;
      while (sim.at(r).pull(v) > 0) {
        std::uint64_t n = 0;
        std::memcpy(&n, v.data + 8, 8);
        counted += n;
      }
    }
    sim.network().deliver_all();
  }
  EXPECT_EQ(done, 2);
  EXPECT_EQ(counted, 60u);
}

// TERM-27, TERM-24: the gate covers the cache (keys that never repeat stop it, nothing
// folds); memory counts one cache per out-link for the cycle's item size; too many
// entries are refused.
TEST(EngineCombineCache, GateMemoryAndMisuse) {
  const plan_ptr plan = mesh_plan({2, 2});
  simulation sim(plan, cached(4096, small_buffers(2, 8192)), 41);
  keyed_workload w;
  w.dests.resize(4);
  w.keys.resize(4);
  for (int r = 0; r < 4; ++r)
    for (std::uint64_t i = 0; i < 8000; ++i) {
      const std::uint64_t k = static_cast<std::uint64_t>(r) << 32 | i;
      w.keys[static_cast<std::size_t>(r)].push_back(k);
      w.dests[static_cast<std::size_t>(r)].push_back(owner_of(k, 4));
    }
  cycle_options c;
  c.max_rounds = 1000000;
  ASSERT_EQ(run_keyed(sim, w, sum16, c), "");
  const combine_totals t = totals(sim);
  EXPECT_EQ(t.combined, 0u);
  EXPECT_GE(t.stops, 4u * 2u);
  simulation without(plan, cached(0, small_buffers(2, 8192)), 41);
  ASSERT_EQ(without.at(0).begin(16), 1);
  const std::size_t n_out =
      static_cast<std::size_t>(convoy::router::forwarder(plan, 0).n_out_links());
  EXPECT_EQ(sim.at(0).max_memory_bytes() - without.at(0).max_memory_bytes(),
            n_out * convoy::aggregation::combine_cache::bytes_for(4096, 16));
  EXPECT_LE(sim.at(0).memory_bytes(), sim.at(0).max_memory_bytes());
  EXPECT_THROW(simulation(plan, cached((1u << 24) + 1, small_buffers()), 3), convoy::error);
}

// TERM-27: without a size, a budget shares out among the cached links (here those of the
// last stage): each gets the largest power of two of entries, at most 16 Ki, whose cache
// fits its equal share, none below 64; a size set wins over the budget. Memory after a
// combining begin of 16-byte items (32 bytes an entry, 64 to align a cache) against an
// engine without caches.
TEST(EngineCombineCache, BudgetSharesOutAmongTheCachedLinks) {
  const plan_ptr plan = mesh_plan({4, 3});
  const int last = plan->n_stages() - 1;
  std::size_t chosen = 0;
  const convoy::router::forwarder f0(plan, 0);
  for (const auto& l : f0.out_links()) chosen += l.stage == last ? 1 : 0;
  ASSERT_EQ(chosen, 3u) << "rank 0's links on the last stage of a 4 x 3 mesh";
  const auto extra = [&](std::size_t entries, std::size_t budget, bool all_links) {
    engine_options o = cached(entries, small_buffers(2, 8192));
    o.combine_cache_budget = budget;
    if (!all_links)
      o.combine_cache_link = [plan, last](int rank, int peer) {
        const convoy::router::forwarder f(plan, rank);
        for (const auto& l : f.out_links())
          if (l.peer == peer) return l.stage == last;
        return false;
      };
    simulation sim(plan, o, 5);
    simulation without(plan, cached(0, small_buffers(2, 8192)), 5);
    EXPECT_EQ(sim.at(0).begin(16), 1);
    EXPECT_EQ(without.at(0).begin(16), 1);
    return sim.at(0).max_memory_bytes() - without.at(0).max_memory_bytes();
  };
  const auto caches = [](std::size_t links, std::size_t entries) {
    return entries == 0 ? 0 : links * (entries * 32 + 64);
  };
  const std::size_t mib = std::size_t{1} << 20;
  EXPECT_EQ(extra(0, 4 * mib, false), caches(3, 16384));          // 1.33 MiB each: the cap
  EXPECT_EQ(extra(0, mib, false), caches(3, 8192));               // 341 KiB each
  EXPECT_EQ(extra(0, mib, true), caches(5, 4096));                // 5 out-links share it
  EXPECT_EQ(extra(0, 3 * (64 * 32 + 64), false), caches(3, 64));  // the least
  EXPECT_EQ(extra(0, 3 * (64 * 32 + 64) - 3, false), 0u);         // below it: none
  EXPECT_EQ(extra(1024, mib, false), caches(3, 1024));            // a size set wins
  EXPECT_EQ(extra(0, 0, true), 0u);
}

// TERM-27 over MPI: conveyor_options::combine_cache_entries (0: none) beats
// CONVOY_COMBINE_CACHE, which beats the default budget of 4 MiB per rank.
TEST(EngineCombineCache, ASizeSetBeatsTheDefaultBudget) {
  using convoy::base::settings;
  using convoy::termination::conveyor_options;
  const auto resolved = [](std::optional<std::size_t> entries,
                           const std::map<std::string, std::string>& env) {
    conveyor_options o;
    o.combine_cache_entries = entries;
    const auto e = convoy::termination::resolve_engine_options(o, settings::from_values(env));
    return std::pair{e.combine_cache_entries, e.combine_cache_budget};
  };
  using sizes = std::pair<std::size_t, std::size_t>;  // entries, budget
  const std::size_t budget = std::size_t{4} << 20;
  EXPECT_EQ(convoy::base::default_combine_cache_budget, budget);
  EXPECT_EQ(resolved({}, {}), sizes(0, budget));
  EXPECT_EQ(resolved({}, {{"CONVOY_COMBINE_CACHE", "0"}}), sizes(0, 0));
  EXPECT_EQ(resolved({}, {{"CONVOY_COMBINE_CACHE", "64"}}), sizes(64, 0));
  EXPECT_EQ(resolved(0, {}), sizes(0, 0));
  EXPECT_EQ(resolved(0, {{"CONVOY_COMBINE_CACHE", "64"}}), sizes(0, 0));
  EXPECT_EQ(resolved(2048, {{"CONVOY_COMBINE_CACHE", "0"}}), sizes(2048, 0));
}

}  // namespace
}  // namespace convoy_test
