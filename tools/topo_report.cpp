#include "topo_report.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>
#include <vector>

namespace convoy::tools {

namespace topo = convoy::topology;

namespace {

std::string ints(std::span<const int> v, const char* sep = ",") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {  // appended in place: GCC 12 -O3 flags "," + temp
    if (i) s += sep;
    s += std::to_string(v[i]);
  }
  return s;
}

// "[a,b,c]", built in place (as ints).
std::string bracketed(std::span<const int> v) {
  std::string s = "[";
  s += ints(v);
  s += ']';
  return s;
}

std::string level_value(int v) { return v < 0 ? "-" : std::to_string(v); }

void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += row[c] + (c + 1 < row.size() ? std::string(width[c] - row[c].size() + 2, ' ') : "");
    out << line << '\n';
  }
}

}  // namespace

std::string text_report(const topo::machine& m, const topo::mesh& g, const std::string& spec) {
  std::ostringstream out;
  out << "convoy-topo: " << m.ranks.size() << " ranks on " << m.nodes.size() << " node"
      << (m.nodes.size() == 1 ? "" : "s") << " (" << m.source << ")\n\n";
  std::vector<std::vector<std::string>> nodes{{"node", "host", "sockets", "cores", "ranks"}};
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    const auto& x = m.nodes[n];
    nodes.push_back({std::to_string(n), x.host, std::to_string(x.n_packages),
                     std::to_string(x.n_cores), ints(x.ranks, " ")});
  }
  print_table(out, nodes);

  const auto holes = g.holes();
  out << "\nmesh " << g.describe() << "  (spec " << spec << "): " << g.n_cells() << " cells, "
      << g.n_ranks() << " ranks, " << holes.size() << " hole" << (holes.size() == 1 ? "" : "s")
      << '\n';
  out << "buffers per rank: " << g.buffers_per_rank() << " = sum over dimensions of (s_d - 1)\n";
  out << "holes:";
  if (holes.empty()) out << " none";
  for (const auto& h : holes) out << " [" << ints(h) << "]";
  out << "\n\n";

  std::vector<std::string> head{"rank", "host", "node",  "socket",
                                "numa", "core", "local", "coords"};
  for (const auto& d : g.dims()) head.push_back("peers:" + d.name);
  std::vector<std::vector<std::string>> rows{head};
  for (const auto& p : m.ranks) {
    std::vector<std::string> row{std::to_string(p.rank),       p.host,
                                 std::to_string(p.node),       level_value(p.package),
                                 level_value(p.numa),          level_value(p.core),
                                 std::to_string(p.local_rank), bracketed(g.coords(p.rank))};
    for (int d = 0; d < g.n_dims(); ++d) {
      const auto peers = g.line_peers(p.rank, d);
      row.push_back(peers.empty() ? "-" : ints(peers, " "));
    }
    rows.push_back(std::move(row));
  }
  print_table(out, rows);
  return out.str();
}

std::string json_report(const topo::machine& m, const topo::mesh& g, const std::string& spec) {
  using nlohmann::json;
  json dims = json::array(), coords = json::array(), peers = json::array(), holes = json::array();
  for (int d = 0; d < g.n_dims(); ++d)
    dims.push_back({{"name", g.dim(d).name}, {"size", g.dim(d).size}});
  for (int r = 0; r < g.n_ranks(); ++r) {
    const auto c = g.coords(r);
    coords.push_back(std::vector<int>(c.begin(), c.end()));
    json line = json::array();
    for (int d = 0; d < g.n_dims(); ++d) line.push_back(g.line_peers(r, d));
    peers.push_back(std::move(line));
  }
  for (const auto& h : g.holes()) holes.push_back(std::vector<int>(h.begin(), h.end()));
  json nodes = json::array(), places = json::array();
  for (const auto& x : m.nodes)
    nodes.push_back(
        {{"host", x.host}, {"sockets", x.n_packages}, {"cores", x.n_cores}, {"ranks", x.ranks}});
  for (const auto& p : m.ranks)
    places.push_back({{"rank", p.rank},
                      {"node", p.node},
                      {"socket", p.package},
                      {"numa", p.numa},
                      {"core", p.core},
                      {"local_rank", p.local_rank},
                      {"host", p.host}});
  const json doc = {{"ranks", g.n_ranks()},        {"spec", spec},
                    {"emulated", m.emulated},      {"source", m.source},
                    {"dims", std::move(dims)},     {"buffers_per_rank", g.buffers_per_rank()},
                    {"coords", std::move(coords)}, {"holes", std::move(holes)},
                    {"peers", std::move(peers)},   {"nodes", std::move(nodes)},
                    {"places", std::move(places)}};
  // Host names are bytes: invalid UTF-8 is replaced rather than thrown.
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace convoy::tools
