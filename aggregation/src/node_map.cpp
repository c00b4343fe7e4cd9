#include <convoy/aggregation/node_map.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/topology/machine.hpp>
#include <string>

namespace convoy::aggregation {

node_map discover_node_map(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL)
    throw convoy::error("discover_node_map: communicator is MPI_COMM_NULL");
  const auto s = convoy::base::settings::from_env(comm);  // rank 0's environment, on every rank
  if (!s.emulate_nodes && !s.emulate_topology) return {};
  const topology::machine m = topology::discover(comm, s);
  node_map nodes;
  nodes.reserve(m.ranks.size());
  for (const auto& r : m.ranks) nodes.push_back(r.node);
  return nodes;
}

MPI_Comm split_node(MPI_Comm comm, const node_map& nodes) {
  if (comm == MPI_COMM_NULL) throw convoy::error("split_node: communicator is MPI_COMM_NULL");
  int rank = 0, size = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  CONVOY_MPI_CHECK(MPI_Comm_size(comm, &size));
  if (!nodes.empty() && static_cast<int>(nodes.size()) != size)
    throw convoy::error("split_node: the node map has " + std::to_string(nodes.size()) +
                        " entries for a communicator of " + std::to_string(size) + " ranks");
  // Checked on the whole map, which every rank holds alike: all ranks throw or none.
  for (std::size_t r = 0; r < nodes.size(); ++r)
    if (nodes[r] < 0)
      throw convoy::error("split_node: rank " + std::to_string(r) + " has the negative node " +
                          std::to_string(nodes[r]));
  MPI_Comm shared = MPI_COMM_NULL;
  CONVOY_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
  if (nodes.empty()) return shared;
  MPI_Comm node = MPI_COMM_NULL;
  const int rc = MPI_Comm_split(shared, nodes[static_cast<std::size_t>(rank)], rank, &node);
  MPI_Comm_free(&shared);
  if (rc != MPI_SUCCESS) convoy::detail::throw_mpi_error("MPI_Comm_split", rc, __FILE__, __LINE__);
  return node;
}

}  // namespace convoy::aggregation
