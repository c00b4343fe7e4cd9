// emulate_machine + build_mesh without MPI (topology/README.md TOPO-2, 3, 6-11, 14).
#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <convoy/topology/build_mesh.hpp>
#include <convoy/topology/machine.hpp>
#include <string>
#include <vector>

namespace topo = convoy::topology;
using convoy::base::placement;
using coords_t = std::vector<std::vector<int>>;

namespace {

coords_t all_coords(const topo::mesh& m) {
  coords_t out;
  for (int r = 0; r < m.n_ranks(); ++r) {
    auto c = m.coords(r);
    out.emplace_back(c.begin(), c.end());
  }
  return out;
}

std::vector<std::string> names(const topo::mesh& m) {
  std::vector<std::string> out;
  for (const auto& d : m.dims()) out.push_back(d.name + ":" + std::to_string(d.size));
  return out;
}

topo::mesh build(const topo::machine& m, const char* spec) {
  return topo::build_mesh(m, convoy::base::parse_mesh_spec(spec));
}

std::string message_of(const topo::machine& m, const char* spec) {
  try {
    (void)build(m, spec);
  } catch (const convoy::error& e) {
    return e.what();
  }
  return "";
}

std::string emulate_message(int n, const std::vector<int>& sizes, const char* synthetic) {
  try {
    (void)topo::emulate_machine(n, sizes, synthetic, placement::block);
  } catch (const convoy::error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Emulate, NodesNumberedByLowestRankAndLocalRanksInOrder) {  // TOPO-2
  const auto m = topo::emulate_machine(9, {4, 2, 3}, "", placement::block);
  ASSERT_EQ(m.nodes.size(), 3u);
  EXPECT_EQ(m.nodes[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(m.nodes[1].ranks, (std::vector<int>{4, 5}));
  EXPECT_EQ(m.nodes[2].ranks, (std::vector<int>{6, 7, 8}));
  EXPECT_EQ(m.nodes[1].host, "emu1");
  EXPECT_EQ(m.nodes[2].n_cores, 3);
  EXPECT_EQ(m.nodes[2].n_packages, 1);
  EXPECT_TRUE(m.emulated);
  for (int r = 0; r < 9; ++r) EXPECT_EQ(m.ranks[static_cast<size_t>(r)].rank, r);
  EXPECT_EQ(m.ranks[5].node, 1);
  EXPECT_EQ(m.ranks[5].local_rank, 1);
  EXPECT_EQ(m.ranks[5].core, 1);
  EXPECT_EQ(m.ranks[6].local_rank, 0);
}

TEST(Emulate, SyntheticPlacesKthRankOnKthPu) {  // TOPO-3
  const auto m = topo::emulate_machine(8, {4, 4}, "pack:2 core:2", placement::block);
  EXPECT_EQ(m.nodes[0].n_packages, 2);
  EXPECT_EQ(m.nodes[0].n_cores, 4);
  const std::vector<int> package{0, 0, 1, 1, 0, 0, 1, 1}, core{0, 1, 2, 3, 0, 1, 2, 3};
  for (size_t r = 0; r < 8; ++r) {
    EXPECT_EQ(m.ranks[r].package, package[r]) << r;
    EXPECT_EQ(m.ranks[r].core, core[r]) << r;
    EXPECT_EQ(m.ranks[r].numa, 0) << r;
  }
}

TEST(Emulate, CyclicIsRoundRobinOverNodesWithRoom) {  // TOPO-11
  const auto m = topo::emulate_machine(9, {4, 2, 3}, "", placement::cyclic);
  EXPECT_EQ(m.nodes[0].ranks, (std::vector<int>{0, 3, 6, 8}));
  EXPECT_EQ(m.nodes[1].ranks, (std::vector<int>{1, 4}));
  EXPECT_EQ(m.nodes[2].ranks, (std::vector<int>{2, 5, 7}));
  EXPECT_EQ(m.ranks[8].local_rank, 3);
}

TEST(Emulate, Errors) {  // TOPO-11
  EXPECT_EQ(emulate_message(8, {4, 2}, ""),
            "emulation: node sizes 4,2 hold 6 ranks, but there are 8 ranks");
  EXPECT_EQ(emulate_message(2, {2, 0}, ""),
            "emulation: node sizes 2,0 contain 0; every node needs at least one rank");
  EXPECT_EQ(emulate_message(5, {5}, "pack:2 core:2"),
            "emulation: node 0 has 5 ranks but synthetic topology 'pack:2 core:2' has only 4 PUs");
  EXPECT_EQ(
      emulate_message(2, {2}, "pack:zz").rfind("hwloc rejects synthetic topology 'pack:zz'", 0),
      0u);
}

TEST(BuildMesh, OneNodeOfEight) {  // TOPO-8, TOPO-14
  const auto m = topo::emulate_machine(8, {8}, "", placement::block);
  const auto g = build(m, "auto");
  EXPECT_EQ(names(g), (std::vector<std::string>{"core:8"}));  // node and socket of size 1 dropped
  for (int r = 0; r < 8; ++r) EXPECT_EQ(g.coords(r)[0], r);
  EXPECT_EQ(g.buffers_per_rank(), 7);
}

TEST(BuildMesh, EightNodesOfOne) {  // TOPO-8
  const auto m = topo::emulate_machine(8, {1, 1, 1, 1, 1, 1, 1, 1}, "", placement::block);
  const auto g = build(m, "auto");
  EXPECT_EQ(names(g), (std::vector<std::string>{"node:8"}));
  for (int r = 0; r < 8; ++r) EXPECT_EQ(g.coords(r)[0], r);
  EXPECT_EQ(names(build(m, "node")), (std::vector<std::string>{"node:8"}));
}

TEST(BuildMesh, SingleRankKeepsOneCoreDimension) {  // TOPO-8
  const auto m = topo::emulate_machine(1, {1}, "", placement::block);
  const auto g = build(m, "auto");
  EXPECT_EQ(names(g), (std::vector<std::string>{"core:1"}));
  EXPECT_EQ(g.buffers_per_rank(), 0);
}

TEST(BuildMesh, RaggedThreeThreeTwo) {  // TOPO-9, TOPO-14
  const auto m = topo::emulate_machine(8, {3, 3, 2}, "", placement::block);
  const auto g = build(m, "auto");
  EXPECT_EQ(names(g), (std::vector<std::string>{"node:3", "core:3"}));
  EXPECT_EQ(all_coords(g),
            (coords_t{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {2, 0}, {2, 1}}));
  EXPECT_EQ(g.holes(), (coords_t{{2, 2}}));
  EXPECT_EQ(g.buffers_per_rank(), 4);
}

TEST(BuildMesh, RaggedFourTwoThree) {  // TOPO-9
  const auto m = topo::emulate_machine(9, {4, 2, 3}, "", placement::block);
  const auto g = build(m, "auto");
  EXPECT_EQ(names(g), (std::vector<std::string>{"node:3", "core:4"}));
  EXPECT_EQ(g.holes(), (coords_t{{1, 2}, {1, 3}, {2, 3}}));
  EXPECT_EQ(all_coords(g),
            (coords_t{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {2, 2}}));
}

TEST(BuildMesh, TwoNodesTwoSocketsTwoCores) {  // TOPO-7, TOPO-8
  const auto m = topo::emulate_machine(8, {4, 4}, "pack:2 core:2", placement::block);
  const auto g = build(m, "auto");
  EXPECT_EQ(names(g), (std::vector<std::string>{"node:2", "socket:2", "core:2"}));
  EXPECT_EQ(
      all_coords(g),
      (coords_t{
          {0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1}, {1, 0, 0}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}}));
  EXPECT_EQ(g.n_holes(), 0);
  EXPECT_EQ(g.buffers_per_rank(), 3);
  // Skipped levels merge into the next named level below (TOPO-7).
  const auto nc = build(m, "node,core");
  EXPECT_EQ(names(nc), (std::vector<std::string>{"node:2", "core:4"}));
  EXPECT_EQ(nc.coords(6)[1], 2);
  const auto sc = build(m, "socket,core");
  EXPECT_EQ(names(sc), (std::vector<std::string>{"socket:4", "core:2"}));
  EXPECT_EQ(all_coords(sc),
            (coords_t{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {3, 0}, {3, 1}}));
  // numa has one value per node here, so it is dropped as a size-1 dimension.
  EXPECT_EQ(names(build(m, "node,socket,numa,core")),
            (std::vector<std::string>{"node:2", "socket:2", "core:2"}));
}

TEST(BuildMesh, RaggedSocketsLeaveHoles) {  // TOPO-9
  // Three ranks on a 2x2 node: socket 1 has one rank, so [1,1] is a hole.
  const auto m = topo::emulate_machine(3, {3}, "pack:2 core:2", placement::block);
  const auto g = build(m, "auto");
  EXPECT_EQ(names(g), (std::vector<std::string>{"socket:2", "core:2"}));
  EXPECT_EQ(g.holes(), (coords_t{{1, 1}}));
}

TEST(BuildMesh, CyclicPlacementLandsOnTheRightCoordinates) {  // TOPO-10
  const auto m = topo::emulate_machine(8, {3, 3, 2}, "", placement::cyclic);
  const auto g = build(m, "auto");
  EXPECT_EQ(names(g), (std::vector<std::string>{"node:3", "core:3"}));
  EXPECT_EQ(all_coords(g),
            (coords_t{{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}, {0, 2}, {1, 2}}));
  EXPECT_EQ(g.holes(), (coords_t{{2, 2}}));
}

TEST(BuildMesh, SharedOrUnknownCoresBecomeSlots) {  // TOPO-7
  auto m = topo::emulate_machine(4, {4}, "", placement::block);
  for (auto& p : m.ranks) p.core = -1;  // unbound
  EXPECT_EQ(all_coords(build(m, "auto")), (coords_t{{0}, {1}, {2}, {3}}));
  for (auto& p : m.ranks) p.core = 0;  // oversubscribed: all on core 0
  EXPECT_EQ(all_coords(build(m, "auto")), (coords_t{{0}, {1}, {2}, {3}}));
  // Distinct known cores in a non-rank order: coordinates follow the cores.
  const std::vector<int> cores{3, 1, 0, 2};
  for (size_t r = 0; r < 4; ++r) m.ranks[r].core = cores[r];
  EXPECT_EQ(all_coords(build(m, "auto")), (coords_t{{3}, {1}, {0}, {2}}));
}

TEST(BuildMesh, CartesianOverRankOrder) {  // TOPO-6
  const auto m = topo::emulate_machine(8, {3, 3, 2}, "", placement::block);
  const auto g = build(m, "4x2");
  EXPECT_EQ(names(g), (std::vector<std::string>{"d0:4", "d1:2"}));
  EXPECT_EQ(g.coords(5)[0], 2);
  EXPECT_EQ(g.coords(5)[1], 1);
  EXPECT_EQ(names(build(m, "1x8")), (std::vector<std::string>{"d0:1", "d1:8"}));
}

TEST(BuildMeshInvalid, ProductNotRankCount) {  // TOPO-6
  const auto m = topo::emulate_machine(8, {8}, "", placement::block);
  EXPECT_EQ(message_of(m, "3x3"),
            "mesh spec '3x3': the shape has 9 cells but there are 8 ranks; the product of the "
            "sizes must equal the rank count");
  EXPECT_EQ(message_of(m, "16"),
            "mesh spec '16': the shape has 16 cells but there are 8 ranks; the product of the "
            "sizes must equal the rank count");
}

TEST(BuildMeshInvalid, LevelsThatCollide) {  // TOPO-7
  const auto m = topo::emulate_machine(8, {3, 3, 2}, "", placement::block);
  EXPECT_EQ(message_of(m, "node"),
            "mesh spec 'node': ranks 0 and 1 both land at [0]; add an inner level such as core");
}

TEST(BuildMesh, NumaLevel) {  // TOPO-3, TOPO-7
  // One node, 2 packages x 2 NUMA nodes x 2 cores: numa numbers NUMA nodes within a socket.
  const auto m = topo::emulate_machine(8, {8}, "pack:2 numa:2 core:2", placement::block);
  EXPECT_EQ(m.ranks[2].numa, 1);
  EXPECT_EQ(m.ranks[4].numa, 2);
  const auto g = build(m, "socket,numa,core");
  EXPECT_EQ(names(g), (std::vector<std::string>{"socket:2", "numa:2", "core:2"}));
  EXPECT_EQ(
      all_coords(g),
      (coords_t{
          {0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1}, {1, 0, 0}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}}));
  // Without socket, NUMA nodes are numbered across the node.
  EXPECT_EQ(names(build(m, "numa,core")), (std::vector<std::string>{"numa:4", "core:2"}));
  // auto does not name numa: it merges into core.
  EXPECT_EQ(names(build(m, "auto")), (std::vector<std::string>{"socket:2", "core:4"}));
}
