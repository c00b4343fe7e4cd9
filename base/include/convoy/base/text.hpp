#pragma once
/// @file
/// Text for messages and labels: a range's items joined by a separator.
#include <string>
#include <string_view>
#include <type_traits>

namespace convoy::base {

/// The items of `items` as text with `sep` between two ("2x4" from {2, 4} and "x"):
/// numbers through std::to_string, anything else appended as it is (strings, views).
template <class Range>
[[nodiscard]] std::string join(const Range& items, std::string_view sep) {
  std::string s;
  bool first = true;
  for (const auto& x : items) {
    if (!first) s += sep;
    first = false;
    if constexpr (std::is_arithmetic_v<std::remove_cvref_t<decltype(x)>>)
      s += std::to_string(x);
    else
      s += x;
  }
  return s;
}

}  // namespace convoy::base
