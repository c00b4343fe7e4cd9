#pragma once
// Checks of the plan-independent invariants of router/README.md (ROUTE-1..4, 7), shared by the
// router tests. Each check returns a gtest AssertionResult naming the first violation.
#include <gtest/gtest.h>

#include <algorithm>
#include <convoy/router/route_plan.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace convoy_test {

/// Every out/in peer list of every rank and stage (small plans only: O(P * peers)).
class peer_tables {
 public:
  explicit peer_tables(const convoy::router::route_plan& plan) : plan_(plan) {
    const int p = plan.n_ranks();
    const int s = plan.n_stages();
    out_.resize(static_cast<std::size_t>(p) * static_cast<std::size_t>(s));
    for (int r = 0; r < p; ++r)
      for (int st = 0; st < s; ++st) out_[at(r, st)] = plan.out_peers(r, st);
  }
  [[nodiscard]] const std::vector<int>& out(int r, int stage) const { return out_[at(r, stage)]; }

  /// ROUTE-2 and ROUTE-3: no self, no duplicates; in_peers(r, s) = {q : r in out(q, s)}, sorted.
  [[nodiscard]] testing::AssertionResult check_lists() const {
    const int p = plan_.n_ranks();
    for (int st = 0; st < plan_.n_stages(); ++st) {
      std::vector<std::vector<int>> expect_in(static_cast<std::size_t>(p));
      for (int q = 0; q < p; ++q) {
        auto v = out(q, st);
        std::sort(v.begin(), v.end());
        if (std::adjacent_find(v.begin(), v.end()) != v.end())
          return testing::AssertionFailure()
                 << "out_peers(" << q << "," << st << ") has duplicates";
        for (int r : v) {
          if (r == q)
            return testing::AssertionFailure() << "out_peers(" << q << "," << st << ") has itself";
          if (r < 0 || r >= p)
            return testing::AssertionFailure() << "out_peers(" << q << "," << st << ") has " << r;
          expect_in[static_cast<std::size_t>(r)].push_back(q);
        }
      }
      for (int r = 0; r < p; ++r) {
        const auto in = plan_.in_peers(r, st);
        if (in != expect_in[static_cast<std::size_t>(r)])
          return testing::AssertionFailure()
                 << plan_.name() << ": in_peers(" << r << "," << st
                 << ") disagrees with out_peers (" << in.size() << " vs "
                 << expect_in[static_cast<std::size_t>(r)].size() << " ranks)";
      }
    }
    return testing::AssertionSuccess();
  }

 private:
  std::size_t at(int r, int stage) const {
    return static_cast<std::size_t>(r) * static_cast<std::size_t>(plan_.n_stages()) +
           static_cast<std::size_t>(stage);
  }
  const convoy::router::route_plan& plan_;
  std::vector<std::vector<int>> out_;
};

/// Follows the route src -> dst and checks ROUTE-1, ROUTE-2, ROUTE-4 and ROUTE-7 on every hop:
/// stages strictly increase, each hop is out_peers(at, stage)[peer_index], the tag fits in
/// tag_bytes(stage) and decodes to (src, dst), delivery within max_hops. `tables` may be
/// null (then out_peers is asked per hop). On success `hops` holds the hop count.
inline testing::AssertionResult check_route(const convoy::router::route_plan& plan,
                                            const peer_tables* tables, int src, int dst,
                                            int& hops) {
  int at = src;
  int first = 0;
  hops = 0;
  const auto fail = [&]() {
    return testing::AssertionFailure() << plan.name() << ": route " << src << " -> " << dst
                                       << " at " << at << " after " << hops << " hops: ";
  };
  for (;;) {
    const convoy::router::hop h = plan.next_hop(at, dst, first);
    if (h.stage == plan.n_stages()) {
      if (at != dst) return fail() << "delivered at the wrong rank";
      if (h.rank != at || h.peer_index != 0) return fail() << "deliver hop is not {S, 0, at}";
      return testing::AssertionSuccess();
    }
    if (at == dst) return fail() << "at the destination but not delivered";
    if (h.stage < first || h.stage > plan.n_stages())
      return fail() << "stage " << h.stage << " after first_stage " << first;
    if (++hops > plan.max_hops()) return fail() << "more than max_hops " << plan.max_hops();
    std::vector<int> fetched;
    const std::vector<int>* peers = nullptr;
    if (tables) {
      peers = &tables->out(at, h.stage);
    } else {
      fetched = plan.out_peers(at, h.stage);
      peers = &fetched;
    }
    if (h.peer_index < 0 || h.peer_index >= static_cast<int>(peers->size()) ||
        (*peers)[static_cast<std::size_t>(h.peer_index)] != h.rank)
      return fail() << "hop to " << h.rank << " (stage " << h.stage << ") is not out_peers["
                    << h.peer_index << "] of " << peers->size();
    const int bytes = plan.tag_bytes(h.stage);
    if (bytes < 0 || bytes > 8) return fail() << "tag_bytes " << bytes;
    const std::uint64_t tag = plan.encode(h.stage, at, h.rank, src, dst);
    if (bytes < 8 && tag >= (std::uint64_t{1} << (8 * bytes)))
      return fail() << "tag " << tag << " does not fit in " << bytes << " bytes";
    int s2 = -1, d2 = -1;
    plan.decode(h.stage, at, h.rank, tag, s2, d2);
    if (s2 != src || d2 != dst)
      return fail() << "tag of stage " << h.stage << " decodes to " << s2 << " -> " << d2;
    at = h.rank;
    first = h.stage + 1;
  }
}

/// All pairs (small plans) with full peer tables and in/out consistency.
inline testing::AssertionResult check_all_pairs(const convoy::router::route_plan& plan) {
  const peer_tables tables(plan);
  if (auto r = tables.check_lists(); !r) return r;
  for (int src = 0; src < plan.n_ranks(); ++src)
    for (int dst = 0; dst < plan.n_ranks(); ++dst) {
      int hops = 0;
      if (auto r = check_route(plan, &tables, src, dst, hops); !r) return r;
    }
  return testing::AssertionSuccess();
}

/// `n_pairs` random pairs (seeded) on a large plan, peers asked per hop.
inline testing::AssertionResult check_sampled_pairs(const convoy::router::route_plan& plan,
                                                    int n_pairs, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pick(0, plan.n_ranks() - 1);
  for (int i = 0; i < n_pairs; ++i) {
    const int src = pick(gen), dst = pick(gen);
    int hops = 0;
    if (auto r = check_route(plan, nullptr, src, dst, hops); !r) return r;
  }
  return testing::AssertionSuccess();
}

}  // namespace convoy_test
