#pragma once
/// @file
/// convoy::combining_conveyor<K, V, Op>: a conveyor of (key, value) updates that merges
/// updates with equal destination and key while they wait in a send buffer — at the source
/// and at every rank that forwards them — before the buffer leaves (termination/README.md,
/// TERM-20..24). Every pushed value is folded into what its destination pulls exactly
/// once; the destination may pull several (key, value) pairs for one key (one per buffer
/// that carried it), in no particular order and with no source.
///
///   convoy::combining_conveyor<std::uint64_t, std::uint64_t> c(MPI_COMM_WORLD);  // sums
///   c.begin();
///   std::size_t i = 0;
///   while (c.advance(i == n, [&](std::uint64_t key, std::uint64_t v) { count[key] += v; }))
///     for (; i < n; ++i)
///       if (!c.push(local[i], 1, owner[i])) break;
///   c.reset();
///
/// The streaming kind only, rigid items; a lane whose keys do not repeat stops combining
/// by itself (AGG-155), so uniform keys cost about what a conveyor<T> does.
#include <mpi.h>

#include <convoy/aggregation/combine_spec.hpp>
#include <convoy/conveyor_api/detail/typed_conveyor.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy/termination/engine.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

namespace convoy {

/// `Op` folds one value into another: `op(into, from)` with `into` a V& (returning void),
/// or `into = op(into, from)` (e.g. std::plus<V>). It must be associative and commutative,
/// default-constructible and stateless (a fold runs inside the engine, from any push,
/// forward or advance), and must not throw. `K` and `V` are trivially copyable; an item
/// is the key's bytes followed by the value's, with no padding (keys of up to 8 bytes take
/// the engine's one-word compare). advance, flush, reset, stats and the other accessors:
/// detail::typed_conveyor (stats' `combined`: updates folded into another on this rank).
template <class K, class V, class Op = std::plus<V>>
class combining_conveyor : public detail::typed_conveyor<combining_conveyor<K, V, Op>> {
  static_assert(std::is_trivially_copyable_v<K> && std::is_trivially_copyable_v<V>,
                "combining_conveyor keys and values must be trivially copyable");
  static_assert(std::is_default_constructible_v<Op>, "the fold must be default-constructible");
  using base = detail::typed_conveyor<combining_conveyor<K, V, Op>>;
  friend base;

 public:
  static constexpr std::size_t item_bytes = sizeof(K) + sizeof(V);

  /// Collective over `comm`, as conveyor<T>'s constructor; `options.combine` is set here,
  /// and the streaming kind becomes the combining kind (the bulk, elastic and broadcast
  /// kinds throw convoy::error).
  explicit combining_conveyor(MPI_Comm comm, conveyor_options options = {})
      : base("combining_conveyor", comm, with_combine(std::move(options))) {}

  /// The combine_spec of these items (for an engine built elsewhere).
  /// A sum (std::plus) of 4- or 8-byte integers or of doubles is inlined in the fold pass.
  [[nodiscard]] static aggregation::combine_spec spec() noexcept {
    constexpr bool sum = std::is_same_v<Op, std::plus<V>> || std::is_same_v<Op, std::plus<>>;
    return {0,
            static_cast<std::uint32_t>(sizeof(K)),
            static_cast<std::uint32_t>(sizeof(K)),
            static_cast<std::uint32_t>(sizeof(V)),
            &fold,
            sum ? aggregation::add_op_of<V>() : aggregation::combine_op::call};
  }

  /// DORMANT -> WORKING (collective). Throws convoy::error in any other state.
  void begin() { this->check(this->core().begin(item_bytes), "begin"); }

  /// True if accepted (appended, or folded into an update of the same key waiting for the
  /// same rank); false if the path is full (advance, pull, and retry). Throws on misuse.
  [[nodiscard]] bool push(const K& key, const V& value, int rank) {
    std::byte item[item_bytes];
    std::memcpy(item, &key, sizeof(K));
    std::memcpy(item + sizeof(K), &value, sizeof(V));
    return this->template push_item<item_bytes>(item, rank);
  }

  /// The next delivered (key, value), if any: the fold of one or more pushed values.
  [[nodiscard]] std::optional<std::pair<K, V>> pull() {
    termination::item_view v;
    if (!this->pull_item(v)) return std::nullopt;
    return read(v.data);
  }

  /// Delivered updates taken at once (pull_batch): valid until the next pull, advance or
  /// reset.
  class batch : public detail::batch_view {
   public:
    using batch_view::batch_view;
    /// Update i: (key, value).
    [[nodiscard]] std::pair<K, V> operator[](std::size_t i) const noexcept {
      return read(b_.item(i));
    }
  };
  /// Up to `max` delivered updates at once: the rest of a delivered buffer, or one; empty
  /// if none is ready. As that many pull() calls.
  [[nodiscard]] batch pull_batch(std::size_t max = SIZE_MAX) {
    return batch(this->pull_items(max));
  }

 private:
  static std::pair<K, V> read(const std::byte* p) noexcept {
    std::pair<K, V> kv;
    std::memcpy(&kv.first, p, sizeof(K));
    std::memcpy(&kv.second, p + sizeof(K), sizeof(V));
    return kv;
  }
  static void fold(void* into, const void* from) {
    V a;
    V b;
    std::memcpy(&a, into, sizeof(V));
    std::memcpy(&b, from, sizeof(V));
    Op op{};
    if constexpr (std::is_void_v<std::invoke_result_t<Op&, V&, const V&>>)
      op(a, static_cast<const V&>(b));
    else
      a = op(a, static_cast<const V&>(b));
    std::memcpy(into, &a, sizeof(V));
  }
  static conveyor_options with_combine(conveyor_options o) {
    o.combine = spec();
    if (o.kind == conveyor_kind::streaming) o.kind = conveyor_kind::combining;
    return o;
  }
  // The handler-style advance's call: handler(key, value).
  template <class F>
  static void pass(F& handler, const std::pair<K, V>& kv) {
    handler(kv.first, kv.second);
  }
};

}  // namespace convoy
