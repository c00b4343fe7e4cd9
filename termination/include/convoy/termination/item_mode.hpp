#pragma once
/// @file
/// What a streaming engine's items are: one value fixed at construction, and one row of
/// rules per value. The engine and the conveyor core over it ask a mode's rules
/// (rules_of), never which mode it is: this table is the only place that tells the modes
/// apart.
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
  /// (BCAST-1..8); push() returns error_mode. Never combines.
  broadcast,
};

/// One mode's rules. A refusal is the code the call returns, doing nothing; 0: the call is
/// accepted.
struct item_rules {
  const char* name;
  /// Records carry a size field (aggregation::size_field_bytes) before their payload:
  /// begin(0) is accepted, buffers keep their size, push() is an epush() of begin()'s size,
  /// and no buffer is delivered whole (its records' sizes differ).
  bool carries_size;
  /// Every item goes to every rank along the plan's broadcast tree (BCAST-1), so the plan
  /// must have one.
  bool fans_out;
  /// Fixed-size items to one rank each: push() may take the inline path and the engine
  /// the per-destination step tables.
  bool direct_push;
  int push_refusal;
  int epush_refusal;
  int broadcast_refusal;
  /// What set_combine (or an engine built combining) refuses with.
  int combine_refusal;
};

namespace detail {
// clang-format off
inline constexpr item_rules mode_rules[] = {
    // name       size   fans   direct push        epush          broadcast   combine
    {"rigid",     false, false, true,  0,          error_elastic, error_mode, 0},
    {"elastic",   true,  false, false, 0,          0,             error_mode, error_elastic},
    {"broadcast", false, true,  false, error_mode, error_mode,    0,          error_mode},
};
// clang-format on
}  // namespace detail

[[nodiscard]] constexpr const item_rules& rules_of(item_mode m) noexcept {
  return detail::mode_rules[static_cast<std::uint8_t>(m)];
}
[[nodiscard]] constexpr const char* to_string(item_mode m) noexcept { return rules_of(m).name; }

/// A refusal as the optional code the state machine's callers use.
[[nodiscard]] constexpr std::optional<int> refusal(int code) noexcept {
  return code != 0 ? std::optional<int>(code) : std::nullopt;
}

/// The code set_combine returns, without doing anything, when an engine of mode `m` is
/// asked to combine (`combining`: a spec with its function set); nothing when it may.
/// Turning combining off is always allowed.
[[nodiscard]] constexpr std::optional<int> combine_refusal(item_mode m, bool combining) noexcept {
  return combining ? refusal(rules_of(m).combine_refusal) : std::nullopt;
}

}  // namespace convoy::termination
