#include <algorithm>
#include <convoy/base/collective.hpp>
#include <convoy/base/comm_cache.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/text.hpp>
#include <convoy/topology/machine.hpp>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>

#include "hwloc_util.hpp"

namespace convoy::topology {

namespace {

// What one rank knows about itself before the machine is assembled.
struct record {
  int node_key = 0;  // any value shared exactly by the ranks of one node
  std::string host;
  detail::hw_place place;
  int n_packages = 0;
  int n_cores = 0;
};

std::string join(const std::vector<int>& v) { return base::join(v, ","); }

// Numbers nodes by their lowest rank and fills every field (TOPO-2).
machine assemble(const std::vector<record>& recs) {
  machine m;
  std::map<int, int> node_of_key;  // first-seen order == lowest-rank order
  for (const auto& r : recs)
    if (node_of_key.find(r.node_key) == node_of_key.end()) {
      const int index = static_cast<int>(node_of_key.size());
      node_of_key.emplace(r.node_key, index);
      m.nodes.push_back({r.host, {}, r.n_packages, r.n_cores});
    }
  for (int rank = 0; rank < static_cast<int>(recs.size()); ++rank) {
    const auto& r = recs[static_cast<size_t>(rank)];
    const int node = node_of_key.at(r.node_key);
    auto& info = m.nodes[static_cast<size_t>(node)];
    m.ranks.push_back({rank, node, r.place.package, r.place.numa, r.place.core,
                       static_cast<int>(info.ranks.size()), r.host});
    info.ranks.push_back(rank);
  }
  return m;
}

struct wire_record {  // fixed-size form of `record` for MPI_Allgather
  int node_key;
  int package, numa, core, n_packages, n_cores;
  char host[MPI_MAX_PROCESSOR_NAME + 1];
};

record probe_this_rank() {
  record r;
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int len = 0;
  CONVOY_MPI_CHECK(MPI_Get_processor_name(name, &len));
  r.host.assign(name, static_cast<size_t>(len));

  auto topo = detail::hw_topology::this_system();
  r.n_packages = topo.count(HWLOC_OBJ_PACKAGE);
  r.n_cores = topo.count(HWLOC_OBJ_CORE);
  std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> set(hwloc_bitmap_alloc(),
                                                                hwloc_bitmap_free);
  if (!set) throw error("hwloc_bitmap_alloc failed");
  // The binding of the whole process. An unbound process gets the set of all its allowed
  // CPUs, so its core (and possibly package) is -1: we do not guess from the CPU it last
  // ran on, which changes from run to run (TOPO-3).
  if (hwloc_get_cpubind(topo.get(), set.get(), HWLOC_CPUBIND_PROCESS) != 0)
    hwloc_bitmap_copy(set.get(), hwloc_topology_get_topology_cpuset(topo.get()));
  r.place = detail::place_of(topo, set.get());
  return r;
}

machine discover_real(MPI_Comm comm) {
  int rank = 0, size = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  CONVOY_MPI_CHECK(MPI_Comm_size(comm, &size));
  record me = base::agree(comm, probe_this_rank);

  MPI_Comm shared = MPI_COMM_NULL;
  CONVOY_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
  int lowest = rank;
  const int rc = MPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, shared);
  MPI_Comm_free(&shared);
  CONVOY_MPI_CHECK(rc);
  me.node_key = lowest;

  wire_record w{};
  w.node_key = me.node_key;
  w.package = me.place.package;
  w.numa = me.place.numa;
  w.core = me.place.core;
  w.n_packages = me.n_packages;
  w.n_cores = me.n_cores;
  std::strncpy(w.host, me.host.c_str(), MPI_MAX_PROCESSOR_NAME);
  std::vector<wire_record> all(static_cast<size_t>(size));
  CONVOY_MPI_CHECK(MPI_Allgather(&w, sizeof w, MPI_BYTE, all.data(), sizeof w, MPI_BYTE, comm));

  // From here on every rank works on the same data, so every check below fails the same
  // way everywhere (TOPO-4).
  std::vector<record> recs;
  std::map<std::string, int> key_of_host;
  std::map<int, std::string> host_of_key;
  for (int r = 0; r < size; ++r) {
    const auto& a = all[static_cast<size_t>(r)];
    record x;
    x.node_key = a.node_key;
    x.host = std::string(a.host, strnlen(a.host, MPI_MAX_PROCESSOR_NAME));
    x.place = {a.package, a.numa, a.core};
    x.n_packages = a.n_packages;
    x.n_cores = a.n_cores;
    auto [h, new_host] = key_of_host.emplace(x.host, x.node_key);
    if (!new_host && h->second != x.node_key)
      throw error("discovery: ranks " + std::to_string(h->second) + " and " + std::to_string(r) +
                  " report the same host '" + x.host +
                  "' but MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) puts them on different nodes");
    auto [k, new_key] = host_of_key.emplace(x.node_key, x.host);
    if (!new_key && k->second != x.host)
      throw error("discovery: ranks " + std::to_string(x.node_key) + " and " + std::to_string(r) +
                  " share memory (MPI_COMM_TYPE_SHARED) but report different hosts '" + k->second +
                  "' and '" + x.host + "'");
    recs.push_back(std::move(x));
  }
  machine m = assemble(recs);
  m.emulated = false;
  m.source = "MPI_Comm_split_type + host names + hwloc " + std::string(HWLOC_VERSION) +
             " (process binding)";
  return m;
}

}  // namespace

machine emulate_machine(int n_ranks, const std::vector<int>& node_sizes, std::string_view synthetic,
                        base::placement map) {
  if (n_ranks < 1) throw error("emulation: needs at least one rank");
  if (node_sizes.empty()) throw error("emulation: needs at least one node");
  long long total = 0;
  for (int s : node_sizes) {
    if (s < 1)
      throw error("emulation: node sizes " + join(node_sizes) + " contain " + std::to_string(s) +
                  "; every node needs at least one rank");
    total += s;
  }
  if (total != n_ranks)
    throw error("emulation: node sizes " + join(node_sizes) + " hold " + std::to_string(total) +
                " ranks, but there are " + std::to_string(n_ranks) + " ranks");

  const auto n_nodes = node_sizes.size();
  std::vector<int> node_of_rank(static_cast<size_t>(n_ranks));
  if (map == base::placement::block) {
    int r = 0;
    for (size_t n = 0; n < n_nodes; ++n)
      for (int k = 0; k < node_sizes[n]; ++k)
        node_of_rank[static_cast<size_t>(r++)] = static_cast<int>(n);
  } else {  // round-robin over the nodes that still have room (mpirun --map-by node)
    std::vector<int> room(node_sizes);
    size_t n = 0;
    for (int r = 0; r < n_ranks; ++r) {
      while (room[n] == 0) n = (n + 1) % n_nodes;
      node_of_rank[static_cast<size_t>(r)] = static_cast<int>(n);
      --room[n];
      n = (n + 1) % n_nodes;
    }
  }

  std::map<std::string, detail::hw_topology> topologies;  // one load per description
  auto topology_for = [&](int ranks_on_node) -> const detail::hw_topology& {
    const std::string desc =
        synthetic.empty() ? "pack:1 core:" + std::to_string(ranks_on_node) : std::string(synthetic);
    auto it = topologies.find(desc);
    if (it == topologies.end())
      it = topologies.emplace(desc, detail::hw_topology::synthetic(desc)).first;
    return it->second;
  };

  std::vector<record> recs(static_cast<size_t>(n_ranks));
  std::vector<int> next_pu(n_nodes, 0);
  for (int r = 0; r < n_ranks; ++r) {
    const auto n = static_cast<size_t>(node_of_rank[static_cast<size_t>(r)]);
    const auto& topo = topology_for(node_sizes[n]);
    const int n_pus = topo.count(HWLOC_OBJ_PU);
    if (node_sizes[n] > n_pus)
      throw error("emulation: node " + std::to_string(n) + " has " + std::to_string(node_sizes[n]) +
                  " ranks but synthetic topology '" + std::string(synthetic) + "' has only " +
                  std::to_string(n_pus) + " PUs");
    hwloc_obj_t pu =
        hwloc_get_obj_by_type(topo.get(), HWLOC_OBJ_PU, static_cast<unsigned>(next_pu[n]++));
    auto& rec = recs[static_cast<size_t>(r)];
    rec.node_key = static_cast<int>(n);
    rec.host = "emu" + std::to_string(n);
    rec.place = detail::place_of(topo, pu->cpuset);
    rec.n_packages = topo.count(HWLOC_OBJ_PACKAGE);
    rec.n_cores = topo.count(HWLOC_OBJ_CORE);
  }
  machine m = assemble(recs);
  m.emulated = true;
  m.source =
      "emulated: nodes " + join(node_sizes) + " (" + base::placement_name(map) + "), topology '" +
      (synthetic.empty() ? std::string("pack:1 core:<ranks>") : std::string(synthetic)) + "'";
  return m;
}

machine discover(MPI_Comm comm, const base::settings& s) {
  int rank = 0, size = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  CONVOY_MPI_CHECK(MPI_Comm_size(comm, &size));
  // Rank 0 decides whether and how to emulate (TOPO-4), in one broadcast: the ints [flag,
  // map, n sizes, sizes...], then the synthetic description.
  std::string decision;
  if (rank == 0) {
    const bool emulate = s.emulate_nodes.has_value() || s.emulate_topology.has_value();
    std::vector<int> head = {
        emulate ? 1 : 0,
        s.emulate_map.value_or(base::placement::block) == base::placement::cyclic ? 1 : 0};
    const std::vector<int> sizes = s.emulate_nodes.value_or(std::vector<int>{size});
    head.push_back(static_cast<int>(sizes.size()));
    head.insert(head.end(), sizes.begin(), sizes.end());
    decision.assign(reinterpret_cast<const char*>(head.data()), head.size() * sizeof(int));
    decision += s.emulate_topology.value_or("");
  }
  base::broadcast(comm, decision);
  auto int_at = [&](std::size_t i) {
    int v = 0;
    std::memcpy(&v, decision.data() + i * sizeof(int), sizeof(int));
    return v;
  };
  const bool emulate = int_at(0) != 0;
  const base::placement map = int_at(1) == 1 ? base::placement::cyclic : base::placement::block;
  std::vector<int> sizes(static_cast<std::size_t>(int_at(2)));
  for (std::size_t k = 0; k < sizes.size(); ++k) sizes[k] = int_at(3 + k);
  const std::string synthetic = decision.substr((3 + sizes.size()) * sizeof(int));

  // TOPO-15: once per communicator and emulation. The key is rank 0's decision, the same
  // on every rank, so every rank finds the machine or none does.
  const std::string key = "convoy.topology.machine" + (emulate ? " " + decision : std::string());
  if (auto known = base::comm_cached_as<machine>(comm, key)) return *known;

  machine m;
  if (!emulate) {
    m = discover_real(comm);
  } else {
    m = base::agree(comm, [&] {
      try {
        return emulate_machine(size, sizes, synthetic, map);
      } catch (const error& e) {
        throw error(std::string(e.what()) + " (CONVOY_EMULATE_NODES='" + join(sizes) +
                    "', CONVOY_EMULATE_TOPOLOGY='" + synthetic + "')");
      }
    });
  }
  base::comm_cache(comm, key, std::make_shared<machine>(m));
  return m;
}

machine discover(MPI_Comm comm) { return discover(comm, base::settings::from_env(comm)); }

std::string serialize(const machine& m) {
  std::ostringstream o;
  o << "emulated=" << m.emulated << " source=" << m.source << '\n';
  for (const auto& r : m.ranks)
    o << "rank " << r.rank << " node " << r.node << " package " << r.package << " numa " << r.numa
      << " core " << r.core << " local " << r.local_rank << " host " << r.host << '\n';
  for (const auto& n : m.nodes)
    o << "node host " << n.host << " packages " << n.n_packages << " cores " << n.n_cores
      << " ranks " << join(n.ranks) << '\n';
  return o.str();
}

}  // namespace convoy::topology
