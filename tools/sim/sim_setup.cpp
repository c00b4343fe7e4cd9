// convoy-sim's machine and plan: the topology module's emulated machine and mesh specs, the
// router's plans — the same calls the library makes (termination/src/make_engine.cpp).
#include <convoy/base/error.hpp>
#include <convoy/base/mesh_spec.hpp>
#include <convoy/topology/build_mesh.hpp>
#include <convoy/topology/machine.hpp>
#include <numeric>
#include <string>

#include "sim_run.hpp"

namespace convoy::sim {

namespace {

// The rank count: given, else the product of a Cartesian mesh, else the node sizes' sum.
int rank_count(const run_config& c, const base::mesh_spec& spec) {
  if (c.machine.ranks > 0) return c.machine.ranks;
  if (spec.form == base::mesh_spec::kind::cartesian) {
    long long p = 1;
    for (const int s : spec.shape) {
      p *= s;
      if (p > (1LL << 21)) throw convoy::error("mesh '" + c.plan.mesh + "' has over 2^21 cells");
    }
    return static_cast<int>(p);
  }
  if (!c.machine.node_sizes.empty())
    return std::accumulate(c.machine.node_sizes.begin(), c.machine.node_sizes.end(), 0);
  throw convoy::error("give --ranks, a Cartesian --mesh AxBx..., or --nodes");
}

std::vector<int> node_sizes(const machine_config& m, int p) {
  if (!m.node_sizes.empty()) return m.node_sizes;
  if (m.ranks_per_node <= 0) return {p};
  std::vector<int> sizes(static_cast<std::size_t>(p / m.ranks_per_node), m.ranks_per_node);
  if (p % m.ranks_per_node != 0) sizes.push_back(p % m.ranks_per_node);
  return sizes;
}

// The machine topology::emulate_machine builds (CONVOY_EMULATE_NODES, _MAP; TOPO-2: nodes
// numbered by lowest rank, local ranks in rank order), without hwloc: a synthetic hwloc
// topology of a node with thousands of PUs takes minutes to load (its insertion is
// quadratic), and a virtual node needs none of it. The node's ranks are spread evenly
// over `sockets` packages, one core each.
topology::machine emulated_machine(int p, const std::vector<int>& sizes, int sockets, bool cyclic) {
  long long total = 0;
  for (const int s : sizes) {
    if (s < 1) throw convoy::error("--nodes: every node needs at least one rank");
    total += s;
  }
  if (total != p)
    throw convoy::error("the node sizes hold " + std::to_string(total) + " ranks, but there are " +
                        std::to_string(p) + " ranks");
  const auto n_nodes = sizes.size();
  std::vector<int> node_of(static_cast<std::size_t>(p));
  std::vector<int> room(sizes);
  std::size_t n = 0;
  for (int r = 0; r < p; ++r) {
    while (room[n] == 0) n = (n + 1) % n_nodes;
    node_of[static_cast<std::size_t>(r)] = static_cast<int>(n);
    --room[n];
    if (cyclic) n = (n + 1) % n_nodes;  // mpirun --map-by node; else fill node by node
  }
  topology::machine m;
  m.emulated = true;
  m.source = "convoy-sim emulation";
  m.nodes.resize(n_nodes);
  for (std::size_t k = 0; k < n_nodes; ++k) {
    m.nodes[k].host = "emu" + std::to_string(k);
    m.nodes[k].n_packages = sockets;
    m.nodes[k].n_cores = sizes[k];
  }
  for (int r = 0; r < p; ++r) {
    auto& node = m.nodes[static_cast<std::size_t>(node_of[static_cast<std::size_t>(r)])];
    const int local = static_cast<int>(node.ranks.size());
    const int per_socket = (node.n_cores + sockets - 1) / sockets;
    topology::rank_place place;
    place.rank = r;
    place.node = node_of[static_cast<std::size_t>(r)];
    place.package = local / per_socket;
    place.numa = place.package;
    place.core = local;
    place.local_rank = local;
    place.host = node.host;
    m.ranks.push_back(place);
    node.ranks.push_back(r);
  }
  return m;
}

}  // namespace

std::shared_ptr<const router::route_plan> make_sim_plan(const run_config& c,
                                                        std::vector<int>& node_of,
                                                        std::vector<int>& socket_of) {
  const auto spec = base::parse_mesh_spec(c.plan.mesh);
  const int p = rank_count(c, spec);
  if (p < 1 || p > (1 << 21))
    throw convoy::error("--ranks " + std::to_string(p) + " is outside 1..2097152");
  const auto sizes = node_sizes(c.machine, p);
  if (c.machine.sockets_per_node < 1) throw convoy::error("--sockets must be at least 1");
  const auto m = emulated_machine(p, sizes, c.machine.sockets_per_node, c.machine.cyclic);
  node_of.assign(static_cast<std::size_t>(p), 0);
  socket_of.assign(static_cast<std::size_t>(p), 0);
  for (const auto& r : m.ranks) {
    node_of[static_cast<std::size_t>(r.rank)] = r.node;
    socket_of[static_cast<std::size_t>(r.rank)] = r.package < 0 ? 0 : r.package;
  }
  if (c.plan.tensor != 0) {
    if (c.plan.tensor < 1 || c.plan.tensor > 3)
      throw convoy::error("--tensor " + std::to_string(c.plan.tensor) + " is not 1, 2 or 3");
    const int n_local = c.plan.n_local > 0 ? c.plan.n_local : sizes.front();
    return router::make_tensor_plan(c.plan.tensor, p, c.plan.tensor == 1 ? 1 : n_local);
  }
  return router::make_mesh_plan(topology::build_mesh(m, spec), c.plan.dim_order);
}

}  // namespace convoy::sim
