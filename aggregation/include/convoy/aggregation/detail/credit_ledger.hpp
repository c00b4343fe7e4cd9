#pragma once
/// @file
/// When a receiver returns credits (aggregation/README.md, AGG-61..AGG-64): the policy of
/// the MPI transport, kept apart from MPI so that it can be tested alone.
///
/// Per in-link the ledger knows two numbers:
/// - owed: receive buffers released by the engine whose credit has not been returned yet;
/// - unseen: receive buffers the sender may still fill without hearing from us — credits
///   it holds, credits on their way to it, and buffers on their way to us. It starts at
///   n_buffers, drops by one per arrival and grows by the credits returned. Always
///   owed + unseen + (arrived or held buffers) = n_buffers.
/// A credit goes back inside the next data buffer to the same peer on the same stage
/// (piggyback) or, once the link is *urgent*, alone in a credit message at the next
/// progress(). A link is urgent when it owes credits and unseen ≤ n_buffers / 4: the
/// sender is out of credits, or about to be. unseen = 0 means the sender holds none and
/// none is coming, so it may be blocked; that state lasts until we return credits,
/// because no buffer can arrive meanwhile, so a blocked sender is never left waiting for
/// a data buffer of ours (AGG-62).
#include <cstdint>
#include <vector>

namespace convoy::aggregation::detail {

class credit_ledger {
 public:
  /// Every link starts with n_buffers unseen and nothing owed.
  void init(int n_links, int n_buffers) {
    n_ = n_buffers;
    low_water_ = n_buffers / 4;
    owed_.assign(static_cast<std::size_t>(n_links), 0);
    unseen_.assign(static_cast<std::size_t>(n_links), n_buffers);
    listed_.assign(static_cast<std::size_t>(n_links), false);
    urgent_.clear();
    urgent_.reserve(static_cast<std::size_t>(n_links));
  }

  /// A buffer of the link arrived.
  void arrived(int link) noexcept {
    --unseen_[static_cast<std::size_t>(link)];
    check(link);
  }
  /// The engine released a buffer of the link: its credit is owed.
  void released(int link) noexcept {
    ++owed_[static_cast<std::size_t>(link)];
    check(link);
  }
  /// Takes up to `max` owed credits to return now (piggyback or credit message); returns
  /// how many were taken.
  int take(int link, int max) noexcept {
    const auto l = static_cast<std::size_t>(link);
    const int k = owed_[l] < max ? owed_[l] : max;
    owed_[l] -= k;
    unseen_[l] += k;
    return k;
  }

  /// Links that became urgent since the last call (a link may be listed while it no
  /// longer owes anything: a piggyback took its credits). Clears the list.
  void take_urgent(std::vector<int>& out) {
    out.clear();
    out.swap(urgent_);
    for (const int l : out) listed_[static_cast<std::size_t>(l)] = false;
  }
  /// Lists the link again (its credit message could not go yet).
  void relist(int link) {
    if (!listed_[static_cast<std::size_t>(link)]) {
      listed_[static_cast<std::size_t>(link)] = true;
      urgent_.push_back(link);
    }
  }

  [[nodiscard]] int owed(int link) const noexcept { return owed_[static_cast<std::size_t>(link)]; }
  [[nodiscard]] int unseen(int link) const noexcept {
    return unseen_[static_cast<std::size_t>(link)];
  }
  [[nodiscard]] bool urgent(int link) const noexcept {
    const auto l = static_cast<std::size_t>(link);
    return owed_[l] > 0 && unseen_[l] <= low_water_;
  }
  [[nodiscard]] int n_buffers() const noexcept { return n_; }

 private:
  void check(int link) {
    if (urgent(link)) relist(link);
  }

  int n_ = 0;
  int low_water_ = 0;
  std::vector<int> owed_, unseen_;
  std::vector<bool> listed_;
  std::vector<int> urgent_;
};

}  // namespace convoy::aggregation::detail
