// Reading a measured run's stats document (sim_stats.hpp): every field the replay uses is
// checked where it is read, and a failure names the file and the field's path.
#include "sim_stats.hpp"

#include <algorithm>
#include <convoy/base/error.hpp>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace convoy::sim {

namespace {

using nlohmann::json;

class reader {
 public:
  explicit reader(std::string name) : name_(std::move(name)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw convoy::error("stats file '" + name_ + "': " + path + ": " + what);
  }
  const json& field(const json& obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) fail(path, "is not an object");
    const auto it = obj.find(key);
    if (it == obj.end()) fail(path + (path.empty() ? "" : ".") + key, "missing");
    return *it;
  }
  std::uint64_t count(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
      fail(join(path, key), "is not an integer >= 0");
    return v.get<std::uint64_t>();
  }
  int integer(const json& obj, const std::string& path, const char* key, long long lo,
              long long hi) const {
    const std::uint64_t v = count(obj, path, key);
    if (static_cast<long long>(v) < lo || v > static_cast<std::uint64_t>(hi))
      fail(join(path, key),
           std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    return static_cast<int>(v);
  }
  double seconds(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_number() || v.get<double>() < 0) fail(join(path, key), "is not a number >= 0");
    return v.get<double>();
  }
  std::string text(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_string()) fail(join(path, key), "is not a string");
    return v.get<std::string>();
  }
  const json& array(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_array()) fail(join(path, key), "is not an array");
    return v;
  }
  std::vector<int> ints(const json& obj, const std::string& path, const char* key, int lo,
                        int hi) const {
    const json& a = array(obj, path, key);
    std::vector<int> out;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string p = join(path, key) + "[" + std::to_string(i) + "]";
      if (!a[i].is_number_integer() || a[i].get<long long>() < lo || a[i].get<long long>() > hi)
        fail(p, "is not an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
      out.push_back(a[i].get<int>());
    }
    return out;
  }
  static std::string join(const std::string& path, const char* key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }
  static std::string at(const std::string& path, const char* key, std::size_t i) {
    return join(path, key) + "[" + std::to_string(i) + "]";
  }

 private:
  std::string name_;
};

// The node field `key` of `rank`: in 0..nodes-1 and the run's rank_node[rank].
int read_node(const reader& rd, const json& j, const std::string& p, const char* key,
              const measured_run& run, int rank) {
  const int node = rd.integer(j, p, key, 0, run.nodes - 1);
  const int expected = run.rank_node[static_cast<std::size_t>(rank)];
  if (node != expected)
    rd.fail(reader::join(p, key), std::to_string(node) + " is not rank_node[" +
                                      std::to_string(rank) + "] = " + std::to_string(expected));
  return node;
}

measured_link read_link(const reader& rd, const json& j, const std::string& p,
                        const measured_run& run, int rank) {
  measured_link l;
  l.peer = rd.integer(j, p, "peer", 0, run.ranks - 1);
  if (l.peer == rank) rd.fail(p + ".peer", "is the rank itself (loopback is not a link)");
  l.peer_node = read_node(rd, j, p, "peer_node", run, l.peer);
  l.items_sent = rd.count(j, p, "items_sent");
  l.bytes_sent = rd.count(j, p, "bytes_sent");
  l.buffers_full = rd.count(j, p, "buffers_full");
  l.buffers_partial = rd.count(j, p, "buffers_partial");
  return l;
}

measured_rank read_rank(const reader& rd, const json& j, const std::string& p,
                        const measured_run& run, int n_stages) {
  measured_rank r;
  r.rank = rd.integer(j, p, "rank", 0, run.ranks - 1);
  r.node = read_node(rd, j, p, "node", run, r.rank);
  r.pushes = rd.count(j, p, "pushes");
  r.pulls = rd.count(j, p, "pulls");
  r.advance_seconds = rd.seconds(j, p, "advance_seconds");
  r.cycle_seconds = rd.seconds(j, p, "cycle_seconds");
  const json& stages = rd.array(j, p, "stages");
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const std::string ps = reader::at(p, "stages", s);
    const int stage = rd.integer(stages[s], ps, "stage", 0, std::max(0, n_stages - 1));
    const json& links = rd.array(stages[s], ps, "links");
    for (std::size_t k = 0; k < links.size(); ++k) {
      r.links.push_back(read_link(rd, links[k], reader::at(ps, "links", k), run, r.rank));
      r.links.back().stage = stage;
    }
  }
  return r;
}

measured_conveyor read_conveyor(const reader& rd, const json& j, const std::string& p,
                                const measured_run& run) {
  measured_conveyor c;
  c.index = rd.integer(j, p, "index", 0, std::numeric_limits<int>::max());
  c.api = rd.text(j, p, "api");
  c.kind = rd.text(j, p, "kind");
  c.mesh = rd.ints(j, p, "mesh", 1, run.ranks);
  // Without a mesh (tensor, bulk kinds) every stage's dimension is -1.
  c.stage_dimension =
      c.mesh.empty() ? rd.ints(j, p, "stage_dimension", -1, -1)
                     : rd.ints(j, p, "stage_dimension", 0, static_cast<int>(c.mesh.size()) - 1);
  c.item_bytes = rd.count(j, p, "item_bytes");
  c.buffer_bytes = rd.count(j, p, "buffer_bytes");
  c.n_buffers = rd.integer(j, p, "n_buffers", 1, 1 << 20);
  c.cycles = rd.count(j, p, "cycles");
  const json& ranks = rd.array(j, p, "per_rank");
  if (ranks.size() != static_cast<std::size_t>(run.ranks))
    rd.fail(reader::join(p, "per_rank"), "holds " + std::to_string(ranks.size()) +
                                             " ranks, the job has " + std::to_string(run.ranks));
  c.per_rank.resize(ranks.size());
  std::vector<bool> seen(ranks.size());
  const int n_stages = static_cast<int>(c.stage_dimension.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const std::string pr = reader::at(p, "per_rank", i);
    measured_rank r = read_rank(rd, ranks[i], pr, run, n_stages);
    if (seen[static_cast<std::size_t>(r.rank)])
      rd.fail(pr + ".rank", "rank " + std::to_string(r.rank) + " is listed twice");
    seen[static_cast<std::size_t>(r.rank)] = true;
    c.per_rank[static_cast<std::size_t>(r.rank)] = std::move(r);
  }
  return c;
}

}  // namespace

std::uint64_t measured_conveyor::pushes() const noexcept {
  std::uint64_t n = 0;
  for (const auto& r : per_rank) n += r.pushes;
  return n;
}

measured_run parse_stats(const std::string& text, const std::string& name) {
  const reader rd(name);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw convoy::error("stats file '" + name + "' is not JSON: " + e.what());
  }
  measured_run run;
  run.name = name;
  if (const std::string f = rd.text(j, "", "format"); f != "convoy-stats")
    rd.fail("format", "'" + f + "' is not 'convoy-stats'");
  if (const std::uint64_t v = rd.count(j, "", "version"); v != 1)
    rd.fail("version", std::to_string(v) + " is not 1 (this convoy-sim reads version 1)");
  run.ranks = rd.integer(j, "", "ranks", 1, 1 << 21);
  run.nodes = rd.integer(j, "", "nodes", 1, run.ranks);
  run.rank_node = rd.ints(j, "", "rank_node", 0, run.nodes - 1);
  if (run.rank_node.size() != static_cast<std::size_t>(run.ranks))
    rd.fail("rank_node", "holds " + std::to_string(run.rank_node.size()) + " entries for " +
                             std::to_string(run.ranks) + " ranks");
  const json& conveyors = rd.array(j, "", "conveyors");
  for (std::size_t i = 0; i < conveyors.size(); ++i)
    run.conveyors.push_back(read_conveyor(rd, conveyors[i], reader::at("", "conveyors", i), run));
  return run;
}

measured_run load_stats(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw convoy::error("stats file '" + path + "' cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_stats(text.str(), path);
}

const measured_conveyor& choose_conveyor(const measured_run& run, int index) {
  if (run.conveyors.empty()) throw convoy::error("stats file '" + run.name + "' holds no conveyor");
  if (index >= 0) {
    for (const auto& c : run.conveyors)
      if (c.index == index) return c;
    throw convoy::error("stats file '" + run.name + "' has no conveyor of index " +
                        std::to_string(index) + " (--conveyor)");
  }
  const auto most = std::max_element(run.conveyors.begin(), run.conveyors.end(),
                                     [](const measured_conveyor& a, const measured_conveyor& b) {
                                       return a.pushes() < b.pushes();
                                     });
  return *most;
}

}  // namespace convoy::sim
