// TRAM mesh plans: router/README.md ROUTE-1..7 and ROUTE-12.
#include <gtest/gtest.h>

#include <algorithm>
#include <convoy/base/error.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/router/route_stats.hpp>
#include <convoy/topology/build_mesh.hpp>
#include <convoy/topology/machine.hpp>
#include <convoy/topology/mesh.hpp>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "plan_checks.hpp"

namespace {

using convoy::router::make_mesh_plan;
using convoy::topology::dimension;
using convoy::topology::mesh;

std::int64_t binomial(int n, int k) {
  std::int64_t b = 1;
  for (int i = 1; i <= k; ++i) b = b * (n - k + i) / i;
  return b;
}

std::vector<std::vector<int>> all_orders(int n) {
  std::vector<int> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::vector<std::vector<int>> out;
  do out.push_back(p);
  while (std::next_permutation(p.begin(), p.end()));
  return out;
}

/// Ragged nodes as the topology module builds them: node(#nodes) x core(max), holes at the end.
mesh ragged_nodes(const std::vector<int>& cores_per_node) {
  const int max_cores = *std::max_element(cores_per_node.begin(), cores_per_node.end());
  std::vector<std::vector<int>> coords;
  for (int n = 0; n < static_cast<int>(cores_per_node.size()); ++n)
    for (int c = 0; c < cores_per_node[static_cast<std::size_t>(n)]; ++c) coords.push_back({n, c});
  return mesh({{"node", static_cast<int>(cores_per_node.size())}, {"core", max_cores}},
              std::move(coords));
}

/// Two levels of raggedness: cores[n][s] cores on socket s of node n.
mesh ragged_sockets(const std::vector<std::vector<int>>& cores) {
  int max_sockets = 0, max_cores = 0;
  std::vector<std::vector<int>> coords;
  for (int n = 0; n < static_cast<int>(cores.size()); ++n) {
    const auto& node = cores[static_cast<std::size_t>(n)];
    max_sockets = std::max(max_sockets, static_cast<int>(node.size()));
    for (int s = 0; s < static_cast<int>(node.size()); ++s) {
      max_cores = std::max(max_cores, node[static_cast<std::size_t>(s)]);
      for (int c = 0; c < node[static_cast<std::size_t>(s)]; ++c) coords.push_back({n, s, c});
    }
  }
  return mesh(
      {{"node", static_cast<int>(cores.size())}, {"socket", max_sockets}, {"core", max_cores}},
      std::move(coords));
}

/// ROUTE-6: peers per stage <= s_{D_s} - 1, and a stage-s hop lands on a rank that
/// matches dest on D_0..D_s (checked along every route of every pair).
testing::AssertionResult check_hole_bounds(const mesh& m, const std::vector<int>& order) {
  const auto plan = make_mesh_plan(m, order);
  const int n = m.n_dims();
  for (int r = 0; r < m.n_ranks(); ++r)
    for (int s = 0; s < n; ++s) {
      const auto size = m.dim(order[static_cast<std::size_t>(s)]).size;
      if (static_cast<int>(plan->out_peers(r, s).size()) > size - 1)
        return testing::AssertionFailure() << "rank " << r << " stage " << s << " has "
                                           << plan->out_peers(r, s).size() << " peers";
    }
  // The in-peer bound of the README: (s_{D_s} - 1) * prod_{k>s} ceil(s_{D_k} / c_k), c_k the
  // number of values of D_k present among ranks sharing r's coordinates on D_0..D_{k-1}.
  for (int r = 0; r < m.n_ranks(); ++r)
    for (int s = 0; s < n; ++s) {
      std::int64_t bound = m.dim(order[static_cast<std::size_t>(s)]).size - 1;
      for (int k = s + 1; k < n; ++k) {
        std::vector<int> present;
        for (int q = 0; q < m.n_ranks(); ++q) {
          bool same = true;
          for (int j = 0; j < k; ++j) {
            const auto dim = static_cast<std::size_t>(order[static_cast<std::size_t>(j)]);
            same = same && m.coords(q)[dim] == m.coords(r)[dim];
          }
          if (same)
            present.push_back(
                m.coords(q)[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])]);
        }
        std::sort(present.begin(), present.end());
        const auto c = std::unique(present.begin(), present.end()) - present.begin();
        const int size = m.dim(order[static_cast<std::size_t>(k)]).size;
        bound *= (size + c - 1) / c;
      }
      if (static_cast<std::int64_t>(plan->in_peers(r, s).size()) > bound)
        return testing::AssertionFailure()
               << "rank " << r << " stage " << s << " has " << plan->in_peers(r, s).size()
               << " in-peers > " << bound;
    }
  for (int src = 0; src < m.n_ranks(); ++src)
    for (int dst = 0; dst < m.n_ranks(); ++dst) {
      int at = src, first = 0;
      for (int guard = 0; guard <= n; ++guard) {
        const auto h = plan->next_hop(at, dst, first);
        if (h.stage == n) break;
        const auto c = m.coords(h.rank);
        const auto d = m.coords(dst);
        for (int k = 0; k <= h.stage; ++k) {
          const auto dim = static_cast<std::size_t>(order[static_cast<std::size_t>(k)]);
          if (c[dim] != d[dim])
            return testing::AssertionFailure()
                   << src << " -> " << dst << ": stage " << h.stage << " hop to " << h.rank
                   << " differs from dest in dimension " << dim;
        }
        at = h.rank;
        first = h.stage + 1;
      }
    }
  return testing::AssertionSuccess();
}

// ROUTE-5 / Wesolowski et al. 2014, Table II: destinations reached in k hops = C(N,k) (d-1)^k.
TEST(MeshPlan, TableII_32x32x32) {
  const int shape[] = {32, 32, 32};
  const auto m = mesh::cartesian(shape);
  const auto plan = make_mesh_plan(m);
  const std::vector<std::int64_t> table_ii = {1, 93, 2883, 29791};
  EXPECT_EQ(convoy::router::hop_histogram(*plan, 0), table_ii);
  EXPECT_EQ(convoy::router::hop_histogram(*plan, 12345), table_ii);
  std::int64_t pow31 = 1;
  for (int k = 0; k <= 3; ++k, pow31 *= 31)
    EXPECT_EQ(table_ii[static_cast<std::size_t>(k)], binomial(3, k) * pow31);  // Eq. 3
}

TEST(MeshPlan, TableII_16x16x16x16) {
  const int shape[] = {16, 16, 16, 16};
  const auto m = mesh::cartesian(shape);
  const auto plan = make_mesh_plan(m);
  const std::vector<std::int64_t> table_ii = {1, 60, 1350, 13500, 50625};
  EXPECT_EQ(convoy::router::hop_histogram(*plan, 0), table_ii);
  EXPECT_EQ(convoy::router::hop_histogram(*plan, 65535), table_ii);
}

// Eq. 3 holds for every dimension order and any source (the count depends only on which
// coordinates differ, not on the order they are fixed in).
TEST(MeshPlan, Eq3ForEveryOrder) {
  const int shape[] = {5, 5, 5};
  const auto m = mesh::cartesian(shape);
  for (const auto& order : all_orders(3)) {
    const auto plan = make_mesh_plan(m, order);
    for (int src : {0, 62, 124}) {
      const auto counts = convoy::router::hop_histogram(*plan, src);
      std::int64_t pow4 = 1;
      for (int k = 0; k <= 3; ++k, pow4 *= 4)
        EXPECT_EQ(counts[static_cast<std::size_t>(k)], binomial(3, k) * pow4);
    }
  }
}

// ROUTE-5: without holes a stage-i hop changes exactly dimension D_i to dest's value;
// the default order is TRAM's "greatest differing dimension first" (Wesolowski et al. 2014, sec.
// III.B).
TEST(MeshPlan, DefaultOrderIsTramIntermediateDestination) {
  const int shape[] = {4, 3, 5};
  const auto m = mesh::cartesian(shape);
  const auto plan = make_mesh_plan(m);
  EXPECT_EQ(plan->n_stages(), 3);
  EXPECT_EQ(plan->stage_name(0), "d2");
  EXPECT_EQ(plan->stage_name(2), "d0");
  for (int j = 0; j < m.n_ranks(); ++j)
    for (int k = 0; k < m.n_ranks(); ++k) {
      const auto h = plan->next_hop(j, k, 0);
      if (j == k) {
        EXPECT_EQ(h.stage, 3);
        continue;
      }
      int i = 2;
      while (m.coords(j)[static_cast<std::size_t>(i)] == m.coords(k)[static_cast<std::size_t>(i)])
        --i;
      std::vector<int> c(m.coords(j).begin(), m.coords(j).end());
      c[static_cast<std::size_t>(i)] = m.coords(k)[static_cast<std::size_t>(i)];
      ASSERT_EQ(h.rank, m.rank_at(c)) << j << " -> " << k;
      ASSERT_EQ(h.stage, 2 - i);
    }
}

TEST(MeshPlan, PeersAreLinePeersWithoutHoles) {
  const int shape[] = {3, 4, 2};
  const auto m = mesh::cartesian(shape);
  const auto plan = make_mesh_plan(m, {1, 0, 2});
  for (int r = 0; r < m.n_ranks(); ++r)
    for (int s = 0; s < 3; ++s) {
      const int d = std::vector<int>{1, 0, 2}[static_cast<std::size_t>(s)];
      auto out = plan->out_peers(r, s);
      std::sort(out.begin(), out.end());
      auto line = m.line_peers(r, d);
      std::sort(line.begin(), line.end());
      EXPECT_EQ(out, line);
      EXPECT_EQ(plan->in_peers(r, s), line);
    }
}

// ROUTE-1..4, ROUTE-7 on all pairs for every dimension order of small full meshes.
TEST(MeshPlan, AllPairsEveryOrderFullMeshes) {
  for (const auto& shape :
       std::vector<std::vector<int>>{{7}, {1}, {3, 4}, {2, 3, 4}, {1, 3, 1, 2}, {2, 2, 2, 2}}) {
    const auto m = mesh::cartesian(shape);
    for (const auto& order : all_orders(m.n_dims())) {
      const auto plan = make_mesh_plan(m, order);
      EXPECT_EQ(plan->max_hops(), m.n_dims());
      EXPECT_TRUE(convoy_test::check_all_pairs(*plan));
    }
  }
}

/// ROUTE-1..4, ROUTE-6, ROUTE-7 for every dimension order of `m`, all pairs.
void check_every_order(const mesh& m) {
  for (const auto& order : all_orders(m.n_dims())) {
    const auto plan = make_mesh_plan(m, order);
    EXPECT_TRUE(convoy_test::check_all_pairs(*plan)) << m.describe();
    EXPECT_TRUE(check_hole_bounds(m, order)) << m.describe();
  }
}

// ROUTE-6 on ragged layouts: nodes of 4,2,3; 3,3,2; 5,1.
TEST(MeshPlan, RaggedNodesEveryOrder) {
  for (const auto& nodes : std::vector<std::vector<int>>{{4, 2, 3}, {3, 3, 2}, {5, 1}, {1, 4}, {2}})
    check_every_order(ragged_nodes(nodes));
}

TEST(MeshPlan, RaggedNodesAndSocketsEveryOrder) {
  const std::vector<std::vector<std::vector<int>>> layouts = {
      {{3, 2}, {1}, {2, 3, 1}},
      {{4, 4}, {4, 1}},
      {{1}, {1, 1, 1}, {2, 2}},
  };
  for (const auto& layout : layouts) check_every_order(ragged_sockets(layout));
}

// The meshes the topology module lays on emulated ragged machines (block and cyclic
// placement, so ranks are not numbered by coordinates), every order.
TEST(MeshPlan, RaggedMeshesFromTopologyModule) {
  namespace topo = convoy::topology;
  for (const auto map : {convoy::base::placement::block, convoy::base::placement::cyclic}) {
    const auto nodes = topo::emulate_machine(9, {4, 2, 3}, "", map);
    const auto m = topo::build_mesh(nodes, convoy::base::mesh_spec::automatic());
    EXPECT_EQ(m.n_holes(), 3);
    check_every_order(m);
    const auto sockets = topo::emulate_machine(12, {5, 3, 4}, "pack:2 core:3", map);
    const auto ms = topo::build_mesh(
        sockets,
        convoy::base::mesh_spec::of_levels(
            {convoy::base::level::node, convoy::base::level::socket, convoy::base::level::core}));
    EXPECT_EQ(ms.n_dims(), 3) << ms.describe();
    check_every_order(ms);
  }
}

// Random holes and a random rank placement (coordinates are a table, not rank arithmetic).
TEST(MeshPlan, RandomHolesEveryOrder) {
  std::mt19937 gen(20261122);
  for (int trial = 0; trial < 36; ++trial) {
    const int n_dims = 2 + trial % 3;
    std::vector<dimension> dims;
    std::int64_t cells = 1;
    for (int d = 0; d < n_dims; ++d) {
      const int size = 1 + static_cast<int>(gen() % (n_dims == 4 ? 3 : 5));
      dims.push_back({"d" + std::to_string(d), size});
      cells *= size;
    }
    std::vector<std::vector<int>> coords;
    for (std::int64_t cell = 0; cell < cells; ++cell) {
      if (gen() % 3 == 0 && !(cell + 1 == cells && coords.empty())) continue;  // a hole
      std::vector<int> c(static_cast<std::size_t>(n_dims));
      std::int64_t rest = cell;
      for (int d = n_dims - 1; d >= 0; --d) {
        c[static_cast<std::size_t>(d)] =
            static_cast<int>(rest % dims[static_cast<std::size_t>(d)].size);
        rest /= dims[static_cast<std::size_t>(d)].size;
      }
      coords.push_back(std::move(c));
    }
    std::shuffle(coords.begin(), coords.end(), gen);
    const mesh m(dims, coords);
    for (const auto& order : all_orders(n_dims)) {
      const auto plan = make_mesh_plan(m, order);
      ASSERT_TRUE(convoy_test::check_all_pairs(*plan)) << "trial " << trial << " " << m.describe();
      ASSERT_TRUE(check_hole_bounds(m, order)) << "trial " << trial;
    }
  }
}

// ROUTE-7: tag sizes without holes are ceil(log256(P / s_{D_i})).
TEST(MeshPlan, TagBytes) {
  const int cube[] = {32, 32, 32};
  const auto plan = make_mesh_plan(mesh::cartesian(cube));
  for (int s = 0; s < 3; ++s) EXPECT_EQ(plan->tag_bytes(s), 2);  // 10 bits
  const int line[] = {1000};
  EXPECT_EQ(make_mesh_plan(mesh::cartesian(line))->tag_bytes(0), 0);
  const int hyper[] = {16, 16, 16, 16};
  const auto p4 = make_mesh_plan(mesh::cartesian(hyper));
  for (int s = 0; s < 4; ++s) EXPECT_EQ(p4->tag_bytes(s), 2);  // 12 bits
  const int flat[] = {16, 16};
  EXPECT_EQ(make_mesh_plan(mesh::cartesian(flat))->tag_bytes(0), 1);  // 4 bits
  const int wide[] = {128, 32, 32};
  const auto w = make_mesh_plan(mesh::cartesian(wide));
  EXPECT_EQ(w->tag_bytes(0), 2);  // 2^17 / 32: 12 bits
  EXPECT_EQ(w->tag_bytes(2), 2);  // 2^17 / 128: 10 bits
  const int tiny[] = {2, 2, 2};
  EXPECT_EQ(make_mesh_plan(mesh::cartesian(tiny))->tag_bytes(1), 1);
}

// Large plans (P = 2^15, 2^16, 2^17): sampled pairs on every hop.
TEST(MeshPlan, SampledPairsLarge) {
  for (const auto& shape :
       std::vector<std::vector<int>>{{32, 32, 32}, {16, 16, 16, 16}, {128, 32, 32}}) {
    const auto m = mesh::cartesian(shape);
    const auto plan = make_mesh_plan(m);
    EXPECT_TRUE(convoy_test::check_sampled_pairs(*plan, 3000, 7));
    const auto rev = make_mesh_plan(m, [&] {
      std::vector<int> o(shape.size());
      std::iota(o.begin(), o.end(), 0);
      return o;
    }());
    EXPECT_TRUE(convoy_test::check_sampled_pairs(*rev, 1000, 8));
  }
}

// A large ragged mesh: 257 nodes of 1..64 ranks (about 2^13 ranks), sampled.
TEST(MeshPlan, SampledPairsLargeRagged) {
  std::vector<int> nodes;
  nodes.reserve(257);
  for (int n = 0; n < 257; ++n) nodes.push_back(1 + (n * 37) % 64);
  const auto m = ragged_nodes(nodes);
  for (const auto& order : all_orders(2)) {
    const auto plan = make_mesh_plan(m, order);
    EXPECT_TRUE(convoy_test::check_sampled_pairs(*plan, 3000, 9));
    for (int r : {0, 100, m.n_ranks() - 1})
      for (int s = 0; s < 2; ++s)
        EXPECT_LE(static_cast<int>(plan->out_peers(r, s).size()),
                  m.dim(order[static_cast<std::size_t>(s)]).size - 1);
  }
}

// ROUTE-12: bad input is a convoy::error naming the problem.
TEST(MeshPlan, BadOrderThrows) {
  const int shape[] = {2, 3, 4};
  const auto m = mesh::cartesian(shape);
  for (const auto& bad :
       std::vector<std::vector<int>>{{0, 0, 1}, {0, 1}, {0, 1, 3}, {-1, 0, 1}, {0, 1, 2, 3}}) {
    try {
      (void)make_mesh_plan(m, bad);
      ADD_FAILURE() << "no error";
    } catch (const convoy::error& e) {
      EXPECT_NE(std::string(e.what()).find("not a permutation"), std::string::npos) << e.what();
    }
  }
  const auto plan = make_mesh_plan(m);
  EXPECT_THROW((void)plan->out_peers(24, 0), convoy::error);
  EXPECT_THROW((void)plan->out_peers(0, 3), convoy::error);
  EXPECT_THROW((void)plan->in_peers(-1, 0), convoy::error);
  EXPECT_THROW((void)plan->stage_name(-1), convoy::error);
}

}  // namespace
