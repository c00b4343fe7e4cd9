// convoy-sim's machine and plan: the topology module's emulated machine and mesh specs, the
// router's plans — the same calls the library makes (conveyor_api/src/make_engine.cpp).
#include <convoy/base/error.hpp>
#include <convoy/base/mesh_spec.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/topology/build_mesh.hpp>
#include <convoy/topology/machine.hpp>
#include <numeric>
#include <string>

#include "sim_run.hpp"

namespace convoy::sim {

const char* workload_name(workload_kind w) noexcept {
  switch (w) {
    case workload_kind::uniform:
      return "uniform";
    case workload_kind::hotspot:
      return "hotspot";
    case workload_kind::permutation:
      return "permutation";
    case workload_kind::neighbour:
      return "neighbour";
  }
  return "?";
}

workload_kind parse_workload(const std::string& name) {
  for (const auto w : {workload_kind::uniform, workload_kind::hotspot, workload_kind::permutation,
                       workload_kind::neighbour})
    if (name == workload_name(w)) return w;
  throw convoy::error("workload '" + name +
                      "' is not one of uniform, hotspot, permutation, neighbour");
}

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

}  // namespace

std::shared_ptr<const router::route_plan> make_sim_plan(const run_config& c,
                                                        std::vector<int>& node_of,
                                                        std::vector<int>& socket_of) {
  const auto spec = base::parse_mesh_spec(c.plan.mesh);
  const int p = rank_count(c, spec);
  if (p < 1 || p > (1 << 21))
    throw convoy::error("--ranks " + std::to_string(p) + " is outside 1..2097152");
  const auto sizes = node_sizes(c.machine, p);
  int widest = 0;
  for (const int s : sizes) widest = std::max(widest, s);
  const int sockets = c.machine.sockets_per_node;
  if (sockets < 1) throw convoy::error("--sockets must be at least 1");
  // One PU per rank: `sockets` packages with enough cores for the widest node.
  const std::string synthetic =
      sockets == 1 ? std::string()
                   : "pack:" + std::to_string(sockets) +
                         " core:" + std::to_string((widest + sockets - 1) / sockets) + " pu:1";
  const auto m = topology::emulate_machine(
      p, sizes, synthetic, c.machine.cyclic ? base::placement::cyclic : base::placement::block);
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
