#include <convoy/base/error.hpp>
#include <convoy/base/mesh_spec.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/base/tuning.hpp>
#include <string>

#include "text.hpp"

namespace convoy::base {

namespace {

// Checks the value of a known key (BASE-8): `key` is the part after "<kind>." if any,
// `name` the whole key, for the message.
void check_value(std::string_view key, const std::string& name, const std::string& value) {
  if (key == "buffer_bytes" || key == "capacity_bytes") {
    (void)parse_bytes(name, value);
  } else if (key == "n_buffers") {
    (void)parse_n_buffers(name, value);
  } else if (key == "mesh") {
    try {
      (void)parse_mesh_spec(value);
    } catch (const error& e) {
      throw error(name + ": " + e.what());
    }
  } else if (key == "kind") {
    if (value.empty()) throw error(name + "='': is empty");
  }
}

std::string_view last_part(std::string_view key) {
  const auto dot = key.rfind('.');
  return dot == std::string_view::npos ? key : key.substr(dot + 1);
}

}  // namespace

tuning tuning::parse(const std::string& path, std::string_view text) {
  tuning t;
  t.path = path;
  int lineno = 0;
  for (std::string_view line : detail::split(text, "\n")) {
    ++lineno;
    if (const auto hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    line = detail::trim(line);
    if (line.empty()) continue;
    const std::string where = "tuning file " + path + ":" + std::to_string(lineno) + ": ";
    const auto eq = line.find('=');
    const std::string_view key =
        eq == std::string_view::npos ? "" : detail::trim(line.substr(0, eq));
    if (key.empty()) throw error(where + "expected key=value");
    const std::string value(detail::trim(line.substr(eq + 1)));
    try {
      check_value(last_part(key), std::string(key), value);
    } catch (const error& e) {
      throw error(where + e.what());
    }
    t.entries.insert_or_assign(std::string(key), value);
  }
  return t;
}

std::optional<std::string> tuning::get(std::string_view key, std::string_view kind) const {
  if (!kind.empty()) {
    const std::string scoped = std::string(kind) + "." + std::string(key);
    if (const auto it = entries.find(scoped); it != entries.end()) return it->second;
  }
  if (const auto it = entries.find(key); it != entries.end()) return it->second;
  return std::nullopt;
}

std::optional<std::size_t> tuning::buffer_bytes(std::string_view kind) const {
  for (const bool scoped : {true, false}) {
    if (scoped && kind.empty()) continue;
    for (const std::string_view key : {"buffer_bytes", "capacity_bytes"}) {
      const std::string name =
          scoped ? std::string(kind) + "." + std::string(key) : std::string(key);
      if (const auto it = entries.find(name); it != entries.end())
        return parse_bytes(name, it->second);
    }
  }
  return std::nullopt;
}

std::optional<int> tuning::n_buffers(std::string_view kind) const {
  const auto v = get("n_buffers", kind);
  return v ? std::optional(parse_n_buffers("n_buffers", *v)) : std::nullopt;
}

}  // namespace convoy::base
