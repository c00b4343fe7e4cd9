#pragma once
/// @file
/// What the typed conveyors (conveyor<T>, combining_conveyor<K, V, Op>, broadcaster<T>)
/// share over their untyped core: the calls that take no item (advance, flush, reset), the
/// handler-style advance, the accessors, and the one form of a failed call's exception.
#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy/termination/engine.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace convoy::detail {

/// What the typed batches of pull_batch share (conveyor.hpp's delivery_batch<T>,
/// combining_conveyor's batch): the untyped batch and its size.
class batch_view {
 public:
  batch_view() = default;
  explicit batch_view(const termination::item_batch& b) noexcept : b_(b) {}
  [[nodiscard]] std::size_t size() const noexcept { return b_.count; }
  [[nodiscard]] bool empty() const noexcept { return b_.count == 0; }
  /// The untyped batch (payload addresses, stride, sources).
  [[nodiscard]] const termination::item_batch& untyped() const noexcept { return b_; }

 protected:
  termination::item_batch b_;
};

/// CRTP base: `Derived` has pull() returning an optional of its delivery and a static
/// `pass(handler, delivery)` that calls the handler with the delivery's parts.
template <class Derived>
class typed_conveyor {
 public:
  /// True while the conveyor is not complete (the loop condition of Maley & DeVinney 2019
  /// Figure 3). Throws convoy::error on misuse or transport failure.
  [[nodiscard]] bool advance(bool done) { return advance_status(done) != termination::done; }
  /// Handler style: advances, then passes every delivered item to the handler (Derived's
  /// pass says with what).
  template <class F>
  [[nodiscard]] bool advance(bool done, F&& handler) {
    const bool more = advance(done);
    while (auto d = static_cast<Derived&>(*this).pull()) Derived::pass(handler, *d);
    return more;
  }

  /// Sends every partly filled buffer now. Throws convoy::error unless WORKING/ENDGAME.
  void flush() { check(core_.flush(), "flush"); }
  /// COMPLETE -> DORMANT. Throws convoy::error in another state (DORMANT is a no-op).
  void reset() { check(core_.reset(), "reset"); }

  [[nodiscard]] termination::state current_state() const noexcept { return core_.current_state(); }
  [[nodiscard]] int rank() const noexcept { return core_.rank(); }
  [[nodiscard]] int n_ranks() const noexcept { return core_.n_ranks(); }
  /// Counters (termination/README.md, TERM-16; a combining conveyor's `combined` counts
  /// the updates folded into another on this rank).
  [[nodiscard]] termination::engine_stats stats(bool cumulative = false) const {
    return core_.stats(cumulative);
  }
  [[nodiscard]] std::size_t memory_bytes() const noexcept { return core_.memory_bytes(); }
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept { return core_.max_memory_bytes(); }
  /// The untyped core (runtime item sizes, elastic items, codes instead of exceptions).
  [[nodiscard]] untyped_conveyor& core() noexcept { return core_; }

 protected:
  /// `name` begins every exception's message; `args` build the untyped core.
  template <class... Args>
  explicit typed_conveyor(const char* name, Args&&... args)
      : name_(name), core_(std::forward<Args>(args)...) {}

  /// The core's push of an item of N bytes: true if accepted, false if the path is full.
  /// Throws convoy::error on misuse.
  template <std::size_t N>
  [[nodiscard]] bool push_item(const void* item, int rank) {
    const int rc = core_.template push<N>(item, rank);
    if (rc < 0) [[unlikely]]
      check(rc, "push to rank " + std::to_string(rank));
    return rc > 0;
  }
  /// The core's pull: true with `v` set if an item was delivered. Throws convoy::error on
  /// misuse.
  [[nodiscard]] bool pull_item(termination::item_view& v) {
    const int rc = core_.pull(v);
    if (rc < 0) check(rc, "pull");
    return rc > 0;
  }

  /// The core's pull_batch: the items taken (none if none is ready). Throws convoy::error
  /// on misuse.
  [[nodiscard]] termination::item_batch pull_items(std::size_t max) {
    termination::item_batch b;
    const std::int64_t rc = core_.pull_batch(b, max);
    if (rc < 0) check(static_cast<int>(rc), "pull_batch");
    if (rc <= 0) b.count = 0;
    return b;
  }

  /// The core's advance: ok, near or done. Throws convoy::error on a negative code.
  [[nodiscard]] int advance_status(bool done) {
    const int rc = core_.advance(done);
    if (rc < 0) [[unlikely]]
      check(rc, "advance");
    return rc;
  }

  /// Throws convoy::error "<name> <what>: <error> (state S)[: <core's last message>]" if
  /// `rc` is negative.
  void check(int rc, const std::string& what) const {
    if (rc >= 0) return;
    std::string msg = std::string(name_) + " " + what + ": " + termination::error_string(rc) +
                      " (state " + termination::to_string(core_.current_state()) + ")";
    if (const std::string m = core_.last_message(); !m.empty()) msg += ": " + m;
    throw error(msg);
  }

 private:
  const char* name_;
  untyped_conveyor core_;
};

}  // namespace convoy::detail
