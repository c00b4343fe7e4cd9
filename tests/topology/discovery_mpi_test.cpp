// Discovery and mesh building under MPI, real and emulated (topology/README.md
// TOPO-1..4, 8..11; base/README.md BASE-6). The layout under test comes from the environment the
// CTest entry sets; CONVOY_TEST_LAYOUT names the expected table below, CONVOY_TEST_EXPECT_ERROR the
// start of the message discover_mesh must raise on every rank.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sched.h>

#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/topology/build_mesh.hpp>
#include <convoy/topology/machine.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace topo = convoy::topology;
using coords_t = std::vector<std::vector<int>>;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The message `f` throws (empty if it does not).
template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const convoy::error& e) {
    return e.what();
  }
  return "";
}

struct expected_layout {
  std::vector<std::string> dims;  // "name:size"
  coords_t coords;                // index = rank
  coords_t holes;
};

const std::map<std::string, expected_layout>& layouts() {
  static const std::map<std::string, expected_layout> table{
      {"one_node_8", {{"core:8"}, {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}, {}}},
      {"eight_nodes_1", {{"node:8"}, {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}, {}}},
      {"ragged_3_3_2",
       {{"node:3", "core:3"},
        {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {2, 0}, {2, 1}},
        {{2, 2}}}},
      {"ragged_4_2_3",
       {{"node:3", "core:4"},
        {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {2, 2}},
        {{1, 2}, {1, 3}, {2, 3}}}},
      {"two_nodes_2x2",
       {{"node:2", "socket:2", "core:2"},
        {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1}, {1, 0, 0}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}},
        {}}},
      {"cyclic_3_3_2",
       {{"node:3", "core:3"},
        {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}, {0, 2}, {1, 2}},
        {{2, 2}}}},
  };
  return table;
}

// The CPU affinity of every thread of this process (OpenMPI runs threads of its own).
std::map<int, cpu_set_t> thread_affinities() {
  std::map<int, cpu_set_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    const int tid = std::stoi(entry.path().filename().string());
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(tid, sizeof mask, &mask) == 0) out.emplace(tid, mask);
  }
  return out;
}

}  // namespace

TEST(Discovery, MachineIsIdenticalOnAllRanks) {  // TOPO-1
  if (!env("CONVOY_TEST_EXPECT_ERROR").empty()) GTEST_SKIP() << "error layout";
  const auto m = topo::discover(MPI_COMM_WORLD);
  EXPECT_TRUE(convoy_test::same_everywhere(topo::serialize(m))) << topo::serialize(m);
}

TEST(Discovery, NodesNumberedByLowestRank) {  // TOPO-2
  if (!env("CONVOY_TEST_EXPECT_ERROR").empty()) GTEST_SKIP() << "error layout";
  const auto m = topo::discover(MPI_COMM_WORLD);
  ASSERT_EQ(static_cast<int>(m.ranks.size()), convoy_test::world_size());
  std::vector<int> seen(m.ranks.size(), 0);
  int previous_lowest = -1;
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    const auto& node = m.nodes[n];
    ASSERT_FALSE(node.ranks.empty());
    EXPECT_GT(node.ranks.front(), previous_lowest);
    previous_lowest = node.ranks.front();
    for (size_t k = 0; k < node.ranks.size(); ++k) {
      const auto& p = m.ranks[static_cast<size_t>(node.ranks[k])];
      EXPECT_EQ(p.node, static_cast<int>(n));
      EXPECT_EQ(p.local_rank, static_cast<int>(k));
      EXPECT_EQ(p.host, node.host);
      if (k > 0) {
        EXPECT_LT(node.ranks[k - 1], node.ranks[k]);
      }
      ++seen[static_cast<size_t>(node.ranks[k])];
    }
  }
  for (int count : seen) EXPECT_EQ(count, 1);
}

TEST(Discovery, RealNodesMatchSharedMemoryAndHostNames) {  // TOPO-2
  if (!env("CONVOY_TEST_EXPECT_ERROR").empty()) GTEST_SKIP() << "error layout";
  const auto m = topo::discover(MPI_COMM_WORLD);
  if (m.emulated) GTEST_SKIP() << "emulated layout";
  const int rank = convoy_test::world_rank();
  MPI_Comm shared = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  int n_shared = 0;
  MPI_Comm_size(shared, &n_shared);
  std::vector<int> mates(static_cast<size_t>(n_shared));
  MPI_Allgather(&rank, 1, MPI_INT, mates.data(), 1, MPI_INT, shared);
  MPI_Comm_free(&shared);
  const auto& me = m.ranks[static_cast<size_t>(rank)];
  EXPECT_EQ(m.nodes[static_cast<size_t>(me.node)].ranks, mates);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  EXPECT_EQ(me.host, std::string(name, static_cast<size_t>(len)));
  EXPECT_GE(m.nodes[static_cast<size_t>(me.node)].n_cores, 1);
}

TEST(Discovery, MeshCoordinatesMatchPlacement) {  // TOPO-9, TOPO-10
  if (!env("CONVOY_TEST_EXPECT_ERROR").empty()) GTEST_SKIP() << "error layout";
  const auto m = topo::discover(MPI_COMM_WORLD);
  const auto g = topo::discover_mesh(MPI_COMM_WORLD);
  ASSERT_EQ(g.n_ranks(), convoy_test::world_size());
  std::set<std::vector<int>> distinct;
  for (int r = 0; r < g.n_ranks(); ++r) {
    const auto c = g.coords(r);
    distinct.emplace(c.begin(), c.end());
    EXPECT_EQ(g.rank_at(c), r);
    for (int d = 0; d < g.n_dims(); ++d) {
      const auto& place = m.ranks[static_cast<size_t>(r)];
      if (g.dim(d).name == "node") {
        EXPECT_EQ(c[static_cast<size_t>(d)], place.node);
      }
      // node x core over one-package nodes: the core coordinate is the local rank.
      if (g.dim(d).name == "core" && g.dims().front().name == "node" && g.n_dims() == 2) {
        EXPECT_EQ(c[static_cast<size_t>(d)], place.local_rank);
      }
    }
  }
  EXPECT_EQ(static_cast<int>(distinct.size()), g.n_ranks());
  EXPECT_EQ(g.n_cells() - g.n_holes(), g.n_ranks());
  if (m.nodes.size() > 1) {
    EXPECT_EQ(g.dim(0).name, "node");
    EXPECT_EQ(g.dim(0).size, static_cast<int>(m.nodes.size()));
  }
  std::string text = g.describe();
  for (int r = 0; r < g.n_ranks(); ++r)
    for (int v : g.coords(r)) text += " " + std::to_string(v);
  EXPECT_TRUE(convoy_test::same_everywhere(text)) << text;
}

TEST(Discovery, ExpectedLayout) {  // TOPO-8, TOPO-9, TOPO-11
  const std::string name = env("CONVOY_TEST_LAYOUT");
  if (name.empty()) GTEST_SKIP() << "no expected layout for this entry";
  const auto it = layouts().find(name);
  ASSERT_NE(it, layouts().end()) << "unknown CONVOY_TEST_LAYOUT " << name;
  const auto& want = it->second;
  const auto g = topo::discover_mesh(MPI_COMM_WORLD);
  std::vector<std::string> dims;
  for (const auto& d : g.dims()) dims.push_back(d.name + ":" + std::to_string(d.size));
  EXPECT_EQ(dims, want.dims);
  ASSERT_EQ(static_cast<size_t>(g.n_ranks()), want.coords.size());
  for (int r = 0; r < g.n_ranks(); ++r) {
    const auto c = g.coords(r);
    EXPECT_EQ(std::vector<int>(c.begin(), c.end()), want.coords[static_cast<size_t>(r)])
        << "rank " << r;
  }
  EXPECT_EQ(g.holes(), want.holes);
}

TEST(Discovery, EnvironmentErrorIsRaisedTheSameOnEveryRank) {  // TOPO-4
  const std::string want = env("CONVOY_TEST_EXPECT_ERROR");
  if (want.empty()) GTEST_SKIP() << "no expected error for this entry";
  const std::string got = message_of([] { (void)topo::discover_mesh(MPI_COMM_WORLD); });
  // A prefix: CTest's ENVIRONMENT cannot carry a ';'.
  EXPECT_EQ(got.substr(0, want.size()), want) << got;
  EXPECT_TRUE(convoy_test::same_everywhere(got));
}

TEST(Discovery, InvalidSpecOnRankZeroFailsEveryRankAlike) {  // TOPO-4, TOPO-6, BASE-6
  if (!env("CONVOY_TEST_EXPECT_ERROR").empty()) GTEST_SKIP() << "error layout";
  convoy::base::settings s = convoy::base::settings::from_env(MPI_COMM_WORLD);
  // Only rank 0's spec counts: other ranks hold a valid one.
  s.mesh = convoy_test::world_rank() == 0 ? "node,rack" : "auto";
  const std::string got = message_of([&] { (void)topo::discover_mesh(MPI_COMM_WORLD, s); });
  EXPECT_EQ(got,
            "mesh spec 'node,rack': unknown level 'rack' (expected auto, a shape like 8x4x2, or "
            "levels from node, socket, numa, core)");
  EXPECT_TRUE(convoy_test::same_everywhere(got));

  const int n = convoy_test::world_size();
  s.mesh = std::to_string(n + 1);
  const std::string product = message_of([&] { (void)topo::discover_mesh(MPI_COMM_WORLD, s); });
  EXPECT_EQ(product, "mesh spec '" + std::to_string(n + 1) + "': the shape has " +
                         std::to_string(n + 1) + " cells but there are " + std::to_string(n) +
                         " ranks; the product of the sizes must equal the rank count");
  EXPECT_TRUE(convoy_test::same_everywhere(product));
}

TEST(Discovery, RankZeroEnvironmentWins) {  // BASE-6
  if (!env("CONVOY_TEST_EXPECT_ERROR").empty()) GTEST_SKIP() << "error layout";
  const int rank = convoy_test::world_rank();
  // A bad value on every rank but 0 is ignored ...
  if (rank != 0) ::setenv("CONVOY_N_BUFFERS", "3", 1);
  std::string got = message_of([] { (void)convoy::base::settings::from_env(MPI_COMM_WORLD); });
  if (rank != 0) ::unsetenv("CONVOY_N_BUFFERS");
  EXPECT_EQ(got, "");
  // ... and a bad value on rank 0 alone fails every rank the same way.
  if (rank == 0) ::setenv("CONVOY_N_BUFFERS", "3", 1);
  got = message_of([] { (void)convoy::base::settings::from_env(MPI_COMM_WORLD); });
  if (rank == 0) ::unsetenv("CONVOY_N_BUFFERS");
  EXPECT_EQ(got, "CONVOY_N_BUFFERS='3': must be a power of two from 1 to 1024");
}

TEST(Discovery, MismatchedEmulationFailsEveryRankAlike) {  // TOPO-4, TOPO-11
  if (!env("CONVOY_TEST_EXPECT_ERROR").empty()) GTEST_SKIP() << "error layout";
  convoy::base::settings s;
  const int n = convoy_test::world_size();
  s.emulate_nodes = std::vector<int>{n, 1};
  const std::string got = message_of([&] { (void)topo::discover(MPI_COMM_WORLD, s); });
  EXPECT_EQ(got, "emulation: node sizes " + std::to_string(n) + ",1 hold " + std::to_string(n + 1) +
                     " ranks, but there are " + std::to_string(n) +
                     " ranks (CONVOY_EMULATE_NODES='" + std::to_string(n) +
                     ",1', CONVOY_EMULATE_TOPOLOGY='')");
  EXPECT_TRUE(convoy_test::same_everywhere(got));
}

TEST(Discovery, OncePerCommunicatorAndEmulation) {  // TOPO-15
  if (!env("CONVOY_TEST_EXPECT_ERROR").empty()) GTEST_SKIP() << "error layout";
  const int rank = convoy_test::world_rank();
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  const convoy::base::settings real;  // nothing emulated
  const topo::machine first = topo::discover(c, real);
  // Bound to one of its CPUs (every thread: discovery reads the process's binding), this
  // process would be found on that core by a new probe; the communicator's machine stays
  // the one probed first.
  const std::map<int, cpu_set_t> before = thread_affinities();
  ASSERT_FALSE(before.empty());
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &before.begin()->second)) ++cpu;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  for (const auto& [tid, mask] : before) sched_setaffinity(tid, sizeof one, &one);
  const topo::machine again = topo::discover(c, real);
  MPI_Comm d = MPI_COMM_NULL;
  MPI_Comm_dup(c, &d);
  const topo::machine fresh = topo::discover(d, real);
  for (const auto& [tid, mask] : before) sched_setaffinity(tid, sizeof mask, &mask);
  EXPECT_EQ(again, first);
  EXPECT_GE(fresh.ranks[static_cast<std::size_t>(rank)].core, 0);
  if (first.ranks[static_cast<std::size_t>(rank)].core < 0) {
    EXPECT_NE(fresh, first);  // an unbound process: the new communicator was probed anew
  }

  // Each emulation has its own entry; the real machine is still the one found first.
  convoy::base::settings emu;
  emu.emulate_nodes = std::vector<int>{convoy_test::world_size()};
  const topo::machine e = topo::discover(c, emu);
  EXPECT_TRUE(e.emulated);
  EXPECT_EQ(topo::discover(c, emu), e);
  EXPECT_EQ(topo::discover(c, real), first);
  MPI_Comm_free(&d);
  MPI_Comm_free(&c);
}
