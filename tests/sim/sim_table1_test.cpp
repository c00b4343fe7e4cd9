// convoy-sim against theory (tools/sim/README.md, SIM-1, SIM-2, SIM-4, SIM-5): TRAM's
// Table I bounds (sec. IV.C) for full-buffer uniform workloads on 1- to 4-D meshes, the
// route oracle, and every workload on ragged, multi-socket and cyclic machines.
#include <gtest/gtest.h>

#include <algorithm>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "sim_report.hpp"
#include "sim_run.hpp"

namespace {

using convoy::sim::run_config;
using convoy::sim::run_result;
using convoy::sim::workload_kind;

// Directed links of the plan. Beyond Table I's full buffers each link may carry two more
// at the end: the partial buffer flushed when its rank is done, and the buffer that closes
// the stage (flag_last, Wesolowski et al. 2014, sec. III.D), header only if the flush came first.
std::uint64_t n_links(const run_config& c) {
  std::vector<int> node_of, socket_of;
  const auto plan = convoy::sim::make_sim_plan(c, node_of, socket_of);
  std::uint64_t n = 0;
  for (int r = 0; r < plan->n_ranks(); ++r)
    for (int s = 0; s < plan->n_stages(); ++s) n += plan->out_peers(r, s).size();
  return n;
}

struct table1_case {
  std::string mesh;
  std::uint64_t items_per_rank;
};

class Table1 : public ::testing::TestWithParam<table1_case> {};

// SIM-4: z/g <= messages <= N z/g and z(m+e/g) <= bytes <= N z(m+e/g), up to two end
// buffers per link; SIM-5: bytes injected = sum over stages of items x record + e x messages,
// and the items the stages carried = the hops the route oracle counts.
TEST_P(Table1, MessagesAndBytesWithinTramBounds) {
  run_config c;
  c.plan.mesh = GetParam().mesh;
  c.items_per_rank = GetParam().items_per_rank;
  c.buffer_bytes = 256;  // g = 24..26 items: many full buffers per link
  c.item_bytes = 8;
  const run_result r = convoy::sim::run(c);
  const auto b = convoy::sim::table1(c, r);
  const double links = static_cast<double>(n_links(c));
  ASSERT_EQ(r.items, c.items_per_rank * static_cast<std::uint64_t>(r.ranks));  // SIM-1
  EXPECT_EQ(b.n, static_cast<double>(r.max_hops));
  EXPECT_EQ(r.max_hops,
            static_cast<int>(std::count(c.plan.mesh.begin(), c.plan.mesh.end(), 'x')) + 1);

  const auto messages = static_cast<double>(r.messages);
  EXPECT_GE(messages, b.messages_lo);
  EXPECT_LE(messages, b.messages_hi + 2 * links) << "z=" << b.z << " g=" << b.g;
  const auto bytes = static_cast<double>(r.bytes_injected);
  EXPECT_GE(bytes, b.bytes_lo);
  EXPECT_LE(bytes, b.bytes_hi + 2 * links * b.e);
  // Uniform traffic reaches most destinations in N hops (Wesolowski et al. 2014, Table II): near
  // the upper bound.
  EXPECT_GT(messages, 0.5 * b.messages_hi);

  std::uint64_t stage_items = 0, record_bytes = 0;
  for (std::size_t s = 0; s < r.per_stage.size(); ++s) {
    stage_items += r.per_stage[s].items;
    record_bytes +=
        r.per_stage[s].items * (c.item_bytes + static_cast<std::uint64_t>(r.tag_bytes[s]));
  }
  EXPECT_EQ(stage_items, r.item_hops);
  EXPECT_EQ(r.bytes_injected, record_bytes + 16 * r.messages);
  EXPECT_GT(r.mean_fill, 0.75);
  EXPECT_GT(r.predicted_seconds, 0.0);
  // SIM-11: the last rank to complete heard, through a chain of messages, from every stage
  // (its last stage's closing buffers arrive after its earlier stages closed).
  EXPECT_GE(r.critical_path_messages, static_cast<std::uint32_t>(r.stages));
  EXPECT_LE(r.critical_path_messages, r.messages + r.messages);  // buffers + credits
}

std::string case_name(const ::testing::TestParamInfo<table1_case>& p) {
  std::string n = "mesh_" + p.param.mesh;
  for (char& ch : n)
    if (ch == 'x') ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Meshes, Table1,
                         ::testing::Values(table1_case{"32", 8000}, table1_case{"8x8", 4000},
                                           table1_case{"4x4x4", 4000},
                                           table1_case{"3x3x3x3", 4000}),
                         case_name);

struct machine_case {
  std::string name;
  run_config c;
};

std::vector<machine_case> machines() {
  std::vector<machine_case> out;
  run_config ragged;
  ragged.machine.node_sizes = {5, 3, 4, 1};
  ragged.plan.mesh = "node,core";
  out.push_back({"ragged_node_core", ragged});
  run_config sockets;
  sockets.machine.ranks = 48;
  sockets.machine.ranks_per_node = 12;
  sockets.machine.sockets_per_node = 2;
  sockets.plan.mesh = "auto";
  out.push_back({"auto_sockets", sockets});
  run_config cyclic = sockets;
  cyclic.machine.cyclic = true;
  cyclic.plan.mesh = "node,core";
  cyclic.plan.dim_order = {0, 1};
  out.push_back({"cyclic_dim_order", cyclic});
  run_config tensor;
  tensor.machine.ranks = 36;
  tensor.machine.ranks_per_node = 6;
  tensor.plan.tensor = 3;
  out.push_back({"tensor3", tensor});
  return out;
}

// SIM-1, SIM-2, AGG-140: every workload on every machine completes, each item pulled once
// at the rank it was pushed to and in order per pair (run() checks the oracle and throws
// otherwise), the network's
// classes add up, and the same seed gives the same run.
TEST(SimWorkloads, ExactlyOnceAndTerminationOnEveryMachine) {
  for (const auto& m : machines()) {
    for (const auto w : {workload_kind::uniform, workload_kind::hotspot, workload_kind::permutation,
                         workload_kind::neighbour}) {
      SCOPED_TRACE(m.name + " " + convoy::sim::workload_name(w));
      run_config c = m.c;
      c.workload = w;
      c.items_per_rank = 300;
      c.buffer_bytes = 512;
      c.n_buffers = 1;
      c.batch = 7;
      const run_result r = convoy::sim::run(c);
      EXPECT_EQ(r.items, c.items_per_rank * static_cast<std::uint64_t>(r.ranks));
      std::uint64_t by_class = 0, by_stage = 0;
      for (const auto& k : r.per_class) by_class += k.messages;
      for (const auto& s : r.per_stage) by_stage += s.messages;
      EXPECT_EQ(by_class, r.messages);
      EXPECT_EQ(by_stage, r.messages);
      const run_result again = convoy::sim::run(c);
      EXPECT_EQ(again.messages, r.messages);
      EXPECT_EQ(again.predicted_seconds, r.predicted_seconds);
    }
  }
}

// Off-node traffic costs more than on-node traffic under the default model, and a machine
// of one node sends nothing off the node.
TEST(SimModel, LinkClassesFollowTheMachine) {
  run_config one;
  one.plan.mesh = "4x4";
  const auto r1 = convoy::sim::run(one);
  EXPECT_EQ(r1.per_class[2].messages, 0u);
  run_config many = one;
  many.machine.ranks_per_node = 4;
  const auto r2 = convoy::sim::run(many);
  EXPECT_GT(r2.per_class[2].messages, 0u);
  EXPECT_GT(r2.predicted_seconds, r1.predicted_seconds);
}

TEST(SimErrors, BadConfigurationsThrowConvoyError) {
  run_config c;
  c.plan.mesh = "3x3";
  c.machine.ranks = 4;
  EXPECT_THROW((void)convoy::sim::run(c), convoy::error);
  run_config small;
  small.plan.mesh = "2x2";
  small.item_bytes = 4;
  EXPECT_THROW((void)convoy::sim::run(small), convoy::error);
  small.item_bytes = 4096;
  small.buffer_bytes = 1024;
  EXPECT_THROW((void)convoy::sim::run(small), convoy::error);
  EXPECT_THROW((void)convoy::sim::parse_workload("gather"), convoy::error);
}

}  // namespace
