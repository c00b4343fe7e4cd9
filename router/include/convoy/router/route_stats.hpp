#pragma once
/// @file
/// Following routes hop by hop: hop counts and distributions (Wesolowski et al. 2014, Table II, Eq.
/// 3). Set-up and tooling helpers, not for the hot path.
#include <convoy/router/route_plan.hpp>
#include <cstdint>
#include <vector>

namespace convoy::router {

/// Hops taken by an item from `src` to `dst` when it follows plan.next_hop from stage 0;
/// 0 when src == dst. Returns -1 if src or dst is outside the plan or the route breaks
/// router/README.md ROUTE-1 or ROUTE-4 (a stage that does not increase, a rank outside the
/// plan, more than max_hops() hops, delivery elsewhere). peer_index is not checked here.
/// O(max_hops * n_stages), no allocation.
[[nodiscard]] int route_hops(const route_plan& plan, int src, int dst) noexcept;

/// counts[k] = number of destinations (src itself included at k = 0) that an item pushed
/// at `src` reaches in exactly k hops; size max_hops() + 1. Throws convoy::error naming the
/// pair if a route breaks (route_hops == -1) or src is outside the plan. O(P * hops).
[[nodiscard]] std::vector<std::int64_t> hop_histogram(const route_plan& plan, int src);

}  // namespace convoy::router
