#pragma once
/// @file
/// Which ranks share memory, as the transports see it (aggregation/README.md, AGG-60):
/// the nodes of topology discovery — emulated ones when CONVOY_EMULATE_NODES /
/// CONVOY_EMULATE_TOPOLOGY ask for them — so that an emulated node boundary is crossed
/// by MPI exactly as a real one would be.
#include <mpi.h>

#include <convoy/base/settings.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace convoy::aggregation {

/// The node of every rank of a communicator (index = rank), identical on every rank.
/// Empty means "the real nodes": the MPI_COMM_TYPE_SHARED groups, which are what
/// topology discovery reports when nothing is emulated (topology/README.md, invariant 2).
using node_map = std::vector<int>;

/// Collective over `comm`: the node map from topology discovery with the settings `s`, which
/// must be rank 0's (base::settings::from_env; topology::discover). Emulation off: empty
/// (the real nodes; no hwloc load). Emulation on: the pretend node of every rank
/// (CONVOY_EMULATE_MAP placement included). Throws convoy::error, on every rank alike, when
/// `comm` is MPI_COMM_NULL or discovery throws (e.g. node sizes that do not sum to the rank
/// count).
[[nodiscard]] node_map discover_node_map(MPI_Comm comm, const base::settings& s);
/// discover_node_map(comm, base::settings::from_env(comm)).
[[nodiscard]] node_map discover_node_map(MPI_Comm comm);

/// Collective over `comm`, with rank 0's settings `s`: the predicate "`rank` and `peer`
/// (ranks of `comm`) are on different nodes of topology discovery", emulated or real — the
/// links whose buffers a codec compresses (Maley & DeVinney 2019, sec. 3.6). Throws convoy::error,
/// on every rank alike, when `comm` is MPI_COMM_NULL or discovery throws; the predicate throws
/// std::out_of_range for a rank not in `comm`.
[[nodiscard]] std::function<bool(int rank, int peer)> off_node_links(MPI_Comm comm,
                                                                     const base::settings& s);

/// Collective over `comm`: the communicator of this rank's node — the ranks of its real
/// shared-memory group that `nodes` also puts on its node (all of the group when `nodes`
/// is empty), ordered as in `comm`. The caller frees it. Ranks of one emulated node that
/// sit on different hosts therefore never share memory. Throws convoy::error, on every
/// rank alike, if `nodes` is not empty and does not have one non-negative entry per rank
/// of `comm`; convoy::error with MPI's code if MPI fails.
[[nodiscard]] MPI_Comm split_node(MPI_Comm comm, const node_map& nodes);

/// A node communicator kept with the communicator it was split from (AGG-68): split_node's,
/// made once per communicator and node map and shared by every transport built on them.
struct node_group {
  node_group() = default;
  node_group(const node_group&) = delete;
  node_group& operator=(const node_group&) = delete;
  ~node_group();  ///< frees `comm`, unless MPI is finalized

  node_map nodes;                 ///< the node map it was split by (empty: the real nodes)
  MPI_Comm comm = MPI_COMM_NULL;  ///< this rank's node (split_node); errors return
  int size = 0;                   ///< ranks in this rank's node
  int largest = 0;                ///< ranks in the largest node of the parent communicator
  std::vector<int> parent_rank;   ///< index = rank in `comm`: the rank in the parent
  /// MPI made a shared-memory window (MPI_Win_allocate_shared) on every node of the parent
  /// communicator (AGG-161): false where its one-sided components are all excluded.
  bool shared_windows = true;
  std::string shared_windows_failure;  ///< why not (window_failure's text), or empty
};

/// Collective over `comm` the first time for `comm` and `nodes` (split_node, a probe
/// window of 8 bytes per node, then an MPI_Allreduce for the largest node and the probe); afterwards local, the same group: it is kept with
/// `comm` until `comm` is freed or MPI finalized (base::comm_cache). Throws as split_node.
[[nodiscard]] std::shared_ptr<const node_group> shared_node_group(MPI_Comm comm,
                                                                  const node_map& nodes);

}  // namespace convoy::aggregation
