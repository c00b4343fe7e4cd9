#pragma once
/// @file
/// Per-link counts of a simulated run (tools/sim/README.md "Replaying a measured run"): a
/// transport that passes every call to the timed network's endpoint and counts, per
/// out-link, the buffers posted, their bytes and items, and whether each was full — the
/// counters a measured run's stats document holds per link (CONVOY_STATS).
#include <convoy/aggregation/transport.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace convoy::sim {

/// What one rank sent on one link (rank -> peer on stage), over the run.
struct link_count {
  int rank = 0;
  int stage = 0;
  int peer = 0;
  bool off_node = false;  ///< the peer sits on another node
  std::uint64_t items = 0;
  std::uint64_t bytes = 0;  ///< headers included
  std::uint64_t buffers_full = 0;
  /// Buffers that could have taken another record: flushed at done or closing the stage
  /// (the closing buffer may hold no item).
  std::uint64_t buffers_partial = 0;
};

/// The record sizes a counting transport needs: payload bytes per item and tag bytes per
/// stage (route_plan::tag_bytes).
struct record_sizes {
  std::size_t item_bytes = 8;
  std::vector<int> tag_bytes;
};

/// Wraps `inner`, the transport of `rank`: at open() it appends one link_count per out-link
/// to `sink` and counts every post() into it. A buffer is full when it cannot take another
/// record, bytes + max(record, 8) > capacity: the engine's own test (send_lanes' limit,
/// AGG-20). `node_of` places the ranks. `node_of` and `sink` must outlive the transport;
/// `sink` must have the capacity for every link (open() throws convoy::error otherwise, as
/// a reallocation would move the counters).
[[nodiscard]] std::unique_ptr<aggregation::transport> counting_transport(
    std::unique_ptr<aggregation::transport> inner, int rank, const std::vector<int>& node_of,
    record_sizes sizes, std::vector<link_count>& sink);

}  // namespace convoy::sim
