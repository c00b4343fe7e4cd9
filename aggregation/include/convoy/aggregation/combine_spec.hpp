#pragma once
/// @file
/// What combining folds and how a lane decides whether it pays (aggregation/README.md,
/// AGG-150..156, AGG-162): the spec of a combining key and value, the folds a pass may inline, and
/// the gate's policy. Light on purpose: the engine's options carry these, and everything
/// that includes the engine's header includes this one; the tables and passes are in
/// combine_table.hpp.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace convoy::aggregation {

/// Folds the value at `from` into the value at `into` (value_bytes each, either unaligned).
/// Must be associative and commutative and must not throw. C-compatible.
using combine_fn = void (*)(void* into, const void* from);

/// The combine_fn that adds values of type `T` (an unsigned type wraps modulo 2^bits), read
/// and written unaligned: `combine_add<std::uint64_t>`.
template <class T>
void combine_add(void* into, const void* from) noexcept {
  T a{}, b{};
  std::memcpy(&a, into, sizeof a);
  std::memcpy(&b, from, sizeof b);
  a += b;
  std::memcpy(into, &a, sizeof a);
}

/// A fold a pass may inline instead of calling combine_spec::fn; it must do what fn does.
enum class combine_op : std::uint8_t {
  call,     ///< call fn
  add_u32,  ///< combine_add<std::uint32_t> (signed or unsigned 32-bit integers)
  add_u64,  ///< combine_add<std::uint64_t> (signed or unsigned 64-bit integers)
  add_f64   ///< combine_add<double>
};

/// The combine_op that adds values of type `T`, or combine_op::call.
template <class T>
[[nodiscard]] constexpr combine_op add_op_of() noexcept {
  if constexpr (std::is_integral_v<T> && sizeof(T) == 4) return combine_op::add_u32;
  if constexpr (std::is_integral_v<T> && sizeof(T) == 8) return combine_op::add_u64;
  if constexpr (std::is_same_v<T, double>) return combine_op::add_f64;
  return combine_op::call;
}

/// Where an item's key and value lie, in bytes from the start of the item (the payload).
/// `fn == nullptr`: no combining.
struct combine_spec {
  std::uint32_t key_offset = 0;
  std::uint32_t key_bytes = 8;  ///< 1..8 take the one-word compare; more compare bytewise
  std::uint32_t value_offset = 8;
  std::uint32_t value_bytes = 8;
  combine_fn fn = nullptr;
  combine_op op = combine_op::call;  ///< fn's fold inlined, if it is one of these
};

/// A spec that sums values of type `T` (combine_add<T>, inlined by the fold pass).
template <class T>
[[nodiscard]] constexpr combine_spec combine_sum(std::uint32_t key_offset, std::uint32_t key_bytes,
                                                 std::uint32_t value_offset) noexcept {
  return {key_offset,      key_bytes,     value_offset, static_cast<std::uint32_t>(sizeof(T)),
          &combine_add<T>, add_op_of<T>()};
}

/// Why `s` cannot combine items of `item_bytes`, or nullptr if it can: the key and the value
/// must be non-empty, lie inside the item and not overlap, and fn must be set.
[[nodiscard]] inline const char* combine_spec_problem(const combine_spec& s,
                                                      std::size_t item_bytes) noexcept {
  if (s.fn == nullptr) return "combine: no combine function";
  if (s.op != combine_op::call && s.value_bytes != (s.op == combine_op::add_u32 ? 4u : 8u))
    return "combine: the operation's value size is not value_bytes";
  if (s.key_bytes == 0 || s.value_bytes == 0) return "combine: empty key or value";
  const std::size_t key_end = std::size_t{s.key_offset} + s.key_bytes;
  const std::size_t value_end = std::size_t{s.value_offset} + s.value_bytes;
  if (key_end > item_bytes || value_end > item_bytes)
    return "combine: key or value beyond the item";
  if (s.key_offset < value_end && s.value_offset < key_end) return "combine: key and value overlap";
  return nullptr;
}

/// How a lane's combine_gate judges its combining buffers (AGG-155, AGG-162).
struct combine_gate_policy {
  std::uint32_t sample = 256;           ///< records examined before the buffer is judged
  std::uint32_t min_hit_per_1024 = 64;  ///< records that must fold (1/16); 0: always combine
  std::uint32_t max_skip = 64;          ///< buffers appended plainly at most in a row
  /// What a record saved on the lane is worth, nanoseconds: the buffer pays if its folds
  /// times this reach cost_margin times what its passes cost. 0: the engine measures it per lane
  /// (TERM-28).
  double saved_record_ns = 0.0;
  /// How many times what its passes took the saved records must be worth. The passes'
  /// time leaves out what else a combining buffer costs (the table's lines in the CPU
  /// caches, the records' moves, the checks as the buffer fills): at 1 a lane whose folds
  /// just cover its passes keeps combining while the run is slower for it.
  double cost_margin = 2.0;
};

}  // namespace convoy::aggregation
