#pragma once
/// @file
/// A block-distributed array whose elements tasks read and update as plain code:
/// `T v = co_await a.get(i)` and `a.update(i, op, value)` (Fischler & Uchima 1993, sec. 2.2, "flat,
/// global access"). Rank r owns the global indices [begin(r), begin(r+1)), with the
/// remainder of n / P spread over the first ranks.
///
///   dist_array<long> counts(rt, n);                                  // collective
///   auto add = counts.define_update([](long& x, long by) { x += by; });  // collective
///   rt.run_each(m, [&](std::size_t k) -> task<> { counts.update(key[k], add, 1L); co_return; });
///
/// An update declared combinable (`define_update(op, async::combinable)`) travels through
/// a combining engine of its own, where updates of one element are folded on the way
/// (API-82): applied exactly once before the phase ends, but not ordered with calls.
#include <convoy/async/runtime.hpp>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace convoy::async {

/// Handle of an update operation defined on every rank: op(T& element, V value).
template <class V>
struct update_fn {
  remote_fn<void, std::uint64_t, V> fn;
};

/// Handle of a combinable update of a dist_array<T> (define_update with async::combinable).
template <class T>
struct combinable_update {
  std::uint32_t index = ~0u;
  const void* array = nullptr;  ///< the array that defined it
};

template <class T>
class dist_array {
  static_assert(std::is_trivially_copyable_v<T>, "dist_array elements must be trivially copyable");

 public:
  /// Collective: every rank constructs its block (value-initialised) and defines the
  /// array's read function on `rt`, in the same order on every rank.
  dist_array(runtime& rt, std::uint64_t n)
      : rt_(rt), n_(n), p_(static_cast<std::uint64_t>(rt.n_ranks())) {
    base_ = n_ / p_;
    extra_ = n_ % p_;
    first_ = begin_of(static_cast<std::uint64_t>(rt.rank()));
    local_.resize(begin_of(static_cast<std::uint64_t>(rt.rank()) + 1) - first_);
    read_ = rt.define(reader{this});
  }
  dist_array(const dist_array&) = delete;
  dist_array& operator=(const dist_array&) = delete;

  /// Collective, like runtime::define: `op(T&, V)` applied on the owner.
  template <class Op>
  auto define_update(Op op) {
    using V = std::tuple_element_t<1, typename detail::fn_traits<Op>::args>;
    update_fn<V> u;
    u.fn = rt_.define([this, op](std::uint64_t local, V v) {
      if (local >= local_.size()) throw convoy::error("dist_array: index out of range");
      op(local_[local], v);
    });
    return u;
  }

  /// As runtime::add_combiner (same order on every rank, not during a phase): a
  /// combinable update `op(T& element, T value)`, which the tag declares associative and
  /// commutative, so that the fold of two updates of one element is `op` itself, run on
  /// any rank that carries both. `op` must be stateless (a lambda without captures) and
  /// must not throw when it folds (an exception there ends the program); on the owner it
  /// may throw (the phase ends with its message). Checked at compile time.
  template <class Op>
  combinable_update<T> define_update(Op /*op*/, combinable_t /*tag*/) {
    constexpr bool callable = std::is_invocable_v<Op&, T&, T>;
    static_assert(callable,
                  "dist_array<T>::define_update(op, async::combinable): op must be callable as "
                  "op(T& element, T value) (the fold of two updates is op itself)");
    constexpr bool stateless = std::is_empty_v<Op> && std::is_default_constructible_v<Op>;
    static_assert(stateless,
                  "dist_array<T>::define_update(op, async::combinable): op must be stateless "
                  "(a lambda without captures): it folds updates on whichever rank carries them");
    if constexpr (callable && stateless) {
      detail::combiner_entry e;
      e.value_bytes = sizeof(T);
      e.fold = &fold_update<Op>;
      e.apply = &apply_update<Op>;
      e.target = this;
      return {rt_.add_combiner(e), this};
    } else {
      return {};
    }
  }

  [[nodiscard]] std::uint64_t size() const noexcept { return n_; }
  [[nodiscard]] int owner(std::uint64_t i) const noexcept {
    const std::uint64_t big = extra_ * (base_ + 1);
    return static_cast<int>(i < big ? i / (base_ + 1) : extra_ + (i - big) / base_);
  }
  [[nodiscard]] std::uint64_t begin_of(std::uint64_t r) const noexcept {
    return r * base_ + (r < extra_ ? r : extra_);
  }
  /// This rank's block and its first global index.
  [[nodiscard]] std::span<T> local() noexcept { return local_; }
  [[nodiscard]] std::uint64_t first() const noexcept { return first_; }

  /// Awaitable read of element i (from the owner; at once if this rank owns it).
  /// Throws convoy::error for i >= size().
  [[nodiscard]] auto get(std::uint64_t i) {
    check(i);
    const int r = owner(i);
    return rt_.call(r, read_, i - begin_of(static_cast<std::uint64_t>(r)));
  }

  /// Fire-and-forget update of element i: op(element, value) on the owner.
  template <class V, class U>
  void update(std::uint64_t i, const update_fn<V>& op, U&& value) {
    check(i);
    const int r = owner(i);
    rt_.post(r, op.fn, i - begin_of(static_cast<std::uint64_t>(r)), static_cast<V>(value));
  }

  /// Fire-and-forget combinable update of element i (API-82): applied on the owner exactly
  /// once before the phase ends, possibly folded with other updates of i on the way; a
  /// get or call in the same phase need not see it. Throws convoy::error for i >= size(),
  /// a handle of another array, or as runtime::post (outside a phase, in a remote function).
  template <class U>
  void update(std::uint64_t i, const combinable_update<T>& op, U&& value) {
    check(i);
    if (op.array != this) [[unlikely]]
      throw convoy::error("dist_array: a combinable update defined on another array");
    const int r = owner(i);
    const std::uint64_t local = i - begin_of(static_cast<std::uint64_t>(r));
    const T v = static_cast<T>(std::forward<U>(value));
    std::byte rec[8 + sizeof(T)];
    std::memcpy(rec, &local, 8);
    std::memcpy(rec + 8, &v, sizeof(T));
    rt_.template push_combinable<8 + sizeof(T)>(op.index, rec, r);
  }

 private:
  void check(std::uint64_t i) const {
    if (i >= n_)
      throw convoy::error("dist_array: index " + std::to_string(i) + " >= size " +
                          std::to_string(n_));
  }

  // The read function: a named type, so that the array keeps the handle define() returns,
  // with which a read of an element this rank owns runs inline in the task.
  struct reader {
    dist_array* a;
    T operator()(std::uint64_t local) const {
      if (local >= a->local_.size()) throw convoy::error("dist_array: index out of range");
      return a->local_[local];
    }
  };

  // A combinable update's two halves (detail::combiner_entry): the fold in transit and the
  // apply on the owner.
  template <class Op>
  static void fold_update(void* into, const void* from) {
    T a;
    T b;
    std::memcpy(&a, into, sizeof(T));
    std::memcpy(&b, from, sizeof(T));
    Op{}(a, b);
    std::memcpy(into, &a, sizeof(T));
  }
  template <class Op>
  static void apply_update(void* target, std::uint64_t local, const std::byte* value) {
    auto& self = *static_cast<dist_array*>(target);
    if (local >= self.local_.size()) throw convoy::error("dist_array: index out of range");
    T v;
    std::memcpy(&v, value, sizeof(T));
    Op{}(self.local_[local], v);
  }

  runtime& rt_;
  std::uint64_t n_, p_, base_ = 0, extra_ = 0, first_ = 0;
  std::vector<T> local_;
  defined_fn<reader, T, std::uint64_t> read_;
};

}  // namespace convoy::async
