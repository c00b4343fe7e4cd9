// Large elastic items through convoy::elastic_engine, the C++ route to the C façade's
// etensor monsters (conveyor_api/README.md, API-14..16): a pull that meets a large item
// still on its way returns "nothing yet" and the item stays first in line; unpull of a
// large item; every byte, FIFO with the small items. The channel is the one CONVOY_LARGE
// names (ctest runs this program with two-sided and rendezvous, aggregation/README.md
// AGG-125).
#include <gtest/gtest.h>

#include <convoy/aggregation/large_channel.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy/termination/elastic_engine.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace {

namespace agg = convoy::aggregation;
namespace term = convoy::termination;
using convoy_test::world_rank;
using convoy_test::world_size;

// The bytes of item k from `src`, `n` long: any byte out of place shows.
std::vector<std::byte> item(int src, std::uint32_t k, std::size_t n) {
  std::vector<std::byte> b(n);
  for (std::size_t i = 0; i < n; ++i)
    b[i] = static_cast<std::byte>(
        (static_cast<std::size_t>(src) * 131 + std::size_t{k} * 17 + i * 7) & 0xff);
  return b;
}

// A channel whose receives complete only once the test opens the gate.
class gated_channel final : public agg::large_channel {
 public:
  explicit gated_channel(std::unique_ptr<agg::large_channel> inner) : inner_(std::move(inner)) {}
  std::size_t max_item_bytes() const noexcept override { return inner_->max_item_bytes(); }
  bool send_ready() override { return inner_->send_ready(); }
  std::uint64_t stage_send(const void* d, std::size_t b, int to) override {
    return inner_->stage_send(d, b, to);
  }
  void start_send() override { inner_->start_send(); }
  void start_receive(int from, std::size_t b, std::uint64_t where) override {
    ++receives_started;
    inner_->start_receive(from, b, where);
  }
  bool receive_done() override {
    if (!open) {
      inner_->progress();
      return false;
    }
    return inner_->receive_done();
  }
  bool receiving() const noexcept override { return inner_->receiving(); }
  const std::byte* incoming() const noexcept override { return inner_->incoming(); }
  void progress() override { inner_->progress(); }
  bool idle() const noexcept override { return inner_->idle(); }
  const statistics& stats() const noexcept override { return inner_->stats(); }
  std::size_t memory_bytes() const noexcept override { return inner_->memory_bytes(); }
  std::size_t max_memory_bytes() const noexcept override { return inner_->max_memory_bytes(); }
  bool open = false;
  std::uint64_t receives_started = 0;

 private:
  std::unique_ptr<agg::large_channel> inner_;
};

// The channel CONVOY_LARGE names (collective).
std::unique_ptr<agg::large_channel> channel(std::size_t bound, std::size_t chunk) {
  const auto kind = convoy::base::settings::from_env(MPI_COMM_WORLD).large_or_auto();
  return agg::make_large_channel(MPI_COMM_WORLD, kind, {bound, chunk, {}});
}

std::unique_ptr<term::engine> elastic_mpi_engine(std::size_t capacity) {
  convoy::conveyor_options o;
  o.buffer_bytes = capacity;
  o.kind = convoy::conveyor_kind::elastic;
  o.steady = true;
  return convoy::make_mpi_engine(MPI_COMM_WORLD, o);
}

// API-14, API-15: while a large item's bytes have not all arrived, pull returns 0 and the
// item stays first in line: nothing its sender pushed after it comes out before it.
TEST(ElasticEngine, NothingYetWhileInFlight) {
  const std::size_t bound = 50000, big = 40000;
  auto engine = elastic_mpi_engine(512);
  auto ch = std::make_unique<gated_channel>(channel(bound, 1 << 12));
  gated_channel* gate = ch.get();
  convoy::elastic_engine c(engine.get(), std::move(ch), bound);
  const int me = world_rank(), sender = world_size() - 1;
  ASSERT_EQ(c.begin(0), 1);
  std::uint32_t pushed = me == sender ? 0 : 6;  // sender: one big item to rank 0, five small
  std::uint32_t got = 0;
  std::uint64_t empty_pulls = 0, rounds = 0;
  int rc = 0;
  while ((rc = c.advance(pushed == 6)) != term::done) {
    ASSERT_GE(rc, 0);
    ASSERT_LT(++rounds, 5'000'000u);
    for (; pushed < 6; ++pushed) {
      const auto b = item(me, pushed, pushed == 0 ? big : 16);
      if (c.epush(b.data(), b.size(), 0) <= 0) break;
    }
    if (me != 0) continue;
    term::item_view v;
    const int p = c.epull(v);
    ASSERT_GE(p, 0);
    if (p == 0) {
      if (got == 0 && gate->receives_started > 0 && ++empty_pulls >= 200) gate->open = true;
      continue;
    }
    ASSERT_EQ(v.from, sender);
    const auto want = item(sender, got, got == 0 ? big : 16);
    ASSERT_EQ(v.bytes, want.size()) << "item " << got << " out of order";
    EXPECT_EQ(std::memcmp(v.data, want.data(), want.size()), 0);
    if (got == 0) {
      EXPECT_TRUE(gate->open) << "the large item came out before its bytes";
    }
    ++got;
  }
  EXPECT_EQ(c.reset(), 1);
  if (me == 0) {
    EXPECT_EQ(got, 6u);
    EXPECT_GE(c.detailed_stats(true).waits, 200u) << "pull never said 'nothing yet'";
    EXPECT_EQ(gate->receives_started, 1u) << "one receive per large item, however many pulls";
  }
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// API-16: unpull of a large item gives the same bytes again without a second transfer; an
// item above the bound is refused and moves nothing.
TEST(ElasticEngine, UnpullLargeItemAndBound) {
  const std::size_t bound = 10000;
  auto engine = elastic_mpi_engine(512);
  convoy::elastic_engine c(engine.get(), channel(bound, 4096), bound);
  const int me = world_rank(), p = world_size(), to = (me + 1) % p;
  const auto mine = item(me, 0, 9000);
  const std::vector<std::byte> over(bound + 1);
  ASSERT_EQ(c.begin(0), 1);
  EXPECT_EQ(c.epush(over.data(), over.size(), to), term::error_size);
  bool pushed = false;
  int got = 0, rc = 0;
  while ((rc = c.advance(pushed)) != term::done) {
    ASSERT_GE(rc, 0);
    if (!pushed) pushed = c.epush(mine.data(), mine.size(), to) > 0;
    term::item_view v;
    if (c.epull(v) <= 0) continue;
    const std::vector<std::byte> first(v.data, v.data + v.bytes);
    ASSERT_EQ(c.unpull(), 1);
    term::item_view again;
    ASSERT_EQ(c.epull(again), 1);
    ASSERT_EQ(again.bytes, first.size());
    EXPECT_EQ(std::memcmp(again.data, first.data(), first.size()), 0);
    const auto want = item((me + p - 1) % p, 0, 9000);
    EXPECT_EQ(first, want);
    ++got;
  }
  EXPECT_EQ(c.reset(), 1);
  EXPECT_EQ(got, 1);
  const auto s = c.detailed_stats(true);
  EXPECT_EQ(s.pushes, 1u) << "the item above the bound moved";
  EXPECT_EQ(s.large_pulls, 1u);
  if (p > 1) {
    EXPECT_EQ(s.channel.received, 1u) << "the item crossed the channel once";
  }
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-125: every rank pushes to every rank a stream in which large items (around the
// channel's chunk size, above a buffer) are mixed with small ones; each receiver sees, per
// sender, exactly the stream in push order, every byte intact.
TEST(ElasticEngine, LargeAndSmallFifoPerPair) {
  const std::size_t bound = 3000, chunk = 700;
  auto engine = elastic_mpi_engine(256);
  convoy::elastic_engine c(engine.get(), channel(bound, chunk), bound);
  const int me = world_rank(), p = world_size();
  constexpr std::uint32_t n = 40;  // items per destination
  auto size_of = [](std::uint32_t k, int src) -> std::size_t {
    const std::size_t sizes[] = {8, 699, 700, 701, 3000, 0, 1400, 100, 2999, 230};
    return sizes[(k + static_cast<std::uint32_t>(src)) % 10];
  };
  std::vector<std::uint32_t> next(p, 0), got(p, 0);
  ASSERT_EQ(c.begin(0), 1);
  int to = 0, rc = 0;
  std::uint64_t rounds = 0;
  std::uint32_t done_dests = 0;
  while ((rc = c.advance(done_dests == static_cast<std::uint32_t>(p))) != term::done) {
    ASSERT_GE(rc, 0);
    ASSERT_LT(++rounds, 5'000'000u);
    for (int tries = 0; tries < p && done_dests < static_cast<std::uint32_t>(p); ++tries) {
      to = (to + 1) % p;
      if (next[to] == n) continue;
      const auto b = item(me, next[to], size_of(next[to], me));
      const int pr = c.epush(b.data(), b.size(), to);
      ASSERT_GE(pr, 0);
      if (pr == 0) break;
      if (++next[to] == n) ++done_dests;
    }
    term::item_view v;
    int pl = 0;
    while ((pl = c.epull(v)) > 0) {
      ASSERT_GE(v.from, 0);
      ASSERT_LT(v.from, p);
      const std::uint32_t k = got[v.from]++;
      ASSERT_LT(k, n);
      const auto want = item(v.from, k, size_of(k, v.from));
      ASSERT_EQ(v.bytes, want.size()) << "from " << v.from << " item " << k;
      if (!want.empty()) {
        EXPECT_EQ(std::memcmp(v.data, want.data(), want.size()), 0)
            << "from " << v.from << " item " << k;
      }
    }
    ASSERT_GE(pl, 0);
  }
  EXPECT_EQ(c.reset(), 1);
  for (int s = 0; s < p; ++s) EXPECT_EQ(got[s], n) << "from " << s;
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

}  // namespace
