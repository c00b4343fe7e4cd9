#pragma once
/// @file
/// Dimension-ordered termination counting (Wesolowski et al. 2014, sec. III.D;
/// termination/README.md, TERM-4 and TERM-8): per out-link sequence numbers, a *last* buffer per
/// out-link carrying the link's count, per in-link counts received and expected, stages closed in
/// order, and the cycle (epoch) every buffer is stamped with.
///
/// The protocol knows links by number and stage only; what it needs from the buffers
/// beneath it is the small link_layer interface (the engine; a fake in the unit tests).
#include <convoy/aggregation/transport.hpp>
#include <cstdint>
#include <vector>

namespace convoy::termination {

/// What counting needs from the link layer beneath it.
class link_layer {
 public:
  virtual ~link_layer() = default;
  link_layer() = default;
  link_layer(const link_layer&) = delete;
  link_layer& operator=(const link_layer&) = delete;

  /// Sends out-link `out_link`'s last buffer of this cycle, carrying whatever records wait
  /// for that link, with header seq `count` (the link's buffers this cycle, this one
  /// included) and flag_last. Returns false, sending nothing, when the link has no free
  /// buffer (counting retries on a later close_stages). May throw on a transport failure.
  [[nodiscard]] virtual bool send_last(int out_link, std::uint32_t count) = 0;
  /// Called right before send_last: moves into the link's buffers (and may post, as data
  /// buffers) whatever waits for the link outside them. False when the link has no free
  /// buffer for the rest (counting retries on a later close_stages). By default nothing.
  [[nodiscard]] virtual bool prepare_last(int /*out_link*/) { return true; }
  /// True when every buffer of this cycle that arrived on `in_link` has been processed:
  /// each record forwarded into an out-buffer or pulled.
  [[nodiscard]] virtual bool drained(int in_link) const = 0;
};

class stage_counting {
 public:
  /// `out_stages[k]`: the stage of out-link k (non-decreasing in k); `in_stages[i]`: the
  /// stage of in-link i. Stages are 0..n_stages-1.
  stage_counting(int n_stages, const std::vector<int>& out_stages,
                 const std::vector<int>& in_stages);

  /// A new cycle: the next epoch, all counts zero, no stage closed, still pushing.
  void begin_cycle() noexcept;
  [[nodiscard]] std::uint32_t epoch() const noexcept { return epoch_; }

  /// A data buffer leaves on `out_link`: its header seq (1, 2, ... within the cycle).
  [[nodiscard]] std::uint32_t next_seq(int out_link) noexcept {
    return ++out_[static_cast<std::size_t>(out_link)].seq;
  }

  /// A buffer arrived on `in_link`. Counts it and returns true if it belongs to this cycle.
  /// Returns false — the caller holds it, uncounted, until the next begin — when it carries
  /// another epoch (its sender has begun the next cycle), when this rank is not `active` in
  /// a cycle (DORMANT or COMPLETE), or when the link is already `holding` a buffer of the
  /// next cycle (TERM-8).
  bool arrive(int in_link, const aggregation::buffer_header& h, bool active, bool holding) noexcept;
  /// Right after begin_cycle, for the buffers held on `in_link`, in arrival order: counts
  /// one and returns true if it belongs to the new cycle; false means stop (it and those
  /// behind it stay held).
  bool admit_held(int in_link, const aggregation::buffer_header& h) noexcept;

  /// Every buffer the in-link's sender sent this cycle has arrived (its last one told how
  /// many).
  [[nodiscard]] bool finished(int in_link) const noexcept {
    const in_count& c = in_[static_cast<std::size_t>(in_link)];
    return c.received == c.expected;
  }

  /// Buffers of this cycle received on `in_link`, and the count its last buffer carried
  /// (UINT32_MAX until it came).
  [[nodiscard]] std::uint32_t received(int in_link) const noexcept {
    return in_[static_cast<std::size_t>(in_link)].received;
  }
  [[nodiscard]] std::uint32_t expected(int in_link) const noexcept {
    return in_[static_cast<std::size_t>(in_link)].expected;
  }
  [[nodiscard]] int n_stages() const noexcept { return n_stages_; }

  /// This rank will push no more items this cycle (advance(true)).
  void stop_pushing() noexcept { done_pushing_ = true; }
  [[nodiscard]] bool done_pushing() const noexcept { return done_pushing_; }

  /// Closes stages in order, as far as allowed (TERM-4): stage s closes — a last buffer on
  /// each of its out-links — once this rank is done pushing and every in-link of every
  /// stage < s has finished and been drained. A link without a free buffer is retried at
  /// the next call; the stage counts as closed when all its links are.
  void close_stages(link_layer& links);
  [[nodiscard]] int closed_stages() const noexcept { return closed_stages_; }
  [[nodiscard]] bool closed(int out_link) const noexcept {
    return out_[static_cast<std::size_t>(out_link)].closed;
  }
  /// Every stage closed and every in-link finished: nothing more can arrive this cycle.
  [[nodiscard]] bool everything_received() const noexcept;

 private:
  struct out_count {
    int stage = 0;
    std::uint32_t seq = 0;  // buffers sent this cycle
    bool closed = false;    // the last buffer went out
  };
  struct in_count {
    std::uint32_t received = 0;
    std::uint32_t expected = 0;  // from the last buffer; UINT32_MAX until it came
  };
  [[nodiscard]] bool may_close(int stage, const link_layer& links) const;
  bool close_stage(int stage, link_layer& links);
  void count(int in_link, const aggregation::buffer_header& h) noexcept;

  int n_stages_;
  std::vector<out_count> out_;
  std::vector<in_count> in_;
  std::vector<int> out_base_;                  // first out-link of each stage (+ end)
  std::vector<std::vector<int>> in_of_stage_;  // in-links per stage
  std::uint32_t epoch_ = 0;
  bool done_pushing_ = false;
  int closed_stages_ = 0;
};

}  // namespace convoy::termination
