#pragma once
/// @file
/// The typed C++ API: convoy::conveyor<T> over any route plan and transport.
///
/// A conveyor<T> moves items of a trivially copyable type T between ranks through the
/// streaming engine (termination/engine.hpp) or, with conveyor_options::kind =
/// conveyor_kind::bulk, bulk-synchronously (termination/bulk_engine.hpp), following the conveyor
/// contract of Maley & DeVinney 2019, sec. 3 either way. Hot-path calls (push, pull, advance)
/// return status values; misuse (push after done, rank out of range, call in the wrong state)
/// throws convoy::error naming the problem and changes nothing.
///
///   convoy::conveyor<long> c(MPI_COMM_WORLD);         // collective; auto topology
///   c.begin();
///   size_t i = 0;
///   while (c.advance(i == n)) {
///     for (; i < n; ++i) if (!c.push(spot[i], owner[i])) break;
///     while (auto d = c.pull()) tally[d->item]++;
///   }
///   c.reset();
#include <mpi.h>

#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/detail/typed_conveyor.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy/termination/engine.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace convoy {

using termination::state;

template <class T>
struct delivery {
  T item;
  int from;
};

/// Items pulled at once (pull_batch): a view of the delivered buffer, valid until the next
/// pull, unpull, advance or reset. Its elements are delivery<T> values, copied out of the
/// records (which are not necessarily aligned for T).
///
///   for (const auto batch = c.pull_batch(); const auto& [item, from] : batch) use(item, from);
template <class T>
class delivery_batch : public detail::batch_view {
 public:
  using batch_view::batch_view;

  [[nodiscard]] T item(std::size_t i) const noexcept {
    T t;
    std::memcpy(&t, b_.item(i), sizeof(T));
    return t;
  }
  [[nodiscard]] int from(std::size_t i) const noexcept { return b_.source(i); }
  [[nodiscard]] delivery<T> operator[](std::size_t i) const noexcept { return {item(i), from(i)}; }

  class iterator {
   public:
    using value_type = delivery<T>;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const delivery_batch* b, std::size_t i) noexcept : b_(b), i_(i) {}
    delivery<T> operator*() const noexcept { return (*b_)[i_]; }
    iterator& operator++() noexcept {
      ++i_;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator was = *this;
      ++i_;
      return was;
    }
    bool operator==(const iterator& o) const noexcept { return i_ == o.i_; }

   private:
    const delivery_batch* b_ = nullptr;
    std::size_t i_ = 0;
  };
  [[nodiscard]] iterator begin() const noexcept { return {this, 0}; }
  [[nodiscard]] iterator end() const noexcept { return {this, b_.count}; }
};

/// advance, flush, reset, stats and the other accessors: detail::typed_conveyor.
template <class T>
class conveyor : public detail::typed_conveyor<conveyor<T>> {
  static_assert(std::is_trivially_copyable_v<T>, "conveyor items must be trivially copyable");
  using base = detail::typed_conveyor<conveyor<T>>;
  friend base;

 public:
  /// Collective over `comm` (options: conveyor_options, e.g. dynamic buffers or an
  /// allocator hook). Throws convoy::error.
  explicit conveyor(MPI_Comm comm, const conveyor_options& options = {})
      : base("conveyor", comm, options) {}
  /// Over an engine built elsewhere (e.g. on a simulated transport).
  explicit conveyor(std::unique_ptr<termination::engine> engine)
      : base("conveyor", std::move(engine)) {}

  /// DORMANT -> WORKING (collective). Throws convoy::error in any other state.
  void begin() { this->check(this->core().begin(sizeof(T)), "begin"); }

  /// True if accepted; false if the path is full (advance, pull, and retry). Throws
  /// convoy::error on misuse (rank out of range, not WORKING).
  [[nodiscard]] bool push(const T& item, int rank) {
    return this->template push_item<sizeof(T)>(&item, rank);
  }

  /// The next delivered item and its source, if any.
  [[nodiscard]] std::optional<delivery<T>> pull() {
    termination::item_view v;
    if (!this->pull_item(v)) return std::nullopt;
    delivery<T> d{T{}, v.from};
    std::memcpy(&d.item, v.data, sizeof(T));
    return d;
  }

  /// Up to `max` delivered items at once: the rest of a delivered buffer, or one item
  /// where items arrive one by one; empty if none is ready. As that many pull() calls
  /// (unpull puts back the last).
  [[nodiscard]] delivery_batch<T> pull_batch(std::size_t max = SIZE_MAX) {
    return delivery_batch<T>(this->pull_items(max));
  }

  /// Puts back the item of the last pull; it is pulled again next. Throws convoy::error
  /// if there is nothing to put back.
  void unpull() { this->check(this->core().unpull(), "unpull"); }

  /// As advance(), returning ok, near or done.
  [[nodiscard]] int status(bool done) { return this->advance_status(done); }

  /// The streaming engine. Throws convoy::error for the bulk kind and while a dynamic
  /// conveyor has none (outside begin..reset).
  [[nodiscard]] termination::engine& engine() {
    if (this->core().bulk())
      throw error("conveyor: the bulk kind has no streaming engine (core().bulk())");
    if (!this->core().engine())
      throw error("conveyor: a dynamic conveyor has no engine while DORMANT");
    return *this->core().streaming();
  }

 private:
  // The handler-style advance's call: handler(item, from).
  template <class F>
  static void pass(F& handler, const delivery<T>& d) {
    handler(d.item, d.from);
  }
};

}  // namespace convoy
