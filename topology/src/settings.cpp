#include <algorithm>
#include <cctype>
#include <convoy/topology/error.hpp>
#include <convoy/topology/settings.hpp>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>

#include "hwloc_util.hpp"
#include "text.hpp"

namespace convoy::topology {

namespace {

struct variable {
  const char* name;
  const char* default_text;
  const char* meaning;
};

// The single list of every variable convoy reads (README invariant 12).
const variable variables[] = {
    {"CONVOY_MESH", "auto", "virtual mesh: auto | shape 8x4x2 | levels node,socket,numa,core"},
    {"CONVOY_EMULATE_NODES", "real nodes", "pretend nodes of these sizes, e.g. 4,2,3"},
    {"CONVOY_EMULATE_TOPOLOGY", "one package, a core per rank",
     "hwloc synthetic topology of every pretend node, e.g. \"pack:2 core:2\""},
    {"CONVOY_EMULATE_MAP", "block", "ranks over pretend nodes: block (rank order) | cyclic"},
    {"CONVOY_BUFFER_BYTES", "16384", "bytes per engine buffer (suffix k=1000, Ki=1024)"},
    {"CONVOY_N_BUFFERS", "2", "buffers per link, a power of two"},
    {"CONVOY_TUNE_FILE", "none", "path of a tuning file"},
    {"CONVOY_TRANSPORT", "auto",
     "buffer transport: auto (shared memory on a node) | mpi | shm | shm-zero-copy"},
    {"CONVEY_NLOCAL", "ranks per node", "bale: ranks per local group of tensor conveyors"},
    {"CONVEY_BUFFER_SIZE", "conveyor default", "bale: conveyor buffer bytes (suffix k=1000)"},
};

[[noreturn]] void bad(const std::string& name, const std::string& text, const std::string& why) {
  throw error(name + "='" + text + "': " + why);
}

std::string trimmed(std::string_view s) { return std::string(detail::trim(s)); }

// Digits only, no sign; returns false on overflow past `max`.
bool parse_unsigned(const std::string& digits, std::uint64_t max, std::uint64_t& out) {
  if (digits.empty()) return false;
  out = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (out > (max - d) / 10) return false;
    out = out * 10 + d;
  }
  return true;
}

int parse_positive_int(const std::string& name, const std::string& text) {
  std::uint64_t v = 0;
  if (!parse_unsigned(trimmed(text), static_cast<std::uint64_t>(std::numeric_limits<int>::max()),
                      v))
    bad(name, text, "must be a positive integer");
  if (v == 0) bad(name, text, "must be >= 1");
  return static_cast<int>(v);
}

std::string show(const std::optional<std::string>& v) { return v ? *v : std::string(); }

}  // namespace

const char* placement_name(placement p) noexcept {
  return p == placement::cyclic ? "cyclic" : "block";
}

const char* transport_choice_name(transport_choice t) noexcept {
  switch (t) {
    case transport_choice::mpi:
      return "mpi";
    case transport_choice::shm:
      return "shm";
    case transport_choice::shm_zero_copy:
      return "shm-zero-copy";
    case transport_choice::automatic:
      break;
  }
  return "auto";
}

std::size_t parse_bytes(const std::string& name, const std::string& text) {
  const std::string t = trimmed(text);
  size_t end = 0;
  while (end < t.size() && std::isdigit(static_cast<unsigned char>(t[end]))) ++end;
  const std::string suffix = t.substr(end);
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
    bad(name, text, "must be a byte count: digits with an optional suffix k, Ki, M or Mi");
  std::uint64_t v = 0;
  const std::uint64_t max = std::numeric_limits<std::uint32_t>::max();  // 4 GiB per buffer
  if (!parse_unsigned(t.substr(0, end), max, v))
    bad(name, text, "must be a byte count: digits with an optional suffix k, Ki, M or Mi");
  if (v == 0) bad(name, text, "must be at least 1 byte");
  if (v > max / scale) bad(name, text, "is larger than 4 GiB");
  return static_cast<std::size_t>(v * scale);
}

std::vector<int> parse_int_list(const std::string& name, const std::string& text) {
  std::vector<int> out;
  for (std::string_view piece : detail::split(text, ",")) {
    const std::string part = trimmed(piece);
    std::uint64_t v = 0;
    if (!parse_unsigned(part, static_cast<std::uint64_t>(std::numeric_limits<int>::max()), v))
      bad(name, text,
          "entry " + std::to_string(out.size() + 1) + " ('" + part +
              "') is not a positive integer; expected sizes like 4,2,3");
    if (v == 0)
      bad(name, text, "entry " + std::to_string(out.size() + 1) + " is 0; sizes must be >= 1");
    out.push_back(static_cast<int>(v));
  }
  return out;
}

const std::vector<std::string>& settings::variable_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& v : variables) n.emplace_back(v.name);
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
    if (t.empty()) bad("CONVOY_EMULATE_TOPOLOGY", *v, "is empty");
    try {
      (void)detail::hw_topology::synthetic(t);
    } catch (const error& e) {
      bad("CONVOY_EMULATE_TOPOLOGY", *v, e.what());
    }
    s.emulate_topology = t;
  }
  if (const auto* v = get("CONVOY_EMULATE_MAP")) {
    const std::string t = trimmed(*v);
    if (t == "block")
      s.emulate_map = placement::block;
    else if (t == "cyclic")
      s.emulate_map = placement::cyclic;
    else
      bad("CONVOY_EMULATE_MAP", *v, "must be block or cyclic");
  }
  if (const auto* v = get("CONVOY_BUFFER_BYTES"))
    s.buffer_bytes = parse_bytes("CONVOY_BUFFER_BYTES", *v);
  if (const auto* v = get("CONVOY_N_BUFFERS")) {
    const int n = parse_positive_int("CONVOY_N_BUFFERS", *v);
    if (n > 1024 || (n & (n - 1)) != 0)
      bad("CONVOY_N_BUFFERS", *v, "must be a power of two between 1 and 1024");
    s.n_buffers = n;
  }
  if (const auto* v = get("CONVOY_TUNE_FILE")) {
    if (trimmed(*v).empty()) bad("CONVOY_TUNE_FILE", *v, "is empty; unset it or give a path");
    s.tune_file = *v;
  }
  if (const auto* v = get("CONVOY_TRANSPORT")) {
    const std::string t = trimmed(*v);
    if (t == "auto")
      s.transport = transport_choice::automatic;
    else if (t == "mpi")
      s.transport = transport_choice::mpi;
    else if (t == "shm")
      s.transport = transport_choice::shm;
    else if (t == "shm-zero-copy")
      s.transport = transport_choice::shm_zero_copy;
    else
      bad("CONVOY_TRANSPORT", *v, "must be auto, mpi, shm or shm-zero-copy");
  }
  if (const auto* v = get("CONVEY_NLOCAL"))
    s.convey_nlocal = parse_positive_int("CONVEY_NLOCAL", *v);
  if (const auto* v = get("CONVEY_BUFFER_SIZE"))
    s.convey_buffer_size = parse_bytes("CONVEY_BUFFER_SIZE", *v);
  return s;
}

settings settings::from_env() {
  std::map<std::string, std::string> values;
  for (const auto& v : variables)
    if (const char* text = std::getenv(v.name)) values.emplace(v.name, text);
  return from_values(values);
}

settings settings::from_env(MPI_Comm comm) {
  // Rank 0's raw environment, as "NAME\0VALUE\0" pairs, parsed by everyone (invariant 13).
  int rank = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::string blob;
  if (rank == 0)
    for (const auto& v : variables)
      if (const char* text = std::getenv(v.name)) {
        blob += v.name;
        blob += '\0';
        blob += text;
        blob += '\0';
      }
  int len = static_cast<int>(blob.size());
  CONVOY_MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, 0, comm));
  blob.resize(static_cast<size_t>(len));
  if (len > 0) CONVOY_MPI_CHECK(MPI_Bcast(blob.data(), len, MPI_CHAR, 0, comm));
  std::map<std::string, std::string> values;
  for (size_t pos = 0; pos < blob.size();) {
    const size_t a = blob.find('\0', pos);
    const size_t b = blob.find('\0', a + 1);
    values.emplace(blob.substr(pos, a - pos), blob.substr(a + 1, b - a - 1));
    pos = b + 1;
  }
  return from_values(values);
}

mesh_spec settings::mesh_or_auto() const {
  return mesh ? parse_mesh_spec(*mesh) : mesh_spec::automatic();
}

std::string settings::describe() const {
  std::vector<std::string> shown;
  auto list = [](const std::vector<int>& v) {
    std::string s;
    for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
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
  shown.emplace_back(transport ? transport_choice_name(*transport) : "");
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
                      convey_nlocal.has_value(),
                      convey_buffer_size.has_value()};
  std::vector<std::string> values;
  size_t width = 0;
  for (size_t i = 0; i < shown.size(); ++i) {
    values.push_back(set[i] ? "'" + shown[i] + "'"
                            : "(unset: " + std::string(variables[i].default_text) + ")");
    width = std::max(width, values.back().size());
  }
  std::ostringstream out;
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string name = variables[i].name;
    out << name << std::string(25 - name.size(), ' ') << values[i]
        << std::string(width + 2 - values[i].size(), ' ') << variables[i].meaning << '\n';
  }
  return out.str();
}

}  // namespace convoy::topology
