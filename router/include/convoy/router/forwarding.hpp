#pragma once
/// @file
/// The forwarding step of one rank over a route plan (router/README.md, ROUTE-20..23): the
/// numbering of its links across stages, the first hop of an item pushed here, and the next
/// step of a record that arrived on an in-link — decode its tag, pick the next hop, encode
/// the tag it carries there (Wesolowski et al. 2014, sec. III.B: one hop at a time, stages in
/// order).
#include <convoy/router/route_plan.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
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

/// What happens to a record that arrived on one in-link with one tag (ROUTE-24): forwarded
/// on out-link `out_link` carrying tag `word`, or delivered here (`out_link` == deliver) from
/// source `word`. `unknown`: not looked up yet.
struct next_step {
  static constexpr std::int32_t deliver = -1;
  static constexpr std::int32_t unknown = -2;
  std::int32_t out_link = unknown;
  std::uint32_t word = 0;
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
    if (!canonical_) return route(src, dst, l.stage + 1);
    step s = route(rank_, dst, l.stage + 1);  // ROUTE-25: the tag names this rank as source
    s.src = src;
    return s;
  }
  /// Canonical tags (ROUTE-25): when on, next() encodes every forwarded hop's tag with this
  /// rank as the source, so that on each out-link the tag is a function of the destination
  /// alone and records for one destination carry equal tags whatever their source (what a
  /// combining engine compares). The source decoded downstream is then the rank of the
  /// previous hop, not the item's. Forgets the steps the step tables learned. Off by
  /// default.
  void set_canonical_source(bool on);
  [[nodiscard]] bool canonical_source() const noexcept { return canonical_; }
  /// If every record of `in_link` is for this rank and comes from one source (the stage
  /// carries no tag and the link's ends alone name both), that source; else -1 (ROUTE-23).
  [[nodiscard]] int single_source(int in_link) const noexcept;

  /// First hops of every destination (ROUTE-22), or an empty table when the plan has more
  /// than `max_ranks` ranks or some first hop's tag needs more than 32 bits.
  [[nodiscard]] std::vector<first_hop> first_hop_table(int max_ranks) const;

  /// Tags of at most this many bytes get a step table per in-link (ROUTE-24).
  static constexpr int step_table_tag_bytes = 1;
  /// Gives in-link `in_link` a step table if its stage carries at most
  /// step_table_tag_bytes of tag; returns whether it has one. The table maps tag ->
  /// next_step and is filled on the first sight of each tag (a record with a tag never seen
  /// costs one next(); every later one a load). Only the tags that arrive take room: at
  /// most 256 entries of 8 bytes per in-link (step_table_max_bytes()).
  bool enable_step_table(int in_link);
  /// Whether the in-link has a step table (without one: next() per record).
  [[nodiscard]] bool has_step_table(int in_link) const noexcept {
    return static_cast<std::size_t>(in_link) < steps_.size() &&
           steps_[static_cast<std::size_t>(in_link)].enabled;
  }
  /// The step of a record with `tag` on `in_link` (which has a step table): a load, or on
  /// the first sight of the tag, next() and a new entry. A step whose next tag does not fit
  /// 32 bits is not cached: the result is then `unknown` and the caller takes next().
  [[nodiscard]] next_step step_of(int in_link, std::uint64_t tag) {
    const auto& t = steps_[static_cast<std::size_t>(in_link)].entries;
    if (tag < t.size() && t[tag].out_link != next_step::unknown) [[likely]]
      return t[tag];
    return learn(in_link, tag);
  }
  /// The entries of the in-link's step table filled so far, indexed by tag (`unknown`
  /// where not yet seen); valid until the next step_of on that link.
  [[nodiscard]] std::span<const next_step> step_entries(int in_link) const noexcept {
    return steps_[static_cast<std::size_t>(in_link)].entries;
  }
  /// Bytes the step tables hold now / at most.
  [[nodiscard]] std::size_t step_table_bytes() const noexcept;
  [[nodiscard]] std::size_t step_table_max_bytes() const noexcept;

 private:
  std::shared_ptr<const route_plan> plan_;
  int rank_;
  int n_stages_;
  int max_tag_bytes_ = 0;
  bool canonical_ = false;
  std::vector<link_end> out_, in_;
  std::vector<int> out_base_;  // first out-link of each stage; n_stages + 1 entries
  std::vector<int> tag_bytes_;
  struct step_table_of_link {
    bool enabled = false;
    std::vector<next_step> entries;  // indexed by tag; grows to the largest tag seen
  };
  std::vector<step_table_of_link> steps_;  // per in-link once a table is enabled, else empty
  next_step learn(int in_link, std::uint64_t tag);
};

}  // namespace convoy::router
