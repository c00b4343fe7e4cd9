#pragma once
// Drives engines of a simulation through random schedules and checks the conveyor
// contract (termination/README.md, guarantees 1-5) on every delivered item.
#include <gtest/gtest.h>

#include <convoy/router/route_plan.hpp>
#include <convoy/termination/simulation.hpp>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace convoy_test {

using convoy::termination::engine;
using convoy::termination::simulation;
using convoy::termination::state;

// What every test item carries: enough to check source, destination, exactly-once and
// FIFO per pair.
struct tracer {
  std::int32_t src;
  std::int32_t dst;
  std::uint32_t seq;  // per (src, dst) pair, from 0
  std::uint32_t check;
};
inline std::uint32_t checksum(const tracer& t) {
  return static_cast<std::uint32_t>(t.src) * 2654435761u ^
         static_cast<std::uint32_t>(t.dst) * 40503u ^ t.seq * 97u ^ 0x5bd1e995u;
}

// Per rank: the destinations it pushes to, in order.
using workload = std::vector<std::vector<int>>;

struct schedule_result {
  bool completed = false;
  std::uint64_t pushed = 0;
  std::uint64_t pulled = 0;
  std::uint64_t rounds = 0;
  std::string failure;  // first contract violation, empty if none
};

// Runs one begin..reset cycle of `wl` on `sim` under the simulation's random schedule.
// Items are `item_bytes` long (>= sizeof(tracer); the rest is filler).
inline schedule_result run_cycle(simulation& sim, const workload& wl, std::size_t item_bytes,
                                 std::uint64_t max_rounds = 100000, bool try_unpull = true) {
  schedule_result res;
  const int p = sim.n_ranks();
  auto& rng = sim.rng();
  for (int r = 0; r < p; ++r) {
    if (sim.at(r).begin(item_bytes) != 1) {
      res.failure = "begin failed on rank " + std::to_string(r);
      return res;
    }
  }
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  std::unordered_map<std::uint64_t, std::uint32_t> sent_seq, seen_seq;
  std::vector<std::byte> buf(item_bytes, std::byte{0x5a});
  auto key = [](int s, int d) {
    return (static_cast<std::uint64_t>(s) << 32) | static_cast<std::uint32_t>(d);
  };
  int n_complete = 0;
  auto fail = [&](const std::string& why) {
    if (res.failure.empty()) res.failure = why;
  };
  std::vector<int> working_count(1, p);
  int n_working = p, n_late = 0;  // late = CLEANUP or COMPLETE

  auto check_item = [&](int me, const convoy::termination::item_view& v) {
    if (v.bytes != item_bytes) return fail("wrong item size");
    tracer t;
    std::memcpy(&t, v.data, sizeof t);
    if (t.check != checksum(t)) return fail("corrupted item at rank " + std::to_string(me));
    if (t.dst != me)
      return fail("item for " + std::to_string(t.dst) + " delivered to " + std::to_string(me));
    if (t.src != v.from)
      return fail("source reported " + std::to_string(v.from) + ", pushed by " +
                  std::to_string(t.src));
    auto& want = seen_seq[key(t.src, t.dst)];
    if (t.seq != want)
      return fail("pair " + std::to_string(t.src) + "->" + std::to_string(me) + ": got seq " +
                  std::to_string(t.seq) + ", expected " + std::to_string(want) +
                  " (FIFO/exactly-once)");
    ++want;
    ++res.pulled;
  };

  for (res.rounds = 0; res.rounds < max_rounds && n_complete < p; ++res.rounds) {
    for (int me : sim.round_order()) {
      engine& e = sim.at(me);
      const auto& dests = wl[static_cast<std::size_t>(me)];
      auto& i = next[static_cast<std::size_t>(me)];
      if (e.current_state() == state::working) {
        const int burst = std::uniform_int_distribution<int>(0, 64)(rng);
        for (int k = 0; k < burst && i < dests.size(); ++k) {
          tracer t{me, dests[i], 0, 0};
          t.seq = sent_seq[key(me, t.dst)];
          t.check = checksum(t);
          std::memcpy(buf.data(), &t, sizeof t);
          const int rc = e.push(buf.data(), t.dst);
          if (rc < 0) return fail("push returned " + std::to_string(rc)), res;
          if (rc == 0) break;
          ++sent_seq[key(me, t.dst)];
          ++i;
          ++res.pushed;
        }
      }
      const int pulls = std::uniform_int_distribution<int>(0, 96)(rng);
      for (int k = 0; k < pulls; ++k) {
        convoy::termination::item_view v;
        const int rc = e.pull(v);
        if (rc < 0) return fail("pull returned " + std::to_string(rc)), res;
        if (rc == 0) break;
        if (try_unpull && (rng() & 15) == 0) {
          // Put it back and pull it again: the same item must come next.
          std::vector<std::byte> copy(v.data, v.data + v.bytes);
          const int from = v.from;
          if (e.unpull() != 1) return fail("unpull failed"), res;
          if (e.pull(v) != 1 || v.from != from || std::memcmp(copy.data(), v.data, v.bytes) != 0)
            return fail("unpull did not give back the same item"), res;
        }
        check_item(me, v);
      }
      const state before = e.current_state();
      if (before == state::complete) continue;
      const int rc = e.advance(i == dests.size());
      if (rc < 0)
        return fail("advance returned " + std::to_string(rc) + ": " + e.last_message()), res;
      const state after = e.current_state();
      if (before == state::working && after != state::working) --n_working;
      const bool was_late = before == state::cleanup || before == state::complete;
      const bool is_late = after == state::cleanup || after == state::complete;
      if (!was_late && is_late) ++n_late;
      if (after == state::complete) ++n_complete;
      // Guarantee 4: CLEANUP/COMPLETE anywhere implies WORKING nowhere.
      if (n_late > 0 && n_working > 0)
        fail("a rank reached CLEANUP/COMPLETE while another is WORKING");
      sim.jitter(8);
      if (!res.failure.empty()) return res;
    }
  }
  (void)working_count;
  res.completed = n_complete == p;
  if (!res.completed) return res;
  // Exactly once: everything pushed was pulled.
  if (res.pulled != res.pushed)
    fail("pulled " + std::to_string(res.pulled) + " of " + std::to_string(res.pushed) + " items");
  for (const auto& [k, n] : sent_seq)
    if (seen_seq[k] != n) fail("pair lost items");
  for (int r = 0; r < p; ++r)
    if (sim.at(r).reset() != 1) fail("reset failed");
  return res;
}

}  // namespace convoy_test
