// The one-sided RMA transport (docs/aggregation-reference.md, "Transports" AGG-1–AGG-10 and "RMA
// transport" AGG-110–AGG-117). Every loop is bounded by a deadline that fails the test instead of
// hanging.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <convoy/aggregation/hybrid_transport.hpp>
#include <convoy/aggregation/rma_transport.hpp>
#include <convoy/base/error.hpp>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "convoy_test/mpi.hpp"
#include "error_of.hpp"
#include "traffic_drive.hpp"
#include "transport_driver.hpp"

namespace agg = convoy::aggregation;
using convoy_test::all_ranks;
using convoy_test::all_to_all;
using convoy_test::error_of;
using convoy_test::exchange;
using convoy_test::many_at_once;
using convoy_test::traffic;
using convoy_test::world_rank;
using convoy_test::world_size;

namespace {
using clock_type = std::chrono::steady_clock;
}  // namespace

// AGG-1 FIFO, AGG-2 exactly once, AGG-6 idle, AGG-110 memory independent of P: all-to-all with
// random sizes up to the capacity, receivers holding 30% and releasing out of order.
TEST(RmaTransport, AllToAllFifoExactlyOnce) {
  const int rank = world_rank(), p = world_size();
  for (const int nb : {1, 2, 4}) {
    SCOPED_TRACE("n_buffers " + std::to_string(nb));
    const auto lay = all_to_all(rank, p, 1, 512, nb);
    agg::rma_transport t(MPI_COMM_WORLD);
    t.open(lay);
    const std::size_t record = agg::rma_transport::record_bytes(512);
    EXPECT_EQ(record, 576U);
    EXPECT_EQ(t.ring_bytes(), 4U * static_cast<std::size_t>(nb) * record);  // no P in it
    const std::size_t window = p > 1 ? 64U + t.ring_bytes() : 0U;           // one stage, or none
    const std::size_t credits = 8U * static_cast<std::size_t>(p - 1);       // one word per out-link
    EXPECT_EQ(t.memory_bytes(), window + credits);
    EXPECT_EQ(t.max_memory_bytes(),
              window + credits + static_cast<std::size_t>(p - 1) * nb * record);
    exchange(
        t, lay,
        {.tag = 7, .seed = 17u + static_cast<unsigned>(rank), .hold_percent = 30, .per_link = 200});
    EXPECT_TRUE(t.idle());
    EXPECT_LE(t.memory_bytes(), t.max_memory_bytes());
    EXPECT_TRUE(all_ranks(!HasFailure()));
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// AGG-111 never overwrite, AGG-113 circular recycling, AGG-114 backpressure: a ring of two full
// records wraps hundreds of times under variable sizes (skip records at the end of the ring).
TEST(RmaTransport, SmallRingWrapsIntact) {
  const int rank = world_rank(), p = world_size();
  const auto lay = all_to_all(rank, p, 2, 300, 2);
  agg::rma_transport t(MPI_COMM_WORLD, 2 * agg::rma_transport::record_bytes(300));
  t.open(lay);
  EXPECT_EQ(t.ring_bytes(), 2U * agg::rma_transport::record_bytes(300));
  exchange(
      t, lay,
      {.tag = 7, .seed = 99u + static_cast<unsigned>(rank), .hold_percent = 50, .per_link = 300});
  EXPECT_TRUE(t.idle());
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-3: links of two stages between the same two ranks never mix.
TEST(RmaTransport, TwoStagesSamePairDoNotMix) {
  const int rank = world_rank(), p = world_size();
  const auto lay = all_to_all(rank, p, 3, 256, 2);
  agg::rma_transport t(MPI_COMM_WORLD);
  t.open(lay);
  exchange(
      t, lay,
      {.tag = 7, .seed = 3u + static_cast<unsigned>(rank), .hold_percent = 20, .per_link = 100});
  EXPECT_TRUE(t.idle());
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-7: many transports (each its own window) exchanging at once; no crosstalk.
TEST(RmaTransport, ManyTransportsNoCrosstalk) {
  const int rank = world_rank(), p = world_size();
  const auto fleet = many_at_once(
      20, [] { return std::make_unique<agg::rma_transport>(MPI_COMM_WORLD); },
      [&](int i) { return all_to_all(rank, p, 1, 64, 1 + i % 2); }, 0, 10);
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-4 / AGG-114 / AGG-118: rank 1 holds everything. A ring of exactly two full records takes two
// buffers, the link queues n_buffers more, then acquire() is nullptr. Releasing the newest
// held record frees nothing (the head waits for the oldest); releasing the oldest lets the
// queued buffers through, in order, two at a time (the ring's size).
TEST(RmaTransport, RingFullIsBackpressure) {
  const int rank = world_rank(), p = world_size();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  constexpr int nb = 4;
  auto lay = all_to_all(rank, p, 1, 128, nb);
  agg::rma_transport t(MPI_COMM_WORLD, 2 * agg::rma_transport::record_bytes(128));
  t.open(lay);
  traffic tr(t, lay, 1u, 1u);
  tr.set_max_bytes(128);
  std::vector<agg::received> held;
  agg::received r;
  auto post_full = [&](std::byte* b) {
    agg::buffer_header h{128, 1u, 0, 0};
    static std::uint32_t seq = 0;
    h.seq = ++seq;
    std::memcpy(b, &h, sizeof h);
    t.post(0, b, 128);
  };
  if (rank == 0) {
    int posted = 0;
    while (std::byte* b = t.acquire(0)) {
      post_full(b);
      if (++posted > 10) break;
    }
    EXPECT_EQ(posted, 2 + nb);
    EXPECT_FALSE(t.idle());
    EXPECT_GT(t.n_full(), 0U);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    while (t.poll(r)) held.push_back(r);
    ASSERT_EQ(held.size(), 2U);
    t.release(held[1]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    t.progress();
    EXPECT_EQ(t.acquire(0), nullptr) << "the head passed a held record";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) t.release(held[0]);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto deadline = clock_type::now() + std::chrono::seconds(20);
  std::vector<std::uint32_t> seqs;
  while (clock_type::now() < deadline) {
    t.progress();
    while (t.poll(r)) {
      agg::buffer_header h{};
      std::memcpy(&h, r.data, sizeof h);
      seqs.push_back(h.seq);
      t.release(r);
    }
    if (rank != 1 && t.idle()) break;
    if (rank == 1 && seqs.size() == static_cast<std::size_t>(nb)) break;
    std::this_thread::yield();
  }
  if (rank == 1) {
    EXPECT_EQ(seqs, (std::vector<std::uint32_t>{3, 4, 5, 6}));
  }
  EXPECT_TRUE(t.idle());
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-4 / AGG-118: with room in the ring, a link still has at most n_buffers records unreleased
// at the receiver (the engine's per-link queue holds no more): rank 0 gets n_buffers out
// and n_buffers queued, rank 1 sees exactly n_buffers; one release lets exactly one more in.
TEST(RmaTransport, CreditLimitPerLink) {
  const int rank = world_rank(), p = world_size();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  constexpr int nb = 2;
  const auto lay = all_to_all(rank, p, 1, 64, nb);
  agg::rma_transport t(MPI_COMM_WORLD);  // default ring: 4 x nb records, room for more
  t.open(lay);
  traffic tr(t, lay, 1u, 1u);
  agg::received r;
  std::vector<agg::received> held;
  if (rank == 0) {
    int posted = 0;
    while (std::byte* b = t.acquire(0)) {
      tr.post_one(0, b);
      if (++posted > 10) break;
    }
    EXPECT_EQ(posted, 2 * nb);
    EXPECT_EQ(t.n_full(), 0U);  // the ring had room: the credit stopped it
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    while (t.poll(r)) held.push_back(r);
    EXPECT_EQ(held.size(), static_cast<std::size_t>(nb));
    if (!held.empty()) t.release(held.front());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    t.progress();
    EXPECT_NE(t.acquire(0), nullptr);  // one queued buffer left: its slot is free
    EXPECT_EQ(t.acquire(0), nullptr);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    while (t.poll(r)) held.push_back(r);
    EXPECT_EQ(held.size(), static_cast<std::size_t>(nb) + 1);
    for (std::size_t i = 1; i < held.size(); ++i) t.release(held[i]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const auto deadline = clock_type::now() + std::chrono::seconds(20);
  while (!t.idle() && clock_type::now() < deadline) {
    t.progress();
    while (t.poll(r)) t.release(r);
    std::this_thread::yield();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  while (t.poll(r)) t.release(r);
  EXPECT_TRUE(t.idle());
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-10: misuse is a convoy::error naming it; a bad layout on one rank throws on all.
TEST(RmaTransport, ErrorsAreNamed) {
  const int rank = world_rank(), p = world_size();
  {
    auto lay = all_to_all(rank, p, 1, 128, 1);
    if (rank == 0) lay.out_links.push_back({0, 0});  // a self-link
    agg::rma_transport t(MPI_COMM_WORLD);
    // Every rank reads rank 0's message (base::agree).
    const std::string m = error_of([&] { t.open(lay); });
    EXPECT_EQ(m.rfind("rma_transport: ", 0), 0u) << m;
    EXPECT_NE(m.find("a link to the rank itself"), std::string::npos) << m;
  }
  if (p < 2) return;
  const auto lay = all_to_all(rank, p, 1, 128, 1);
  agg::rma_transport t(MPI_COMM_WORLD);
  t.open(lay);
  EXPECT_NE(error_of([&] { t.open(lay); }).find("twice"), std::string::npos);
  std::byte stray[128]{};
  EXPECT_NE(error_of([&] { t.post(0, stray, 64); }).find("not out-link 0's acquired buffer"),
            std::string::npos);
  std::byte* b = t.acquire(0);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(error_of([&] { t.post(0, b, 4); }).find("outside [header, buffer_bytes]"),
            std::string::npos);
  agg::buffer_header h{64, 0, 1, 0};
  std::memcpy(b, &h, sizeof h);
  t.post(0, b, 64);
  MPI_Barrier(MPI_COMM_WORLD);
  // Every rank posted one buffer on its out-link 0: rank 0 to rank 1, the others to rank 0.
  const std::size_t expected = rank == 0 ? static_cast<std::size_t>(p - 1) : rank == 1 ? 1 : 0;
  std::vector<agg::received> got;
  const auto deadline = clock_type::now() + std::chrono::seconds(10);
  agg::received r;
  // The ring (4 records) holds fewer than p - 1 buffers: senders retry in progress().
  while ((got.size() < expected || !t.idle()) && clock_type::now() < deadline) {
    t.progress();
    if (t.poll(r)) {
      got.push_back(r);
      t.release(r);
    } else {
      std::this_thread::yield();
    }
  }
  EXPECT_EQ(got.size(), expected);
  if (!got.empty()) {
    EXPECT_NE(error_of([&] { t.release(got[0]); }).find("released twice"), std::string::npos);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The factory builds it for CONVOY_TRANSPORT=rma (base::transport_kind::rma).
TEST(RmaTransport, MadeByTheFactory) {
  const int rank = world_rank(), p = world_size();
  auto t = agg::make_transport(MPI_COMM_WORLD, convoy::base::transport_kind::rma);
  EXPECT_NE(dynamic_cast<agg::rma_transport*>(t.get()), nullptr);
  const auto lay = all_to_all(rank, p, 1, 1024, 2);
  t->open(lay);
  exchange(
      *t, lay,
      {.tag = 7, .seed = 5u + static_cast<unsigned>(rank), .hold_percent = 10, .per_link = 50});
  EXPECT_TRUE(t->idle());
  MPI_Barrier(MPI_COMM_WORLD);
}
