#pragma once
/// @file
/// The buffer-memory model shared by the router, the engine and the tools
/// (Wesolowski et al. 2014, sec. V.A, Maley & DeVinney 2019, sec. 4.3: memory grows with a rank's
/// peers, not with P).
#include <convoy/router/route_plan.hpp>
#include <cstddef>

namespace convoy::router {

/// Bytes of link buffers a rank holds at most under `plan`:
///   sum over stages s of (|out_peers(rank, s)| + |in_peers(rank, s)|) * n_buffers *
///   buffer_bytes,
/// i.e. n_buffers send buffers per outgoing link and n_buffers receive buffers per incoming
/// link (router/README.md ROUTE-11). Not collective; O(peers) time and memory.
/// Throws convoy::error on a rank outside the plan, buffer_bytes == 0 or n_buffers < 1.
[[nodiscard]] std::size_t link_buffer_bytes(const route_plan& plan, int rank,
                                            std::size_t buffer_bytes, int n_buffers);

/// The link count the formula above multiplies: sum over stages of |out_peers| + |in_peers|.
[[nodiscard]] std::size_t link_count(const route_plan& plan, int rank);

}  // namespace convoy::router
