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
