// The value grammars of settings shared by the environment and the tuning file (BASE-5).
#include "values.hpp"

#include <hwloc.h>

#include <cctype>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "text.hpp"

namespace convoy::base {

namespace detail {

void bad(const std::string& name, const std::string& text, const std::string& why) {
  throw error(name + "='" + text + "': " + why);
}

bool all_digits(std::string_view s) noexcept {
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool parse_unsigned(const std::string& digits, std::uint64_t max, std::uint64_t& out) {
  if (digits.empty() || !all_digits(digits)) return false;
  out = 0;
  for (char c : digits) {
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (out > (max - d) / 10) return false;
    out = out * 10 + d;
  }
  return true;
}

int parse_positive_int(const std::string& name, const std::string& text) {
  std::uint64_t v = 0;
  if (!parse_unsigned(std::string(trim(text)),
                      static_cast<std::uint64_t>(std::numeric_limits<int>::max()), v))
    bad(name, text, "must be a positive integer");
  if (v == 0) bad(name, text, "must be >= 1");
  return static_cast<int>(v);
}

void check_synthetic(const std::string& desc) {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) throw error("hwloc_topology_init failed");
  const std::string full = synthetic_with_pus(desc);
  const bool ok = hwloc_topology_set_synthetic(t, full.c_str()) == 0 && hwloc_topology_load(t) == 0;
  hwloc_topology_destroy(t);
  if (!ok)
    throw error("hwloc rejects synthetic topology '" + desc +
                "' (expected e.g. \"pack:2 core:4\" or \"pack:2 numa:2 core:8 pu:1\")");
}

}  // namespace detail

double parse_seconds(const std::string& name, const std::string& text) {
  constexpr double week_seconds = 7.0 * 24 * 3600;
  const std::string t(detail::trim(text));
  // Digits, at most one '.', at least one digit: no sign, exponent, inf or nan.
  const std::size_t dot = t.find('.');
  const std::string_view whole = std::string_view(t).substr(0, dot);
  const std::string_view part =
      dot == std::string::npos ? std::string_view() : std::string_view(t).substr(dot + 1);
  if (!detail::all_digits(whole) || !detail::all_digits(part) || whole.size() + part.size() == 0)
    detail::bad(name, text, "must be a number of seconds >= 0, e.g. 60 or 1.5 (0: off)");
  const double v = std::strtod(t.c_str(), nullptr);
  if (v > week_seconds) detail::bad(name, text, "is longer than a week");
  return v;
}

const char* placement_name(placement p) noexcept {
  return p == placement::cyclic ? "cyclic" : "block";
}

const char* transport_kind_name(transport_kind t) noexcept {
  switch (t) {
    case transport_kind::mpi:
      return "mpi";
    case transport_kind::shm:
      return "shm";
    case transport_kind::shm_zero_copy:
      return "shm-zero-copy";
    case transport_kind::rma:
      return "rma";
    case transport_kind::automatic:
      break;
  }
  return "auto";
}

const char* large_kind_name(large_kind k) noexcept {
  switch (k) {
    case large_kind::two_sided:
      return "two-sided";
    case large_kind::rendezvous:
      return "rendezvous";
    case large_kind::automatic:
      break;
  }
  return "auto";
}

std::string synthetic_with_pus(std::string_view desc) {
  std::string text(desc);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  const size_t last = text.find_last_of(" \t");
  std::string tail = text.substr(last == std::string::npos ? 0 : last + 1);
  for (char& c : tail) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!text.empty() && tail.rfind("pu:", 0) != 0) text += " pu:1";
  return text;
}

const setting_limit& limit_of(std::string_view name) {
  for (const auto& l : setting_limits)
    if (l.name == name) return l;
  throw error("no limit is known for the setting " + std::string(name));
}

namespace {
std::string bytes_text(std::uint64_t v) {
  static constexpr std::pair<std::uint64_t, const char*> units[] = {
      {std::uint64_t{1} << 30, " GiB"}, {std::uint64_t{1} << 20, " MiB"}, {1024, " KiB"}};
  for (const auto& [unit, name] : units)
    if (v >= unit && v % unit == 0) return std::to_string(v / unit) + name;
  return std::to_string(v) + " bytes";
}
}  // namespace

std::string combine_cache_default_text() {
  return "up to " + std::to_string(default_combine_cache_entries) + " within " +
         bytes_text(default_combine_cache_budget) + " per rank";
}

std::string range_text(const setting_limit& l) {
  if (l.bytes) return bytes_text(l.min) + " to " + bytes_text(l.max);
  return std::to_string(l.min) + " to " + std::to_string(l.max);
}

std::size_t parse_bytes(const std::string& name, const std::string& text,
                        const setting_limit& range) {
  const std::string t = std::string(detail::trim(text));
  size_t end = 0;
  while (end < t.size() && std::isdigit(static_cast<unsigned char>(t[end]))) ++end;
  const std::string suffix = t.substr(end);
  const std::string why = "must be a byte count from " + range_text(range) +
                          ": digits with an optional suffix k, Ki, M or Mi";
  std::uint64_t scale = 1;
  if (suffix.empty())
    scale = 1;
  else if (suffix == "k" || suffix == "K")
    scale = 1000;
  else if (suffix == "Ki")
    scale = 1024;
  else if (suffix == "M")
    scale = std::uint64_t{1000} * 1000;
  else if (suffix == "Mi")
    scale = std::uint64_t{1024} * 1024;
  else
    detail::bad(name, text, why);
  std::uint64_t v = 0;
  if (!detail::parse_unsigned(t.substr(0, end), range.max, v)) detail::bad(name, text, why);
  if (v > range.max / scale || v * scale < range.min) detail::bad(name, text, why);
  return static_cast<std::size_t>(v * scale);
}

std::vector<int> parse_int_list(const std::string& name, const std::string& text) {
  std::vector<int> out;
  for (std::string_view piece : detail::split(text, ",")) {
    const std::string part = std::string(detail::trim(piece));
    std::uint64_t v = 0;
    if (!detail::parse_unsigned(part, static_cast<std::uint64_t>(std::numeric_limits<int>::max()),
                                v))
      detail::bad(name, text,
                  "entry " + std::to_string(out.size() + 1) + " ('" + part +
                      "') is not a positive integer; expected sizes like 4,2,3");
    if (v == 0)
      detail::bad(name, text,
                  "entry " + std::to_string(out.size() + 1) + " is 0; sizes must be >= 1");
    out.push_back(static_cast<int>(v));
  }
  return out;
}

namespace {
// An integer within `name`'s limit (and a power of two where it says so).
std::uint64_t parse_limited(const std::string& name, const std::string& text,
                            const setting_limit& l, const char* unit) {
  std::uint64_t v = 0;
  const std::string digits(detail::trim(text));
  const bool ok = !digits.empty() && detail::parse_unsigned(digits, l.max, v) && v >= l.min &&
                  (!l.power_of_two || (v & (v - 1)) == 0);
  if (!ok)
    detail::bad(
        name, text,
        std::string(l.power_of_two ? "must be a power of two from " : "must be an integer from ") +
            range_text(l) + unit);
  return v;
}
}  // namespace

int parse_n_buffers(const std::string& name, const std::string& text) {
  return static_cast<int>(parse_limited(name, text, limit_of("CONVOY_N_BUFFERS"), ""));
}

std::size_t parse_trace_events(const std::string& name, const std::string& text) {
  return parse_limited(name, text, limit_of("CONVOY_TRACE_EVENTS"), "");
}

std::size_t parse_combine_cache(const std::string& name, const std::string& text) {
  return parse_limited(name, text, limit_of("CONVOY_COMBINE_CACHE"), " (entries per lane)");
}

std::uint32_t parse_combine_min_hit(const std::string& name, const std::string& text) {
  return static_cast<std::uint32_t>(parse_limited(name, text, limit_of("CONVOY_COMBINE_MIN_HIT"),
                                                  " (folds per 1024 records examined)"));
}

std::uint32_t parse_combine_saved_ns(const std::string& name, const std::string& text) {
  return static_cast<std::uint32_t>(parse_limited(name, text, limit_of("CONVOY_COMBINE_SAVED_NS"),
                                                  " (nanoseconds; 0: measured)"));
}

}  // namespace convoy::base
