// Compression for C++ users: conveyor_options::codec puts a compressing transport under the
// engine (the C façade's THRIFTY; conveyor_api/README.md, API-17). Every item arrives
// intact and exactly once; buffers on links between emulated nodes are compressed.
#include <gtest/gtest.h>

#include <convoy/aggregation/codec.hpp>
#include <convoy/aggregation/compressing_transport.hpp>
#include <convoy/conveyor_api/untyped_conveyor.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

namespace agg = convoy::aggregation;
namespace term = convoy::termination;
using convoy_test::world_rank;
using convoy_test::world_size;

struct record {
  std::uint32_t source, k;
  std::uint64_t constant;  // the same in every item: what the standard codec squeezes out
};

// API-17: items of 16 bytes, each rank to every rank; counts per source and every byte.
TEST(Compression, StandardCodecUnderTheEngine) {
  for (const bool dynamic : {false, true}) {
    convoy::conveyor_options o;
    o.tensor_order = 1;
    o.capacity_bytes = 1024;
    o.dynamic = dynamic;
    o.codec = std::make_shared<agg::standard_codec>();
    std::vector<agg::compressing_transport*> built;
    o.on_compressing = [&built](agg::compressing_transport& t) { built.push_back(&t); };
    convoy::untyped_conveyor c(MPI_COMM_WORLD, o);
    const int me = world_rank(), p = world_size();
    const std::uint32_t n = 2000;
    std::vector<std::uint32_t> next(static_cast<std::size_t>(p), 0);
    ASSERT_EQ(c.begin(sizeof(record)), 1);
    std::uint32_t i = 0;
    std::uint64_t rounds = 0;
    std::uint64_t compressed = 0;
    int rc = 0;
    while ((rc = c.advance(i == n)) != term::done) {
      ASSERT_GE(rc, 0);
      ASSERT_LT(++rounds, 10'000'000u);
      for (; i < n; ++i) {
        const record r{static_cast<std::uint32_t>(me), i / static_cast<std::uint32_t>(p),
                       0x0123456789abcdefULL};
        if (c.push(&r, static_cast<int>(i % static_cast<std::uint32_t>(p))) <= 0) break;
      }
      term::item_view v;
      while (c.pull(v) > 0) {
        record r{};
        ASSERT_EQ(v.bytes, sizeof r);
        std::memcpy(&r, v.data, sizeof r);
        ASSERT_EQ(r.source, static_cast<std::uint32_t>(v.from));
        EXPECT_EQ(r.k, next[static_cast<std::size_t>(v.from)]++) << "FIFO per pair";
        EXPECT_EQ(r.constant, 0x0123456789abcdefULL);
      }
    }
    ASSERT_FALSE(built.empty()) << "no compressing transport was built";
    compressed = built.back()->stats().compressed;
    const std::uint64_t saved = built.back()->stats().saved_bytes;
    const std::size_t links = built.back()->n_compressing_links();
    EXPECT_EQ(c.reset(), 1);  // a dynamic conveyor's transport goes with its engine
    for (int s = 0; s < p; ++s) {
      const std::uint32_t want =
          n / static_cast<std::uint32_t>(p) +
          (static_cast<std::uint32_t>(me) < n % static_cast<std::uint32_t>(p));
      EXPECT_EQ(next[static_cast<std::size_t>(s)], want) << "from " << s;
    }
    // Off-node links exist when the emulated nodes are several.
    if (std::getenv("CONVOY_EMULATE_NODES") != nullptr) {
      EXPECT_GT(links, 0u) << "no link between the emulated nodes compresses";
      EXPECT_GT(compressed, 0u);
      EXPECT_GT(saved, 0u);
    }
    EXPECT_EQ(built.size(), dynamic ? 2u : 1u) << "one transport per engine built";
  }
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

}  // namespace
