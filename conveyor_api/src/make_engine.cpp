// Laying conveyors onto the machine: topology discovery -> route plan -> MPI transport ->
// engine. Settings precedence: explicit option > environment > tuning file > default.
#include <convoy/aggregation/hybrid_transport.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/topology/build_mesh.hpp>
#include <convoy/topology/machine.hpp>
#include <convoy/topology/mesh.hpp>
#include <convoy/topology/mesh_spec.hpp>
#include <convoy/topology/settings.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

namespace convoy {

namespace {

constexpr std::size_t default_capacity_bytes = 16384;
constexpr int default_n_buffers = 2;

// The tuning file written by convoy-tune: `key=value` lines (capacity_bytes, n_buffers,
// mesh); '#' starts a comment. CONVOY_TUNE_FILE, else ~/.config/convoy/tune.conf.
struct tuning {
  std::size_t capacity_bytes = 0;
  int n_buffers = 0;
  std::string mesh;
};

tuning read_tuning(const topology::settings& s) {
  tuning t;
  std::string path;
  if (s.tune_file) {
    path = *s.tune_file;
  } else if (const char* home = std::getenv("HOME")) {
    path = std::string(home) + "/.config/convoy/tune.conf";
  }
  if (path.empty()) return t;
  std::ifstream in(path);
  if (!in) {
    if (s.tune_file) throw error("CONVOY_TUNE_FILE: cannot read '" + path + "'");
    return t;
  }
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto eq = line.find('=');
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (eq == std::string::npos)
      throw error("tuning file " + path + ":" + std::to_string(lineno) + ": expected key=value");
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "capacity_bytes")
      t.capacity_bytes = topology::parse_bytes("capacity_bytes in " + path, value);
    else if (key == "n_buffers")
      t.n_buffers = topology::parse_int_list("n_buffers in " + path, value).at(0);
    else if (key == "mesh")
      t.mesh = value;
    // Unknown keys are ignored so that newer tuners stay readable.
  }
  return t;
}

int comm_size(MPI_Comm comm) {
  int n = 0;
  CONVOY_MPI_CHECK(MPI_Comm_size(comm, &n));
  return n;
}

}  // namespace

std::shared_ptr<const router::route_plan> make_plan(MPI_Comm comm, const conveyor_options& o) {
  const auto s = topology::settings::from_env(comm);
  const int p = comm_size(comm);
  if (o.tensor_order != 0) {
    int n_local = o.n_local;
    if (n_local == 0 && o.tensor_order > 1) {
      // Ranks per node from discovery; 1 if nodes differ or it does not divide P.
      const auto m = topology::discover(comm, s);
      n_local = static_cast<int>(m.nodes.at(0).ranks.size());
      for (const auto& node : m.nodes)
        if (static_cast<int>(node.ranks.size()) != n_local) n_local = 1;
      if (p % n_local != 0) n_local = 1;
    }
    return router::make_tensor_plan(o.tensor_order, p, o.tensor_order == 1 ? 1 : n_local);
  }
  std::string spec_text = o.mesh;
  if (spec_text.empty() && s.mesh) spec_text = *s.mesh;
  if (spec_text.empty()) spec_text = read_tuning(s).mesh;
  const auto spec = topology::parse_mesh_spec(spec_text.empty() ? "auto" : spec_text);
  const auto m = topology::discover(comm, s);
  return router::make_mesh_plan(topology::build_mesh(m, spec), o.dim_order);
}

termination::engine_options resolve_engine_options(const conveyor_options& o) {
  const auto s = topology::settings::from_env();
  const auto t = read_tuning(s);
  termination::engine_options e;
  e.capacity_bytes = o.capacity_bytes   ? o.capacity_bytes
                     : s.buffer_bytes   ? *s.buffer_bytes
                     : t.capacity_bytes ? t.capacity_bytes
                                        : default_capacity_bytes;
  e.n_buffers = o.n_buffers   ? o.n_buffers
                : s.n_buffers ? *s.n_buffers
                : t.n_buffers ? t.n_buffers
                              : default_n_buffers;
  e.steady = o.steady;
  e.steady_period = o.steady_period;
  e.elastic = o.elastic;
  return e;
}

std::unique_ptr<termination::engine> make_mpi_engine(MPI_Comm comm, const conveyor_options& o,
                                                     const transport_factory& make_transport) {
  return make_mpi_engine(comm, make_plan(comm, o), o, make_transport);
}

std::unique_ptr<termination::engine> make_mpi_engine(MPI_Comm comm,
                                                     std::shared_ptr<const router::route_plan> plan,
                                                     const conveyor_options& o,
                                                     const transport_factory& make_transport) {
  if (!plan) throw error("make_mpi_engine: null route plan");
  if (plan->n_ranks() != comm_size(comm))
    throw error("make_mpi_engine: the plan has " + std::to_string(plan->n_ranks()) +
                " ranks, the communicator " + std::to_string(comm_size(comm)));
  auto opts = resolve_engine_options(o);
  // Buffer sizes must agree on every rank (a receive buffer holds a whole sent buffer):
  // rank 0's resolution wins, whatever each rank's environment or tuning file says.
  unsigned long long sizes[2] = {opts.capacity_bytes,
                                 static_cast<unsigned long long>(opts.n_buffers)};
  CONVOY_MPI_CHECK(MPI_Bcast(sizes, 2, MPI_UNSIGNED_LONG_LONG, 0, comm));
  opts.capacity_bytes = static_cast<std::size_t>(sizes[0]);
  opts.n_buffers = static_cast<int>(sizes[1]);
  int rank = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  auto transport = make_transport ? make_transport(comm, plan)
                                  : aggregation::make_transport(
                                        comm, aggregation::transport_kind_from(
                                                  topology::settings::from_env(comm).transport));
  return std::make_unique<termination::engine>(std::move(plan), rank, std::move(transport), opts);
}

}  // namespace convoy
