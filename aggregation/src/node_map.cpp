#include <convoy/aggregation/detail/rma_window.hpp>
#include <convoy/aggregation/node_map.hpp>
#include <convoy/base/comm_cache.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/topology/machine.hpp>
#include <cstdint>
#include <string>
#include <utility>

namespace convoy::aggregation {

namespace {

void check_comm(MPI_Comm comm, const char* who) {
  if (comm == MPI_COMM_NULL)
    throw convoy::error(std::string(who) + ": communicator is MPI_COMM_NULL");
}

node_map nodes_of(const topology::machine& m) {
  node_map nodes;
  nodes.reserve(m.ranks.size());
  for (const auto& r : m.ranks) nodes.push_back(r.node);
  return nodes;
}

}  // namespace

node_map discover_node_map(MPI_Comm comm, const base::settings& s) {
  check_comm(comm, "discover_node_map");
  if (!s.emulate_nodes && !s.emulate_topology) return {};
  return nodes_of(topology::discover(comm, s));
}

node_map discover_node_map(MPI_Comm comm) {
  check_comm(comm, "discover_node_map");
  return discover_node_map(comm, base::settings::from_env(comm));  // rank 0's, on every rank
}

std::function<bool(int rank, int peer)> off_node_links(MPI_Comm comm, const base::settings& s) {
  check_comm(comm, "off_node_links");
  return [nodes = nodes_of(topology::discover(comm, s))](int rank, int peer) {
    return nodes.at(static_cast<std::size_t>(rank)) != nodes.at(static_cast<std::size_t>(peer));
  };
}

MPI_Comm split_node(MPI_Comm comm, const node_map& nodes) {
  check_comm(comm, "split_node");
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

node_group::~node_group() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

namespace {

// One MPI_Win_allocate_shared of 8 bytes on the node communicator `node`, freed at once;
// true on every rank of the node if every rank made it, else false (with MPI's reason in
// `failure` on the ranks that could not). A node where some ranks made it and others did
// not keeps it (MPI_Win_free is collective).
bool probe_shared_window(MPI_Comm node, std::string& failure) {
  void* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  const int rc = MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, node, &base, &win);
  const int ok = rc == MPI_SUCCESS ? 1 : 0;
  int all = 0;
  CONVOY_MPI_CHECK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, node));
  if (all == 1) MPI_Win_free(&win);
  if (rc != MPI_SUCCESS) failure = detail::window_failure("MPI_Win_allocate_shared", rc);
  return all == 1;
}

}  // namespace

std::shared_ptr<const node_group> shared_node_group(MPI_Comm comm, const node_map& nodes) {
  check_comm(comm, "shared_node_group");
  // The key names the map by its length and a hash; the entry holds the map itself, so a
  // collision (the same on every rank: every rank holds the same map) only rebuilds.
  std::uint64_t hash = 1469598103934665603ULL;  // FNV-1a over the entries
  for (const int n : nodes) {
    hash ^= static_cast<std::uint64_t>(static_cast<unsigned>(n));
    hash *= 1099511628211ULL;
  }
  std::string key = "convoy.aggregation.node_group ";
  key += std::to_string(nodes.size());
  key += ' ';
  key += std::to_string(hash);
  if (auto known = base::comm_cached_as<const node_group>(comm, key);
      known && known->nodes == nodes)
    return known;
  auto g = std::make_shared<node_group>();
  g->nodes = nodes;
  g->comm = split_node(comm, nodes);
  CONVOY_MPI_CHECK(MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN));
  CONVOY_MPI_CHECK(MPI_Comm_size(g->comm, &g->size));
  // Whether MPI makes shared-memory windows here, agreed by the node and then by all.
  std::string failure;
  const bool node_ok = probe_shared_window(g->comm, failure);
  int mine[2] = {g->size, node_ok ? 0 : 1};
  int all[2] = {0, 0};
  CONVOY_MPI_CHECK(MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm));
  g->largest = all[0];
  g->shared_windows = all[1] == 0;
  if (!g->shared_windows) {
    if (failure.empty()) failure = "MPI cannot make shared-memory windows on some node";
    g->shared_windows_failure = failure;
  }
  MPI_Group parent = MPI_GROUP_NULL, node = MPI_GROUP_NULL;
  CONVOY_MPI_CHECK(MPI_Comm_group(comm, &parent));
  CONVOY_MPI_CHECK(MPI_Comm_group(g->comm, &node));
  std::vector<int> node_ranks(static_cast<std::size_t>(g->size));
  for (int i = 0; i < g->size; ++i) node_ranks[static_cast<std::size_t>(i)] = i;
  g->parent_rank.assign(static_cast<std::size_t>(g->size), MPI_UNDEFINED);
  const int rc =
      MPI_Group_translate_ranks(node, g->size, node_ranks.data(), parent, g->parent_rank.data());
  MPI_Group_free(&parent);
  MPI_Group_free(&node);
  if (rc != MPI_SUCCESS)
    convoy::detail::throw_mpi_error("MPI_Group_translate_ranks", rc, __FILE__, __LINE__);
  base::comm_cache(comm, key, g);
  return g;
}

}  // namespace convoy::aggregation
