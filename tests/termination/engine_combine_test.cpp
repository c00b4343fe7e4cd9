// Combining engines under simulation (termination/README.md TERM-20..24): random and
// Zipf-skewed keys on full, ragged and tensor plans at 1 to 64 ranks (and 4 096 in the
// large entry), random schedules, backpressure: every key's total at its owner equals the
// sum of every value pushed for it, every rank terminates (TERM-4 checked after every
// advance), pushes - folds = records pulled, and the gate turns combining off where keys
// never repeat.
#include <gtest/gtest.h>

#include <chrono>
#include <convoy/base/error.hpp>
#include <convoy/router/forwarding.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/termination/engine.hpp>
#include <convoy_test/plans.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "combine_checker.hpp"
#include "sim_harness.hpp"
#include "sim_workloads.hpp"

namespace convoy_test {
namespace {

using convoy::termination::engine_options;

const kv_layout layouts[] = {
    {16, 0, 8, 8, 8},    // the common one: an 8-byte key, an 8-byte sum
    {8, 4, 4, 0, 4},     // value first, 4-byte key
    {24, 0, 8, 16, 8},   // bytes between key and value
    {20, 0, 12, 12, 8},  // a 12-byte key (bytewise compare)
    {13, 1, 4, 5, 8},    // odd size (the generic copy), unaligned fields
};

// TERM-20, TERM-21, TERM-22: every plan x skew (0, 1.0, 1.5) x item layout, five random
// schedules each, with one or two buffers per link of 128 to 2048 bytes (backpressure
// mid-run), steady dispatch now and then, and first hops from the plan (no table) too.
TEST(EngineCombine, OwnersTotalsEqualTheOracleOnEveryPlan) {
  std::uint64_t combined = 0, pushes = 0;
  for (const auto& [label, plan] : small_plans())
    for (double skew : {0.0, 1.0, 1.5})
      for (const kv_layout& lay : layouts)
        for (std::uint64_t seed = 1; seed <= 5; ++seed) {
          engine_options o = small_buffers(seed % 2 ? 1 : 2, seed == 1 ? 128 : seed * 512);
          o.steady = seed == 2;
          if (seed == 3 && lay.item_bytes == 16) o.route_table_max_ranks = 0;
          simulation sim(plan, combining(lay, o), seed * 131 + lay.item_bytes);
          const zipf_keys z(8 * static_cast<std::uint64_t>(sim.n_ranks()), skew);
          const auto w = make_keyed(sim.n_ranks(), 100, z, sim.rng());
          const std::string why = run_keyed(sim, w, lay);
          ASSERT_TRUE(why.empty()) << label << " skew " << skew << " item " << lay.item_bytes
                                   << " seed " << seed << ": " << why;
          const combine_totals t = totals(sim);
          combined += t.combined;
          pushes += t.pushes;
        }
  // Small key spaces repeat keys within a buffer: combining happened, and a lot.
  EXPECT_GT(combined, pushes / 4);
}

// A mesh of about `p` ranks: two dimensions as square as p allows (a line for primes).
plan_ptr mesh_of(int p) {
  int a = 1;
  for (int d = 1; d * d <= p; ++d)
    if (p % d == 0) a = d;
  return a == 1 ? mesh_plan({p}) : mesh_plan({a, p / a});
}

// Ragged nodes of 1 to 5 ranks adding up to p.
plan_ptr ragged_of(int p) {
  std::vector<int> sizes;
  for (int n = 0, left = p; left > 0; ++n) {
    sizes.push_back(std::min(left, 1 + (n * 3) % 5));
    left -= sizes.back();
  }
  return ragged_plan(sizes);
}

// TERM-20, TERM-22 at every rank count from 1 to 64, full and ragged meshes, Zipf 1.0.
TEST(EngineCombine, RankCountsFromOneTo64) {
  for (int p = 1; p <= 64; ++p)
    for (const plan_ptr& plan : {mesh_of(p), ragged_of(p)}) {
      simulation sim(plan, combining(layouts[0], small_buffers(2, 256)),
                     static_cast<std::uint64_t>(p));
      const zipf_keys z(16 * static_cast<std::uint64_t>(p), 1.0);
      const auto w = make_keyed(p, 60, z, sim.rng());
      cycle_options o;
      o.rest_idle = true;
      const std::string why = run_keyed(sim, w, layouts[0], o);
      ASSERT_TRUE(why.empty()) << plan->name() << ": " << why;
    }
}

// Key i of rank r: r's own, never repeated.
std::uint64_t distinct_key(int r, std::uint64_t i) {
  return static_cast<std::uint64_t>(r) << 32 | i;
}

// `n` pushes per rank of `p`: key_of(r, i), each to its owner; `others_only`: without the
// keys a rank owns itself.
template <class KeyOf>
keyed_workload keyed_by(int p, std::uint64_t n, KeyOf key_of, bool others_only = false) {
  keyed_workload w;
  w.dests.resize(static_cast<std::size_t>(p));
  w.keys.resize(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r)
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t k = key_of(r, i);
      if (others_only && owner_of(k, p) == r) continue;
      w.keys[static_cast<std::size_t>(r)].push_back(k);
      w.dests[static_cast<std::size_t>(r)].push_back(owner_of(k, p));
    }
  return w;
}

// TERM-24 (AGG-155 in the engine): keys that never repeat turn combining off with growing
// skips and nothing is folded; hot keys keep it on and fold most pushes.
TEST(EngineCombine, GateTurnsCombiningOffOnUniformKeys) {
  const plan_ptr plan = mesh_plan({2, 2});
  engine_options o = combining(layouts[0], small_buffers(2, 8192));  // 480 records a buffer
  {
    simulation sim(plan, o, 7);
    const keyed_workload w = keyed_by(4, 20000, distinct_key);
    cycle_options c;
    c.max_rounds = 1000000;
    const std::string why = run_keyed(sim, w, layouts[0], c);
    ASSERT_TRUE(why.empty()) << why;
    const combine_totals t = totals(sim);
    EXPECT_EQ(t.combined, 0u);
    EXPECT_GE(t.stops, 4u * 3u) << "every rank's lanes stop combining";
  }
  {
    simulation sim(plan, o, 8);
    const zipf_keys z(64, 1.0);
    const auto w = make_keyed(4, 20000, z, sim.rng());
    cycle_options c;
    c.max_rounds = 1000000;
    const std::string why = run_keyed(sim, w, layouts[0], c);
    ASSERT_TRUE(why.empty()) << why;
    const combine_totals t = totals(sim);
    EXPECT_EQ(t.stops, 0u);
    EXPECT_GT(t.combined, t.pushes * 3 / 4);
  }
}

// TERM-24, 28: each out-link counts the folds and stopped buffers of its lane, with the
// gate's measures; with no rank pushing to itself (the loopback lane, on no link, stays
// empty) the links' counts add up to the rank's. Distinct keys: only stops; repeating
// keys: only folds.
TEST(EngineCombine, LinksCountTheirFoldsAndStops) {
  const plan_ptr plan = mesh_plan({2, 2});
  const engine_options o = combining(layouts[0], small_buffers(2, 8192));
  for (const bool repeat : {false, true}) {
    simulation sim(plan, o, 9);
    const auto squares = [](int, std::uint64_t i) { return i * i % 97; };
    const keyed_workload w =
        repeat ? keyed_by(4, 20000, squares, true) : keyed_by(4, 20000, distinct_key, true);
    cycle_options c;
    c.max_rounds = 1000000;
    ASSERT_EQ(run_keyed(sim, w, layouts[0], c), "") << "repeat " << repeat;
    std::uint64_t folds = 0, stops = 0;
    for (int r = 0; r < 4; ++r) {
      const auto st = sim.at(r).stats(true);
      std::uint64_t link_folds = 0, link_stops = 0;
      for (const auto& s : st.stages)
        for (const auto& l : s.links) {
          link_folds += l.combined;
          link_stops += l.combine_stops;
          if (l.combined + l.combine_stops > 0) {
            EXPECT_GT(l.combine_ns_per_record, 0.0) << "rank " << r << " peer " << l.peer;
          }
        }
      EXPECT_EQ(link_folds, st.combined) << "rank " << r << " repeat " << repeat;
      EXPECT_EQ(link_stops, st.combine_stops) << "rank " << r << " repeat " << repeat;
      folds += st.combined;
      stops += st.combine_stops;
    }
    EXPECT_EQ(folds > 0, repeat);
    EXPECT_EQ(stops > 0, !repeat);
  }
}

// Pushes `keys` from rank 0 to rank 1 of a 2-rank line, each {key, 1}, noting the limit
// of rank 0's lane toward rank 1 after every push that leaves it with an open buffer, and
// the buffers rank 0 sent by then;
// then completes the cycle and checks that rank 1 pulled one count per push.
struct pushing_seen {
  std::vector<std::uint32_t> limits;
  std::uint64_t buffers_sent = 0, combined = 0, stops = 0;
};
pushing_seen push_to_rank_1(const std::vector<std::uint64_t>& keys) {
  simulation sim(mesh_plan({2}), combining(layouts[0], small_buffers(2, 8192)), 5);
  EXPECT_EQ(sim.at(0).begin(16), 1);
  EXPECT_EQ(sim.at(1).begin(16), 1);
  pushing_seen seen;
  for (std::uint64_t k : keys) {
    const std::uint64_t item[2] = {k, 1};
    EXPECT_EQ(sim.at(0).push(item, 1), 1);
    const convoy::aggregation::send_lane& lane = sim.at(0).hot().lanes[0];
    if (lane.buf != nullptr) seen.limits.push_back(lane.limit);  // none just after a post
  }
  const convoy::termination::engine_stats st = sim.at(0).stats(false);
  seen.buffers_sent = st.buffers_sent;
  seen.combined = st.combined;
  seen.stops = st.combine_stops;
  std::uint64_t counted = 0;
  for (int round = 0, done = 0; done < 2 && round < 10000; ++round) {
    done = 0;
    for (int r = 0; r < 2; ++r) {
      done += sim.at(r).advance(true) == convoy::termination::done;
      convoy::termination::item_view v;
      while (sim.at(r).pull(v) > 0) {
        std::uint64_t c = 0;
        std::memcpy(&c, v.data + 8, 8);
        counted += c;
      }
    }
    sim.network().deliver_all();
  }
  EXPECT_EQ(counted, keys.size());
  return seen;
}

// TERM-21, TERM-24 (AGG-154, AGG-155 in the engine): a combining lane keeps its true limit,
// so every push is the inline append; the pass at fill folds hot keys and the lane goes on
// filling (8 keys: no buffer leaves while pushing), while keys that never repeat fail the
// gate at the first fill and the lane's buffers leave as they fill.
TEST(EngineCombine, PushesStayInlineAndTheFillPassFolds) {
  std::vector<std::uint64_t> unique(900), hot(4000);
  for (std::uint64_t i = 0; i < 900; ++i) unique[i] = i * 7919;
  for (std::uint64_t i = 0; i < 4000; ++i) hot[i] = i % 8;
  const pushing_seen u = push_to_rank_1(unique);  // 480 records fill a buffer
  EXPECT_EQ(u.limits.size(), unique.size() - 1);  // the push that filled the first one
  for (std::uint32_t l : u.limits) ASSERT_GT(l, 0u);
  EXPECT_EQ(u.buffers_sent, 1u);
  EXPECT_EQ(u.combined, 0u);
  EXPECT_EQ(u.stops, 1u);
  const pushing_seen h = push_to_rank_1(hot);
  EXPECT_EQ(h.limits.size(), hot.size());
  for (std::uint32_t l : h.limits) ASSERT_GT(l, 0u);
  EXPECT_EQ(h.buffers_sent, 0u);
  EXPECT_GE(h.combined, 4000u - 480);
  EXPECT_EQ(h.stops, 0u);
}

// `per_rank` keys from each of `p` ranks, key_of(rank, i) the i-th, each to its owner.
template <class KeyOf>
keyed_workload keys_of(int p, std::uint64_t per_rank, KeyOf key_of) {
  keyed_workload w;
  w.dests.resize(static_cast<std::size_t>(p));
  w.keys.resize(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r)
    for (std::uint64_t i = 0; i < per_rank; ++i) {
      const std::uint64_t k = key_of(r, i);
      w.keys[static_cast<std::size_t>(r)].push_back(k);
      w.dests[static_cast<std::size_t>(r)].push_back(owner_of(k, p));
    }
  return w;
}

// Keys that never repeat, `per_rank` from each of `p` ranks, each to its owner; `salt`
// keeps cycles apart.
keyed_workload unique_keys(int p, std::uint64_t per_rank, std::uint64_t salt) {
  return keys_of(p, per_rank, [salt](int r, std::uint64_t i) {
    return salt << 48 | static_cast<std::uint64_t>(r) << 32 | i;
  });
}

// A gate that judges after 16 offers, so that 1 KiB buffers (59 records) are judged.
engine_options quick_gate(std::uint32_t max_skip) {
  engine_options o = combining(layouts[0], small_buffers(2, 1024));
  o.combine_gate.sample = 16;
  o.combine_gate.max_skip = max_skip;
  return o;
}

// TERM-26: the gate's state outlives the cycle. After a long cycle of keys that never
// repeat, every lane skips combining: a second, short cycle neither folds nor stops
// (a gate started afresh would combine each lane's first buffer and stop it), and at the
// start of a third every lane's first buffer takes the plain route (its true limit, so
// the inline push and the forwarding run's plain copy take it).
TEST(EngineCombine, GatedOffLanesStayPlainAcrossCycles) {
  const plan_ptr plan = mesh_plan({2, 2});
  simulation sim(plan, quick_gate(1u << 20), 41);
  const int p = sim.n_ranks();
  cycle_options c;
  c.max_rounds = 1000000;
  ASSERT_EQ(run_keyed(sim, unique_keys(p, 12000, 1), layouts[0], c), "");
  const combine_totals first = totals(sim);
  EXPECT_EQ(first.combined, 0u);
  EXPECT_GE(first.stops, 5u * 3u * 4u) << "each lane stops again and again";
  ASSERT_EQ(run_keyed(sim, unique_keys(p, 300, 2), layouts[0], c), "");
  const combine_totals second = totals(sim);
  EXPECT_EQ(second.combined, first.combined);
  EXPECT_EQ(second.stops, first.stops) << "a lane combined again in the second cycle";
  for (int r = 0; r < p; ++r) ASSERT_EQ(sim.at(r).begin(16), 1);
  for (int r = 0; r < p; ++r)
    for (int d = 0; d < p; ++d) {
      const std::uint64_t item[2] = {static_cast<std::uint64_t>(r * p + d), 1};
      ASSERT_EQ(sim.at(r).push(item, d), 1);
    }
  for (int r = 0; r < p; ++r) {
    const convoy::router::forwarder f(plan, r);
    for (int k = 0; k <= f.n_out_links(); ++k) {
      const convoy::aggregation::send_lane& l = sim.at(r).hot().lanes[k];
      ASSERT_NE(l.buf, nullptr) << "rank " << r << " lane " << k;
      EXPECT_GT(l.limit, 0u) << "rank " << r << " lane " << k << " combines";
    }
  }
  std::uint64_t counted = 0;
  for (int round = 0, done = 0; done < p && round < 10000; ++round) {
    done = 0;
    for (int r = 0; r < p; ++r) {
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
  EXPECT_EQ(counted, static_cast<std::uint64_t>(p * p));
}

// TERM-28: the gate weighs the records a lane saves against its passes' time. Hot keys
// fold nearly always; if a saved record is worth next to nothing, every lane's buffers
// stop combining once judged and the totals still equal the oracle's; if it is worth much,
// none stops. (Measured worths are what the benchmarks show: bench-histogram.)
TEST(EngineCombine, GateWeighsSavedRecordsAgainstPassTime) {
  const plan_ptr plan = mesh_plan({2, 2});
  for (const double worth : {1e-6, 1e9}) {
    engine_options o = quick_gate(4);
    o.combine_gate.saved_record_ns = worth;
    simulation sim(plan, o, 47);
    const int p = sim.n_ranks();
    const keyed_workload w = keys_of(p, 6000, [](int, std::uint64_t i) { return i % 8; });
    cycle_options c;
    c.max_rounds = 1000000;
    ASSERT_EQ(run_keyed(sim, w, layouts[0], c), "") << worth;
    const combine_totals t = totals(sim);
    if (worth < 1.0) {
      EXPECT_GT(t.stops, static_cast<std::uint64_t>(p)) << "passes cost more than they save";
      EXPECT_LT(t.combined, t.pushes / 2);
    } else {
      EXPECT_EQ(t.stops, 0u);
      EXPECT_GT(t.combined, t.pushes * 9 / 10);
    }
  }
}

// TERM-28: the measured worth of a saved record counts the conveyor's time and the
// program's time on what it pulls, not the program's time on what it pushes. Half the keys
// are 8 hot ones per rank, half never repeat. With 40 us of the program's work after each
// push, what handling a record costs a rank stays far below it (measured from the rank's
// whole time it would be above it). With 40 us after each pulled item, the program's time
// per record pulled is at least that (on the simulated network it can be more: a rank's
// span between two buffers also holds the other ranks' turns).
TEST(EngineCombine, WorthCountsTheConveyorAndThePullsNotThePushes) {
  const plan_ptr plan = mesh_plan({2, 2});
  for (const bool on_pushes : {true, false}) {
    simulation sim(plan, quick_gate(4), 53);
    const int p = sim.n_ranks();
    const keyed_workload w = keys_of(p, 4000, [](int r, std::uint64_t i) {
      return i % 2 == 0 ? i % 8 : static_cast<std::uint64_t>(r + 1) << 32 | i;
    });
    cycle_options c;
    c.max_rounds = 1000000;
    c.try_unpull = false;
    (on_pushes ? c.work_per_push : c.work_per_pull) = std::chrono::microseconds(40);
    ASSERT_EQ(run_keyed(sim, w, layouts[0], c), "");
    for (int r = 0; r < p; ++r) {
      const convoy::termination::engine_stats s = sim.at(r).stats(true);
      EXPECT_GT(s.combine_record_ns, 0.0) << "rank " << r << ": no window closed";
      EXPECT_LT(s.combine_record_ns, 20'000.0) << "rank " << r << ": the program's time counted";
      if (!on_pushes) {
        EXPECT_GT(s.combine_use_ns, 40'000.0) << "rank " << r;
      }
    }
  }
}

// TERM-20, TERM-26: phases of keys that never repeat and of 8 hot keys per rank make the
// gate stop and resume combining many times within one cycle, on lanes that carry pushes
// and forwarded records at once; every owner's totals still equal the oracle's.
TEST(EngineCombine, ExactlyOnceWhileTheGateToggles) {
  for (const plan_ptr& plan : {mesh_plan({2, 3}), ragged_plan({3, 1, 2})}) {
    simulation sim(plan, quick_gate(2), 43);
    const int p = sim.n_ranks();
    const keyed_workload w = keys_of(p, 6000, [](int r, std::uint64_t i) {
      const bool hot = (i / 600) % 2 == 1;
      return hot ? i % 8 : static_cast<std::uint64_t>(r + 1) << 32 | i;
    });
    cycle_options c;
    c.max_rounds = 1000000;
    ASSERT_EQ(run_keyed(sim, w, layouts[0], c), "") << plan->name();
    const combine_totals t = totals(sim);
    EXPECT_GT(t.stops, static_cast<std::uint64_t>(p)) << plan->name();
    EXPECT_GT(t.combined, t.pushes / 4) << plan->name();
  }
}

// TERM-8, TERM-23: one simulation through cycles of different item sizes (the tables are
// sized again) keeps every total; memory counts the tables, at most one per lane (the
// loopback lane too) of slots_for(records a buffer holds) slots of 4 bytes.
TEST(EngineCombine, ReuseAcrossCyclesAndMemory) {
  const plan_ptr plan = ragged_plan({4, 2, 3});
  const engine_options o = combining(layouts[0], small_buffers(2, 512));
  simulation sim(plan, o, 11);
  for (std::uint32_t bytes : {16u, 40u, 16u, 24u}) {
    kv_layout lay = layouts[0];
    lay.item_bytes = bytes;
    const zipf_keys z(40, 1.2);
    const auto w = make_keyed(sim.n_ranks(), 150, z, sim.rng());
    const std::string why = run_keyed(sim, w, lay);
    ASSERT_TRUE(why.empty()) << "item " << bytes << ": " << why;
  }
  // Against the same engine with the smallest tables (16 slots a lane).
  engine_options small = o;
  small.combine_max_slots = 16;
  simulation without(plan, small, 11);
  const convoy::router::forwarder f(plan, 0);
  const std::size_t lanes = static_cast<std::size_t>(f.n_out_links()) + 1;
  const std::size_t slots = convoy::aggregation::combine_table::slots_for(512 - 16, 4096);
  EXPECT_EQ(slots, 1024u);
  EXPECT_EQ(sim.at(0).max_memory_bytes() - without.at(0).max_memory_bytes(),
            lanes * (slots - 16) * 4);
  EXPECT_LE(sim.at(0).memory_bytes(), sim.at(0).max_memory_bytes());
  EXPECT_GT(sim.at(0).memory_bytes(), without.at(0).memory_bytes());
}

// TERM-9 with combining: a spec that does not fit begin's item size is error_size with a
// message and leaves the engine DORMANT; combining elastic items is refused at construction.
TEST(EngineCombine, MisuseIsNamed) {
  simulation sim(mesh_plan({2}), combining(layouts[0], small_buffers()), 3);
  auto& e = sim.at(0);
  EXPECT_EQ(e.begin(12), convoy::termination::error_size);
  EXPECT_NE(e.last_message().find("beyond the item"), std::string::npos) << e.last_message();
  EXPECT_EQ(e.current_state(), convoy::termination::state::dormant);
  EXPECT_EQ(e.begin(16), 1);
  engine_options elastic = combining(layouts[0], small_buffers());
  elastic.mode = convoy::termination::item_mode::elastic;
  EXPECT_THROW(simulation(mesh_plan({2}), elastic, 3), convoy::error);
  kv_layout overlap = layouts[0];
  overlap.value_offset = 4;
  simulation bad(mesh_plan({2}), combining(overlap, small_buffers()), 3);
  EXPECT_EQ(bad.at(1).begin(16), convoy::termination::error_size);
}

// set_combine (TERM-25): combining turned on and off between cycles of one simulation keeps
// every total, folds only while on; not DORMANT and elastic engines are refused.
TEST(EngineCombine, SetCombineBetweenCycles) {
  simulation sim(ragged_plan({4, 2, 3}), small_buffers(2, 512), 17);
  const zipf_keys z(30, 1.2);
  for (const bool on : {false, true, false, true}) {
    for (int r = 0; r < sim.n_ranks(); ++r)
      ASSERT_EQ(sim.at(r).set_combine(on ? spec_of(layouts[0])
                                         : convoy::aggregation::combine_spec{0, 8, 8, 8, nullptr}),
                1);
    const std::uint64_t folds_before = totals(sim).combined;
    const auto w = make_keyed(sim.n_ranks(), 300, z, sim.rng());
    const std::string why = run_keyed(sim, w, layouts[0]);
    ASSERT_TRUE(why.empty()) << (on ? "on: " : "off: ") << why;
    const std::uint64_t folds = totals(sim).combined - folds_before;
    if (on)
      EXPECT_GT(folds, 0u);
    else
      EXPECT_EQ(folds, 0u);
    EXPECT_EQ(sim.at(0).options().combine.fn != nullptr, on);
  }
  simulation busy(mesh_plan({2}), small_buffers(), 3);
  ASSERT_EQ(busy.at(0).begin(16), 1);
  EXPECT_EQ(busy.at(0).set_combine(spec_of(layouts[0])), convoy::termination::error_state);
  engine_options elastic = small_buffers();
  elastic.mode = convoy::termination::item_mode::elastic;
  simulation el(mesh_plan({2}), elastic, 3);
  EXPECT_EQ(el.at(0).set_combine(spec_of(layouts[0])), convoy::termination::error_elastic);
  EXPECT_EQ(el.at(0).set_combine({0, 8, 8, 8, nullptr}), 1);  // off is always fine
}

// TERM-20, TERM-22 at 4 096 ranks (16 x 16 x 16, 1 KiB buffers): Zipf 1.0 over 8 192 keys,
// 4 items per rank, one schedule (CTest entry termination_engine_combine_test.4096).
TEST(EngineCombineLarge, Mesh16x16x16Zipf) {
  simulation sim(mesh_plan({16, 16, 16}), combining(layouts[0], small_buffers(2, 1024)), 26);
  const zipf_keys z(8192, 1.0);
  const auto w = make_keyed(sim.n_ranks(), 4, z, sim.rng());
  cycle_options o;
  o.rest_idle = true;
  o.max_rounds = 3000;
  const std::string why = run_keyed(sim, w, layouts[0], o);
  ASSERT_TRUE(why.empty()) << why;
  EXPECT_GT(totals(sim).combined, 0u);
}

}  // namespace
}  // namespace convoy_test
