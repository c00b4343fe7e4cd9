#pragma once
/// @file
/// The forwarding step of one rank over a route plan (router/README.md, ROUTE-20..23): the
/// numbering of its links across stages, the first hop of an item pushed here, and the next
/// step of a record that arrived on an in-link — decode its tag, pick the next hop, encode
/// the tag it carries there (TRAM sec. III.B: one hop at a time, stages in order).
#include <convoy/router/route_plan.hpp>
#include <cstdint>
#include <memory>
#include <vector>

namespace convoy::router {

/// One link of a rank: its stage and the rank at the other end.
struct link_end {
  int stage = 0;
  int peer = 0;
};

/// Where an item goes from this rank.
struct step {
  int out_link = -1;      ///< the out-link to take; -1: the item is for this rank
  std::uint64_t tag = 0;  ///< the tag it carries on that hop
  int src = -1;           ///< the item's source
  int dst = -1;           ///< the item's destination
  [[nodiscard]] bool deliver() const noexcept { return out_link < 0; }
};

/// First hop of an item pushed here for one destination (ROUTE-22). The entry of this rank
/// itself has out_link == n_out_links() and tag 0.
struct first_hop {
  std::uint32_t out_link;
  std::uint32_t tag;
};

class forwarder {
 public:
  /// Throws convoy::error if `plan` is null or `rank` is outside it.
  forwarder(std::shared_ptr<const route_plan> plan, int rank);

  [[nodiscard]] const route_plan& plan() const noexcept { return *plan_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int n_stages() const noexcept { return n_stages_; }
  /// Out-links numbered across stages: stage 0's out_peers in their order, then stage 1's,
  /// and so on (ROUTE-20). The engine's lane k fills toward out-link k.
  [[nodiscard]] const std::vector<link_end>& out_links() const noexcept { return out_; }
  /// In-links numbered likewise, each stage's in_peers in ascending order.
  [[nodiscard]] const std::vector<link_end>& in_links() const noexcept { return in_; }
  [[nodiscard]] int n_out_links() const noexcept { return static_cast<int>(out_.size()); }
  [[nodiscard]] int first_out_link(int stage) const noexcept {
    return out_base_[static_cast<std::size_t>(stage)];
  }
  [[nodiscard]] int tag_bytes(int stage) const noexcept {
    return tag_bytes_[static_cast<std::size_t>(stage)];
  }
  [[nodiscard]] int max_tag_bytes() const noexcept { return max_tag_bytes_; }

  /// Route of an item now at this rank, from `src` to `dst`, that may use only stages
  /// >= `first_stage` (0 for an item pushed here). Hot path of plans without tables:
  /// next_hop and encode, no allocation.
  [[nodiscard]] step route(int src, int dst, int first_stage) const noexcept {
    const hop h = plan_->next_hop(rank_, dst, first_stage);
    if (h.stage >= n_stages_) return {-1, 0, src, dst};
    return {out_base_[static_cast<std::size_t>(h.stage)] + h.peer_index,
            plan_->encode(h.stage, rank_, h.rank, src, dst), src, dst};
  }
  /// A record that arrived on `in_link` with `tag` (ROUTE-21): its source and destination,
  /// recovered from the tag and the link's two ends, and its next hop unless it is for
  /// this rank (always so on the last stage).
  [[nodiscard]] step next(int in_link, std::uint64_t tag) const noexcept {
    const link_end& l = in_[static_cast<std::size_t>(in_link)];
    int src = -1, dst = -1;
    plan_->decode(l.stage, l.peer, rank_, tag, src, dst);
    // ROUTE-1: routes climb in stage, so the last stage only delivers.
    if (l.stage == n_stages_ - 1 || dst == rank_) return {-1, 0, src, dst};
    return route(src, dst, l.stage + 1);
  }
  /// If every record of `in_link` is for this rank and comes from one source (the stage
  /// carries no tag and the link's ends alone name both), that source; else -1 (ROUTE-23).
  [[nodiscard]] int single_source(int in_link) const noexcept;

  /// First hops of every destination (ROUTE-22), or an empty table when the plan has more
  /// than `max_ranks` ranks or some first hop's tag needs more than 32 bits.
  [[nodiscard]] std::vector<first_hop> first_hop_table(int max_ranks) const;

 private:
  std::shared_ptr<const route_plan> plan_;
  int rank_;
  int n_stages_;
  int max_tag_bytes_ = 0;
  std::vector<link_end> out_, in_;
  std::vector<int> out_base_;  // first out-link of each stage; n_stages + 1 entries
  std::vector<int> tag_bytes_;
};

}  // namespace convoy::router
