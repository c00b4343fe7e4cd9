// Broadcast engines under simulation (termination/README.md BCAST-1..8): on full, ragged and
// tensor 1-2 plans in several stage orders at 1 to 64 ranks, random schedules with unpulls,
// backpressure in the middle of a fan-out, steady dispatch and explicit flushes, batches
// sent by broadcast_batch, several cycles on one simulation: every rank pulls every
// broadcast exactly once, every byte intact, from = the root, in the root's order; TERM-4
// is checked after every advance. Misuse is named.
#include <gtest/gtest.h>

#include <algorithm>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/termination/conveyor_options.hpp>
#include <convoy/termination/engine.hpp>
#include <convoy_test/plans.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim_harness.hpp"
#include "sim_workloads.hpp"

namespace convoy_test {
namespace {

using convoy::termination::engine_options;
using convoy::termination::item_view;

// The receiving side of the broadcast contract: item (root, seq) is a tracer with src = root,
// dst = -1, seq per root, then filler bytes; every rank must pull each one once, from =
// root, in the root's order (the tree path from a root to a rank is one route: TERM-2).
class broadcast_checker {
 public:
  broadcast_checker(std::size_t item_bytes, int n_ranks)
      : item_(item_bytes), p_(n_ranks), sent_(static_cast<std::size_t>(n_ranks), 0) {}

  int send(convoy::termination::engine& e, int me, int /*dest*/) {
    make(item_.data(), me, sent_[static_cast<std::size_t>(me)]);
    return e.broadcast(item_.data());
  }
  // The next n items of `me` at once (broadcast_batch); counts the calls that sent some of
  // them but not all in *partial.
  std::int64_t send_batch(convoy::termination::engine& e, int me, std::size_t n) {
    const std::size_t size = item_.size();
    batch_.resize(n * size);
    for (std::size_t j = 0; j < n; ++j)
      make(batch_.data() + j * size, me,
           sent_[static_cast<std::size_t>(me)] + static_cast<std::uint32_t>(j));
    const std::int64_t rc = e.broadcast_batch(batch_.data(), n);
    if (rc > 0 && static_cast<std::size_t>(rc) < n && partial) ++*partial;
    return rc;
  }
  std::uint64_t* partial = nullptr;
  void pushed(int me, int /*dest*/) {
    ++sent_[static_cast<std::size_t>(me)];
    ++n_pushed_;
  }

  std::string check(int me, const item_view& v) {
    if (v.bytes != item_.size()) return "item of " + std::to_string(v.bytes) + " bytes";
    tracer t;
    std::memcpy(&t, v.data, sizeof t);
    if (t.check != checksum(t) || t.dst != -1) return "corrupted tracer at " + std::to_string(me);
    const std::string name = std::to_string(t.src) + " #" + std::to_string(t.seq);
    for (std::size_t k = sizeof t; k < v.bytes; ++k)
      if (v.data[k] != filler_byte(t, k)) return "byte " + std::to_string(k) + " of " + name;
    if (t.src != v.from) return name + " reported from " + std::to_string(v.from);
    auto& want = seen_[key(t.src, me)];
    if (t.seq != want)
      return name + " at rank " + std::to_string(me) + " when #" + std::to_string(want) +
             " was due (exactly once, in order)";
    ++want;
    ++n_pulled_;
    return {};
  }

  // The harness's push counts: a broadcast is P deliveries.
  [[nodiscard]] std::uint64_t n_pushed() const { return n_pushed_; }
  [[nodiscard]] std::uint64_t n_pulled() const { return n_pulled_; }
  [[nodiscard]] std::string missing() const {
    if (n_pulled_ != n_pushed_ * static_cast<std::uint64_t>(p_))
      return "pulled " + std::to_string(n_pulled_) + " of " + std::to_string(n_pushed_) +
             " broadcasts x " + std::to_string(p_) + " ranks";
    for (int root = 0; root < p_; ++root)
      for (int r = 0; r < p_; ++r) {
        const auto it = seen_.find(key(root, r));
        const std::uint32_t got = it == seen_.end() ? 0 : it->second;
        if (got != sent_[static_cast<std::size_t>(root)])
          return "rank " + std::to_string(r) + " pulled " + std::to_string(got) + " of root " +
                 std::to_string(root) + "'s " +
                 std::to_string(sent_[static_cast<std::size_t>(root)]);
      }
    return {};
  }

 private:
  // Item `seq` of `root`: its tracer, then filler bytes.
  void make(std::byte* to, int root, std::uint32_t seq) const {
    tracer t{root, -1, seq, 0};
    t.check = checksum(t);
    std::memcpy(to, &t, sizeof t);
    for (std::size_t k = sizeof t; k < item_.size(); ++k) to[k] = filler_byte(t, k);
  }
  static std::uint64_t key(int root, int r) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(root)) << 32 |
           static_cast<std::uint32_t>(r);
  }
  std::vector<std::byte> item_, batch_;
  int p_;
  std::vector<std::uint32_t> sent_;
  std::unordered_map<std::uint64_t, std::uint32_t> seen_;
  std::uint64_t n_pushed_ = 0, n_pulled_ = 0;
};

engine_options broadcasting(engine_options o) {
  o.mode = convoy::termination::item_mode::broadcast;
  return o;
}

// Per rank `n` broadcasts (the workload's destinations are ignored).
workload counts(int p, int n) {
  return workload(static_cast<std::size_t>(p), std::vector<int>(static_cast<std::size_t>(n), 0));
}

// One cycle of `wl` broadcasts of `item_bytes`: the failure, empty if none.
std::string run_broadcasts(simulation& sim, const workload& wl, std::size_t item_bytes,
                           cycle_options o = {}, std::uint64_t* partial = nullptr) {
  broadcast_checker items(item_bytes, sim.n_ranks());
  items.partial = partial;
  const auto res =
      basic_cycle_driver<broadcast_checker>(sim, wl, item_bytes, o, std::move(items)).run();
  if (!res.failure.empty()) return res.failure;
  if (!res.completed) return "did not terminate in " + std::to_string(res.rounds) + " rounds";
  if (res.pushed != n_items(wl)) return "broadcast " + std::to_string(res.pushed);
  return {};
}

// Every small plan with a broadcast tree (tensor order 3 has none).
std::vector<plan_case> tree_plans() {
  std::vector<plan_case> out;
  for (auto& c : small_plans())
    if (c.plan->broadcast_tree()) out.push_back(c);
  out.push_back({"mesh3x2x2_outer_first", mesh_plan({3, 2, 2}, {0, 1, 2})});
  out.push_back({"ragged_4_2_3_node_first", ragged_plan({4, 2, 3}, {0, 1})});
  return out;
}

// BCAST-1, BCAST-2, BCAST-5: every plan x item size x buffer set-up, random schedules with
// unpulls: one or two buffers per link of 128 bytes to 2 KiB, steady now and then, a plan
// without the first-hop table once.
TEST(EngineBroadcast, EveryRankPullsEveryBroadcastOnce) {
  for (const auto& [label, plan] : tree_plans())
    for (std::size_t item : {16u, 24u, 37u})
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        engine_options o = broadcasting(small_buffers(seed % 2 ? 1 : 2, seed * 640 - 512));
        o.steady = seed == 2;
        if (seed == 3) o.route_table_max_ranks = 0;
        simulation sim(plan, o, seed * 31 + item);
        const std::string why = run_broadcasts(sim, counts(sim.n_ranks(), 40), item);
        ASSERT_TRUE(why.empty()) << label << " item " << item << " seed " << seed << ": " << why;
      }
}

// BCAST-1, BCAST-2 by the bulk pull: whole windows of fanned-out buffers, batches of 1 to 8,
// a batch's last item put back now and then; buffers of 1 to 6 records per lane, so that
// a whole-buffer fan-out fills and posts lanes in the middle of its block copies.
TEST(EngineBroadcast, BatchPullsTakeEveryBroadcastOnce) {
  cycle_options c;
  c.batches = true;
  for (const auto& [label, plan] : tree_plans())
    for (std::size_t item : {16u, 24u, 37u})
      for (std::uint64_t seed = 1; seed <= 2; ++seed) {
        const std::size_t records = seed == 1 ? 1 : 6;
        simulation sim(plan, broadcasting(small_buffers(2, 16 + records * (item + 2) + 8)),
                       seed * 7 + item);
        const std::string why = run_broadcasts(sim, counts(sim.n_ranks(), 30), item, c);
        ASSERT_TRUE(why.empty()) << label << " item " << item << " seed " << seed << ": " << why;
      }
}

// BCAST-7: each burst of 0 to 64 broadcasts sent by one broadcast_batch call, on every tree
// plan, items of 16, 24 and 37 bytes, lanes of 1 to 6 records and one or two buffers per
// link (a call fills and posts lanes in its middle, and stops where a lane has no free
// buffer: some calls must send part of their items), steady once; pulled one by one and by
// batches.
TEST(EngineBroadcast, BatchBroadcastsReachEveryRankOnce) {
  std::uint64_t partial = 0;
  for (const auto& [label, plan] : tree_plans())
    for (std::size_t item : {16u, 24u, 37u})
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const std::size_t records = seed == 1 ? 1 : 3 * seed - 3;
        engine_options o =
            broadcasting(small_buffers(seed == 2 ? 2 : 1, 16 + records * (item + 2) + 8));
        o.steady = seed == 3;
        simulation sim(plan, o, seed * 13 + item);
        cycle_options c;
        c.send_batches = true;
        c.batches = seed != 2;
        const std::string why = run_broadcasts(sim, counts(sim.n_ranks(), 50), item, c, &partial);
        ASSERT_TRUE(why.empty()) << label << " item " << item << " seed " << seed << ": " << why;
      }
  EXPECT_GT(partial, 0u) << "no call stopped at a full lane";
}

// BCAST-7 with the 8-byte block copy: every rank broadcasts the words (rank << 32 | i) in
// batches of 5 over lanes of 3 records; every rank pulls each word once, in order, from
// its root.
TEST(EngineBroadcast, BatchOfWordsInOrder) {
  simulation sim(mesh_plan({3, 2, 2}, {0, 1, 2}), broadcasting(small_buffers(1, 16 + 3 * 9 + 8)),
                 6);
  const int p = sim.n_ranks();
  const auto pp = static_cast<std::uint64_t>(p) * static_cast<std::uint64_t>(p);
  constexpr std::uint64_t n = 40;
  for (int r = 0; r < p; ++r) ASSERT_EQ(sim.at(r).begin(8), 1);
  std::vector<std::uint64_t> sent(static_cast<std::size_t>(p), 0);
  std::vector<std::uint64_t> next(pp, 0);
  std::uint64_t pulled = 0;
  for (int round = 0; round < 2000 && pulled < n * pp; ++round)
    for (int r = 0; r < p; ++r) {
      convoy::termination::engine& e = sim.at(r);
      std::uint64_t& i = sent[static_cast<std::size_t>(r)];
      std::uint64_t words[5];
      const std::uint64_t want = std::min<std::uint64_t>(5, n - i);
      for (std::uint64_t k = 0; k < want; ++k)
        words[k] = static_cast<std::uint64_t>(r) << 32 | (i + k);
      if (want > 0) {
        const std::int64_t rc = e.broadcast_batch(words, want);
        ASSERT_GE(rc, 0);
        i += static_cast<std::uint64_t>(rc);
      }
      ASSERT_GE(e.advance(i == n), 0);
      sim.network().deliver_all();
      item_view v;
      while (e.pull(v) == 1) {
        std::uint64_t x = 0;
        std::memcpy(&x, v.data, 8);
        ASSERT_EQ(static_cast<int>(x >> 32), v.from) << "rank " << r;
        std::uint64_t& due = next[static_cast<std::size_t>(r) * static_cast<std::size_t>(p) +
                                  static_cast<std::size_t>(v.from)];
        ASSERT_EQ(x & 0xffffffffu, due) << "rank " << r << " from " << v.from;
        ++due;
        ++pulled;
      }
    }
  EXPECT_EQ(pulled, n * pp);
  for (int r = 0; r < p; ++r) EXPECT_EQ(sim.at(r).stats().pushes, n) << "rank " << r;
}

// BCAST-3: buffers that hold two records and one buffer per link, so that fan-outs stop
// mid-record over and over (a lane of a later stage has no free buffer) and resume there;
// one rank broadcasting much more than the others.
TEST(EngineBroadcast, BackpressureMidFanOut) {
  for (const auto& [label, plan] : tree_plans()) {
    // 16 bytes of header, two records of a tag (up to 2 bytes) and 16 bytes, 8 spare.
    const engine_options o = broadcasting(small_buffers(1, 16 + 2 * (2 + 16) + 8));
    simulation sim(plan, o, 5);
    workload wl = counts(sim.n_ranks(), 6);
    wl[0].resize(60);
    const std::string why = run_broadcasts(sim, wl, 16);
    ASSERT_TRUE(why.empty()) << label << ": " << why;
  }
}

// BCAST-1 at every rank count from 1 to 24 and some up to 64 (primes, squares, powers of
// two), full meshes node first and core first, ragged.
TEST(EngineBroadcast, RankCountsFromOneTo64) {
  std::vector<int> ps;
  for (int p = 1; p <= 24; ++p) ps.push_back(p);
  for (int p : {29, 32, 36, 47, 64}) ps.push_back(p);
  for (int p : ps) {
    int a = 1;
    for (int d = 1; d * d <= p; ++d)
      if (p % d == 0) a = d;
    std::vector<int> sizes;
    for (int n = 0, left = p; left > 0; ++n) {
      sizes.push_back(std::min(left, 1 + (n * 3) % 5));
      left -= sizes.back();
    }
    const plan_ptr plans[] = {mesh_plan({a, p / a}), mesh_plan({a, p / a}, {0, 1}),
                              ragged_plan(sizes, {0, 1})};
    for (const plan_ptr& plan : plans) {
      simulation sim(plan, broadcasting(small_buffers(2, 256)), static_cast<std::uint64_t>(p));
      cycle_options o;
      o.rest_idle = true;
      const std::string why = run_broadcasts(sim, counts(p, p <= 16 ? 10 : 2), 16, o);
      ASSERT_TRUE(why.empty()) << plan->name() << ": " << why;
    }
  }
}

// BCAST-5 with TERM-8: one simulation through cycles of different item sizes and loads
// (nobody broadcasting included), flushes between them.
TEST(EngineBroadcast, SeveralCycles) {
  simulation sim(ragged_plan({4, 2, 3}, {0, 1}), broadcasting(small_buffers(2, 384)), 9);
  const int p = sim.n_ranks();
  int cycle = 0;
  for (std::size_t item : {16u, 40u, 16u, 24u}) {
    workload wl = counts(p, cycle == 2 ? 0 : 30);
    const std::string why = run_broadcasts(sim, wl, item);
    ASSERT_TRUE(why.empty()) << "cycle " << cycle << ": " << why;
    ++cycle;
  }
}

// Explicit flush: a single broadcast reaches every rank after flush() alone on every rank
// (no steady, no done), because flush posts the root's copies and each fan-out copy.
TEST(EngineBroadcast, FlushSendsPartlyFilledCopies) {
  simulation sim(mesh_plan({3, 2, 2}, {0, 1, 2}), broadcasting(small_buffers(2, 4096)), 4);
  const int p = sim.n_ranks();
  for (int r = 0; r < p; ++r) ASSERT_EQ(sim.at(r).begin(8), 1);
  const std::uint64_t word = 0x1234'5678'9abc'def0u;
  ASSERT_EQ(sim.at(5).broadcast(&word), 1);
  std::vector<int> got(static_cast<std::size_t>(p), 0);
  for (int round = 0; round < 20; ++round)
    for (int r = 0; r < p; ++r) {
      ASSERT_EQ(sim.at(r).flush(), 1);
      ASSERT_GE(sim.at(r).advance(false), 0);
      sim.network().deliver_all();
      item_view v;
      while (sim.at(r).pull(v) == 1) {
        std::uint64_t x = 0;
        std::memcpy(&x, v.data, 8);
        EXPECT_EQ(x, word);
        EXPECT_EQ(v.from, 5);
        ++got[static_cast<std::size_t>(r)];
      }
    }
  for (int r = 0; r < p; ++r) EXPECT_EQ(got[static_cast<std::size_t>(r)], 1) << "rank " << r;
}

// BCAST-8: the broadcast kind's default buffer: 256 KiB while the lanes x buffers fit in
// 4 MiB, halved as they grow, never below 16 KiB; tensor plans count rank 0's peers.
TEST(EngineBroadcast, DefaultBufferBytesFitTheBudget) {
  using convoy::termination::broadcast_buffer_bytes;
  EXPECT_EQ(broadcast_buffer_bytes(*mesh_plan({2}), 2), 256u << 10);     // 2 lanes
  EXPECT_EQ(broadcast_buffer_bytes(*mesh_plan({4, 2}), 2), 256u << 10);  // 5 lanes
  EXPECT_EQ(broadcast_buffer_bytes(*mesh_plan({4, 2}), 8), 64u << 10);   // 40 buffers
  EXPECT_EQ(broadcast_buffer_bytes(*mesh_plan({16, 8}), 2), 64u << 10);  // 23 lanes
  EXPECT_EQ(broadcast_buffer_bytes(*mesh_plan({64, 64}), 2), 16u << 10);
  EXPECT_EQ(broadcast_buffer_bytes(*mesh_plan({1024}), 1), 16u << 10);
  // Tensor order 2 over 8 ranks, groups of 2: rank 0 has 1 + 3 out-peers, 5 lanes.
  EXPECT_EQ(broadcast_buffer_bytes(*convoy::router::make_tensor_plan(2, 8, 2), 2), 256u << 10);
  for (int p = 1; p <= 300; p += 7) {
    const std::size_t b = broadcast_buffer_bytes(*mesh_plan({p}), 2);
    EXPECT_GE(b, convoy::base::default_buffer_bytes) << p;
    EXPECT_LE(b, convoy::termination::broadcast_buffer_bytes_max) << p;
    if (b > convoy::base::default_buffer_bytes) {
      EXPECT_LE(b * static_cast<std::size_t>(p) * 2, convoy::termination::broadcast_buffer_budget)
          << p;
    }
  }
}

// BCAST-4: push and epush on a broadcast engine and broadcast on a point-to-point one are
// error_mode;
// broadcast checks state and item; combining is refused; tensor order 3 and elastic items
// are refused at construction with the cause named.
TEST(EngineBroadcast, MisuseIsNamed) {
  using namespace convoy::termination;
  simulation sim(mesh_plan({2, 2}), broadcasting(small_buffers()), 3);
  engine& e = sim.at(0);
  const std::uint64_t item = 7;
  EXPECT_EQ(e.broadcast(&item), error_state);
  EXPECT_EQ(e.broadcast_batch(&item, 1), error_state);
  EXPECT_EQ(e.set_combine({0, 8, 8, 8, [](void*, const void*) {}}), error_mode);
  ASSERT_EQ(e.begin(8), 1);
  EXPECT_EQ(e.push(&item, 1), error_mode);
  EXPECT_EQ(e.epush(&item, 8, 1), error_mode);
  EXPECT_EQ(e.broadcast(nullptr), error_argument);
  EXPECT_EQ(e.broadcast_batch(nullptr, 1), error_argument);
  EXPECT_EQ(e.broadcast_batch(nullptr, 0), 0);
  EXPECT_EQ(e.stats().pushes, 0u);
  EXPECT_NE(std::string(error_string(error_mode)).find("broadcast"), std::string::npos);
  simulation p2p(mesh_plan({2, 2}), small_buffers(), 3);
  ASSERT_EQ(p2p.at(1).begin(8), 1);
  EXPECT_EQ(p2p.at(1).broadcast(&item), error_mode);
  EXPECT_EQ(p2p.at(1).broadcast_batch(&item, 1), error_mode);
  try {
    simulation t3(convoy::router::make_tensor_plan(3, 8, 2), broadcasting(small_buffers()), 3);
    ADD_FAILURE() << "tensor order 3 accepted";
  } catch (const convoy::error& ex) {
    EXPECT_NE(std::string(ex.what()).find("tensor order 3"), std::string::npos) << ex.what();
    EXPECT_NE(std::string(ex.what()).find("duplicates"), std::string::npos) << ex.what();
  }
  engine_options combining = broadcasting(small_buffers());
  combining.combine = {0, 8, 8, 8, [](void*, const void*) {}};
  try {
    simulation c(mesh_plan({2}), combining, 3);
    ADD_FAILURE() << "a combining broadcast accepted";
  } catch (const convoy::error& ex) {
    EXPECT_NE(std::string(ex.what()).find("not broadcast ones"), std::string::npos) << ex.what();
  }
}

}  // namespace
}  // namespace convoy_test
