// The one parser of every setting (base/README.md BASE-4, BASE-5).
#include <algorithm>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <cstddef>
#include <sstream>
#include <string>

#include "text.hpp"
#include "values.hpp"
#include "variables.hpp"

namespace convoy::base {

namespace {

std::string trimmed(std::string_view s) { return std::string(detail::trim(s)); }

// A setting naming a file or directory (`what`) may not be blank: the one message for all
// (no semicolon: CMake scripts that check messages would split it as a list).
void not_blank(const char* name, const std::string& v, const char* what) {
  if (trimmed(v).empty())
    detail::bad(name, v, std::string("is empty (unset it or give ") + what + ")");
}

std::string show(const std::optional<std::string>& v) { return v ? *v : std::string(); }

// The one of `kinds` whose name (`name_of`) is the value, trimmed; else "<var>='<v>': must be
// <names>" with the names in the order given.
template <class K, std::size_t N, class NameOf>
K parse_kind(const char* var, const std::string& v, const K (&kinds)[N], NameOf name_of) {
  const std::string t = trimmed(v);
  for (const K k : kinds)
    if (t == name_of(k)) return k;
  std::string names;
  for (std::size_t i = 0; i < N; ++i)
    names += std::string(i == 0 ? "" : (i + 1 == N ? " or " : ", ")) + name_of(kinds[i]);
  detail::bad(var, v, "must be " + names);
}

}  // namespace

const std::vector<std::string>& settings::variable_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& v : detail::variables()) n.push_back(v.name);
    return n;
  }();
  return names;
}

settings settings::from_values(const std::map<std::string, std::string>& values) {
  settings s;
  auto get = [&](const char* name) -> const std::string* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  };
  if (const auto* v = get("CONVOY_MESH")) {
    try {
      (void)parse_mesh_spec(*v);
    } catch (const error& e) {
      throw error(std::string("CONVOY_MESH: ") + e.what());
    }
    s.mesh = *v;
  }
  if (const auto* v = get("CONVOY_EMULATE_NODES"))
    s.emulate_nodes = parse_int_list("CONVOY_EMULATE_NODES", *v);
  if (const auto* v = get("CONVOY_EMULATE_TOPOLOGY")) {
    const std::string t = trimmed(*v);
    if (t.empty()) detail::bad("CONVOY_EMULATE_TOPOLOGY", *v, "is empty");
    try {
      detail::check_synthetic(t);
    } catch (const error& e) {
      detail::bad("CONVOY_EMULATE_TOPOLOGY", *v, e.what());
    }
    s.emulate_topology = t;
  }
  if (const auto* v = get("CONVOY_EMULATE_MAP")) {
    const placement maps[] = {placement::block, placement::cyclic};
    s.emulate_map = parse_kind("CONVOY_EMULATE_MAP", *v, maps, placement_name);
  }
  if (const auto* v = get("CONVOY_BUFFER_BYTES"))
    s.buffer_bytes = parse_bytes("CONVOY_BUFFER_BYTES", *v);
  if (const auto* v = get("CONVOY_N_BUFFERS"))
    s.n_buffers = parse_n_buffers("CONVOY_N_BUFFERS", *v);
  if (const auto* v = get("CONVOY_TUNE_FILE")) {
    not_blank("CONVOY_TUNE_FILE", *v, "a path");
    s.tune_file = *v;
  }
  if (const auto* v = get("CONVOY_TRANSPORT")) {
    const transport_kind kinds[] = {transport_kind::automatic, transport_kind::mpi,
                                    transport_kind::shm, transport_kind::shm_zero_copy,
                                    transport_kind::rma};
    s.transport = parse_kind("CONVOY_TRANSPORT", *v, kinds, transport_kind_name);
  }
  if (const auto* v = get("CONVOY_LARGE")) {
    const large_kind kinds[] = {large_kind::automatic, large_kind::two_sided,
                                large_kind::rendezvous};
    s.large = parse_kind("CONVOY_LARGE", *v, kinds, large_kind_name);
  }
  if (const auto* v = get("CONVOY_WATCHDOG"))
    s.watchdog_seconds = parse_seconds("CONVOY_WATCHDOG", *v);
  if (const auto* v = get("CONVOY_WATCHDOG_ABORT")) {
    const std::string t = trimmed(*v);
    if (t != "0" && t != "1") detail::bad("CONVOY_WATCHDOG_ABORT", *v, "must be 0 or 1");
    s.watchdog_abort = t == "1";
  }
  if (const auto* v = get("CONVOY_STATS")) {
    not_blank("CONVOY_STATS", *v, "a path");
    s.stats_path = *v;
  }
  if (const auto* v = get("CONVOY_TRACE")) {
    not_blank("CONVOY_TRACE", *v, "a directory");
    s.trace_dir = trimmed(*v);
  }
  if (const auto* v = get("CONVOY_TRACE_EVENTS"))
    s.trace_events = parse_trace_events("CONVOY_TRACE_EVENTS", *v);
  if (const auto* v = get("CONVOY_COMBINE_CACHE"))
    s.combine_cache = parse_combine_cache("CONVOY_COMBINE_CACHE", *v);
  if (const auto* v = get("CONVOY_COMBINE_MIN_HIT"))
    s.combine_min_hit = parse_combine_min_hit("CONVOY_COMBINE_MIN_HIT", *v);
  if (const auto* v = get("CONVOY_COMBINE_SAVED_NS"))
    s.combine_saved_ns = parse_combine_saved_ns("CONVOY_COMBINE_SAVED_NS", *v);
  if (const auto* v = get("CONVEY_NLOCAL"))
    s.convey_nlocal = detail::parse_positive_int("CONVEY_NLOCAL", *v);
  if (const auto* v = get("CONVEY_BUFFER_SIZE"))
    s.convey_buffer_size = parse_bytes("CONVEY_BUFFER_SIZE", *v, limit_of("CONVEY_BUFFER_SIZE"));
  return s;
}

std::string settings::mesh_text() const {
  if (mesh) return *mesh;
  return tuning.mesh().value_or("auto");
}

mesh_spec settings::mesh_or_auto() const { return parse_mesh_spec(mesh_text()); }

std::size_t settings::buffer_bytes_or_default() const {
  if (buffer_bytes) return *buffer_bytes;
  return tuning.buffer_bytes().value_or(default_buffer_bytes);
}

int settings::n_buffers_or_default() const {
  if (n_buffers) return *n_buffers;
  return tuning.n_buffers().value_or(default_n_buffers);
}

std::string settings::describe() const {
  std::vector<std::string> shown;
  auto list = [](const std::vector<int>& v) {
    std::string s;
    // Appended in place: `"," + std::to_string(x)` (operator+ onto a temporary) draws a
    // false -Wrestrict from GCC 12 at -O2 and above.
    for (int x : v) {
      if (!s.empty()) s += ',';
      s += std::to_string(x);
    }
    return s;
  };
  auto num = [](const auto& v) { return v ? std::to_string(*v) : std::string(); };
  shown.push_back(show(mesh));
  shown.push_back(emulate_nodes ? list(*emulate_nodes) : "");
  shown.push_back(show(emulate_topology));
  shown.emplace_back(emulate_map ? placement_name(*emulate_map) : "");
  shown.push_back(num(buffer_bytes));
  shown.push_back(num(n_buffers));
  shown.push_back(show(tune_file));
  shown.emplace_back(transport ? transport_kind_name(*transport) : "");
  shown.emplace_back(large ? large_kind_name(*large) : "");
  std::ostringstream seconds;
  if (watchdog_seconds) seconds << *watchdog_seconds;
  shown.push_back(seconds.str());
  shown.emplace_back(watchdog_abort ? (*watchdog_abort ? "1" : "0") : "");
  shown.push_back(show(stats_path));
  shown.push_back(show(trace_dir));
  shown.push_back(num(trace_events));
  shown.push_back(num(combine_cache));
  shown.push_back(num(combine_min_hit));
  shown.push_back(num(combine_saved_ns));
  shown.push_back(num(convey_nlocal));
  shown.push_back(num(convey_buffer_size));
  const bool set[] = {mesh.has_value(),
                      emulate_nodes.has_value(),
                      emulate_topology.has_value(),
                      emulate_map.has_value(),
                      buffer_bytes.has_value(),
                      n_buffers.has_value(),
                      tune_file.has_value(),
                      transport.has_value(),
                      large.has_value(),
                      watchdog_seconds.has_value(),
                      watchdog_abort.has_value(),
                      stats_path.has_value(),
                      trace_dir.has_value(),
                      trace_events.has_value(),
                      combine_cache.has_value(),
                      combine_min_hit.has_value(),
                      combine_saved_ns.has_value(),
                      convey_nlocal.has_value(),
                      convey_buffer_size.has_value()};
  const auto& vars = detail::variables();
  std::vector<std::string> values;
  size_t width = 0;
  for (size_t i = 0; i < shown.size(); ++i) {
    values.push_back(set[i] ? "'" + shown[i] + "'" : "(unset: " + vars[i].default_text + ")");
    width = std::max(width, values.back().size());
  }
  std::ostringstream out;
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string& name = vars[i].name;
    out << name << std::string(25 - name.size(), ' ') << values[i]
        << std::string(width + 2 - values[i].size(), ' ') << vars[i].meaning << '\n';
  }
  if (!tuning.path.empty()) {
    out << "tuning file " << tuning.path << (tuning.entries.empty() ? " (no entries)" : ":")
        << '\n';
    for (const auto& [key, value] : tuning.entries) out << "  " << key << '=' << value << '\n';
  }
  return out.str();
}

}  // namespace convoy::base
