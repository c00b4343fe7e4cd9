// The MPI large-item channel (aggregation/README.md, AGG-52..57). Small chunk sizes make
// the chunking visible with small items; every loop is bounded.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <convoy/aggregation/large_channel.hpp>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "convoy_test/mpi.hpp"
#include "counting_source.hpp"
#include "error_of.hpp"

namespace agg = convoy::aggregation;
using convoy_test::world_rank;
using convoy_test::world_size;

namespace {

std::vector<std::byte> item_bytes(int src, std::size_t n, std::size_t k) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::byte>(static_cast<std::size_t>(src) * 31 + k * 7 + i * 13);
  return v;
}

bool within(std::chrono::steady_clock::time_point start, int seconds) {
  return std::chrono::steady_clock::now() - start < std::chrono::seconds(seconds);
}

// AGG-52, AGG-53: items of every size around the chunk boundary go from each rank to the
// next, one in flight at a time, received in order and intact.
TEST(LargeChannel, RingOfSizesChunked) {
  const int me = world_rank(), p = world_size();
  const int to = (me + 1) % p, from = (me + p - 1) % p;
  const std::vector<std::size_t> sizes = {0, 1, 999, 1000, 1001, 5003, 64, 20000};
  agg::mpi_large_channel ch(MPI_COMM_WORLD, {20000, 1000, {}});
  EXPECT_EQ(ch.max_item_bytes(), 20000u);
  std::size_t sent = 0, got = 0;
  const auto start = std::chrono::steady_clock::now();
  while ((sent < sizes.size() || got < sizes.size()) && within(start, 60)) {
    if (sent < sizes.size() && ch.send_ready()) {
      const auto v = item_bytes(me, sizes[sent], sent);
      ch.reserve_send(v.size());
      ch.start_send(v.data(), v.size(), to);
      EXPECT_FALSE(ch.idle());
      ++sent;
    }
    if (got < sizes.size()) {
      if (!ch.receiving()) ch.start_receive(from, sizes[got]);
      if (ch.receive_done()) {
        const auto want = item_bytes(from, sizes[got], got);
        if (!want.empty()) {
          EXPECT_EQ(std::memcmp(ch.incoming(), want.data(), want.size()), 0) << "item " << got;
        }
        ++got;
      }
    }
    ch.progress();
  }
  ASSERT_EQ(got, sizes.size());
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_TRUE(ch.send_ready());
  EXPECT_TRUE(ch.idle());
  // 1+1+1+1+2+6+1+20 chunks (an empty item is one empty message).
  EXPECT_EQ(ch.stats().messages, 33u);
  if (p > 1) {
    EXPECT_EQ(ch.stats().sent, sizes.size());
    EXPECT_EQ(ch.stats().received, sizes.size());
  } else {
    EXPECT_EQ(ch.stats().sent, 0u) << "items to self are not counted as sent";
  }
  EXPECT_LE(ch.memory_bytes(), ch.max_memory_bytes());
  EXPECT_EQ(ch.memory_bytes(), 2u * 20000u) << "each buffer grew to the largest item";
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-54: a receive started before its sender has sent is "not yet", without blocking;
// it completes once the bytes come.
TEST(LargeChannel, ReceiveNotDoneUntilSent) {
  const int me = world_rank(), p = world_size();
  agg::mpi_large_channel ch(MPI_COMM_WORLD, {4096, 512, {}});
  const auto v = item_bytes(me, 4096, 3);
  ch.start_receive((me + p - 1) % p, 4096);
  MPI_Barrier(MPI_COMM_WORLD);  // nobody has sent
  for (int i = 0; i < 100; ++i) {
    ch.progress();
    EXPECT_FALSE(ch.receive_done());
  }
  EXPECT_TRUE(ch.receiving());
  MPI_Barrier(MPI_COMM_WORLD);
  ch.reserve_send(v.size());
  ch.start_send(v.data(), v.size(), (me + 1) % p);
  const auto start = std::chrono::steady_clock::now();
  while (!ch.receive_done() && within(start, 30)) ch.progress();
  EXPECT_FALSE(ch.receiving());
  const auto want = item_bytes((me + p - 1) % p, 4096, 3);
  EXPECT_EQ(std::memcmp(ch.incoming(), want.data(), want.size()), 0);
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-55: the bound, and only one send in flight.
TEST(LargeChannel, BoundAndMisuse) {
  using convoy_test::contains;
  using convoy_test::error_of;
  agg::mpi_large_channel ch(MPI_COMM_WORLD, {100, 40, {}});
  EXPECT_TRUE(contains(error_of([&] { ch.reserve_send(101); }), "exceeds the bound"));
  EXPECT_TRUE(contains(error_of([&] { ch.start_receive(0, 101); }), "exceeds the bound"));
  EXPECT_FALSE(ch.receiving());
  EXPECT_EQ(ch.memory_bytes(), 0u) << "nothing allocated by a refused item";
  EXPECT_TRUE(contains(error_of([] {
                         agg::mpi_large_channel c(MPI_COMM_WORLD, {10, 0, {}});
                       }),
                       "chunk_bytes"));
  // A self send completes only when received: a second start_send meanwhile is refused.
  const auto v = item_bytes(0, 100, 0);
  ch.reserve_send(100);
  ch.start_send(v.data(), 100, world_rank());
  EXPECT_TRUE(contains(error_of([&] { ch.start_send(v.data(), 100, world_rank()); }), "in flight"));
  ch.start_receive(world_rank(), 100);
  const auto start = std::chrono::steady_clock::now();
  while (!ch.receive_done() && within(start, 30)) ch.progress();
  while (!ch.send_ready() && within(start, 30)) ch.progress();
  EXPECT_EQ(std::memcmp(ch.incoming(), v.data(), 100), 0);
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-56: with a buffer source both buffers (the bound each) are grabbed at construction,
// outgoing first, and released last-in first-out.
TEST(LargeChannel, BufferSource) {
  auto source = std::make_shared<convoy_test::counting_source>();
  {
    agg::mpi_large_channel ch(MPI_COMM_WORLD, {3000, 1000, source});
    ASSERT_EQ(source->sizes, (std::vector<std::size_t>{3000, 3000}));
    EXPECT_EQ(ch.memory_bytes(), 6000u);
    const auto v = item_bytes(world_rank(), 2500, 1);
    ch.reserve_send(v.size());
    ch.start_send(v.data(), v.size(), world_rank());
    ch.start_receive(world_rank(), v.size());
    const auto start = std::chrono::steady_clock::now();
    while (!ch.receive_done() && within(start, 30)) ch.progress();
    EXPECT_EQ(std::memcmp(ch.incoming(), v.data(), v.size()), 0);
    EXPECT_EQ(source->sizes.size(), 2u) << "no grab per item";
  }
  EXPECT_EQ(source->n_released, 2u);
  EXPECT_TRUE(source->errors.empty()) << source->errors.front();
  source->fail = true;
  EXPECT_THROW(agg::mpi_large_channel(MPI_COMM_WORLD, {3000, 1000, source}), std::bad_alloc);
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

}  // namespace
