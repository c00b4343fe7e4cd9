// convoy-sim's two buffer memories (tools/sim/README.md SIM-12; aggregation/README.md
// AGG-144): the timed network's buffers as full-size pages or as heap blocks that grow with
// what they hold give the same run — messages, bytes, predicted time, critical path, per
// stage and per class — and both pass the exactly-once and FIFO oracle (run() throws
// otherwise).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim_run.hpp"

namespace {

using convoy::sim::buffer_memory_choice;
using convoy::sim::run_config;
using convoy::sim::run_result;
using convoy::sim::workload_kind;

struct shape_case {
  std::string name;
  run_config c;
};

run_config shape(const char* mesh, int ppn, std::uint64_t items) {
  run_config c;
  c.plan.mesh = mesh;
  c.machine.ranks_per_node = ppn;
  c.items_per_rank = items;
  return c;
}

std::vector<shape_case> cases() {
  std::vector<shape_case> v;
  v.push_back({"uniform_8x8x8", shape("8x8x8", 32, 400)});
  run_config small = shape("4x4x4", 8, 3000);  // buffers fill: growth up to capacity, posts
  small.buffer_bytes = 1024;
  small.item_bytes = 24;
  v.push_back({"full_buffers_24B", small});
  run_config one = shape("6x5", 6, 2000);  // one credit per link: backpressure
  one.n_buffers = 1;
  one.buffer_bytes = 256;
  one.workload = workload_kind::hotspot;
  v.push_back({"hotspot_one_credit", one});
  run_config rr = shape("4x4x2", 8, 400);
  rr.workload = workload_kind::request_reply;
  rr.buffer_bytes = 256;
  rr.batch = 5;
  v.push_back({"request_reply", rr});
  run_config tensor;
  tensor.machine.ranks = 48;
  tensor.machine.ranks_per_node = 8;
  tensor.plan.tensor = 3;
  tensor.items_per_rank = 500;
  v.push_back({"tensor3", tensor});
  run_config per_record = shape("8x8", 8, 800);  // no first-hop table: the per-record path
  per_record.route_table_max_ranks = 0;
  per_record.workload = workload_kind::neighbour;
  v.push_back({"per_record_neighbour", per_record});
  // Above the first-hop table limit, as the large runs are (a lower limit keeps it small).
  run_config above = shape("8x8x16", 64, 6);
  above.route_table_max_ranks = 512;
  v.push_back({"uniform_8x8x16_above_table", above});
  return v;
}

void expect_same(const run_result& a, const run_result& b) {
  EXPECT_EQ(a.items, b.items);
  EXPECT_EQ(a.replies, b.replies);
  EXPECT_EQ(a.messages, b.messages);
  EXPECT_EQ(a.bytes_injected, b.bytes_injected);
  EXPECT_EQ(a.predicted_seconds, b.predicted_seconds);  // the same events in the same order
  EXPECT_EQ(a.mean_rank_seconds, b.mean_rank_seconds);
  EXPECT_EQ(a.critical_path_messages, b.critical_path_messages);
  EXPECT_EQ(a.mean_fill, b.mean_fill);
  EXPECT_EQ(a.max_queued, b.max_queued);
  EXPECT_EQ(a.max_in_flight, b.max_in_flight);
  EXPECT_EQ(a.memory_bytes_per_rank, b.memory_bytes_per_rank);
  EXPECT_EQ(a.steps, b.steps);
  ASSERT_EQ(a.per_stage.size(), b.per_stage.size());
  for (std::size_t s = 0; s < a.per_stage.size(); ++s) {
    EXPECT_EQ(a.per_stage[s].messages, b.per_stage[s].messages) << "stage " << s;
    EXPECT_EQ(a.per_stage[s].bytes, b.per_stage[s].bytes) << "stage " << s;
    EXPECT_EQ(a.per_stage[s].items, b.per_stage[s].items) << "stage " << s;
  }
  for (int k = 0; k < convoy::aggregation::n_link_classes; ++k) {
    EXPECT_EQ(a.per_class[k].messages, b.per_class[k].messages) << "class " << k;
    EXPECT_EQ(a.per_class[k].bytes, b.per_class[k].bytes) << "class " << k;
  }
}

// SIM-12: pages and heap agree on every count and time of the run.
TEST(BufferMemory, PagesAndHeapGiveTheSameRun) {
  for (const auto& sc : cases()) {
    SCOPED_TRACE(sc.name);
    run_config pages = sc.c, heap = sc.c;
    pages.buffer_memory = buffer_memory_choice::pages;
    heap.buffer_memory = buffer_memory_choice::heap;
    const run_result a = convoy::sim::run(pages);
    const run_result b = convoy::sim::run(heap);
    EXPECT_FALSE(a.heap_buffers);
    EXPECT_TRUE(b.heap_buffers);
    EXPECT_GT(a.messages, 0U);
    expect_same(a, b);
  }
}

// `automatic` takes heap above heap_above_ranks ranks and pages up to it.
TEST(BufferMemory, AutomaticChoosesByRanks) {
  run_config c = shape("4x4", 4, 10);
  c.buffer_memory = buffer_memory_choice::automatic;
  EXPECT_FALSE(convoy::sim::run(c).heap_buffers);
  c.plan.mesh = "64x65";
  c.items_per_rank = 1;
  EXPECT_TRUE(convoy::sim::run(c).heap_buffers);
}

}  // namespace
