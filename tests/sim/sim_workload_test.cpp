// convoy-sim's request/reply and traffic-matrix workloads (tools/sim/README.md, SIM-1,
// SIM-5, SIM-7, SIM-8): replies back at their requesters exactly once, a traffic file's
// items delivered as written, and a malformed file named with its line.
#include "sim_workload.hpp"

#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "sim_run.hpp"

namespace {

using convoy::sim::run_config;
using convoy::sim::run_result;
using convoy::sim::workload_kind;

std::uint64_t stage_items(const run_result& r) {
  std::uint64_t n = 0;
  for (const auto& s : r.per_stage) n += s.items;
  return n;
}

// SIM-8 (run() checks every reply's requester, responder and fingerprint and throws
// otherwise), SIM-5 over both planes: the stages carried every query and every reply along
// its route.
TEST(RequestReply, EveryReplyBackAtItsRequesterOnEveryMachine) {
  struct machine_case {
    const char* name;
    run_config c;
  };
  run_config mesh;
  mesh.plan.mesh = "4x4x2";
  mesh.machine.ranks_per_node = 8;
  run_config ragged;
  ragged.machine.node_sizes = {5, 3, 4, 1};
  ragged.plan.mesh = "node,core";
  run_config tensor;
  tensor.machine.ranks = 24;
  tensor.machine.ranks_per_node = 6;
  tensor.plan.tensor = 3;
  for (const auto& m : {machine_case{"mesh", mesh}, machine_case{"ragged", ragged},
                        machine_case{"tensor3", tensor}}) {
    SCOPED_TRACE(m.name);
    run_config c = m.c;
    c.workload = workload_kind::request_reply;
    c.items_per_rank = 400;
    c.buffer_bytes = 256;  // small buffers and one credit: replies meet backpressure
    c.n_buffers = 1;
    c.batch = 5;
    const run_result r = convoy::sim::run(c);
    const std::uint64_t queries = c.items_per_rank * static_cast<std::uint64_t>(r.ranks);
    EXPECT_EQ(r.items, queries);
    EXPECT_EQ(r.replies, queries);
    EXPECT_EQ(stage_items(r), r.item_hops);
    // Every remote query has a remote reply: z counts both.
    run_config one_way = c;
    one_way.workload = workload_kind::uniform;
    const run_result u = convoy::sim::run(one_way);
    EXPECT_EQ(r.network_items, 2 * u.network_items);
    EXPECT_GT(r.predicted_seconds, u.predicted_seconds);
    EXPECT_EQ(convoy::sim::run(c).predicted_seconds, r.predicted_seconds);  // SIM-2
  }
}

std::string write_temp(const std::string& text) {
  char name[] = "/tmp/convoy_sim_traffic_XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  std::FILE* f = fdopen(fd, "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return name;
}

// SIM-1 and SIM-7: the items of a traffic file arrive, the diagonal stays home, and the
// counts are the file's.
TEST(Traffic, FileItemsAreDeliveredAsWritten) {
  const std::string path =
      write_temp("# src dst items\n0 5 300\n5 0 120  # back\n3 3 50\n7 1 0\n2 6 40\n0 5 60\n");
  run_config c;
  c.plan.mesh = "2x4";
  c.machine.ranks_per_node = 4;
  c.workload = workload_kind::traffic;
  c.traffic_file = path;
  c.buffer_bytes = 256;
  const run_result r = convoy::sim::run(c);
  std::remove(path.c_str());
  EXPECT_EQ(r.items, 300u + 120 + 50 + 40 + 60);
  EXPECT_EQ(r.network_items, 300u + 120 + 40 + 60);  // 3 -> 3 never leaves its rank
  EXPECT_EQ(stage_items(r), r.item_hops);
  EXPECT_GT(r.per_class[2].messages, 0u);  // 0 -> 5 crosses nodes
}

void expect_error(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  try {
    (void)convoy::sim::parse_traffic(in, "m.txt", 8);
    ADD_FAILURE() << "no error for: " << text;
  } catch (const convoy::error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

// SIM-7: a malformed line is an error naming the file and the line.
TEST(Traffic, MalformedFilesNameTheFileAndLine) {
  expect_error("0 1 2\n0 1\n", "traffic file 'm.txt' line 2: expected 'SOURCE DESTINATION ITEMS'");
  expect_error("\n# x\n0 1 -2\n", "line 3: expected");
  expect_error("0 1 2 3\n", "line 1: expected");
  expect_error("0 1 2.5\n", "line 1: expected");
  expect_error("8 1 2\n", "line 1: source 8 is not a rank of this run (0..7)");
  expect_error("0 0 1\n1 99 2\n", "line 2: destination 99");
  expect_error("0 1 999999999999\n", "line 1: more than");
  std::istringstream ok("# only comments\n\n 1 2 3 \n1 2 4\n");
  const auto m = convoy::sim::parse_traffic(ok, "ok", 4);
  ASSERT_EQ(m.rows[1].size(), 1u);  // a pair given twice adds up
  EXPECT_EQ(m.rows[1][0].items, 7u);
  EXPECT_EQ(m.total, 7u);
  EXPECT_THROW((void)convoy::sim::load_traffic("/nonexistent/m.txt", 4), convoy::error);
  run_config c;
  c.plan.mesh = "2x2";
  c.workload = workload_kind::traffic;  // without a file
  EXPECT_THROW((void)convoy::sim::run(c), convoy::error);
}

}  // namespace
