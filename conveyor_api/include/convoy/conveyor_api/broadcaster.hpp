#pragma once
/// @file
/// convoy::broadcaster<T>: every item broadcast on any rank is pulled exactly once on every
/// rank, the root included, with `from` = the root (termination/README.md BCAST-1..8). The
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
/// Items already in an array go a block at a time: in the loop above,
/// `if (i < mine.size()) i += b.broadcast_batch(std::span(mine).subspan(i));`.
///
/// Streaming kind, rigid items; a mesh or tensor order 1 or 2 (tensor order 3 throws).
#include <mpi.h>

#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <convoy/conveyor_api/detail/typed_conveyor.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy/termination/engine.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

namespace convoy {

/// advance, flush, reset, stats and the other accessors: detail::typed_conveyor (stats'
/// `pushes` counts this rank's broadcasts, `pulls` the items it received).
template <class T>
class broadcaster : public detail::typed_conveyor<broadcaster<T>> {
  static_assert(std::is_trivially_copyable_v<T>, "broadcast items must be trivially copyable");
  using base = detail::typed_conveyor<broadcaster<T>>;
  friend base;

 public:
  /// Collective over `comm`, as conveyor<T>'s constructor, of the broadcast kind (the
  /// streaming kind becomes it). Throws convoy::error for the other kinds, combining or
  /// tensor order 3.
  explicit broadcaster(MPI_Comm comm, conveyor_options options = {})
      : base("broadcaster", comm, with_broadcast(std::move(options))) {}

  /// DORMANT -> WORKING (collective). Throws convoy::error in any other state.
  void begin() { this->check(this->core().begin(sizeof(T)), "begin"); }

  /// True if `item` is on its way to every rank, this one included; false if a buffer
  /// toward some first hop is full (nothing was sent: advance, pull, and retry). Throws on
  /// misuse (not WORKING).
  [[nodiscard]] bool broadcast(const T& item) {
    const int rc = this->core().broadcast(&item);
    if (rc < 0) [[unlikely]]
      this->check(rc, "broadcast");
    return rc > 0;
  }

  /// Broadcasts `items` from the front, as that many broadcast() calls in order would,
  /// copied into the buffers a block at a time (BCAST-7): returns how many were sent, all
  /// of them or fewer (0 too) when a buffer toward some first hop is full (advance, pull,
  /// and send the rest). Throws on misuse (not WORKING).
  [[nodiscard]] std::size_t broadcast_batch(std::span<const T> items) {
    const std::int64_t rc = this->core().broadcast_batch(items.data(), items.size());
    if (rc < 0) [[unlikely]]
      this->check(static_cast<int>(rc), "broadcast_batch");
    return static_cast<std::size_t>(rc);
  }

  /// The next delivered item with its root as `from`, if any.
  [[nodiscard]] std::optional<delivery<T>> pull() {
    termination::item_view v;
    if (!this->pull_item(v)) return std::nullopt;
    delivery<T> d;
    std::memcpy(&d.item, v.data, sizeof(T));
    d.from = v.from;
    return d;
  }

  /// Up to `max` delivered items at once, each with its root as `from`: the rest of a
  /// delivered buffer, or one item; empty if none is ready. As that many pull() calls.
  [[nodiscard]] delivery_batch<T> pull_batch(std::size_t max = SIZE_MAX) {
    return delivery_batch<T>(this->pull_items(max));
  }

 private:
  static conveyor_options with_broadcast(conveyor_options o) {
    if (o.kind != conveyor_kind::streaming && o.kind != conveyor_kind::broadcast)
      throw error(std::string("broadcaster: the ") + to_string(o.kind) +
                  " kind does not broadcast");
    o.kind = conveyor_kind::broadcast;
    return o;
  }
  // The handler-style advance's call: handler(item, root).
  template <class F>
  static void pass(F& handler, const delivery<T>& d) {
    handler(d.item, d.from);
  }
};

}  // namespace convoy
