// Large elastic items through convoy::elastic_engine, the C++ route to the C façade's
// etensor monsters (conveyor_api/README.md, API-14..16): a pull that meets a large item
// still on its way returns "nothing yet" and the item stays first in line; unpull of a
// large item; every byte, FIFO with the small items.
#include <gtest/gtest.h>

#include <convoy/aggregation/large_channel.hpp>
#include <convoy/conveyor_api/elastic_engine.hpp>
#include <convoy/conveyor_api/options.hpp>
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
  void reserve_send(std::size_t b) override { inner_->reserve_send(b); }
  void start_send(const void* d, std::size_t b, int to) override { inner_->start_send(d, b, to); }
  void start_receive(int from, std::size_t b) override {
    ++receives_started;
    inner_->start_receive(from, b);
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

std::unique_ptr<term::engine> elastic_mpi_engine(std::size_t capacity) {
  convoy::conveyor_options o;
  o.capacity_bytes = capacity;
  o.elastic = o.steady = true;
  return convoy::make_mpi_engine(MPI_COMM_WORLD, o);
}

// API-14, API-15: while a large item's bytes have not all arrived, pull returns 0 and the
// item stays first in line: nothing its sender pushed after it comes out before it.
TEST(ElasticEngine, NothingYetWhileInFlight) {
  const std::size_t bound = 50000, big = 40000;
  auto engine = elastic_mpi_engine(512);
  auto ch = std::make_unique<gated_channel>(std::make_unique<agg::mpi_large_channel>(
      MPI_COMM_WORLD, agg::mpi_large_channel::options{bound, 1 << 12, {}}));
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
    EXPECT_GE(c.stats(true).waits, 200u) << "pull never said 'nothing yet'";
    EXPECT_EQ(gate->receives_started, 1u) << "one receive per large item, however many pulls";
  }
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// API-16: unpull of a large item gives the same bytes again without a second transfer; an
// item above the bound is refused and moves nothing.
TEST(ElasticEngine, UnpullLargeItemAndBound) {
  const std::size_t bound = 10000;
  auto engine = elastic_mpi_engine(512);
  convoy::elastic_engine c(engine.get(),
                           std::make_unique<agg::mpi_large_channel>(
                               MPI_COMM_WORLD, agg::mpi_large_channel::options{bound, 4096, {}}),
                           bound);
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
  const auto s = c.stats(true);
  EXPECT_EQ(s.pushes, 1u) << "the item above the bound moved";
  EXPECT_EQ(s.large_pulls, 1u);
  if (p > 1) {
    EXPECT_EQ(s.channel.received, 1u) << "the item crossed the channel once";
  }
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

}  // namespace
