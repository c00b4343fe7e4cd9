#pragma once
/// @file
/// convoy::broadcaster<T>: every item broadcast on any rank is pulled exactly once on every
/// rank, the root included, with `from` = the root (termination/README.md BCAST-1..6). The
/// copies travel along the mesh as a tree: the root sends one copy per out-link of every
/// stage, a rank reached on stage s copies it onto its out-links of the later stages. By
/// default the mesh's stages run outermost dimension first (node first): each item
/// crosses to every other node once, then spreads on each node (API-91).
///
///   convoy::broadcaster<edge> b(MPI_COMM_WORLD);
///   b.begin();
///   std::size_t i = 0;
///   while (b.advance(i == mine.size(), [&](const edge& e, int root) { add(e, root); }))
///     for (; i < mine.size(); ++i)
///       if (!b.broadcast(mine[i])) break;
///   b.reset();
///
/// Streaming kind, rigid items; a mesh or tensor order 1 or 2 (tensor order 3 throws).
#include <mpi.h>

#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy/conveyor_api/untyped_conveyor.hpp>
#include <convoy/termination/engine.hpp>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace convoy {

template <class T>
class broadcaster {
  static_assert(std::is_trivially_copyable_v<T>, "broadcast items must be trivially copyable");

 public:
  /// Collective over `comm`, as conveyor<T>'s constructor; `options.broadcast` is set here.
  /// Throws convoy::error for the bulk kind, elastic items, combining or tensor order 3.
  explicit broadcaster(MPI_Comm comm, conveyor_options options = {})
      : core_(comm, with_broadcast(std::move(options))) {}

  /// DORMANT -> WORKING (collective). Throws convoy::error in any other state.
  void begin() { check(core_.begin(sizeof(T)), "begin"); }

  /// True if `item` is on its way to every rank, this one included; false if a buffer
  /// toward some first hop is full (nothing was sent: advance, pull, and retry). Throws on
  /// misuse (not WORKING).
  [[nodiscard]] bool broadcast(const T& item) {
    const int rc = core_.broadcast(&item);
    if (rc < 0) [[unlikely]]
      check(rc, "broadcast");
    return rc > 0;
  }

  /// The next delivered item with its root as `from`, if any.
  [[nodiscard]] std::optional<delivery<T>> pull() {
    termination::item_view v;
    const int rc = core_.pull(v);
    if (rc <= 0) {
      if (rc < 0) check(rc, "pull");
      return std::nullopt;
    }
    delivery<T> d;
    std::memcpy(&d.item, v.data, sizeof(T));
    d.from = v.from;
    return d;
  }

  /// True while the broadcaster is not complete. Throws on misuse or transport failure.
  [[nodiscard]] bool advance(bool done) {
    const int rc = core_.advance(done);
    if (rc < 0) [[unlikely]]
      check(rc, "advance");
    return rc != termination::done;
  }
  /// Handler style: advances, then passes every delivered item to `handler(item, root)`.
  template <class F>
  [[nodiscard]] bool advance(bool done, F&& handler) {
    const bool more = advance(done);
    while (auto d = pull()) handler(d->item, d->from);
    return more;
  }

  /// Sends every partly filled buffer now. Throws unless WORKING/ENDGAME.
  void flush() { check(core_.flush(), "flush"); }
  /// COMPLETE -> DORMANT. Throws in another state (DORMANT is a no-op).
  void reset() { check(core_.reset(), "reset"); }

  [[nodiscard]] termination::state current_state() const noexcept { return core_.current_state(); }
  [[nodiscard]] int rank() const noexcept { return core_.rank(); }
  [[nodiscard]] int n_ranks() const noexcept { return core_.n_ranks(); }
  /// Counters; `pushes` counts this rank's broadcasts, `pulls` the items it received.
  [[nodiscard]] termination::engine_stats stats(bool cumulative = false) const {
    return core_.stats(cumulative);
  }
  [[nodiscard]] std::size_t memory_bytes() const noexcept { return core_.memory_bytes(); }
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept { return core_.max_memory_bytes(); }
  /// The untyped core.
  [[nodiscard]] untyped_conveyor& core() noexcept { return core_; }

 private:
  static conveyor_options with_broadcast(conveyor_options o) {
    o.broadcast = true;
    return o;
  }
  void check(int rc, const std::string& what) const {
    if (rc >= 0) return;
    std::string msg = "broadcaster " + what + ": " + termination::error_string(rc) + " (state " +
                      termination::to_string(core_.current_state()) + ")";
    if (const std::string m = core_.last_message(); !m.empty()) msg += ": " + m;
    throw error(msg);
  }

  untyped_conveyor core_;
};

}  // namespace convoy
