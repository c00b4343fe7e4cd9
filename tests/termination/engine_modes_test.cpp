// The engine used directly (no façade) in the modes the random contract runs do not reach:
// a buffer of the next cycle arriving before this rank's begin (TERM-8), elastic items
// (TERM-12), steady dispatch with steady_period > 1 (TERM-6), unpull after the loopback
// lane was posted (TERM-11), and forwarding by runs against the per-record path (TERM-13).
#include <gtest/gtest.h>

#include <algorithm>
#include <convoy/router/route_plan.hpp>
#include <convoy/termination/simulation.hpp>
#include <convoy_test/plans.hpp>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace t = convoy::termination;
using convoy::termination::engine_options;
using convoy::termination::item_view;
using convoy::termination::simulation;
using convoy::termination::state;
using convoy_test::mesh_plan;
using convoy_test::plan_ptr;

engine_options small(std::size_t capacity = 256, int n_buffers = 2) {
  engine_options o;
  o.buffer_bytes = capacity;
  o.n_buffers = n_buffers;
  return o;
}

// Item bytes are a function of (source, destination, sequence, position): every byte is
// checked on delivery.
std::uint8_t byte_at(int src, int dst, std::uint32_t seq, std::size_t i) {
  std::uint64_t x = (static_cast<std::uint64_t>(src) << 40) ^
                    (static_cast<std::uint64_t>(dst) << 20) ^ (std::uint64_t{seq} << 8) ^ i;
  x *= 0x9e3779b97f4a7c15ULL;
  return static_cast<std::uint8_t>(x >> 56);
}
std::vector<std::byte> make_item(int src, int dst, std::uint32_t seq, std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::byte{byte_at(src, dst, seq, i)};
  return v;
}
bool item_ok(const item_view& v, int dst, std::uint32_t seq, std::size_t n) {
  if (v.bytes != n) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (v.data[i] != std::byte{byte_at(v.from, dst, seq, i)}) return false;
  return true;
}

// One round of advance(true) on every rank; ranks flagged in `pulls` pull first.
void end_round(simulation& sim, const std::vector<bool>& pulls) {
  for (int r = 0; r < sim.n_ranks(); ++r) {
    auto& e = sim.at(r);
    item_view v;
    while (pulls[static_cast<std::size_t>(r)] && e.pull(v) == 1) {
    }
    ASSERT_GE(e.advance(true), 0);
  }
  sim.network().deliver_all();
}

// TERM-8 on the engine: rank 0 completes cycle 1 and begins cycle 2 (another item size)
// while rank 1, in CLEANUP, still holds cycle 1's items. Rank 0's cycle-2 buffer reaches
// rank 1 first: it is held, not delivered in cycle 1, and delivered intact in cycle 2.
TEST(EngineModes, BufferOfTheNextCycleArrivesBeforeBegin) {
  // Three buffers per link: rank 1 holds two of cycle 1 (a data buffer and the last one)
  // while rank 0 sends its third.
  simulation sim(mesh_plan({2}), small(256, 3), 1);
  auto& e0 = sim.at(0);
  auto& e1 = sim.at(1);
  ASSERT_EQ(e0.begin(8), 1);
  ASSERT_EQ(e1.begin(8), 1);
  const auto a = make_item(0, 1, 0, 8), b = make_item(1, 1, 0, 8);
  ASSERT_EQ(e0.push(a.data(), 1), 1);
  ASSERT_EQ(e1.push(b.data(), 1), 1);
  // Rank 1 does not pull: it reaches CLEANUP, rank 0 COMPLETE.
  for (int round = 0; round < 50 && e0.current_state() != state::complete; ++round)
    end_round(sim, {true, false});
  ASSERT_EQ(e0.current_state(), state::complete);
  ASSERT_EQ(e1.current_state(), state::cleanup);
  ASSERT_EQ(e0.reset(), 1);
  ASSERT_EQ(e0.begin(24), 1);
  const auto c = make_item(0, 1, 0, 24);
  ASSERT_EQ(e0.push(c.data(), 1), 1);
  ASSERT_EQ(e0.flush(), 1);
  sim.network().deliver_all();
  ASSERT_EQ(e1.advance(true), t::near);  // drains rank 0's cycle-2 buffer: held
  ASSERT_EQ(e1.stats().buffers_received, 3u) << "cycle 1's data and last buffers, then cycle 2's";
  std::map<int, int> from;
  item_view v;
  while (e1.pull(v) == 1) {
    EXPECT_TRUE(item_ok(v, 1, 0, 8)) << "cycle 1 item from " << v.from;
    ++from[v.from];
  }
  EXPECT_EQ(from, (std::map<int, int>{{0, 1}, {1, 1}})) << "cycle 2's item leaked into cycle 1";
  ASSERT_EQ(e1.advance(true), t::done);
  ASSERT_EQ(e1.reset(), 1);
  ASSERT_EQ(e1.begin(24), 1);
  ASSERT_EQ(e1.pull(v), 1) << "the held buffer is delivered in cycle 2";
  EXPECT_EQ(v.from, 0);
  EXPECT_TRUE(item_ok(v, 1, 0, 24));
  EXPECT_EQ(e1.pull(v), 0);
  bool all = false;
  for (int round = 0; round < 50 && !all; ++round) {
    end_round(sim, {true, true});
    all = e0.current_state() == state::complete && e1.current_state() == state::complete;
  }
  EXPECT_TRUE(all) << "cycle 2 must terminate with the early buffer counted once";
}

// TERM-12: an elastic engine used directly. Random sizes from 0 to max_item_bytes, random
// destinations and schedules: every item once, FIFO per pair, its source and every byte;
// a rigid pull of an item of another size fails with error_elastic and leaves it first.
void elastic_run(const plan_ptr& plan, std::uint64_t seed, int route_table_max_ranks) {
  engine_options o = small(256, 2);
  o.mode = convoy::termination::item_mode::elastic;
  o.route_table_max_ranks = route_table_max_ranks;
  simulation sim(plan, o, seed);
  const int p = sim.n_ranks();
  const std::size_t default_bytes = 12, max_bytes = sim.at(0).max_item_bytes();
  for (int r = 0; r < p; ++r) ASSERT_EQ(sim.at(r).begin(default_bytes), 1);
  std::mt19937_64 rng(seed);
  std::map<std::pair<int, int>, std::vector<std::size_t>> sent;  // sizes per pair
  std::map<std::pair<int, int>, std::size_t> seen;
  std::vector<int> left(static_cast<std::size_t>(p), 60);
  int complete = 0, rigid_refusals = 0;
  for (int round = 0; round < 100000 && complete < p; ++round) {
    for (int r : sim.round_order()) {
      auto& e = sim.at(r);
      for (int k = 0;
           e.current_state() == state::working && k < 8 && left[static_cast<std::size_t>(r)] > 0;
           ++k) {
        const int dst = static_cast<int>(rng() % static_cast<std::uint64_t>(p));
        const std::size_t n = rng() % 4 == 0 ? default_bytes : rng() % (max_bytes + 1);
        auto& sizes = sent[{r, dst}];
        const auto item = make_item(r, dst, static_cast<std::uint32_t>(sizes.size()), n);
        const int rc = n == default_bytes && rng() % 2 ? e.push(item.data(), dst)
                                                       : e.epush(item.data(), n, dst);
        ASSERT_GE(rc, 0);
        if (rc == 0) break;
        sizes.push_back(n);
        --left[static_cast<std::size_t>(r)];
      }
      item_view v;
      for (int k = 0; k < 40; ++k) {
        const bool rigid = rng() % 3 == 0;
        const int rc = e.pull(v, rigid);
        if (rc == t::error_elastic) {
          ++rigid_refusals;
          continue;  // left in place: the next elastic pull must return it
        }
        ASSERT_GE(rc, 0);
        if (rc == 0) break;
        auto& n_seen = seen[{v.from, r}];
        const auto& sizes = sent[{v.from, r}];
        ASSERT_LT(n_seen, sizes.size()) << "an item pulled twice";
        if (rigid) {
          ASSERT_EQ(v.bytes, default_bytes);
        }
        ASSERT_TRUE(item_ok(v, r, static_cast<std::uint32_t>(n_seen), sizes[n_seen]))
            << v.from << "->" << r << " #" << n_seen << " (FIFO, size, bytes)";
        if (rng() % 8 == 0) {
          ASSERT_EQ(e.unpull(), 1);
          continue;
        }
        ++n_seen;
      }
      if (e.current_state() == state::complete) continue;
      const int rc = e.advance(left[static_cast<std::size_t>(r)] == 0);
      ASSERT_GE(rc, 0) << e.last_message();
      if (rc == t::done) ++complete;
      sim.jitter(6);
    }
  }
  ASSERT_EQ(complete, p) << plan->name();
  for (const auto& [pair, sizes] : sent) EXPECT_EQ(seen[pair], sizes.size());
  EXPECT_GT(rigid_refusals, 0) << "the schedule never tried a rigid pull of another size";
}

TEST(EngineModes, ElasticItemsUsedDirectly) {
  const plan_ptr plans[] = {mesh_plan({1}), mesh_plan({2, 4}), mesh_plan({3, 3, 2}),
                            convoy::router::make_tensor_plan(3, 12, 2),
                            convoy::router::make_tensor_plan(1, 5, 1)};
  for (const auto& plan : plans)
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE(plan->name() + " seed " + std::to_string(seed));
      elastic_run(plan, seed, seed % 3 == 0 ? 0 : 1 << 16);
      if (HasFatalFailure()) return;
    }
}

TEST(EngineModes, ElasticMisuse) {
  engine_options o = small(128, 2);
  o.mode = convoy::termination::item_mode::elastic;
  simulation sim(mesh_plan({2}), o, 3);
  simulation rigid(mesh_plan({2}), small(128, 2), 3);
  auto& e = sim.at(0);
  const std::byte item[200] = {};
  ASSERT_EQ(e.begin(0), 1) << "elastic engines accept a default size of 0";
  EXPECT_EQ(e.epush(item, e.max_item_bytes() + 1, 1), t::error_size);
  EXPECT_EQ(e.epush(nullptr, 4, 1), t::error_argument);
  EXPECT_EQ(e.epush(item, 4, 2), t::error_rank);
  EXPECT_EQ(e.stats().pushes, 0u);
  EXPECT_EQ(e.epush(nullptr, 0, 1), 1) << "an empty item needs no data";
  ASSERT_EQ(rigid.at(0).begin(8), 1);
  EXPECT_EQ(rigid.at(0).epush(item, 8, 1), t::error_elastic);
}

// TERM-6 with steady_period > 1: a partly filled buffer leaves on exactly the
// steady_period-th advance after its first item (and never without steady or flush).
int advances_until_delivered(bool steady, int period) {
  engine_options o = small(4096, 2);
  o.steady = steady;
  o.steady_period = period;
  simulation sim(mesh_plan({4}), o, 1);
  for (int r = 0; r < 4; ++r)
    if (sim.at(r).begin(8) != 1) return -2;
  const auto item = make_item(0, 3, 0, 8);
  if (sim.at(0).push(item.data(), 3) != 1) return -2;
  for (int n = 1; n <= 20; ++n) {
    if (sim.at(0).advance(false) != t::ok) return -2;
    sim.network().deliver_all();
    if (sim.at(3).advance(false) != t::ok) return -2;
    item_view v;
    if (sim.at(3).pull(v) == 1) return item_ok(v, 3, 0, 8) && v.from == 0 ? n : -2;
  }
  return -1;
}

TEST(EngineModes, SteadyPeriodCountsAdvances) {
  for (int period : {1, 2, 3, 7})
    EXPECT_EQ(advances_until_delivered(true, period), period) << "steady_period " << period;
  EXPECT_EQ(advances_until_delivered(false, 2), -1) << "without steady the buffer waits";
}

// TERM-11: pull an item sent to self, push another to self and post the loopback lane
// (flush, or a full lane), then unpull: the pulled item comes back first, then the new
// one, each once (found by the model-based test: the new item came back instead).
void unpull_after_loopback_post(bool elastic, bool by_flush) {
  engine_options o = small(64, 2);
  o.mode =
      elastic ? convoy::termination::item_mode::elastic : convoy::termination::item_mode::rigid;
  simulation sim(mesh_plan({1}), o, 1);
  auto& e = sim.at(0);
  ASSERT_EQ(e.begin(4), 1);
  const std::uint32_t first = 10;
  item_view v;
  ASSERT_EQ(e.push(&first, 0), 1);
  ASSERT_EQ(e.pull(v), 1);
  std::uint32_t got = 0;
  std::memcpy(&got, v.data, 4);
  ASSERT_EQ(got, first);
  std::vector<std::uint32_t> later;
  // By flush: one item. Otherwise push until the lane fills and is posted, and the next
  // push finds no free loopback buffer (the pulled one is still held for unpull).
  for (std::uint32_t k = 0; k < (by_flush ? 1u : 64u); ++k) {
    const std::uint32_t x = 20 + k;
    const int rc = e.push(&x, 0);
    ASSERT_GE(rc, 0);
    if (rc == 0) break;
    later.push_back(x);
  }
  ASSERT_TRUE(by_flush || later.size() < 64u) << "the loopback lane never filled";
  if (by_flush) {
    ASSERT_EQ(e.flush(), 1);
  }
  ASSERT_EQ(e.unpull(), 1);
  std::vector<std::uint32_t> pulled;
  for (int k = 0; k < 40 && e.pull(v) == 1; ++k) {
    std::memcpy(&got, v.data, 4);
    pulled.push_back(got);
  }
  std::vector<std::uint32_t> want{first};
  want.insert(want.end(), later.begin(), later.end());
  // Items still in the loopback lane come with the next pulls after a flush.
  ASSERT_EQ(e.flush(), 1);
  while (e.pull(v) == 1) {
    std::memcpy(&got, v.data, 4);
    pulled.push_back(got);
  }
  EXPECT_EQ(pulled, want);
}

TEST(EngineModes, UnpullAfterLoopbackPost) {
  for (bool elastic : {true, false})
    for (bool by_flush : {true, false}) {
      SCOPED_TRACE(std::string(elastic ? "elastic" : "rigid") + (by_flush ? " flush" : " full"));
      unpull_after_loopback_post(elastic, by_flush);
    }
}

// TERM-13: with step tables (runs, tagged windows) and without (route_table_max_ranks 0:
// the per-record path), every rank pushes `per_pair` numbered items to every rank in a
// shuffled order through small buffers (walks stop mid-buffer on full lanes); receivers
// pull in bursts and unpull one item in five. Each receiver checks every byte, that each
// pair's items come in push order, exactly once; both paths deliver the same sequences.
std::vector<std::vector<std::uint32_t>> runs_round(const plan_ptr& plan, std::size_t item,
                                                   bool tables) {
  engine_options o = small(96, 1);
  if (!tables) o.route_table_max_ranks = 0;
  simulation sim(plan, o, 7);
  const int p = sim.n_ranks();
  const std::uint32_t per_pair = 6;
  // Per rank: (dest, seq) in a shuffled order.
  std::vector<std::vector<std::pair<int, std::uint32_t>>> work(static_cast<std::size_t>(p));
  std::mt19937 rng(11);
  for (int r = 0; r < p; ++r) {
    auto& w = work[static_cast<std::size_t>(r)];
    for (std::uint32_t k = 0; k < per_pair; ++k)
      for (int d = 0; d < p; ++d) w.emplace_back(d, k);
    std::shuffle(w.begin(), w.end(), rng);
    // Push order per pair must be seq order: renumber in the shuffled order.
    std::vector<std::uint32_t> next(static_cast<std::size_t>(p), 0);
    for (auto& [d, k] : w) k = next[static_cast<std::size_t>(d)]++;
    if (sim.at(r).begin(item) != 1) ADD_FAILURE() << "begin";
  }
  std::vector<std::vector<std::uint32_t>> got(static_cast<std::size_t>(p) *
                                              static_cast<std::size_t>(p));
  std::vector<std::size_t> done(static_cast<std::size_t>(p), 0);
  int live = p;
  for (int round = 0; live > 0 && round < 100000; ++round) {
    live = 0;
    for (int r = 0; r < p; ++r) {
      auto& e = sim.at(r);
      auto& w = work[static_cast<std::size_t>(r)];
      auto& n = done[static_cast<std::size_t>(r)];
      while (n < w.size()) {
        const auto data = make_item(r, w[n].first, w[n].second, item);
        if (e.push(data.data(), w[n].first) != 1) break;
        ++n;
      }
      const int rc = e.advance(n == w.size());
      if (rc < 0) ADD_FAILURE() << "advance " << rc;
      item_view v;
      for (int burst = 0; burst < 3 + round % 5 && e.pull(v) == 1; ++burst) {
        if ((round + burst) % 5 == 0) {
          const item_view first = v;
          if (e.unpull() != 1 || e.pull(v) != 1 || v.data != first.data || v.from != first.from)
            ADD_FAILURE() << "unpull did not give the same item back";
        }
        auto& seqs = got[static_cast<std::size_t>(v.from) * static_cast<std::size_t>(p) +
                         static_cast<std::size_t>(r)];
        const auto want = static_cast<std::uint32_t>(seqs.size());
        if (!item_ok(v, r, want, item))
          ADD_FAILURE() << plan->name() << ": " << v.from << "->" << r << " item " << want;
        seqs.push_back(want);
      }
      if (rc != t::done) ++live;
    }
    sim.network().deliver_all();
  }
  EXPECT_EQ(live, 0) << plan->name() << " did not terminate";
  for (const auto& seqs : got) EXPECT_EQ(seqs.size(), per_pair) << plan->name();
  for (int r = 0; r < p; ++r) (void)sim.at(r).reset();
  return got;
}

TEST(EngineModes, RunsDeliverAsThePerRecordPath) {
  const std::vector<plan_ptr> plans{mesh_plan({4, 4}), mesh_plan({3, 3, 3}), mesh_plan({4, 2, 3}),
                                    convoy::router::make_tensor_plan(3, 18, 3),
                                    convoy::router::make_tensor_plan(2, 8, 4)};
  for (const auto& plan : plans)
    for (std::size_t item : {8, 16, 5}) {
      SCOPED_TRACE(plan->name() + ", " + std::to_string(item) + "-byte items");
      EXPECT_EQ(runs_round(plan, item, true), runs_round(plan, item, false));
    }
}

}  // namespace
