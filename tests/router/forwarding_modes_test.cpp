// Canonical tags and the broadcast tree (router/README.md ROUTE-25, ROUTE-26), checked
// exhaustively on small plans: full meshes in several stage orders, ragged nodes, meshes
// with random holes in random stage orders, tensor orders 1 to 3.
#include <gtest/gtest.h>

#include <algorithm>
#include <convoy/router/forwarding.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/topology/mesh.hpp>
#include <convoy_test/plans.hpp>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using convoy::router::forwarder;
using convoy::router::next_step;
using convoy::router::route_plan;
using convoy::router::step;
using convoy_test::mesh_plan;
using convoy_test::plan_ptr;
using convoy_test::ragged_plan;

// A mesh of `shape` where each cell is a rank with probability `keep` (at least one rank),
// ranks numbered in random order, stages in a random order.
plan_ptr holey_plan(const std::vector<int>& shape, double keep, std::mt19937_64& rng) {
  std::vector<std::vector<int>> cells;
  int n_cells = 1;
  for (int d : shape) n_cells *= d;
  for (int i = 0; i < n_cells; ++i) {
    if (std::uniform_real_distribution<double>(0, 1)(rng) >= keep) continue;
    std::vector<int> c(shape.size());
    for (int d = static_cast<int>(shape.size()) - 1, x = i; d >= 0; --d) {
      c[static_cast<std::size_t>(d)] = x % shape[static_cast<std::size_t>(d)];
      x /= shape[static_cast<std::size_t>(d)];
    }
    cells.push_back(c);
  }
  if (cells.empty()) cells.emplace_back(shape.size(), 0);
  std::shuffle(cells.begin(), cells.end(), rng);
  std::vector<convoy::topology::dimension> dims;
  for (std::size_t d = 0; d < shape.size(); ++d)
    dims.push_back({"d" + std::to_string(d), shape[d]});
  std::vector<int> order(shape.size());
  for (std::size_t d = 0; d < order.size(); ++d) order[d] = static_cast<int>(d);
  std::shuffle(order.begin(), order.end(), rng);
  return convoy::router::make_mesh_plan(convoy::topology::mesh(dims, cells), order);
}

// Mesh plans: full (several orders), ragged, and 30 with random holes.
std::vector<plan_ptr> mesh_plans() {
  std::vector<plan_ptr> plans = {mesh_plan({1}),
                                 mesh_plan({7}),
                                 mesh_plan({4, 4}),
                                 mesh_plan({2, 3, 2}, {1, 0, 2}),
                                 mesh_plan({3, 3, 3}),
                                 mesh_plan({4, 2}, {0, 1}),
                                 mesh_plan({4, 2}),
                                 ragged_plan({4, 2, 3}),
                                 ragged_plan({4, 2, 3}, {0, 1}),
                                 ragged_plan({5, 1}),
                                 ragged_plan({3, 2}),
                                 ragged_plan({1, 6, 2, 5})};
  std::mt19937_64 rng(26);
  for (int k = 0; k < 30; ++k) {
    const std::vector<int> shape = k % 3 == 0   ? std::vector<int>{4, 3, 3}
                                   : k % 3 == 1 ? std::vector<int>{5, 4}
                                                : std::vector<int>{3, 2, 2, 3};
    plans.push_back(holey_plan(shape, 0.4 + 0.1 * (k % 6), rng));
  }
  return plans;
}

std::vector<plan_ptr> tensor_plans(int order) {
  if (order == 1) return {convoy::router::make_tensor_plan(1, 6, 1)};
  if (order == 2)
    return {convoy::router::make_tensor_plan(2, 8, 4), convoy::router::make_tensor_plan(2, 4, 4),
            convoy::router::make_tensor_plan(2, 12, 3)};
  return {convoy::router::make_tensor_plan(3, 12, 2), convoy::router::make_tensor_plan(3, 18, 3),
          convoy::router::make_tensor_plan(3, 16, 4)};
}

int in_link_of(const forwarder& at, int stage, int sender) {
  const auto& in = at.in_links();
  for (std::size_t i = 0; i < in.size(); ++i)
    if (in[i].stage == stage && in[i].peer == sender) return static_cast<int>(i);
  return -1;
}

// Walks every pair through the plan's forwarders and records the tag of every hop, keyed by
// (sending rank, out-link, destination). Returns false (with a gtest failure) if a walk
// goes astray; `distinct` counts keys seen with more than one tag.
struct walk_result {
  bool ok = true;
  long hops = 0;
  long distinct = 0;
};
walk_result walk_all(const plan_ptr& plan, bool canonical) {
  std::vector<forwarder> f;
  for (int r = 0; r < plan->n_ranks(); ++r) {
    f.emplace_back(plan, r);
    f.back().set_canonical_source(canonical);
  }
  std::map<std::tuple<int, int, int>, std::uint64_t> tag_of;
  walk_result w;
  const int p = plan->n_ranks();
  for (int src = 0; src < p; ++src)
    for (int dst = 0; dst < p; ++dst) {
      int at = src, hops = 0;
      step s = f[static_cast<std::size_t>(src)].route(src, dst, 0);
      while (!s.deliver()) {
        const auto& link =
            f[static_cast<std::size_t>(at)].out_links()[static_cast<std::size_t>(s.out_link)];
        const auto [it, fresh] = tag_of.try_emplace({at, s.out_link, dst}, s.tag);
        if (!fresh && it->second != s.tag) ++w.distinct;
        const int tb = plan->tag_bytes(link.stage);
        if (tb < 8 && (s.tag >> (8 * tb)) != 0) {
          ADD_FAILURE() << plan->name() << ": tag wider than its stage";
          w.ok = false;
        }
        const int in = in_link_of(f[static_cast<std::size_t>(link.peer)], link.stage, at);
        if (in < 0 || ++hops > plan->max_hops()) {
          ADD_FAILURE() << plan->name() << ": walk " << src << "->" << dst << " astray";
          return {false, w.hops, w.distinct};
        }
        at = link.peer;
        s = f[static_cast<std::size_t>(at)].next(in, s.tag);
        ++w.hops;
        if (s.dst != dst) {
          ADD_FAILURE() << plan->name() << ": " << src << "->" << dst << " decodes to dst " << s.dst
                        << " at " << at;
          w.ok = false;
        }
      }
      if (at != dst) {
        ADD_FAILURE() << plan->name() << ": " << src << "->" << dst << " ends at " << at;
        w.ok = false;
      }
    }
  return w;
}

// ROUTE-25: with canonical tags every pair still walks to its destination (the same hops:
// route() ignores the source), every tag fits its stage and decodes to the destination,
// and on each out-link of each rank a destination has one tag whatever the source. Without
// the mode the last does not hold on meshes whose tags carry source coordinates.
TEST(Forwarding, CanonicalTagsDependOnlyOnTheDestination) {
  long hops = 0, plain_distinct = 0;
  std::vector<plan_ptr> plans = mesh_plans();
  for (int order = 1; order <= 3; ++order)
    for (const auto& t : tensor_plans(order)) plans.push_back(t);
  for (const auto& plan : plans) {
    const walk_result c = walk_all(plan, true);
    EXPECT_TRUE(c.ok) << plan->name();
    EXPECT_EQ(c.distinct, 0) << plan->name();
    hops += c.hops;
    plain_distinct += walk_all(plan, false).distinct;
  }
  EXPECT_GT(hops, 20000);
  EXPECT_GT(plain_distinct, 0) << "the default mode keeps sources: tags differ";
}

// ROUTE-25 with ROUTE-24: step tables learn the canonical steps, and switching the mode
// forgets what they learned.
TEST(Forwarding, CanonicalModeResetsStepTables) {
  const plan_ptr plan = mesh_plan({3, 3, 3});
  forwarder f(plan, 13);
  for (std::size_t i = 0; i < f.in_links().size(); ++i)
    ASSERT_TRUE(f.enable_step_table(static_cast<int>(i)));
  for (bool canonical : {false, true, false}) {
    f.set_canonical_source(canonical);
    EXPECT_EQ(f.canonical_source(), canonical);
    for (std::size_t i = 0; i < f.in_links().size(); ++i)
      for (std::uint64_t tag = 0; tag < 9; ++tag) {
        const step want = f.next(static_cast<int>(i), tag);
        const next_step got = f.step_of(static_cast<int>(i), tag);
        if (want.deliver()) {
          EXPECT_EQ(got.out_link, next_step::deliver);
        } else {
          EXPECT_EQ(got.out_link, want.out_link);
          EXPECT_EQ(got.word, want.tag) << "canonical " << canonical;
        }
      }
  }
}

// The broadcast rule from `root`: a copy that arrived on stage s (the root's own: s = -1)
// is delivered and copied once onto every out-peer of every stage > s; the hop y -> q on
// stage s' carries encode(s', y, q, root, q). Returns copies per rank; adds a failure for
// every tag that does not decode to (root, q) and every tree hop that is not the route's.
std::vector<int> broadcast_from(const route_plan& p, int root, bool check_route) {
  const int n = p.n_ranks(), stages = p.n_stages();
  std::vector<int> got(static_cast<std::size_t>(n), 0);
  std::deque<std::pair<int, int>> queue{{root, -1}};
  long copies = 0;
  while (!queue.empty() && copies <= 4L * n * n) {
    const auto [at, s] = queue.front();
    queue.pop_front();
    ++got[static_cast<std::size_t>(at)];
    for (int s2 = s + 1; s2 < stages; ++s2)
      for (int to : p.out_peers(at, s2)) {
        ++copies;
        const std::uint64_t tag = p.encode(s2, at, to, root, to);
        int src = -1, dst = -1;
        p.decode(s2, at, to, tag, src, dst);
        if (check_route) {
          EXPECT_TRUE(p.tag_bytes(s2) >= 8 || (tag >> (8 * p.tag_bytes(s2))) == 0);
          EXPECT_EQ(src, root) << p.name() << " hop " << at << "->" << to;
          EXPECT_EQ(dst, to) << p.name() << " hop " << at << "->" << to;
          // The tree's hop into `to` is the last hop of route(root -> to).
          int r = root, first = 0, from = -1, stage = -1;
          for (auto h = p.next_hop(r, to, first); h.stage < stages; h = p.next_hop(r, to, first)) {
            from = r;
            stage = h.stage;
            r = h.rank;
            first = h.stage + 1;
          }
          EXPECT_EQ(from, at) << p.name() << " root " << root << " to " << to;
          EXPECT_EQ(stage, s2) << p.name() << " root " << root << " to " << to;
        }
        queue.emplace_back(to, s2);
      }
  }
  return got;
}

// ROUTE-26: on every mesh (full, ragged, random holes, any stage order) and tensor orders 1
// and 2, the broadcast rule from every root reaches every rank exactly once along the routes
// from the root, and every hop's tag decodes to (root, receiver). Tensor order 3 moves along
// the local dimension on two stages: the rule delivers duplicates there.
TEST(Forwarding, BroadcastTreeCoversEveryRankOnce) {
  std::vector<plan_ptr> plans = mesh_plans();
  for (int order = 1; order <= 2; ++order)
    for (const auto& t : tensor_plans(order)) plans.push_back(t);
  long roots = 0;
  for (const auto& plan : plans)
    for (int root = 0; root < plan->n_ranks(); ++root) {
      ++roots;
      if (root == 0) {
        EXPECT_TRUE(plan->broadcast_tree()) << plan->name();
      }
      const auto got = broadcast_from(*plan, root, true);
      for (int r = 0; r < plan->n_ranks(); ++r)
        ASSERT_EQ(got[static_cast<std::size_t>(r)], 1)
            << plan->name() << " root " << root << " rank " << r;
    }
  EXPECT_GT(roots, 500);
  long duplicates = 0;
  for (const auto& plan : tensor_plans(3)) {
    EXPECT_FALSE(plan->broadcast_tree()) << plan->name();
    for (int root = 0; root < plan->n_ranks(); ++root)
      for (int c : broadcast_from(*plan, root, false)) duplicates += c > 1;
  }
  EXPECT_GT(duplicates, 0) << "tensor order 3 is expected to duplicate";
}

}  // namespace
