// The bulk-synchronous exchange over MPI (aggregation/README.md, AGG-48..51).
#include <gtest/gtest.h>
#include <mpi.h>

#include <convoy/aggregation/bulk_exchange.hpp>
#include <convoy/base/error.hpp>
#include <convoy_test/counting_source.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "convoy_test/mpi.hpp"
#include "error_of.hpp"
#include "test_codecs.hpp"

namespace agg = convoy::aggregation;
using convoy_test::world_rank;
using convoy_test::world_size;

namespace {

constexpr std::size_t k_item = 24;

// Item i from `src` to `dst`: 8 varying bytes, 16 bytes constant per (src, dst) pair.
void make_item(std::byte* p, int src, int dst, std::size_t i) {
  const std::uint64_t head = (static_cast<std::uint64_t>(src) << 40) ^ (i * 0x9e3779b9u);
  std::memcpy(p, &head, 8);
  for (std::size_t k = 8; k < k_item; ++k) p[k] = static_cast<std::byte>(src * 13 + dst * 7 + k);
}

// How many items `src` sends to `dst` in round `round` (some zero, some full).
int count_for(int src, int dst, int round, std::size_t cap_items) {
  return static_cast<int>((static_cast<std::size_t>(src * 7 + dst * 3 + round * 5) % 4) *
                          cap_items / 3);
}

// One exchange: fill, exchange, check every received item byte for byte.
void exchange_round(agg::bulk_exchange& x, int round) {
  const int me = world_rank(), p = world_size();
  const std::size_t cap_items = x.buffer_bytes() / k_item;
  std::vector<int> send(static_cast<std::size_t>(p)), recv(static_cast<std::size_t>(p), -1);
  for (int d = 0; d < p; ++d) {
    send[static_cast<std::size_t>(d)] = count_for(me, d, round, cap_items);
    for (int i = 0; i < send[static_cast<std::size_t>(d)]; ++i)
      make_item(x.send_buffer(d) + static_cast<std::size_t>(i) * k_item, me, d,
                static_cast<std::size_t>(i));
  }
  x.exchange(send.data(), recv.data());
  std::byte want[k_item];
  for (int s = 0; s < p; ++s) {
    ASSERT_EQ(recv[static_cast<std::size_t>(s)], count_for(s, me, round, cap_items))
        << "from " << s;
    for (int i = 0; i < recv[static_cast<std::size_t>(s)]; ++i) {
      make_item(want, s, me, static_cast<std::size_t>(i));
      ASSERT_EQ(
          std::memcmp(x.receive_buffer(s) + static_cast<std::size_t>(i) * k_item, want, k_item), 0)
          << "item " << i << " from " << s << ", round " << round;
    }
  }
}

// AGG-48: what rank s put in its buffer to r arrives in r's buffer from s, count and bytes.
TEST(BulkExchange, EveryItemArrives) {
  agg::bulk_exchange x(MPI_COMM_WORLD, {1000, {}, {}, {}});
  EXPECT_EQ(x.memory_bytes(), 0u) << "no buffers before acquire_buffers";
  x.acquire_buffers();
  EXPECT_EQ(x.region_bytes(), 1024u);
  EXPECT_EQ(x.memory_bytes(), agg::bulk_exchange::footprint(1000, world_size(), false));
  EXPECT_EQ(x.memory_bytes(), 2u * static_cast<std::size_t>(world_size()) * 1024u);
  EXPECT_FALSE(x.begin_cycle(k_item)) << "no codec: nothing compresses";
  for (int round = 0; round < 6; ++round) exchange_round(x, round);
  EXPECT_EQ(x.stats().collectives, 12u);
  EXPECT_EQ(x.stats().compressed, 0u);
  x.release_buffers();
  EXPECT_EQ(x.memory_bytes(), 0u);
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-49: with a codec, buffers to the chosen ranks are compressed and restored intact;
// the statistics count them and the bytes saved; a declining codec changes nothing.
TEST(BulkExchange, CompressionIntactAndCounted) {
  const int me = world_rank(), p = world_size();
  auto odd = [](int rank, int peer) { return (rank + peer) % 2 == 1; };
  {
    auto codec = std::make_shared<convoy_test::counting_codec>();
    agg::bulk_exchange x(MPI_COMM_WORLD, {1000, {}, codec, odd});
    x.acquire_buffers();
    EXPECT_TRUE(x.begin_cycle(k_item));
    for (int round = 0; round < 6; ++round) exchange_round(x, round);
    EXPECT_EQ(codec->wrong_link, 0u);
    EXPECT_EQ(codec->compress_calls, x.stats().compressed + x.stats().declined);
    if (p > 1) {
      // Rank me sends to every odd-distance peer in some round with >= 2 items.
      EXPECT_GT(x.stats().compressed, 0u);
      EXPECT_GT(x.stats().saved_bytes, 0u);
    }
    EXPECT_LE(codec->links_compress, static_cast<std::uint64_t>(p));
    x.end_cycle();
    EXPECT_EQ(codec->links_live, 0);
    // The sum over ranks of compressed buffers equals the sum of restored ones.
    unsigned long long mine[2] = {x.stats().compressed, codec->decompress_calls}, all[2] = {0, 0};
    MPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(all[0], all[1]);
  }
  {
    auto codec = std::make_shared<convoy_test::declining_codec>();
    agg::bulk_exchange x(MPI_COMM_WORLD, {1000, {}, codec, {}});
    x.acquire_buffers();
    ASSERT_TRUE(x.begin_cycle(k_item));
    for (int round = 0; round < 4; ++round) exchange_round(x, round);
    EXPECT_EQ(x.stats().compressed, 0u);
    EXPECT_EQ(codec->unexpected, 0u);
    if (p > 1) {
      EXPECT_GT(codec->calls, 0u);
    }
  }
  {
    // The demanding layout needs room after the items: the regions have it.
    auto codec = std::make_shared<convoy_test::demanding_codec>();
    agg::bulk_exchange x(MPI_COMM_WORLD, {1000, {}, codec, {}});
    x.acquire_buffers();
    ASSERT_TRUE(x.begin_cycle(k_item));
    for (int round = 0; round < 4; ++round) exchange_round(x, round);
    EXPECT_EQ(codec->misaligned, 0u);
    EXPECT_EQ(codec->bad_length, 0u);
  }
  (void)me;
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-50: buffers from a buffer source: one grab of the footprint (+63 to align), released
// by release_buffers; agree_max is a maximum over ranks.
TEST(BulkExchange, BufferSourceAndAgreement) {
  auto source = std::make_shared<convoy_test::counting_source>();
  {
    agg::bulk_exchange x(MPI_COMM_WORLD, {500, source, {}, {}});
    x.acquire_buffers();
    x.acquire_buffers();  // held: no second grab
    ASSERT_EQ(source->sizes.size(), 1u);
    EXPECT_EQ(source->sizes[0], agg::bulk_exchange::footprint(500, world_size(), false) + 63);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(x.send_buffer(0)) % 64, 0u);
    x.begin_cycle(k_item);
    exchange_round(x, 1);
    x.release_buffers();
    EXPECT_EQ(source->n_released, 1u);
    x.acquire_buffers();  // again (DYNAMIC-style), released by the destructor
  }
  EXPECT_EQ(source->n_released, 2u);
  EXPECT_TRUE(source->live.empty());
  EXPECT_TRUE(source->errors.empty());
  agg::bulk_exchange x(MPI_COMM_WORLD, {64, {}, {}, {}});
  int flags[3] = {world_rank(), 0, world_rank() == 0 ? 7 : 1};
  x.agree_max(flags, 3);
  EXPECT_EQ(flags[0], world_size() - 1);
  EXPECT_EQ(flags[1], 0);
  EXPECT_EQ(flags[2], 7);
  EXPECT_EQ(x.stats().collectives, 1u);
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-51: bad input is a convoy::error naming the problem.
TEST(BulkExchange, Errors) {
  using convoy_test::contains;
  using convoy_test::error_of;
  EXPECT_TRUE(contains(error_of([] {
                         agg::bulk_exchange x(MPI_COMM_WORLD, {0, {}, {}, {}});
                       }),
                       "buffer_bytes must be positive"));
  EXPECT_TRUE(contains(error_of([] {
                         agg::bulk_exchange x(MPI_COMM_WORLD, {std::size_t{1} << 31, {}, {}, {}});
                       }),
                       "2 GiB"));
  agg::bulk_exchange x(MPI_COMM_WORLD, {256, {}, {}, {}});
  EXPECT_TRUE(
      contains(error_of([&] { x.set_codec(std::make_shared<agg::standard_codec>()); }), "no room"));
  EXPECT_NO_THROW(x.set_codec(nullptr));
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

}  // namespace
