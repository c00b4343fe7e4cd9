#pragma once
/// @file
/// What the runtime keeps of a combinable update (dist_array::define_update with
/// async::combinable): how to fold two values in transit and how the owner applies one,
/// with the value's type erased. The runtime gives each one a combining engine of its own
/// (items [u64 local index][value]), which joins the phase loop.
#include <convoy/aggregation/combine_spec.hpp>
#include <cstddef>
#include <cstdint>

namespace convoy::async {

/// The tag of a combinable update: `a.define_update(op, async::combinable)` declares `op`
/// associative and commutative, so that updates of one element may be folded on the way.
struct combinable_t {
  explicit combinable_t() = default;
};
inline constexpr combinable_t combinable{};

namespace detail {

struct combiner_entry {
  std::size_t value_bytes = 0;
  /// Folds one value into another, on any rank that holds both in a send buffer.
  aggregation::combine_fn fold = nullptr;
  /// Applies `value` to element `local` of `target`'s block, on the owner. May throw
  /// (the phase then ends with its message).
  void (*apply)(void* target, std::uint64_t local, const std::byte* value) = nullptr;
  void* target = nullptr;
};

}  // namespace detail
}  // namespace convoy::async
