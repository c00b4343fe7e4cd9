// convoy::conveyor<T> of the bulk kind (conveyor_options::kind = conveyor_kind::bulk,
// conveyor_api/README.md API-21): the push/pull/advance contract of Maley & DeVinney 2019, sec. 3
// with every item checked — exactly once (counts per pair agreed by an all-to-all), FIFO per pair,
// its source, every byte — plain, steady, dynamic and compressed; misuse throws and changes
// nothing.
#include <gtest/gtest.h>
#include <mpi.h>

#include <convoy/aggregation/codec.hpp>
#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

namespace {

using convoy::conveyor;
using convoy::conveyor_kind;
using convoy::conveyor_options;
using convoy_test::world_rank;
using convoy_test::world_size;

// 40 bytes, every one a function of (source, destination, sequence number).
struct parcel {
  std::int32_t src, dst;
  std::uint32_t seq;
  std::uint8_t bytes[28];
};
std::uint8_t byte_of(const parcel& p, std::size_t i) {
  return static_cast<std::uint8_t>(p.src * 31 + p.dst * 7 + p.seq * 13 + i * 5);
}
parcel make_parcel(int src, int dst, std::uint32_t seq) {
  parcel p{src, dst, seq, {}};
  for (std::size_t i = 0; i < sizeof p.bytes; ++i) p.bytes[i] = byte_of(p, i);
  return p;
}

conveyor_options bulk(std::size_t capacity, bool steady, bool dynamic, bool compress) {
  conveyor_options o;
  o.kind = conveyor_kind::bulk;
  o.buffer_bytes = capacity;
  o.steady = steady;
  o.dynamic = dynamic;
  if (compress) o.codec = std::make_shared<convoy::aggregation::standard_codec>();
  return o;
}

// One cycle: n parcels to random ranks (seeded per rank and cycle); every pulled parcel
// checked; the counts per pair compared with what the senders sent (MPI_Alltoall).
void cycle(conveyor<parcel>& c, std::uint32_t n, unsigned seed) {
  const int me = world_rank(), p = world_size();
  const auto up = static_cast<std::size_t>(p);
  std::mt19937 rng(seed * 7919u + static_cast<unsigned>(me));
  std::vector<int> sent(up, 0), got(up, 0);
  std::vector<std::uint32_t> seq_to(up, 0), next_from(up, 0);
  std::uint64_t bad_bytes = 0, bad_fifo = 0, bad_source = 0;
  c.begin();
  std::uint32_t i = 0;
  int dest = static_cast<int>(rng() % up);
  std::uint64_t rounds = 0;
  while (c.advance(i == n)) {
    ASSERT_LT(++rounds, 10'000'000u);
    for (; i < n; ++i) {
      const auto d = static_cast<std::size_t>(dest);
      if (!c.push(make_parcel(me, dest, seq_to[d]), dest)) break;
      ++seq_to[d];
      ++sent[d];
      dest = static_cast<int>(rng() % up);
    }
    while (auto got_one = c.pull()) {
      const parcel& x = got_one->item;
      const auto s = static_cast<std::size_t>(got_one->from);
      if (x.src != got_one->from || x.dst != me) ++bad_source;
      if (x.seq != next_from[s]++) ++bad_fifo;
      for (std::size_t b = 0; b < sizeof x.bytes; ++b) bad_bytes += x.bytes[b] != byte_of(x, b);
      ++got[s];
    }
  }
  c.reset();
  EXPECT_EQ(bad_source, 0u) << "source or destination wrong";
  EXPECT_EQ(bad_fifo, 0u) << "FIFO per pair";
  EXPECT_EQ(bad_bytes, 0u) << "bytes changed";
  std::vector<int> owed(up, 0);
  MPI_Alltoall(sent.data(), 1, MPI_INT, owed.data(), 1, MPI_INT, MPI_COMM_WORLD);
  EXPECT_EQ(got, owed) << "exactly once per pair";
}

// API-21: exactly once, FIFO per pair, source and bytes, three cycles per conveyor.
TEST(BulkKind, TypedConveyorEveryItemOnceInOrder) {
  unsigned seed = 1;
  for (const bool steady : {false, true})
    for (const bool dynamic : {false, true}) {
      conveyor<parcel> c(MPI_COMM_WORLD, bulk(512, steady, dynamic, false));
      EXPECT_EQ(c.core().kind(), conveyor_kind::bulk);
      EXPECT_EQ(c.core().plan(), nullptr);
      ASSERT_NE(c.core().bulk(), nullptr);
      for (int k = 0; k < 3; ++k) ASSERT_NO_FATAL_FAILURE(cycle(c, 2000 + 37u * k, seed++));
      EXPECT_EQ(c.stats(true).begins, 3u);
      EXPECT_GT(c.core().bulk()->collectives(true), 0u) << "advance agrees collectively";
      if (dynamic) {
        EXPECT_EQ(c.memory_bytes(), 0u) << "dynamic: no buffers between cycles";
      }
    }
  EXPECT_TRUE(convoy_test::all_ranks(!::testing::Test::HasFailure()));
}

// API-21 with API-19: a codec on the buffers to other nodes; every byte arrives.
TEST(BulkKind, CompressedTypedConveyor) {
  conveyor<parcel> c(MPI_COMM_WORLD, bulk(2048, false, false, true));
  ASSERT_NO_FATAL_FAILURE(cycle(c, 4000, 99));
  EXPECT_TRUE(convoy_test::all_ranks(!::testing::Test::HasFailure()));
}

// API-22: misuse throws and changes nothing; options the bulk kind cannot honour are
// refused at construction (on every rank alike).
TEST(BulkKind, MisuseThrowsAndChangesNothing) {
  conveyor<parcel> c(MPI_COMM_WORLD, bulk(256, false, false, false));
  const parcel x = make_parcel(world_rank(), 0, 0);
  EXPECT_THROW((void)c.push(x, 0), convoy::error) << "push before begin";
  EXPECT_THROW(c.unpull(), convoy::error) << "unpull in DORMANT";
  EXPECT_THROW((void)c.engine(), convoy::error) << "no streaming engine";
  c.begin();
  EXPECT_THROW(c.begin(), convoy::error) << "begin twice";
  EXPECT_THROW((void)c.push(x, world_size()), convoy::error) << "rank out of range";
  EXPECT_THROW((void)c.push(x, -1), convoy::error) << "rank out of range";
  EXPECT_THROW(c.unpull(), convoy::error) << "unpull without a pull";
  EXPECT_THROW(c.reset(), convoy::error) << "reset before COMPLETE";
  EXPECT_EQ(c.current_state(), convoy::state::working);
  const int self = world_rank();
  ASSERT_TRUE(c.push(make_parcel(self, self, 0), self));
  int pulled = 0;
  while (c.advance(true))
    while (auto d = c.pull()) {
      EXPECT_EQ(d->from, self);
      ++pulled;
    }
  EXPECT_EQ(pulled, 1) << "misuse moved nothing";
  c.reset();
  EXPECT_EQ(c.core().epush(&x, sizeof x, 0), convoy::termination::error_elastic);

  conveyor_options custom = bulk(256, false, false, false);
  custom.make_transport = [](MPI_Comm, const std::shared_ptr<const convoy::router::route_plan>&) {
    return std::unique_ptr<convoy::aggregation::transport>();
  };
  EXPECT_THROW(conveyor<parcel>(MPI_COMM_WORLD, custom), convoy::error);
  EXPECT_TRUE(convoy_test::all_ranks(!::testing::Test::HasFailure()));
}

}  // namespace
