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
#include <convoy/async/runtime.hpp>
#include <cstdint>
#include <span>
#include <vector>

namespace convoy::async {

/// Handle of an update operation defined on every rank: op(T& element, V value).
template <class V>
struct update_fn {
  remote_fn<void, std::uint64_t, V> fn;
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

  runtime& rt_;
  std::uint64_t n_, p_, base_ = 0, extra_ = 0, first_ = 0;
  std::vector<T> local_;
  defined_fn<reader, T, std::uint64_t> read_;
};

}  // namespace convoy::async
