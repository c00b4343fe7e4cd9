#pragma once
/// @file
/// What a streaming engine's items are: one value fixed at construction, not a flag per
/// mode. The rules that differ between the three modes are written here once; the engine
/// and the conveyor core over it both ask them.
#include <convoy/termination/state_machine.hpp>
#include <cstdint>
#include <optional>

namespace convoy::termination {

enum class item_mode : std::uint8_t {
  /// Every item of a cycle has begin()'s size, sent with push(); may combine (TERM-20).
  rigid,
  /// Each item carries its own size (epush(); a 4-byte size field per record); begin()'s
  /// size is the default, and what a rigid pull() accepts. Never combines.
  elastic,
  /// Rigid items sent with broadcast() to every rank along the plan's broadcast tree
  /// (BCAST-1..6); push() returns error_mode. Never combines.
  broadcast,
};
[[nodiscard]] const char* to_string(item_mode m) noexcept;

/// Records carry a size field (aggregation::size_field_bytes) before their payload.
[[nodiscard]] constexpr bool carries_size(item_mode m) noexcept { return m == item_mode::elastic; }

/// The code set_combine returns, without doing anything, when an engine of mode `m` is
/// asked to combine (`combining`: a spec with its function set); nothing when it may.
/// Turning combining off is always allowed.
[[nodiscard]] constexpr std::optional<int> combine_refusal(item_mode m, bool combining) noexcept {
  if (!combining) return std::nullopt;
  switch (m) {
    case item_mode::elastic:
      return error_elastic;
    case item_mode::broadcast:
      return error_mode;
    case item_mode::rigid:
      break;
  }
  return std::nullopt;
}

}  // namespace convoy::termination
