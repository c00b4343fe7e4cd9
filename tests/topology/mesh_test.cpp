// The mesh as a rank <-> coordinates table with holes (topology/README.md TOPO-6, 9, 10, 14).
#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <convoy/topology/mesh.hpp>
#include <string>
#include <vector>

namespace topo = convoy::topology;
using coords_t = std::vector<std::vector<int>>;

namespace {
std::vector<int> coords_of(const topo::mesh& m, int r) {
  auto c = m.coords(r);
  return {c.begin(), c.end()};
}
}  // namespace

TEST(Mesh, CartesianIsRowMajorOverRankOrder) {  // TOPO-6, TOPO-14
  const std::vector<int> shape{2, 3, 2};
  const auto m = topo::mesh::cartesian(shape);
  ASSERT_EQ(m.n_ranks(), 12);
  ASSERT_EQ(m.n_dims(), 3);
  EXPECT_EQ(m.dim(0).name, "d0");
  EXPECT_EQ(m.dim(2).name, "d2");
  EXPECT_EQ(coords_of(m, 0), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(coords_of(m, 1), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(coords_of(m, 2), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(coords_of(m, 11), (std::vector<int>{1, 2, 1}));
  for (int r = 0; r < m.n_ranks(); ++r) EXPECT_EQ(m.rank_at(m.coords(r)), r);
  EXPECT_EQ(m.n_holes(), 0);
  EXPECT_EQ(m.buffers_per_rank(), 1 + 2 + 1);
  EXPECT_EQ(m.shape_string(), "2x3x2");
}

TEST(Mesh, TableNotArithmetic) {  // TOPO-10
  // Round-robin placement: rank r on node r % 2, the table must say so.
  const coords_t c{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}};
  const topo::mesh m({{"node", 2}, {"core", 3}}, c);
  for (int r = 0; r < 6; ++r) {
    EXPECT_EQ(coords_of(m, r), c[static_cast<size_t>(r)]);
    EXPECT_EQ(m.rank_at(c[static_cast<size_t>(r)]), r);
  }
  EXPECT_EQ(m.line_peers(0, 0), (std::vector<int>{1}));
  EXPECT_EQ(m.line_peers(0, 1), (std::vector<int>{2, 4}));
  EXPECT_EQ(m.describe(), "node(2) x core(3)");
}

TEST(Mesh, RaggedNodesLeaveHoles) {  // TOPO-9, TOPO-14
  // Nodes of 4, 2 and 3 ranks: 3x4 with 3 holes.
  const coords_t c{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {2, 2}};
  const topo::mesh m({{"node", 3}, {"core", 4}}, c);
  EXPECT_EQ(m.n_cells(), 12);
  EXPECT_EQ(m.n_holes(), 3);
  EXPECT_EQ(m.holes(), (coords_t{{1, 2}, {1, 3}, {2, 3}}));
  const std::vector<int> hole{1, 3};
  EXPECT_TRUE(m.is_hole(hole));
  EXPECT_EQ(m.rank_at(hole), -1);
  // Peers along a dimension skip holes.
  EXPECT_EQ(m.line_peers(3, 0), (std::vector<int>{}));
  EXPECT_EQ(m.line_peers(2, 0), (std::vector<int>{8}));
  EXPECT_EQ(m.buffers_per_rank(), 2 + 3);
}

TEST(Mesh, RejectsBadTables) {  // TOPO-9 (unique cells)
  EXPECT_THROW(topo::mesh({}, coords_t{{0}}), convoy::error);
  EXPECT_THROW(topo::mesh({{"core", 2}}, coords_t{}), convoy::error);
  try {
    const topo::mesh m({{"core", 2}}, coords_t{{0}, {0}});
    FAIL() << "duplicate coordinates accepted";
  } catch (const convoy::error& e) {
    EXPECT_EQ(std::string(e.what()), "mesh: ranks 0 and 1 have the same coordinates");
  }
  EXPECT_THROW(topo::mesh({{"core", 2}}, coords_t{{2}}), convoy::error);
  EXPECT_THROW(topo::mesh({{"core", 2}}, coords_t{{0, 0}}), convoy::error);
  const std::vector<int> zero{4, 0};
  EXPECT_THROW((void)topo::mesh::cartesian(zero), convoy::error);
}
