// bale's tensor schemes as route plans: router/README.md ROUTE-1..4, ROUTE-7..10 and ROUTE-12.
#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/router/route_stats.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "plan_checks.hpp"

namespace {

using convoy::router::make_tensor_plan;

struct xyz {
  int x, y, z;
};
xyz split(int r, int n) { return {r / (n * n), (r / n) % n, r % n}; }

// (P, n) cases: n^2 | P, n^2 not dividing P (a partial last x block), n = 1, n = P.
const std::vector<std::pair<int, int>> cases = {
    {1, 1}, {2, 1}, {2, 2}, {8, 2},  {12, 3}, {16, 4}, {24, 2},   {30, 5},
    {6, 6}, {7, 7}, {7, 1}, {40, 4}, {64, 4}, {96, 4}, {100, 10}, {54, 3}};

// ROUTE-1..4, ROUTE-7: every pair, every order.
TEST(TensorPlan, AllPairsAllOrders) {
  for (const auto& [p, n] : cases) {
    for (int order = 1; order <= 3; ++order) {
      const auto plan = make_tensor_plan(order, p, n);
      EXPECT_EQ(plan->n_stages(), order);
      EXPECT_EQ(plan->max_hops(), order);
      EXPECT_TRUE(convoy_test::check_all_pairs(*plan)) << "P=" << p << " n=" << n;
    }
  }
}

// ROUTE-9: the route is exactly Maley & DeVinney 2019, sec. 4.3.1,
// (x,y,z) -> (x,y,y') -> (x',y',y) -> (x',y',z'), with hops to self skipped.
TEST(TensorPlan, ThreeHopRouteIsMaleyDeVinney) {
  for (const auto& [p, n] : std::vector<std::pair<int, int>>{{64, 4}, {30, 5}, {54, 3}}) {
    const auto plan = make_tensor_plan(3, p, n);
    for (int src = 0; src < p; ++src)
      for (int dst = 0; dst < p; ++dst) {
        const xyz s = split(src, n), d = split(dst, n);
        std::vector<int> expect;
        const int mid1 = s.x * n * n + s.y * n + d.y;
        const int mid2 = d.x * n * n + d.y * n + s.y;
        // A self-send is delivered at once (ROUTE-1); Maley & DeVinney 2019 would loop via (x,y,y).
        if (src != dst)
          for (int r : {mid1, mid2, dst})
            if (r != (expect.empty() ? src : expect.back())) expect.push_back(r);
        std::vector<int> got;
        int at = src, first = 0;
        for (int guard = 0; guard < 4; ++guard) {
          const auto h = plan->next_hop(at, dst, first);
          if (h.stage == 3) break;
          got.push_back(h.rank);
          at = h.rank;
          first = h.stage + 1;
        }
        ASSERT_EQ(got, expect) << src << " -> " << dst;
      }
  }
}

// ROUTE-9: n - 1 local peers; network peers (x', z, y) for every x': P/n^2 - 1 when
// y == z (the rank itself is one of them) and P/n^2 otherwise, when n^2 | P.
TEST(TensorPlan, ThreeHopPeerCounts) {
  for (const auto& [p, n] :
       std::vector<std::pair<int, int>>{{64, 4}, {4096, 16}, {1024, 8}, {16, 4}}) {
    const auto plan = make_tensor_plan(3, p, n);
    EXPECT_EQ(plan->out_peers(0, 1).size(), static_cast<std::size_t>(p / (n * n) - 1));
    for (int r = 0; r < p; r += (p > 100 ? 37 : 1)) {
      const xyz c = split(r, n);
      EXPECT_EQ(plan->out_peers(r, 0).size(), static_cast<std::size_t>(n - 1));
      EXPECT_EQ(plan->out_peers(r, 2).size(), static_cast<std::size_t>(n - 1));
      const int net = p / (n * n) - (c.y == c.z ? 1 : 0);
      EXPECT_EQ(plan->out_peers(r, 1).size(), static_cast<std::size_t>(net)) << r;
      EXPECT_EQ(plan->in_peers(r, 1).size(), static_cast<std::size_t>(net)) << r;
      for (int q : plan->out_peers(r, 1)) {
        const xyz t = split(q, n);
        EXPECT_EQ(t.y, c.z);
        EXPECT_EQ(t.z, c.y);
      }
    }
  }
  // n^2 does not divide P: 30 = 25 + 5, the last x block has only y = 0.
  const auto plan = make_tensor_plan(3, 30, 5);
  EXPECT_EQ(plan->out_peers(0, 1).size(), 1u);  // (1,0,0) only
  EXPECT_EQ(plan->out_peers(1, 1).size(), 1u);  // (0,1,0); (1,1,0) does not exist
  EXPECT_EQ(plan->out_peers(5, 1).size(), 2u);  // (0,0,1) and (1,0,1)
}

// ROUTE-8: order 2 goes to dest's in-group index first, then across the groups.
TEST(TensorPlan, TwoHopLocalThenAcross) {
  const int p = 24, n = 4;
  const auto plan = make_tensor_plan(2, p, n);
  EXPECT_EQ(plan->stage_name(0), "local");
  EXPECT_EQ(plan->stage_name(1), "network");
  const auto h = plan->next_hop(5, 14, 0);  // group 1 index 1 -> group 3 index 2
  EXPECT_EQ(h.stage, 0);
  EXPECT_EQ(h.rank, 6);
  const auto h2 = plan->next_hop(6, 14, 1);
  EXPECT_EQ(h2.stage, 1);
  EXPECT_EQ(h2.rank, 14);
  EXPECT_EQ(plan->out_peers(5, 0), (std::vector<int>{4, 6, 7}));
  EXPECT_EQ(plan->out_peers(5, 1), (std::vector<int>{1, 9, 13, 17, 21}));
}

TEST(TensorPlan, OneHopIsDirect) {
  const auto plan = make_tensor_plan(1, 5, 0);  // n_local is ignored for order 1
  EXPECT_EQ(plan->out_peers(2, 0), (std::vector<int>{0, 1, 3, 4}));
  EXPECT_EQ(plan->in_peers(2, 0), (std::vector<int>{0, 1, 3, 4}));
  EXPECT_EQ(plan->tag_bytes(0), 0);
  const std::vector<std::int64_t> hist = {1, 4};
  EXPECT_EQ(convoy::router::hop_histogram(*plan, 2), hist);
}

// ROUTE-10: tag bytes. Local hops log2(P/n) bits, the network hop 2 log2(n) bits
// (1 byte when n <= 16: Maley & DeVinney's claim), order 2's network hop log2(n) bits.
TEST(TensorPlan, TagBytes) {
  const auto t1 = make_tensor_plan(1, 4096, 16);
  EXPECT_EQ(t1->tag_bytes(0), 0);
  const auto t2 = make_tensor_plan(2, 4096, 16);
  EXPECT_EQ(t2->tag_bytes(0), 1);  // 256 groups
  EXPECT_EQ(t2->tag_bytes(1), 1);
  const auto t3 = make_tensor_plan(3, 4096, 16);
  EXPECT_EQ(t3->tag_bytes(0), 1);  // (x', z'): 16 x 16
  EXPECT_EQ(t3->tag_bytes(1), 1);  // (z, z'): 16 x 16
  EXPECT_EQ(t3->tag_bytes(2), 1);  // (x, z): 16 x 16
  const int big = 1 << 17;
  EXPECT_EQ(make_tensor_plan(1, big, 32)->tag_bytes(0), 0);
  const auto b2 = make_tensor_plan(2, big, 32);
  EXPECT_EQ(b2->tag_bytes(0), 2);  // 4096 groups
  EXPECT_EQ(b2->tag_bytes(1), 1);  // 32 in-group indices
  const auto b3 = make_tensor_plan(3, big, 32);
  EXPECT_EQ(b3->tag_bytes(0), 2);  // 128 x 32
  EXPECT_EQ(b3->tag_bytes(1), 2);  // 32 x 32: 10 bits
  EXPECT_EQ(b3->tag_bytes(2), 2);
  EXPECT_EQ(make_tensor_plan(3, 1 << 12, 4)->tag_bytes(1), 1);
}

// Large P, sampled pairs (tags and peers checked on every hop).
TEST(TensorPlan, SampledPairsLarge) {
  EXPECT_TRUE(convoy_test::check_sampled_pairs(*make_tensor_plan(3, 4096, 16), 4000, 1));
  EXPECT_TRUE(convoy_test::check_sampled_pairs(*make_tensor_plan(2, 4096, 16), 4000, 2));
  EXPECT_TRUE(convoy_test::check_sampled_pairs(*make_tensor_plan(3, 1 << 17, 32), 4000, 3));
  EXPECT_TRUE(convoy_test::check_sampled_pairs(*make_tensor_plan(3, 1 << 17, 64), 2000, 4));
  EXPECT_TRUE(convoy_test::check_sampled_pairs(*make_tensor_plan(3, 3 * 1000, 30), 2000, 5));
  EXPECT_TRUE(convoy_test::check_sampled_pairs(*make_tensor_plan(1, 1 << 17, 1), 20, 6));
  const auto p3 = make_tensor_plan(3, 4096, 16);
  const std::vector<std::int64_t> hist = {1, 30, 465, 3600};
  EXPECT_EQ(convoy::router::hop_histogram(*p3, 0), hist);
}

// ROUTE-12: bad arguments are a convoy::error naming the problem.
TEST(TensorPlan, BadArgumentsThrow) {
  const auto message = [](int order, int p, int n) {
    try {
      (void)make_tensor_plan(order, p, n);
    } catch (const convoy::error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(0, 8, 2).find("order 0"), std::string::npos);
  EXPECT_NE(message(4, 8, 2).find("order 4"), std::string::npos);
  EXPECT_NE(message(1, 0, 1).find("n_ranks 0"), std::string::npos);
  EXPECT_NE(message(2, 10, 3).find("n_local 3"), std::string::npos);
  EXPECT_NE(message(3, 10, 0).find("n_local 0"), std::string::npos);
  EXPECT_NE(message(3, 10, 4).find("divide"), std::string::npos);
  const auto plan = make_tensor_plan(3, 16, 2);
  EXPECT_THROW((void)plan->out_peers(16, 0), convoy::error);
  EXPECT_THROW((void)plan->out_peers(0, 3), convoy::error);
  EXPECT_THROW((void)plan->in_peers(0, -1), convoy::error);
}

}  // namespace
