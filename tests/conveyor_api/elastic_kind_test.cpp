// conveyor_kind::elastic through untyped_conveyor (conveyor_api/README.md, API-14..16): the
// core builds the elastic engine over a streaming engine and a large-item channel, for C++
// as for the C façade's etensor; DYNAMIC rebuilds both at every begin, LIFO in the
// allocator, with the counters kept. And advance_keeping_pull, bale's rule that a pulled
// item stays where it is across advance (CAPI-7), on every kind.
#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy_test/counting_source.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

using convoy::conveyor_kind;
using convoy::conveyor_options;
using convoy::untyped_conveyor;
using convoy_test::world_rank;
using convoy_test::world_size;
namespace term = convoy::termination;

constexpr std::size_t k_bound = 4000;

// Item k from `src` to `dst`: every seventh is above a 512-byte buffer, the others small
// (0 bytes included); its bytes a function of (src, k, i), so that any byte out of place
// shows.
std::size_t size_of_item(int src, int dst, std::uint32_t k) {
  return k % 7 == 3 ? 600 + (std::size_t{k} * 37 + static_cast<std::size_t>(src)) % 3000
                    : (std::size_t{k} * 13 + static_cast<std::size_t>(src + dst)) % 50;
}
std::byte byte_of(int src, std::uint32_t k, std::size_t i) {
  return static_cast<std::byte>(
      (static_cast<std::size_t>(src) * 131 + std::size_t{k} * 17 + i * 7) & 0xff);
}

// Pulls everything ready, checking each item against the next expected from its source.
void drain(untyped_conveyor& c, std::vector<std::uint32_t>& next, std::uint64_t& pulled) {
  const int me = world_rank();
  term::item_view v;
  int rc = 0;
  while ((rc = c.pull(v, false)) > 0) {
    ASSERT_GE(v.from, 0);
    ASSERT_LT(v.from, world_size());
    const std::uint32_t k = next[static_cast<std::size_t>(v.from)]++;
    ASSERT_EQ(v.bytes, size_of_item(v.from, me, k)) << "item " << k << " from " << v.from;
    for (std::size_t i = 0; i < v.bytes; ++i)
      ASSERT_EQ(v.data[i], byte_of(v.from, k, i)) << "byte " << i << " of item " << k;
    ++pulled;
  }
  ASSERT_GE(rc, 0) << term::error_string(rc);
}

// One cycle: `n` items from this rank to every rank, all pulled, FIFO per source.
void run_cycle(untyped_conveyor& c, std::uint32_t n) {
  const int me = world_rank();
  const int p = world_size();
  ASSERT_EQ(c.begin(8), 1);
  std::vector<std::uint32_t> next(static_cast<std::size_t>(p), 0);
  std::uint64_t pulled = 0;
  std::vector<std::byte> item;
  for (std::uint32_t k = 0; k < n; ++k) {
    for (int d = 0; d < p; ++d) {
      const int dst = (me + d) % p;
      item.resize(size_of_item(me, dst, k));
      for (std::size_t i = 0; i < item.size(); ++i) item[i] = byte_of(me, k, i);
      int rc = 0;
      while ((rc = c.epush(item.data(), item.size(), dst)) == 0) {
        ASSERT_GE(c.advance(false), 0) << c.last_message();
        ASSERT_NO_FATAL_FAILURE(drain(c, next, pulled));
      }
      ASSERT_EQ(rc, 1) << term::error_string(rc) << " " << c.last_message();
    }
  }
  int rc = 0;
  while ((rc = c.advance(true)) != term::done) {
    ASSERT_GE(rc, 0) << c.last_message();
    ASSERT_NO_FATAL_FAILURE(drain(c, next, pulled));
  }
  ASSERT_NO_FATAL_FAILURE(drain(c, next, pulled));
  for (int s = 0; s < p; ++s) EXPECT_EQ(next[static_cast<std::size_t>(s)], n) << "from " << s;
  EXPECT_EQ(pulled, std::uint64_t{n} * static_cast<std::uint64_t>(p));
  EXPECT_EQ(c.stats().pushes, std::uint64_t{n} * static_cast<std::uint64_t>(p));
  EXPECT_EQ(c.stats().pulls, pulled);
  EXPECT_EQ(c.reset(), 1);
}

conveyor_options elastic_options(bool dynamic) {
  conveyor_options o;
  o.kind = conveyor_kind::elastic;
  o.tensor_order = 1;
  o.buffer_bytes = 512;
  o.item_bound = k_bound;
  o.dynamic = dynamic;
  return o;
}

// API-14..16 for C++: every byte of small and large items, FIFO per source, two cycles;
// the channel's messages are counted; DYNAMIC holds no memory between cycles and gives
// every block back LIFO.
TEST(ElasticKind, SmallAndLargeItemsEveryByte) {
  for (const bool dynamic : {false, true}) {
    SCOPED_TRACE(dynamic ? "dynamic" : "static");
    auto source = std::make_shared<convoy_test::counting_source>();
    {
      conveyor_options o = elastic_options(dynamic);
      o.buffers = source;
      untyped_conveyor c(MPI_COMM_WORLD, o);
      EXPECT_EQ(c.kind(), conveyor_kind::elastic);
      EXPECT_EQ(c.max_item_bytes(), k_bound);
      EXPECT_LT(c.max_buffered_item_bytes(), 512u);
      EXPECT_GE(c.max_memory_bytes(), 2 * k_bound) << "the channel's two buffers count";
      EXPECT_TRUE(c.engine_options().steady) << "the elastic kind is steady (sec. 4.4.1)";
      ASSERT_NO_FATAL_FAILURE(run_cycle(c, 150));
      if (dynamic) {
        EXPECT_EQ(c.memory_bytes(), 0u) << "no engine between cycles";
      }
      ASSERT_NO_FATAL_FAILURE(run_cycle(c, 90));
      const term::engine_stats life = c.stats(true);
      const auto p = static_cast<std::uint64_t>(world_size());
      EXPECT_EQ(life.begins, 2u);
      EXPECT_EQ(life.pushes, 240 * p);
      EXPECT_EQ(life.pulls, 240 * p);
      EXPECT_EQ(life.unpulls, 0u) << "the tickets the engine leaves in line are not unpulls";
      if (p > 1) {  // every large item to another rank is one more message
        std::uint64_t large = 0;
        for (const std::uint32_t n : {150u, 90u})
          for (std::uint32_t k = 0; k < n; ++k) large += k % 7 == 3 ? 1 : 0;
        EXPECT_GE(life.buffers_sent, large * (p - 1));
      }
    }
    EXPECT_TRUE(source->live.empty()) << "every grabbed block was given back";
    EXPECT_TRUE(source->errors.empty()) << "blocks given back out of LIFO order";
    EXPECT_FALSE(source->sizes.empty()) << "the allocator was not used";
  }
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// CAPI-6 for C++: a begin or an epush above the bound is error_size and builds or moves
// nothing; combining needs rigid items; a buffer that cannot hold a ticket is refused at
// construction with a message naming the size.
TEST(ElasticKind, BoundAndMisuse) {
  for (const bool dynamic : {false, true}) {
    untyped_conveyor c(MPI_COMM_WORLD, elastic_options(dynamic));
    EXPECT_EQ(c.begin(k_bound + 1), term::error_size);
    EXPECT_EQ(c.current_state(), term::state::dormant);
    if (dynamic) {
      EXPECT_EQ(c.memory_bytes(), 0u) << "a refused begin builds no engine";
    }
    convoy::aggregation::combine_spec spec{0, 4, 4, 4, [](void*, const void*) {}};
    EXPECT_EQ(c.set_combine(spec), term::error_elastic);
    ASSERT_EQ(c.begin(16), 1);
    std::vector<std::byte> big(k_bound + 1, std::byte{1});
    EXPECT_EQ(c.epush(big.data(), big.size(), 0), term::error_size);
    EXPECT_EQ(c.stats().pushes, 0u) << "nothing moved";
    int rc = 0;
    while ((rc = c.advance(true)) != term::done) ASSERT_GE(rc, 0);
    EXPECT_EQ(c.reset(), 1);
  }
  conveyor_options tiny = elastic_options(false);
  tiny.buffer_bytes = 40;
  try {
    untyped_conveyor c(MPI_COMM_WORLD, tiny);
    ADD_FAILURE() << "a 40-byte buffer was accepted for elastic items";
  } catch (const convoy::error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("too small for elastic items"), std::string::npos) << what;
    EXPECT_NE(what.find("buffers of 40 bytes"), std::string::npos) << what;
  }
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// CAPI-7 in the core: after advance_keeping_pull the last pulled item is where it was, with
// its bytes; an unpull then fails until the next pull; the take-back is not counted.
TEST(AdvanceKeepingPull, TheLastPullStaysInPlace) {
  for (const conveyor_kind kind :
       {conveyor_kind::streaming, conveyor_kind::bulk, conveyor_kind::elastic}) {
    SCOPED_TRACE(static_cast<int>(kind));
    conveyor_options o;
    o.kind = kind;
    o.tensor_order = 1;
    o.buffer_bytes = 1024;
    untyped_conveyor c(MPI_COMM_WORLD, o);
    const int me = world_rank();
    const int p = world_size();
    ASSERT_EQ(c.begin(8), 1);
    for (int d = 0; d < p; ++d) {
      const std::uint64_t v = (static_cast<std::uint64_t>(me) << 32) | static_cast<unsigned>(d);
      ASSERT_EQ(c.push(&v, d), 1);  // the elastic kind: an item of begin's size
    }
    std::uint64_t got = 0;
    bool done = false;
    while (!done) {
      const int rc = c.advance_keeping_pull(true);
      ASSERT_GE(rc, 0) << c.last_message();
      done = rc == term::done;
      term::item_view v;
      while (c.pull(v, false) > 0) {
        ASSERT_EQ(v.bytes, 8u);
        const std::byte* const where = v.data;
        std::uint64_t value = 0;
        std::memcpy(&value, v.data, 8);
        EXPECT_EQ(value >> 32, static_cast<std::uint64_t>(v.from));
        EXPECT_EQ(value & 0xffffffffu, static_cast<std::uint64_t>(me));
        ++got;
        if (done) break;
        const int a = c.advance_keeping_pull(true);  // done was said: stays said
        ASSERT_GE(a, 0) << c.last_message();
        done = a == term::done;
        EXPECT_EQ(std::memcmp(where, &value, 8), 0) << "the kept item moved or changed";
        EXPECT_EQ(c.unpull(), term::error_unpull) << "no pull since the advance";
      }
    }
    EXPECT_EQ(static_cast<int>(got), p);
    EXPECT_EQ(c.stats().pulls, got) << "a take-back is not a pull";
    EXPECT_EQ(c.stats().unpulls, 0u) << "nor an unpull";
    EXPECT_EQ(c.reset(), 1);
  }
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

}  // namespace
