#pragma once
/// @file
/// Discovery: where every rank runs (node, package, NUMA node, core), gathered into one
/// machine description that is identical on all ranks (Wesolowski et al. 2014, sec. V.C: the
/// virtual mesh is matched to this physical hierarchy). Numbered invariants: topology/README.md.
#include <mpi.h>

#include <convoy/base/settings.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace convoy::topology {

/// Where one rank runs. Indexes are hwloc logical indexes within the rank's node; -1 means
/// "not bound to a single object of that kind" (TOPO-3).
struct rank_place {
  int rank = 0;        ///< rank in the communicator given to discover()
  int node = 0;        ///< node index: nodes are numbered by their lowest rank
  int package = -1;    ///< socket within the node
  int numa = -1;       ///< NUMA node within the node
  int core = -1;       ///< core within the node
  int local_rank = 0;  ///< index of this rank among the ranks of its node, in rank order
  std::string host;    ///< MPI_Get_processor_name, or "emu<i>" for pretend nodes
  friend bool operator==(const rank_place&, const rank_place&) = default;
};

struct node_info {
  std::string host;
  std::vector<int> ranks;  ///< increasing
  int n_packages = 0;      ///< packages (sockets) of the node's hardware
  int n_cores = 0;         ///< cores of the node's hardware
  friend bool operator==(const node_info&, const node_info&) = default;
};

struct machine {
  std::vector<rank_place> ranks;  ///< index = rank
  std::vector<node_info> nodes;   ///< index = node
  bool emulated = false;
  std::string source;  ///< how it was obtained, for humans
  friend bool operator==(const machine&, const machine&) = default;
};

/// Collective over `comm`: discovers the machine, or emulates one when `s` asks for it
/// (emulate_nodes or emulate_topology set). Uses rank 0's settings when ranks disagree.
///
/// Real discovery: node from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), confirmed by
/// MPI_Get_processor_name; package, NUMA node and core from the rank's CPU binding through
/// hwloc. Guarantees: the result is identical on all ranks (TOPO-1), nodes are numbered
/// by lowest rank and local ranks follow rank order (TOPO-2).
///
/// Once per communicator and emulation (TOPO-15): later calls return the machine found
/// first, after rank 0's broadcast of its emulation settings, without probing again.
///
/// @throws convoy::error, the same message on every rank (TOPO-4): shared-memory
///   groups and host names disagree, emulated node sizes do not sum to the rank count, more
///   ranks on a pretend node than its synthetic topology has PUs, an MPI or hwloc failure.
[[nodiscard]] machine discover(MPI_Comm comm, const base::settings& s);
/// discover(comm, base::settings::from_env(comm)).
[[nodiscard]] machine discover(MPI_Comm comm);

/// Pure, no MPI: a machine of `node_sizes.size()` pretend nodes ("emu0", "emu1", ...).
/// Ranks go to nodes in rank order (block) or round-robin over nodes with room (cyclic).
/// Each node has the hwloc synthetic topology `synthetic`; the k-th rank of a node runs on
/// its k-th PU. Empty `synthetic`: each node is one package with one core per rank.
/// @throws convoy::error if a size is < 1, the sizes do not sum to n_ranks, the synthetic
///   description is invalid, or a node has more ranks than PUs.
[[nodiscard]] machine emulate_machine(int n_ranks, const std::vector<int>& node_sizes,
                                      std::string_view synthetic, base::placement map);

/// A compact text form of `m` (every field), used to check that ranks agree.
[[nodiscard]] std::string serialize(const machine& m);

}  // namespace convoy::topology
