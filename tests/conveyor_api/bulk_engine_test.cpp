// The bulk-synchronous kind through convoy::termination::bulk_engine, the C++ route to the C
// façade's simple conveyors (conveyor_api/README.md, API-18..20): exactly once, FIFO per pair, the
// source; steady; compression on the buffers to other (emulated) nodes; the contract's
// codes.
#include <gtest/gtest.h>

#include <convoy/aggregation/bulk_exchange.hpp>
#include <convoy/aggregation/codec.hpp>
#include <convoy/termination/bulk_engine.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <memory>
#include <vector>

#include "record_cycle.hpp"

namespace {

namespace agg = convoy::aggregation;
namespace term = convoy::termination;
using convoy_test::world_rank;
using convoy_test::world_size;

std::unique_ptr<convoy::termination::bulk_engine> make(std::size_t capacity, bool steady,
                                                       bool compress) {
  agg::bulk_exchange::options x;
  x.buffer_bytes = capacity;
  if (compress) {
    x.codec = std::make_shared<agg::standard_codec>();
    x.compress_link = [](int rank, int peer) { return ((rank ^ peer) & 1) != 0; };
  }
  convoy::termination::bulk_engine::options b;
  b.steady = steady;
  return std::make_unique<convoy::termination::bulk_engine>(
      std::make_unique<agg::bulk_exchange>(MPI_COMM_WORLD, std::move(x)), b);
}

// One cycle of n records from every rank, item i to rank i % p: counts and FIFO per source.
void cycle(convoy::termination::bulk_engine& e, std::uint32_t n) {
  std::vector<std::uint32_t> next;
  ASSERT_NO_FATAL_FAILURE(convoy_test::push_pull_records(e, n, next));
  ASSERT_EQ(e.reset(), 1);
  convoy_test::expect_records_from_all(next, n);
}

// API-18: exactly once, FIFO per pair and the source, over several cycles, plain and steady.
TEST(BulkEngine, EveryItemOnceInOrder) {
  for (const bool steady : {false, true}) {
    auto e = make(256, steady, false);
    for (int c = 0; c < 3; ++c) cycle(*e, 1500);
    EXPECT_EQ(e->stats(true).begins, 3u);
    // TERM-16: the stage's items are its links' (items to this rank itself cross none).
    const auto st = e->stats(true);
    ASSERT_EQ(st.stages.size(), 1u);
    std::uint64_t linked = 0, to_self = 0;
    for (const auto& l : st.stages[0].links) linked += l.items_sent;
    for (std::uint32_t i = 0; i < 1500; ++i)
      to_self += static_cast<int>(i % static_cast<std::uint32_t>(world_size())) == world_rank();
    EXPECT_EQ(st.stages[0].items, linked);
    EXPECT_EQ(st.stages[0].items, st.pushes - 3 * to_self);
    EXPECT_GT(e->collectives(true), 0u) << "advance agrees collectively";
  }
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// API-19: with a codec, buffers on the chosen links are compressed and arrive intact.
TEST(BulkEngine, CompressedBuffersIntact) {
  auto e = make(1024, false, true);
  cycle(*e, 3000);
  if (world_size() > 1) {
    EXPECT_GT(e->saved_bytes(true), 0u);
  }
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// API-20: the contract's codes: begin twice, a rank out of range, an item above a buffer,
// unpull without a pull, reset before COMPLETE.
TEST(BulkEngine, Misuse) {
  auto e = make(64, false, false);
  const std::uint64_t v = 7;
  EXPECT_EQ(e->push(&v, 0), term::error_state);
  EXPECT_EQ(e->begin(65), term::error_size);
  ASSERT_EQ(e->begin(sizeof v), 1);
  EXPECT_EQ(e->begin(sizeof v), term::error_state);
  EXPECT_EQ(e->push(&v, world_size()), term::error_rank);
  EXPECT_EQ(e->unpull(), term::error_unpull);
  EXPECT_EQ(e->reset(), term::error_state);
  while (e->advance(true) != term::done) {
    term::item_view iv;
    while (e->pull(iv) > 0) {
    }
  }
  EXPECT_EQ(e->reset(), 1);
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

}  // namespace
