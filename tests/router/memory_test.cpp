// The buffer-memory model (router/README.md ROUTE-11) and route statistics.
#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <convoy/router/memory.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/router/route_stats.hpp>
#include <convoy/topology/mesh.hpp>
#include <cstddef>
#include <vector>

namespace {

using convoy::router::link_buffer_bytes;

std::size_t by_hand(const convoy::router::route_plan& plan, int rank, std::size_t cap, int k) {
  std::size_t links = 0;
  for (int s = 0; s < plan.n_stages(); ++s)
    links += plan.out_peers(rank, s).size() + plan.in_peers(rank, s).size();
  return links * cap * static_cast<std::size_t>(k);
}

TEST(Memory, FormulaMatchesPeers) {  // ROUTE-11
  const int shape[] = {16, 16, 16};
  const auto mesh = convoy::router::make_mesh_plan(convoy::topology::mesh::cartesian(shape));
  EXPECT_EQ(link_buffer_bytes(*mesh, 0, 8192, 2), std::size_t{45 + 45} * 2 * 8192);
  EXPECT_EQ(convoy::router::link_count(*mesh, 7), 90u);
  const auto t3 = convoy::router::make_tensor_plan(3, 4096, 16);
  EXPECT_EQ(link_buffer_bytes(*t3, 0, 8192, 2), std::size_t{90} * 2 * 8192);
  EXPECT_EQ(link_buffer_bytes(*t3, 17, 1000, 4), by_hand(*t3, 17, 1000, 4));
  const auto t3big = convoy::router::make_tensor_plan(3, 1 << 17, 32);
  EXPECT_EQ(link_buffer_bytes(*t3big, 0, 8192, 2),
            std::size_t{378} * 2 * 8192);  // 2 x (31 + 127 + 31) links
  const auto t1big = convoy::router::make_tensor_plan(1, 1 << 17, 1);
  EXPECT_EQ(link_buffer_bytes(*t1big, 0, 8192, 2),
            std::size_t{262142} * 2 * 8192);  // 2 x 131071 links
  // Ragged: in and out differ in general; the formula still is their sum.
  const convoy::topology::mesh ragged(
      {{"node", 3}, {"core", 4}},
      {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {2, 2}});
  const auto rp = convoy::router::make_mesh_plan(ragged);
  for (int r = 0; r < ragged.n_ranks(); ++r)
    EXPECT_EQ(link_buffer_bytes(*rp, r, 64, 1), by_hand(*rp, r, 64, 1));
}

TEST(Memory, BadArgumentsThrow) {  // ROUTE-12
  const auto t = convoy::router::make_tensor_plan(2, 8, 2);
  EXPECT_THROW((void)link_buffer_bytes(*t, 0, 0, 2), convoy::error);
  EXPECT_THROW((void)link_buffer_bytes(*t, 0, 64, 0), convoy::error);
  EXPECT_THROW((void)link_buffer_bytes(*t, 8, 64, 1), convoy::error);
}

TEST(RouteStats, HopsAndHistogram) {  // ROUTE-1, ROUTE-4 (route_stats)
  const auto t = convoy::router::make_tensor_plan(2, 8, 2);
  EXPECT_EQ(convoy::router::route_hops(*t, 0, 0), 0);
  EXPECT_EQ(convoy::router::route_hops(*t, 0, 1), 1);
  EXPECT_EQ(convoy::router::route_hops(*t, 0, 3), 2);
  EXPECT_EQ(convoy::router::route_hops(*t, 0, 8), -1);
  EXPECT_THROW((void)convoy::router::hop_histogram(*t, 9), convoy::error);
  const std::vector<std::int64_t> hist = {1, 4, 3};
  EXPECT_EQ(convoy::router::hop_histogram(*t, 0), hist);
}

}  // namespace
