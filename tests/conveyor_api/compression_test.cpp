// Compression for C++ users: conveyor_options::codec puts a compressing transport under the
// engine (the C façade's THRIFTY; conveyor_api/README.md, API-17). Every item arrives
// intact and exactly once; buffers on links between emulated nodes are compressed.
#include <gtest/gtest.h>

#include <convoy/aggregation/codec.hpp>
#include <convoy/aggregation/compressing_transport.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "record_cycle.hpp"

namespace {

namespace agg = convoy::aggregation;

// API-17: items of 16 bytes, each rank to every rank; counts per source and every byte.
TEST(Compression, StandardCodecUnderTheEngine) {
  for (const bool dynamic : {false, true}) {
    convoy::conveyor_options o;
    o.tensor_order = 1;
    o.buffer_bytes = 1024;
    o.dynamic = dynamic;
    o.codec = std::make_shared<agg::standard_codec>();
    std::vector<agg::compressing_transport*> built;
    o.on_compressing = [&built](agg::compressing_transport& t) { built.push_back(&t); };
    convoy::untyped_conveyor c(MPI_COMM_WORLD, o);
    const std::uint32_t n = 2000;
    std::vector<std::uint32_t> next;
    ASSERT_NO_FATAL_FAILURE(convoy_test::push_pull_records(c, n, next));
    ASSERT_FALSE(built.empty()) << "no compressing transport was built";
    const std::uint64_t compressed = built.back()->stats().compressed;
    const std::uint64_t saved = built.back()->stats().saved_bytes;
    const std::size_t links = built.back()->n_compressing_links();
    EXPECT_EQ(c.reset(), 1);  // a dynamic conveyor's transport goes with its engine
    convoy_test::expect_records_from_all(next, n);
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
