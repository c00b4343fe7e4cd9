#pragma once
// Drives engines of a simulation through random schedules and checks the conveyor
// contract (termination/README.md, TERM-1, TERM-2, TERM-3, TERM-4) on every delivered item.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <convoy/router/route_plan.hpp>
#include <convoy/termination/simulation.hpp>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
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
  // Every byte is compared; the item's name is spelled out only for a violation.
  std::string check(int me, const convoy::termination::item_view& v) {
    if (v.bytes != item_.size())
      return "item of " + std::to_string(v.bytes) + " bytes, pushed " +
             std::to_string(item_.size());
    tracer t;
    std::memcpy(&t, v.data, sizeof t);
    if (t.check != checksum(t)) return "corrupted tracer at rank " + std::to_string(me);
    auto item = [&t] {
      return std::to_string(t.src) + "->" + std::to_string(t.dst) + " #" + std::to_string(t.seq);
    };
    for (std::size_t k = sizeof t; k < v.bytes; ++k)
      if (v.data[k] != filler_byte(t, k))
        return "byte " + std::to_string(k) + " of item " + item() + " corrupted";
    if (t.dst != me) return "item " + item() + " delivered to " + std::to_string(me);
    if (t.src != v.from) return "item " + item() + " reported from " + std::to_string(v.from);
    auto& want = seen_[key(t.src, t.dst)];
    if (t.seq != want)
      return "item " + item() + " arrived when #" + std::to_string(want) +
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
  std::uint64_t turns = 0;  // rank turns taken
  std::string failure;      // first contract violation, empty if none
};

// The number of items of `wl`.
inline std::uint64_t n_items(const workload& wl) {
  std::uint64_t n = 0;
  for (const auto& dests : wl) n += dests.size();
  return n;
}

// How run_cycle() schedules.
struct cycle_options {
  std::uint64_t max_rounds = 100000;
  bool try_unpull = true;  // now and then put a pulled item back and pull it again (TERM-11)
  // Let a rank rest once two of its turns in a row did nothing — no push (none left, or
  // one refused), a pull that found nothing, no state change, no event at its endpoint
  // (sim_network::activity, AGG-143) — until an event at its endpoint: such a turn leaves
  // the engine as it was, so resting skips no-ops and keeps every check. Ranks that are
  // COMPLETE get no turns. If every rank rests, buffers in flight are delivered; if
  // nothing is in flight either, every rank is woken, and a second time with nothing
  // having happened in between is a stall (a failure).
  bool rest_idle = false;
  // Pull by pull_batch, at most 1 to 8 items or all of a buffer at a time; with try_unpull,
  // now and then put back the last item of a batch and pull it again.
  bool batches = false;
  // Send each burst with one call where the checker has send_batch(engine, rank, n) (e.g.
  // broadcast_batch): it returns how many of the next n items it sent, or a code.
  bool send_batches = false;
  // The program's own work (time outside every engine call): after each push that took
  // its item, and after each item pulled one by one, spin this long.
  std::chrono::nanoseconds work_per_push{0}, work_per_pull{0};
};

// One begin..reset cycle of a workload under the simulation's random schedule: in each
// round the ranks take turns in random order (push a random burst, pull a random number,
// advance), each turn followed by the delivery of a random number of buffers. `Checker`
// builds the items and checks what is pulled: contract_checker's interface (next, pushed,
// check, n_pushed, n_pulled, missing; optionally send(engine, rank, dest), which sends one
// item instead of push(next(rank, dest), dest)).
template <class Checker>
class basic_cycle_driver {
 public:
  basic_cycle_driver(simulation& sim, const workload& wl, std::size_t item_bytes, cycle_options o,
                     Checker items)
      : sim_(sim),
        wl_(wl),
        o_(o),
        item_bytes_(item_bytes),
        p_(sim.n_ranks()),
        items_(std::move(items)),
        next_(static_cast<std::size_t>(p_), 0),
        idle_(static_cast<std::size_t>(p_), 0),
        mark_(static_cast<std::size_t>(p_), 0),
        n_working_(p_) {}

  schedule_result run() {
    for (int r = 0; r < p_; ++r)
      if (sim_.at(r).begin(item_bytes_) != 1)
        return fail("begin failed on rank " + std::to_string(r)), res_;
    for (res_.rounds = 0; res_.rounds < o_.max_rounds && n_complete_ < p_; ++res_.rounds) {
      for (int me : order()) {
        turn(me);
        if (!res_.failure.empty()) return res_;
      }
      if (!res_.failure.empty()) return res_;  // a stall
    }
    finish();
    return res_;
  }

 private:
  static constexpr int resting = 2;  // idle turns in a row before a rank rests

  void fail(const std::string& why) {
    if (res_.failure.empty() && !why.empty()) res_.failure = why;
  }
  [[nodiscard]] std::uint64_t activity(int r) const { return sim_.network().activity(r); }

  // This round's ranks, shuffled: all of them, or with rest_idle those not COMPLETE and
  // not resting (see cycle_options).
  std::vector<int> order() {
    if (!o_.rest_idle) return sim_.round_order();
    std::vector<int> awake;
    for (int r = 0; r < p_; ++r) {
      auto& idle = idle_[static_cast<std::size_t>(r)];
      if (idle >= resting && activity(r) != mark_[static_cast<std::size_t>(r)]) idle = 0;
      if (sim_.at(r).current_state() != state::complete && idle < resting) awake.push_back(r);
    }
    if (awake.empty() && n_complete_ < p_) wake_all();
    std::shuffle(awake.begin(), awake.end(), sim_.rng());
    return awake;
  }

  // Every rank rests: deliver what is in flight, else wake everybody (twice in a row with
  // no event anywhere in between: stalled).
  void wake_all() {
    if (sim_.network().in_flight() > 0) {
      sim_.jitter(8);
      return;
    }
    std::uint64_t total = 0;
    for (int r = 0; r < p_; ++r) total += activity(r);
    if (woken_ && total == woken_at_)
      return fail("stalled: every rank rests, nothing in flight, " +
                  std::to_string(p_ - n_complete_) + " ranks not COMPLETE");
    woken_ = true;
    woken_at_ = total;
    for (auto& idle : idle_) idle = 0;
  }

  // One item of `me`'s workload: pushed to `dest`, or sent as the checker says (a checker
  // with send(), e.g. a broadcast one, chooses the call).
  int send(engine& e, int me, int dest) {
    if constexpr (requires { items_.send(e, me, dest); })
      return items_.send(e, me, dest);
    else
      return e.push(items_.next(me, dest), dest);
  }

  static void spin(std::chrono::nanoseconds t) {
    const auto until = std::chrono::steady_clock::now() + t;
    while (std::chrono::steady_clock::now() < until) {
    }
  }

  // Pushes a random burst; true if it stopped for want of items or room.
  bool push_burst(int me, engine& e, int& pushed) {
    const auto& dests = wl_[static_cast<std::size_t>(me)];
    auto& i = next_[static_cast<std::size_t>(me)];
    if (e.current_state() != state::working) return true;
    const int burst = std::uniform_int_distribution<int>(0, 64)(sim_.rng());
    if constexpr (requires { items_.send_batch(e, me, std::size_t{1}); })
      if (o_.send_batches) {
        const std::size_t want = std::min(static_cast<std::size_t>(burst), dests.size() - i);
        const std::int64_t rc = items_.send_batch(e, me, want);
        if (rc < 0) return fail("send_batch returned " + std::to_string(rc)), true;
        if (static_cast<std::size_t>(rc) > want) return fail("sent more than asked"), true;
        for (std::int64_t k = 0; k < rc; ++k, ++i, ++pushed) items_.pushed(me, dests[i]);
        return static_cast<std::size_t>(rc) < want || i == dests.size();
      }
    for (int k = 0; k < burst && i < dests.size(); ++k) {
      const int rc = send(e, me, dests[i]);
      if (rc < 0) return fail("push returned " + std::to_string(rc)), true;
      if (rc == 0) return true;
      if (o_.work_per_push.count() > 0) spin(o_.work_per_push);
      items_.pushed(me, dests[i]);
      ++i;
      ++pushed;
    }
    return i == dests.size();
  }

  // Pulls a random number of items, checking each; true if a pull found nothing.
  bool pull_some(int me, engine& e, int& pulled) {
    if (o_.batches) return pull_batches(me, e, pulled);
    auto& rng = sim_.rng();
    const int pulls = std::uniform_int_distribution<int>(0, 96)(rng);
    for (int k = 0; k < pulls; ++k) {
      convoy::termination::item_view v;
      const int rc = e.pull(v);
      if (rc < 0) return fail("pull returned " + std::to_string(rc)), false;
      if (rc == 0) return true;
      if (o_.try_unpull && (rng() & 15) == 0 && !pull_again(e, v)) return false;
      fail(items_.check(me, v));
      if (o_.work_per_pull.count() > 0) spin(o_.work_per_pull);
      ++pulled;
    }
    return false;
  }

  // Puts the last pulled item `v` back and pulls again: the same item must come next (v is
  // then the new pull's). False (and the failure noted) if not.
  bool pull_again(engine& e, convoy::termination::item_view& v) {
    std::vector<std::byte> copy(v.data, v.data + v.bytes);
    const int from = v.from;
    if (e.unpull() != 1) return fail("unpull failed"), false;
    if (e.pull(v) != 1 || v.from != from || std::memcmp(copy.data(), v.data, v.bytes) != 0)
      return fail("unpull did not give back the same item"), false;
    return true;
  }

  // pull_some by batches.
  bool pull_batches(int me, engine& e, int& pulled) {
    auto& rng = sim_.rng();
    const int batches = std::uniform_int_distribution<int>(0, 12)(rng);
    for (int k = 0; k < batches; ++k) {
      const std::size_t max = (rng() & 3) == 0 ? SIZE_MAX : 1 + rng() % 8;
      convoy::termination::item_batch b;
      const std::int64_t rc = e.pull_batch(b, max);
      if (rc < 0) return fail("pull_batch returned " + std::to_string(rc)), false;
      if (rc == 0) return true;
      if (static_cast<std::uint64_t>(rc) != b.count || b.count > max)
        return fail("pull_batch returned " + std::to_string(rc) + " for a batch of " +
                    std::to_string(b.count) + " (max " + std::to_string(max) + ")"),
               false;
      for (std::size_t i = 0; i < b.count; ++i) {
        convoy::termination::item_view v{b.item(i), b.bytes, b.source(i)};
        if (i + 1 == b.count && o_.try_unpull && (rng() & 7) == 0 && !pull_again(e, v))
          return false;
        fail(items_.check(me, v));
        ++pulled;
      }
    }
    return false;
  }

  // One rank's turn: push, pull, advance, then the network moves.
  void turn(int me) {
    ++res_.turns;
    engine& e = sim_.at(me);
    const std::uint64_t act = activity(me);
    int pushed = 0, pulled = 0;
    const bool push_idle = push_burst(me, e, pushed);
    const bool pull_idle = pull_some(me, e, pulled);
    if (!res_.failure.empty()) return;
    const state before = e.current_state();
    if (before == state::complete) return;
    const auto& dests = wl_[static_cast<std::size_t>(me)];
    const int rc = e.advance(next_[static_cast<std::size_t>(me)] == dests.size());
    if (rc < 0) return fail("advance returned " + std::to_string(rc) + ": " + e.last_message());
    count_states(before, e.current_state());
    auto& idle = idle_[static_cast<std::size_t>(me)];
    const bool did_nothing = push_idle && pull_idle && pushed == 0 && pulled == 0 &&
                             before == e.current_state() && activity(me) == act;
    idle = did_nothing ? idle + 1 : 0;
    mark_[static_cast<std::size_t>(me)] = activity(me);
    if (!did_nothing) woken_ = false;
    sim_.jitter(8);
  }

  // TERM-4: CLEANUP/COMPLETE anywhere implies WORKING nowhere.
  void count_states(state before, state after) {
    if (before == state::working && after != state::working) --n_working_;
    const bool was_late = before == state::cleanup || before == state::complete;
    const bool is_late = after == state::cleanup || after == state::complete;
    if (!was_late && is_late) ++n_late_;
    if (after == state::complete) ++n_complete_;
    if (n_late_ > 0 && n_working_ > 0)
      fail("a rank reached CLEANUP/COMPLETE while another is WORKING");
  }

  void finish() {
    res_.pushed = items_.n_pushed();
    res_.pulled = items_.n_pulled();
    res_.completed = n_complete_ == p_;
    if (!res_.completed || !res_.failure.empty()) return;
    // Complete only after every rank pushed its whole workload (it said done only then).
    for (int r = 0; r < p_; ++r) {
      const auto n = next_[static_cast<std::size_t>(r)],
                 want = wl_[static_cast<std::size_t>(r)].size();
      if (n != want)
        fail("rank " + std::to_string(r) + " completed after pushing " + std::to_string(n) +
             " of its " + std::to_string(want) + " items");
    }
    fail(items_.missing());  // exactly once: everything pushed was pulled
    for (int r = 0; r < p_; ++r)
      if (sim_.at(r).reset() != 1) fail("reset failed");
  }

  simulation& sim_;
  const workload& wl_;
  cycle_options o_;
  std::size_t item_bytes_;
  int p_;
  Checker items_;
  std::vector<std::size_t> next_;    // per rank: its next item in wl_
  std::vector<int> idle_;            // per rank: idle turns in a row
  std::vector<std::uint64_t> mark_;  // per rank: its endpoint's activity after its turn
  int n_working_;
  int n_complete_ = 0, n_late_ = 0;  // late = CLEANUP or COMPLETE
  bool woken_ = false;               // every rank was woken, and all turns since were idle
  std::uint64_t woken_at_ = 0;       // total activity then
  schedule_result res_;
};

// Runs one begin..reset cycle of `wl` on `sim` under the simulation's random schedule.
// Items are `item_bytes` long (>= sizeof(tracer); the rest is filler_byte()). A completed
// cycle has pushed every item of `wl` and pulled each once, intact, in order per pair.
inline schedule_result run_cycle(simulation& sim, const workload& wl, std::size_t item_bytes,
                                 cycle_options o = {}) {
  return basic_cycle_driver<contract_checker>(sim, wl, item_bytes, o, contract_checker(item_bytes))
      .run();
}

}  // namespace convoy_test
