#include <array>
#include <cctype>
#include <convoy/base/error.hpp>
#include <convoy/base/mesh_spec.hpp>
#include <convoy/base/text.hpp>
#include <limits>
#include <string>

#include "text.hpp"

namespace convoy::base {

namespace {

constexpr std::array<level, 4> all_levels{level::node, level::socket, level::numa, level::core};

using detail::trim;

[[noreturn]] void bad(std::string_view spec, const std::string& problem) {
  throw error("mesh spec '" + std::string(spec) + "': " + problem);
}

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// A spec is read as a shape when it has no letters other than the 'x' separator.
bool looks_cartesian(std::string_view s) {
  for (char c : s)
    if (std::isalpha(static_cast<unsigned char>(c)) && c != 'x' && c != 'X') return false;
  return true;
}

int parse_size(std::string_view spec, std::string_view part, size_t index) {
  part = trim(part);
  const std::string where = "size " + std::to_string(index + 1);
  if (part.empty()) bad(spec, where + " is empty (expected sizes like 8x4x2)");
  bool negative = false;
  std::string_view digits = part;
  if (digits.front() == '-' || digits.front() == '+') {
    negative = digits.front() == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) bad(spec, where + " '" + std::string(part) + "' is not a number");
  long long v = 0;
  for (char c : digits) {
    if (!is_digit(c)) bad(spec, where + " '" + std::string(part) + "' is not a number");
    v = v * 10 + (c - '0');
    if (v > std::numeric_limits<int>::max())
      bad(spec, where + " '" + std::string(part) + "' is too large");
  }
  if (negative && v != 0)
    bad(spec, where + " is negative (" + std::string(part) + "); sizes must be >= 1");
  if (v == 0) bad(spec, where + " is zero; sizes must be >= 1");
  return static_cast<int>(v);
}

mesh_spec parse_shape(std::string_view spec, std::string_view s) {
  std::vector<int> shape;
  for (std::string_view part : detail::split(s, "xX"))
    shape.push_back(parse_size(spec, part, shape.size()));
  return mesh_spec::cartesian(std::move(shape));
}

mesh_spec parse_levels(std::string_view spec, std::string_view s) {
  std::vector<level> levels;
  for (std::string_view piece : detail::split(s, ",")) {
    const std::string_view word = trim(piece);
    const std::string position = "level " + std::to_string(levels.size() + 1);
    if (word.empty()) bad(spec, position + " is empty (expected levels like node,socket,core)");
    if (is_digit(word.front()) || word.front() == '-')
      bad(spec, "mixes a Cartesian size ('" + std::string(word) +
                    "') with named levels; use either a shape like 8x4x2 or levels like node,core");
    std::string lower(word);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "package") lower = "socket";
    bool found = false;
    for (level l : all_levels) {
      if (lower != level_name(l)) continue;
      found = true;
      for (level seen : levels)
        if (seen == l) bad(spec, "level '" + lower + "' is repeated");
      if (!levels.empty() && levels.back() > l)
        bad(spec, "level '" + lower + "' comes after '" + std::string(level_name(levels.back())) +
                      "'; levels go from outermost to innermost: node, socket, numa, core");
      levels.push_back(l);
    }
    if (!found)
      bad(spec,
          "unknown level '" + std::string(word) +
              "' (expected auto, a shape like 8x4x2, or levels from node, socket, numa, core)");
  }
  return mesh_spec::of_levels(std::move(levels));
}

}  // namespace

std::string_view level_name(level l) noexcept {
  switch (l) {
    case level::node:
      return "node";
    case level::socket:
      return "socket";
    case level::numa:
      return "numa";
    case level::core:
      return "core";
  }
  return "?";
}

mesh_spec parse_mesh_spec(std::string_view spec) {
  const std::string_view s = trim(spec);
  if (s.empty())
    bad(spec, "is empty (expected auto, a shape like 8x4x2, or levels like node,core)");
  if (s == "auto") return mesh_spec::automatic();
  if (looks_cartesian(s)) {
    if (s.find(',') != std::string_view::npos)
      bad(spec, "a shape separates sizes with 'x', not ','");
    return parse_shape(spec, s);
  }
  return parse_levels(spec, s);
}

std::string to_string(const mesh_spec& s) {
  std::string out;
  switch (s.form) {
    case mesh_spec::kind::automatic:
      return "auto";
    case mesh_spec::kind::cartesian:
      return join(s.shape, "x");
    case mesh_spec::kind::levels: {
      std::vector<std::string_view> names;
      for (level l : s.levels) names.push_back(level_name(l));
      return join(names, ",");
    }
  }
  return out;
}

}  // namespace convoy::base
