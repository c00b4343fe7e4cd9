#pragma once
// Drives engines of a simulation through random schedules and checks the conveyor
// contract (termination/README.md, TERM-1, TERM-2, TERM-3, TERM-4) on every delivered item.
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

// What every test item begins with: enough to check source, destination, exactly-once and
// FIFO per pair. The bytes after it are filler_byte() (items longer than 16 bytes).
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

// Byte k (k >= sizeof(tracer)) of item (src, dst, seq): a hash of all four (splitmix64's
// finalizer), so a byte left stale, taken from another item or shifted is caught.
inline std::byte filler_byte(const tracer& t, std::size_t k) {
  std::uint64_t x = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(t.src)) << 32 |
                     static_cast<std::uint32_t>(t.dst)) ^
                    (std::uint64_t{t.seq} * 0x9e3779b97f4a7c15u) ^
                    (std::uint64_t{k} * 0xbf58476d1ce4e5b9u);
  x ^= x >> 31;
  x *= 0x94d049bb133111ebu;
  x ^= x >> 29;
  return static_cast<std::byte>(x & 0xff);
}

// The sending and receiving sides of the conveyor contract for items of `item_bytes`:
// next() builds the next item for a pair, pushed() records that it was accepted, check()
// verifies a pulled item (size, every byte, destination, source, FIFO and exactly once per
// pair) and delivered_all() that every accepted item was pulled.
class contract_checker {
 public:
  explicit contract_checker(std::size_t item_bytes) : item_(item_bytes) {}

  // The next item from `src` to `dst` (valid until the next call).
  const std::byte* next(int src, int dst) {
    tracer t{src, dst, sent_[key(src, dst)], 0};
    t.check = checksum(t);
    std::memcpy(item_.data(), &t, sizeof t);
    for (std::size_t k = sizeof t; k < item_.size(); ++k) item_[k] = filler_byte(t, k);
    return item_.data();
  }
  void pushed(int src, int dst) {
    ++sent_[key(src, dst)];
    ++n_pushed_;
  }

  // Empty if `v`, pulled at rank `me`, is the next item of its pair; else the violation.
  std::string check(int me, const convoy::termination::item_view& v) {
    if (v.bytes != item_.size())
      return "item of " + std::to_string(v.bytes) + " bytes, pushed " +
             std::to_string(item_.size());
    tracer t;
    std::memcpy(&t, v.data, sizeof t);
    if (t.check != checksum(t)) return "corrupted tracer at rank " + std::to_string(me);
    const std::string item =
        std::to_string(t.src) + "->" + std::to_string(t.dst) + " #" + std::to_string(t.seq);
    for (std::size_t k = sizeof t; k < v.bytes; ++k)
      if (v.data[k] != filler_byte(t, k))
        return "byte " + std::to_string(k) + " of item " + item + " corrupted";
    if (t.dst != me) return "item " + item + " delivered to " + std::to_string(me);
    if (t.src != v.from) return "item " + item + " reported from " + std::to_string(v.from);
    auto& want = seen_[key(t.src, t.dst)];
    if (t.seq != want)
      return "item " + item + " arrived when #" + std::to_string(want) +
             " was due (FIFO/exactly-once)";
    ++want;
    ++n_pulled_;
    return {};
  }

  [[nodiscard]] std::uint64_t n_pushed() const { return n_pushed_; }
  [[nodiscard]] std::uint64_t n_pulled() const { return n_pulled_; }
  // Empty if every accepted item was pulled; else what is missing.
  [[nodiscard]] std::string missing() const {
    if (n_pulled_ != n_pushed_)
      return "pulled " + std::to_string(n_pulled_) + " of " + std::to_string(n_pushed_) + " items";
    for (const auto& [k, n] : sent_) {
      const auto it = seen_.find(k);
      if (it == seen_.end() || it->second != n) return "pair lost items";
    }
    return {};
  }

 private:
  static std::uint64_t key(int s, int d) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(s)) << 32) |
           static_cast<std::uint32_t>(d);
  }
  std::vector<std::byte> item_;
  std::unordered_map<std::uint64_t, std::uint32_t> sent_, seen_;
  std::uint64_t n_pushed_ = 0, n_pulled_ = 0;
};

// Per rank: the destinations it pushes to, in order.
using workload = std::vector<std::vector<int>>;

struct schedule_result {
  bool completed = false;
  std::uint64_t pushed = 0;
  std::uint64_t pulled = 0;
  std::uint64_t rounds = 0;
  std::string failure;  // first contract violation, empty if none
};

// The number of items of `wl`.
inline std::uint64_t n_items(const workload& wl) {
  std::uint64_t n = 0;
  for (const auto& dests : wl) n += dests.size();
  return n;
}

// Runs one begin..reset cycle of `wl` on `sim` under the simulation's random schedule.
// Items are `item_bytes` long (>= sizeof(tracer); the rest is filler_byte()). A completed
// cycle has pushed every item of `wl` and pulled each once, intact, in order per pair.
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
  contract_checker items(item_bytes);
  int n_complete = 0;
  auto fail = [&](const std::string& why) {
    if (res.failure.empty()) res.failure = why;
  };
  int n_working = p, n_late = 0;  // late = CLEANUP or COMPLETE

  for (res.rounds = 0; res.rounds < max_rounds && n_complete < p; ++res.rounds) {
    for (int me : sim.round_order()) {
      engine& e = sim.at(me);
      const auto& dests = wl[static_cast<std::size_t>(me)];
      auto& i = next[static_cast<std::size_t>(me)];
      if (e.current_state() == state::working) {
        const int burst = std::uniform_int_distribution<int>(0, 64)(rng);
        for (int k = 0; k < burst && i < dests.size(); ++k) {
          const int rc = e.push(items.next(me, dests[i]), dests[i]);
          if (rc < 0) return fail("push returned " + std::to_string(rc)), res;
          if (rc == 0) break;
          items.pushed(me, dests[i]);
          ++i;
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
        fail(items.check(me, v));
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
      // TERM-4: CLEANUP/COMPLETE anywhere implies WORKING nowhere.
      if (n_late > 0 && n_working > 0)
        fail("a rank reached CLEANUP/COMPLETE while another is WORKING");
      sim.jitter(8);
      if (!res.failure.empty()) return res;
    }
  }
  res.pushed = items.n_pushed();
  res.pulled = items.n_pulled();
  res.completed = n_complete == p;
  if (!res.completed) return res;
  // Complete only after every rank pushed its whole workload (it said done only then).
  for (int r = 0; r < p; ++r)
    if (next[static_cast<std::size_t>(r)] != wl[static_cast<std::size_t>(r)].size())
      fail("rank " + std::to_string(r) + " completed after pushing " +
           std::to_string(next[static_cast<std::size_t>(r)]) + " of its " +
           std::to_string(wl[static_cast<std::size_t>(r)].size()) + " items");
  // Exactly once: everything pushed was pulled.
  fail(items.missing());
  for (int r = 0; r < p; ++r)
    if (sim.at(r).reset() != 1) fail("reset failed");
  return res;
}

}  // namespace convoy_test
