#pragma once
// Private to base/: helpers of the setting parsers (values.cpp).
#include <cstdint>
#include <string>
#include <string_view>

namespace convoy::base::detail {

/// Throws convoy::error("<name>='<text>': <why>").
[[noreturn]] void bad(const std::string& name, const std::string& text, const std::string& why);

/// Every character is a decimal digit (true for an empty string).
bool all_digits(std::string_view s) noexcept;

/// Digits only, no sign; returns false on anything else or overflow past `max`.
bool parse_unsigned(const std::string& digits, std::uint64_t max, std::uint64_t& out);

/// A positive int. @throws as bad().
int parse_positive_int(const std::string& name, const std::string& text);

/// Throws convoy::error("hwloc rejects synthetic topology '<desc>' ...") unless hwloc loads
/// synthetic_with_pus(desc).
void check_synthetic(const std::string& desc);

}  // namespace convoy::base::detail
