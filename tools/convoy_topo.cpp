// convoy-topo: prints the machine convoy discovers and the virtual mesh it lays on it.
//
//   mpirun -np 8 convoy-topo [--json] [--mesh SPEC] [--settings]
//
// Collective over MPI_COMM_WORLD; only rank 0 prints. Bad arguments, settings or specs:
// one message on rank 0's stderr and exit code 2 on every rank (topology/README.md
// invariant 4), never a hang.
#include <mpi.h>

#include <algorithm>
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/topology/build_mesh.hpp>
#include <convoy/topology/machine.hpp>
#include <convoy/topology/mesh.hpp>
#include <cstdio>
#include <iostream>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace topo = convoy::topology;

namespace {

constexpr const char* usage =
    "usage: mpirun -np N convoy-topo [--json] [--mesh SPEC] [--settings] [--help]\n"
    "  --json        one JSON document on rank 0's stdout instead of tables\n"
    "  --mesh SPEC   mesh spec (auto | 8x4x2 | node,socket,core ...), overrides CONVOY_MESH\n"
    "  --settings    print every CONVOY_*/CONVEY_* setting and exit\n";

struct options {
  bool json = false;
  bool settings_only = false;
  bool help = false;
  std::optional<std::string> mesh;
};

options parse_args(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--json")
      o.json = true;
    else if (a == "--settings")
      o.settings_only = true;
    else if (a == "--help" || a == "-h")
      o.help = true;
    else if (a == "--mesh") {
      if (i + 1 >= argc) throw convoy::error("--mesh needs a spec, e.g. --mesh node,core");
      o.mesh = argv[++i];
    } else if (a.rfind("--mesh=", 0) == 0) {
      o.mesh = std::string(a.substr(7));
    } else {
      throw convoy::error("unknown argument '" + std::string(a) + "'");
    }
  }
  return o;
}

std::string ints(std::span<const int> v, const char* sep = ",") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

std::string level_value(int v) { return v < 0 ? "-" : std::to_string(v); }

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else
      out += c;
  }
  return out + "\"";
}

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
                                 std::to_string(p.local_rank), "[" + ints(g.coords(p.rank)) + "]"};
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
  std::ostringstream o;
  o << "{\n  \"ranks\": " << g.n_ranks() << ",\n  \"spec\": " << quoted(spec)
    << ",\n  \"emulated\": " << (m.emulated ? "true" : "false")
    << ",\n  \"source\": " << quoted(m.source) << ",\n  \"dims\": [";
  for (int d = 0; d < g.n_dims(); ++d)
    o << (d ? ", " : "") << "{\"name\": " << quoted(g.dim(d).name)
      << ", \"size\": " << g.dim(d).size << "}";
  o << "],\n  \"buffers_per_rank\": " << g.buffers_per_rank() << ",\n  \"coords\": [";
  for (int r = 0; r < g.n_ranks(); ++r)
    o << (r ? ", " : "") << "[" << ints(g.coords(r), ", ") << "]";
  o << "],\n  \"holes\": [";
  const auto holes = g.holes();
  for (size_t h = 0; h < holes.size(); ++h)
    o << (h ? ", " : "") << "[" << ints(holes[h], ", ") << "]";
  o << "],\n  \"peers\": [";
  for (int r = 0; r < g.n_ranks(); ++r) {
    o << (r ? ", " : "") << "[";
    for (int d = 0; d < g.n_dims(); ++d)
      o << (d ? ", " : "") << "[" << ints(g.line_peers(r, d), ", ") << "]";
    o << "]";
  }
  o << "],\n  \"nodes\": [";
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    const auto& x = m.nodes[n];
    o << (n ? "," : "") << "\n    {\"host\": " << quoted(x.host)
      << ", \"sockets\": " << x.n_packages << ", \"cores\": " << x.n_cores << ", \"ranks\": ["
      << ints(x.ranks, ", ") << "]}";
  }
  o << "\n  ],\n  \"places\": [";
  for (const auto& p : m.ranks)
    o << (p.rank ? "," : "") << "\n    {\"rank\": " << p.rank << ", \"node\": " << p.node
      << ", \"socket\": " << p.package << ", \"numa\": " << p.numa << ", \"core\": " << p.core
      << ", \"local_rank\": " << p.local_rank << ", \"host\": " << quoted(p.host) << "}";
  o << "\n  ]\n}\n";
  return o.str();
}

int run(MPI_Comm comm, int argc, char** argv) {
  int rank = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // Every step either succeeds on every rank or throws the same error on every rank.
  const options o = convoy::base::agree(comm, [&] { return parse_args(argc, argv); });
  if (o.help) {
    if (rank == 0) std::cout << usage;
    return 0;
  }
  convoy::base::settings s = convoy::base::settings::from_env(comm);
  if (o.settings_only) {
    if (rank == 0) std::cout << s.describe();
    return 0;
  }
  if (o.mesh) s.mesh = *o.mesh;
  const std::string spec_text = s.mesh.value_or("auto");
  const convoy::base::mesh_spec spec =
      convoy::base::agree(comm, [&] { return convoy::base::parse_mesh_spec(spec_text); });
  const topo::machine m = topo::discover(comm, s);
  const topo::mesh g = convoy::base::agree(comm, [&] { return topo::build_mesh(m, spec); });
  if (rank == 0)
    std::cout << (o.json ? json_report(m, g, convoy::base::to_string(spec))
                         : text_report(m, g, convoy::base::to_string(spec)));
  std::cout.flush();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int code = 0;
  try {
    code = run(comm, argc, argv);
  } catch (const std::exception& e) {
    if (rank == 0) std::cerr << "convoy-topo: " << e.what() << "\n" << usage;
    code = 2;
  }
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return code;
}
