#pragma once
/// @file
/// The typed C++ API: convoy::conveyor<T> over any route plan and transport.
///
/// A conveyor<T> moves items of a trivially copyable type T between ranks through the
/// streaming engine (termination/engine.hpp) or, with conveyor_options::kind =
/// conveyor_kind::bulk, bulk-synchronously (bulk_engine.hpp), following the conveyor
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
#include <convoy/conveyor_api/options.hpp>
#include <convoy/conveyor_api/untyped_conveyor.hpp>
#include <convoy/termination/engine.hpp>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
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

template <class T>
class conveyor {
  static_assert(std::is_trivially_copyable_v<T>, "conveyor items must be trivially copyable");

 public:
  /// Collective over `comm` (options: conveyor_options, e.g. dynamic buffers or an
  /// allocator hook). Throws convoy::error.
  explicit conveyor(MPI_Comm comm, const conveyor_options& options = {}) : core_(comm, options) {}
  /// Over an engine built elsewhere (e.g. on a simulated transport).
  explicit conveyor(std::unique_ptr<termination::engine> engine) : core_(std::move(engine)) {}

  /// DORMANT -> WORKING (collective). Throws convoy::error in any other state.
  void begin() { check(core_.begin(sizeof(T)), "begin"); }

  /// True if accepted; false if the path is full (advance, pull, and retry). Throws
  /// convoy::error on misuse (rank out of range, not WORKING).
  [[nodiscard]] bool push(const T& item, int rank) {
    const int rc = core_.template push<sizeof(T)>(&item, rank);
    if (rc < 0) [[unlikely]]
      check(rc, "push to rank " + std::to_string(rank));
    return rc > 0;
  }

  /// The next delivered item and its source, if any.
  [[nodiscard]] std::optional<delivery<T>> pull() {
    termination::item_view v;
    const int rc = core_.pull(v);
    if (rc <= 0) {
      if (rc < 0) check(rc, "pull");
      return std::nullopt;
    }
    delivery<T> d{T{}, v.from};
    std::memcpy(&d.item, v.data, sizeof(T));
    return d;
  }

  /// Puts back the item of the last pull; it is pulled again next. Throws convoy::error
  /// if there is nothing to put back.
  void unpull() { check(core_.unpull(), "unpull"); }

  /// Returns true while the conveyor is not complete (the loop condition of Maley & DeVinney 2019
  /// Figure 3). Throws convoy::error on misuse or transport failure.
  [[nodiscard]] bool advance(bool done) { return status(done) != termination::done; }
  /// As advance(), returning ok, near or done.
  [[nodiscard]] int status(bool done) {
    const int rc = core_.advance(done);
    if (rc < 0) [[unlikely]]
      check(rc, "advance");
    return rc;
  }
  /// Handler style: advances, then passes every delivered item to `handler(item, from)`.
  template <class F>
  [[nodiscard]] bool advance(bool done, F&& handler) {
    const bool more = advance(done);
    while (auto d = pull()) handler(d->item, d->from);
    return more;
  }

  /// Sends every partly filled buffer now. Throws convoy::error unless WORKING/ENDGAME.
  void flush() { check(core_.flush(), "flush"); }

  /// COMPLETE -> DORMANT. Throws convoy::error in another state (DORMANT is a no-op).
  void reset() { check(core_.reset(), "reset"); }

  [[nodiscard]] state current_state() const noexcept { return core_.current_state(); }
  [[nodiscard]] int rank() const noexcept { return core_.rank(); }
  [[nodiscard]] int n_ranks() const noexcept { return core_.n_ranks(); }
  [[nodiscard]] termination::engine_stats stats(bool cumulative = false) const {
    return core_.stats(cumulative);
  }
  [[nodiscard]] std::size_t memory_bytes() const noexcept { return core_.memory_bytes(); }
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept { return core_.max_memory_bytes(); }
  /// The streaming engine. Throws convoy::error for the bulk kind and while a dynamic
  /// conveyor has none (outside begin..reset).
  [[nodiscard]] termination::engine& engine() {
    if (core_.bulk())
      throw error("conveyor: the bulk kind has no streaming engine (core().bulk())");
    if (!core_.engine()) throw error("conveyor: a dynamic conveyor has no engine while DORMANT");
    return *core_.streaming();
  }
  /// The untyped core (runtime item sizes, elastic items, codes instead of exceptions).
  [[nodiscard]] untyped_conveyor& core() noexcept { return core_; }

 private:
  void check(int rc, const std::string& what) const {
    if (rc >= 0) return;
    std::string msg = "conveyor " + what + ": " + termination::error_string(rc) + " (state " +
                      termination::to_string(core_.current_state()) + ")";
    if (const std::string m = core_.last_message(); !m.empty()) msg += ": " + m;
    throw error(msg);
  }

  untyped_conveyor core_;
};

}  // namespace convoy
