// convoy-sim's floor (tools/sim/README.md SIM-17, tools/sim/sim_bound.hpp): the lower bound
// on the predicted time is counted by hand on small machines, every simulated run stays at
// or above it (any workload, plan and model), it comes close where one term dominates the
// run (so a term counted twice or left out shows), and bound_only gives it without the
// engines at P = 2^17.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim_run.hpp"

namespace {

using convoy::aggregation::link_class;
using convoy::sim::run_config;
using convoy::sim::workload_kind;

constexpr int same_socket = static_cast<int>(link_class::same_socket);
constexpr int same_node = static_cast<int>(link_class::same_node);
constexpr int off_node = static_cast<int>(link_class::off_node);

run_config direct16(workload_kind w, std::uint64_t items) {
  run_config c;
  c.plan.mesh = "16";  // direct sends: every rank a peer of every other
  c.machine.ranks_per_node = 8;
  c.workload = w;
  c.items_per_rank = items;
  return c;
}

// Direct sends among 16 ranks on two nodes of 8, one socket each: rank 0 has 7 peers on its
// socket and 8 off node, out and in; the neighbour workload sends half of rank 7's items
// (to rank 8) and half of rank 0's (to rank 15) off node 0.
TEST(Bound, HandCountOnDirectSends) {
  run_config c = direct16(workload_kind::neighbour, 1000);
  const auto r = convoy::sim::bound_only(c);
  EXPECT_FALSE(r.simulated);
  EXPECT_EQ(r.items, 16000u);
  EXPECT_EQ(r.bound.link_ends[same_socket], 14u);
  EXPECT_EQ(r.bound.link_ends[same_node], 0u);
  EXPECT_EQ(r.bound.link_ends[off_node], 16u);
  EXPECT_EQ(r.bound.offnode_items, 1000u);
  const auto& m = c.model;
  EXPECT_DOUBLE_EQ(r.bound.cpu_seconds, 14 * m.links[same_socket].alpha_s +
                                            16 * m.links[off_node].alpha_s + 1000 * m.push_s);
  EXPECT_DOUBLE_EQ(r.bound.nic_seconds, m.links[off_node].beta_s_per_byte * 8 * 1000);
  EXPECT_DOUBLE_EQ(r.bound.seconds, std::max(r.bound.cpu_seconds, r.bound.nic_seconds));

  // Two sockets per node: 3 of rank 0's node peers move to the other socket; request-reply
  // runs two engines, each closing every link.
  c.machine.sockets_per_node = 2;
  c.workload = workload_kind::request_reply;
  const auto two = convoy::sim::bound_only(c);
  EXPECT_EQ(two.bound.link_ends[same_socket], 2u * 6);
  EXPECT_EQ(two.bound.link_ends[same_node], 2u * 8);
  EXPECT_EQ(two.bound.link_ends[off_node], 2u * 16);

  // Everything to rank 0: nothing leaves node 0.
  c.workload = workload_kind::hotspot;
  EXPECT_EQ(convoy::sim::bound_only(c).bound.offnode_items, 0u);
}

// SIM-17: the run's predicted time is never below its floor, and the run reports the floor
// bound_only computes.
TEST(Bound, EveryRunStaysAboveItsFloor) {
  std::vector<run_config> cs;
  for (const auto w : {workload_kind::uniform, workload_kind::hotspot, workload_kind::permutation,
                       workload_kind::neighbour, workload_kind::request_reply}) {
    for (const char* mesh : {"32", "4x8", "2x4x4"}) {
      run_config c;
      c.plan.mesh = mesh;
      c.machine.ranks = 32;
      c.machine.ranks_per_node = 8;
      c.machine.sockets_per_node = 2;
      c.workload = w;
      c.items_per_rank = 600;
      c.buffer_bytes = 512;
      cs.push_back(c);
    }
  }
  run_config tensor;
  tensor.machine.ranks = 48;
  tensor.machine.ranks_per_node = 8;
  tensor.plan.tensor = 3;
  tensor.items_per_rank = 500;
  cs.push_back(tensor);
  run_config slow_nic = direct16(workload_kind::uniform, 2000);  // the NIC term binds
  slow_nic.model.links[off_node].beta_s_per_byte = 1e-6;
  cs.push_back(slow_nic);
  run_config slow_cpu = direct16(workload_kind::uniform, 2000);  // the alpha term binds
  slow_cpu.model.links[off_node].alpha_s = 1e-3;
  cs.push_back(slow_cpu);
  for (const auto& c : cs) {
    const auto r = convoy::sim::run(c);
    const auto b = convoy::sim::bound_only(c);
    SCOPED_TRACE(r.plan_name + " " + convoy::sim::workload_name(c.workload));
    EXPECT_TRUE(r.simulated);
    EXPECT_GT(r.bound.seconds, 0);
    EXPECT_GE(r.predicted_seconds, r.bound.seconds);
    EXPECT_EQ(r.bound.seconds, b.bound.seconds);
    EXPECT_EQ(r.bound.offnode_items, b.bound.offnode_items);
    EXPECT_EQ(r.items, b.items);
  }
}

// Where one term dominates the run the floor is close to the predicted time: a factor lost
// or doubled in a term would show here.
TEST(Bound, TightWhereOneTermDominates) {
  run_config nic = direct16(workload_kind::uniform, 2000);
  nic.model.links[off_node].beta_s_per_byte = 1e-6;  // 1 MB/s: the node's NIC is all
  const auto a = convoy::sim::run(nic);
  EXPECT_GT(a.bound.nic_seconds, a.bound.cpu_seconds);
  EXPECT_GT(a.bound.seconds, 0.8 * a.predicted_seconds) << a.predicted_seconds;

  run_config cpu = direct16(workload_kind::uniform, 0);  // only the closing buffers, 1 ms each
  cpu.model.links[off_node].alpha_s = 1e-3;
  const auto b = convoy::sim::run(cpu);
  EXPECT_GT(b.bound.cpu_seconds, b.bound.nic_seconds);
  EXPECT_GT(b.bound.seconds, 0.8 * b.predicted_seconds) << b.predicted_seconds;
}

// The floor needs only the plan: direct sends at P = 2^17 (131 071 peers per rank), which no
// machine here can simulate, in well under a second.
TEST(Bound, BoundOnlyAt2e17) {
  run_config c;
  c.plan.mesh = "131072";
  c.machine.ranks_per_node = 16;
  c.items_per_rank = 1000;
  const auto r = convoy::sim::bound_only(c);
  EXPECT_EQ(r.ranks, 131072);
  EXPECT_EQ(r.nodes, 8192);
  EXPECT_EQ(r.bound.link_ends[same_socket], 30u);
  EXPECT_EQ(r.bound.link_ends[off_node], 2u * (131072 - 16));
  EXPECT_EQ(r.messages, 0u);
}

}  // namespace
