#pragma once
/// @file
/// Route plans: for each stage, a rank's peers and, for any destination, the next hop.
///
/// A plan over P ranks has S stages. An item is routed hop by hop; every hop uses a
/// stage strictly greater than the previous hop's (ROUTE-1 in router/README.md).
/// Because stages only increase along a route, the buffer-dependency graph is acyclic
/// (no routing deadlock) and termination can close stages in order (Wesolowski et al. 2014, sec.
/// III.D).
///
/// Every plan also defines the per-item routing tag carried on each stage's hop: the
/// smallest integer that, with the sender's and receiver's ranks (known to the receiver
/// from the link), recovers the item's source and destination. Tags are stored
/// little-endian in tag_bytes(stage) bytes in front of each item.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace convoy::topology {
class mesh;
}

namespace convoy::router {

/// The next hop of an item.
struct hop {
  int stage = 0;       ///< stage of the hop; == n_stages() means "deliver here"
  int peer_index = 0;  ///< index into out_peers(at, stage)
  int rank = 0;        ///< the next rank (== at when delivering)
};

class route_plan {
 public:
  virtual ~route_plan() = default;

  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual int n_ranks() const noexcept = 0;
  [[nodiscard]] virtual int n_stages() const noexcept = 0;
  /// Upper bound on the hops of any route (<= n_stages()).
  [[nodiscard]] virtual int max_hops() const noexcept { return n_stages(); }
  /// Short name of a stage for reports ("core", "node", "local", "network", ...).
  [[nodiscard]] virtual std::string stage_name(int stage) const = 0;
  /// Sizes of the mesh's dimensions in dimension order (reports); empty for plans that
  /// are not a mesh (tensor schemes).
  [[nodiscard]] virtual std::vector<int> mesh_sizes() const { return {}; }
  /// The mesh dimension `stage` routes along (reports); -1 for plans that are not a mesh.
  [[nodiscard]] virtual int stage_dimension(int /*stage*/) const noexcept { return -1; }
  /// Whether the broadcast rule of ROUTE-26 (a copy that arrived on stage s goes on to
  /// every out-peer of every later stage) reaches every rank exactly once from every root:
  /// true for meshes and tensor orders 1 and 2, false for tensor order 3.
  [[nodiscard]] virtual bool broadcast_tree() const noexcept { return true; }

  /// Next hop for an item now at `at`, destined to `dest`, that may only use stages
  /// >= `first_stage` (0 for a freshly pushed item; s+1 for one that arrived via stage s).
  /// Returns {n_stages(), 0, at} when at == dest. Hot path: O(n_stages), no allocation,
  /// never throws. Preconditions: ranks in range, first_stage <= n_stages() and the item
  /// is on a valid route (the engine guarantees both).
  [[nodiscard]] virtual hop next_hop(int at, int dest, int first_stage) const noexcept = 0;

  /// The ranks `rank` may send to on `stage`, without duplicates, never `rank` itself.
  /// next_hop's peer_index indexes this list.
  [[nodiscard]] virtual std::vector<int> out_peers(int rank, int stage) const = 0;
  /// The ranks that may send to `rank` on `stage` (those whose out_peers contain it),
  /// sorted ascending.
  [[nodiscard]] virtual std::vector<int> in_peers(int rank, int stage) const = 0;

  /// Bytes of routing tag carried by each item on a hop of `stage` (0..8).
  [[nodiscard]] virtual int tag_bytes(int stage) const noexcept = 0;
  /// The tag for an item from `src` to `dst` hopping sender -> receiver on `stage`.
  [[nodiscard]] virtual std::uint64_t encode(int stage, int sender, int receiver, int src,
                                             int dst) const noexcept = 0;
  /// Inverse of encode: recovers src and dst from the tag and the link's two ends.
  virtual void decode(int stage, int sender, int receiver, std::uint64_t tag, int& src,
                      int& dst) const noexcept = 0;
};

/// TRAM over a mesh (Wesolowski et al. 2014, sec. III.B): stage i fixes dimension dim_order[i]. The
/// default order is innermost first (n_dims-1, ..., 0), TRAM's "highest differing dimension first",
/// which keeps the first hop on the node (Wesolowski et al. 2014, sec. V.C). Holes are routed
/// around (router/README.md states the bounds). Throws convoy::error on an order that is not a
/// permutation of the dimensions.
std::unique_ptr<route_plan> make_mesh_plan(const topology::mesh& m,
                                           std::vector<int> dim_order = {});

/// bale's tensor schemes (Maley & DeVinney 2019, sec. 4.3.1) as route plans. order 1: one direct
/// hop; order 2: local group of n_local consecutive ranks, then across; order 3: local, network,
/// local with PE r = n^2 x + n y + z. Throws convoy::error unless order is 1..3, n_ranks >= 1 and
/// (for orders 2, 3) n_local >= 1 divides n_ranks.
std::unique_ptr<route_plan> make_tensor_plan(int order, int n_ranks, int n_local);

}  // namespace convoy::router
