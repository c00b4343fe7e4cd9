#pragma once
// Private to base/: the little text handling the parsers (settings, mesh spec, tuning) share.
#include <cctype>
#include <string_view>
#include <vector>

namespace convoy::base::detail {

/// `s` without leading and trailing blanks.
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// The pieces of `s` between any of the `separators`, untrimmed; "a,,b" -> a, "", b and
/// "" -> one empty piece, so that empty entries can be reported by position.
inline std::vector<std::string_view> split(std::string_view s, std::string_view separators) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && separators.find(s[i]) == std::string_view::npos) continue;
    out.push_back(s.substr(start, i - start));
    start = i + 1;
  }
  return out;
}

}  // namespace convoy::base::detail
