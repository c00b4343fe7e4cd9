// TRAM mesh route plans (Wesolowski et al. 2014, sec. III.B), with holes routed around
// (router/README.md).
#include <algorithm>
#include <convoy/base/error.hpp>
#include <convoy/base/text.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/topology/mesh.hpp>
#include <cstddef>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "radix.hpp"

namespace convoy::router {

namespace {

using detail::bytes_for;
using detail::radix_reader;
using detail::radix_writer;

using base::join;

/// A mesh plan keeps, instead of per-rank tables, a trie over the ranks' coordinates taken
/// in stage order (level k = dimension dim_order[k]). Node j of level k is one existing
/// prefix (c[D_0], ..., c[D_{k-1}]); its row `step_[k][j * size_k + v]` is the level-(k+1)
/// node of prefix + v, or, when no rank has that prefix (a hole), the node of the
/// substitute value (ROUTE-6). At the last level the entries are ranks. Memory is
/// O(sum_k cells of the first k+1 dimensions) <= O(n_dims * n_cells), shared by all ranks.
class mesh_plan final : public route_plan {
 public:
  mesh_plan(const topology::mesh& m, std::vector<int> dim_order)
      : n_ranks_(m.n_ranks()), n_dims_(m.n_dims()), order_(std::move(dim_order)) {
    holes_ = m.n_holes() > 0;
    for (int k = 0; k < n_dims_; ++k) {
      size_.push_back(m.dim(order_[static_cast<std::size_t>(k)]).size);
      names_.push_back(m.dim(order_[static_cast<std::size_t>(k)]).name);
    }
    shape_ = m.shape_string();
    pc_.resize(static_cast<std::size_t>(n_ranks_) * static_cast<std::size_t>(n_dims_));
    for (int r = 0; r < n_ranks_; ++r) {
      const auto c = m.coords(r);
      for (int k = 0; k < n_dims_; ++k)
        pc_[idx(r, k)] = c[static_cast<std::size_t>(order_[static_cast<std::size_t>(k)])];
    }
    build_trie();
    build_tags();
  }

  std::string name() const override {
    return "tram mesh " + shape_ + " order " + join(order_, ",") + (holes_ ? " (holes)" : "");
  }
  int n_ranks() const noexcept override { return n_ranks_; }
  int n_stages() const noexcept override { return n_dims_; }
  std::vector<int> mesh_sizes() const override {
    std::vector<int> sizes(static_cast<std::size_t>(n_dims_));
    for (int k = 0; k < n_dims_; ++k)
      sizes[static_cast<std::size_t>(order_[static_cast<std::size_t>(k)])] =
          size_[static_cast<std::size_t>(k)];
    return sizes;
  }
  int stage_dimension(int stage) const noexcept override {
    return stage >= 0 && stage < n_dims_ ? order_[static_cast<std::size_t>(stage)] : -1;
  }
  std::string stage_name(int stage) const override {
    check_stage(stage, "stage_name");
    return names_[static_cast<std::size_t>(stage)];
  }

  // ROUTE-1, ROUTE-5, ROUTE-6: first differing stage >= first_stage; target from (at, dest[D_s]).
  hop next_hop(int at, int dest, int first_stage) const noexcept override {
    const int* a = &pc_[idx(at, 0)];
    const int* d = &pc_[idx(dest, 0)];
    int s = first_stage;
    while (s < n_dims_ && a[s] == d[s]) ++s;
    if (s >= n_dims_) return {n_dims_, 0, at};
    const int node = prefix_node(a, s);
    const std::size_t row = static_cast<std::size_t>(node) * static_cast<std::size_t>(size_[s]);
    const int want = ord_[s][row + static_cast<std::size_t>(d[s])];
    const int own = ord_[s][row + static_cast<std::size_t>(a[s])];
    const int rank = complete(step_[s][row + static_cast<std::size_t>(d[s])], a, s + 1);
    return {s, want - (want > own ? 1 : 0), rank};
  }

  std::vector<int> out_peers(int rank, int stage) const override {
    check_rank(rank, "out_peers");
    check_stage(stage, "out_peers");
    const int* a = &pc_[idx(rank, 0)];
    const std::size_t row =
        static_cast<std::size_t>(prefix_node(a, stage)) * static_cast<std::size_t>(size_[stage]);
    std::vector<int> peers;
    for (int v = 0; v < size_[stage]; ++v) {
      const std::size_t cell = row + static_cast<std::size_t>(v);
      if (v == a[stage] || ord_[stage][cell] < 0) continue;
      peers.push_back(complete(step_[stage][cell], a, stage + 1));
    }
    return peers;
  }

  std::vector<int> in_peers(int rank, int stage) const override {
    if (!holes_) {  // without holes "is a peer on stage s" is symmetric (ROUTE-5)
      auto peers = out_peers(rank, stage);
      std::sort(peers.begin(), peers.end());
      return peers;
    }
    check_rank(rank, "in_peers");
    check_stage(stage, "in_peers");
    // Senders share rank's prefix on D_0..D_{s-1}: scan that subtree of the trie.
    const int* r = &pc_[idx(rank, 0)];
    const int node = prefix_node(r, stage);
    std::vector<int> peers;
    const auto& range = range_[static_cast<std::size_t>(stage)];
    for (int i = range[static_cast<std::size_t>(node)];
         i < range[static_cast<std::size_t>(node) + 1]; ++i) {
      const int q = sorted_[static_cast<std::size_t>(i)];
      const int* a = &pc_[idx(q, 0)];
      if (a[stage] == r[stage]) continue;
      const std::size_t row =
          static_cast<std::size_t>(node) * static_cast<std::size_t>(size_[stage]);
      if (complete(step_[stage][row + static_cast<std::size_t>(r[stage])], a, stage + 1) == rank)
        peers.push_back(q);
    }
    std::sort(peers.begin(), peers.end());
    return peers;
  }

  int tag_bytes(int stage) const noexcept override {
    return stage >= 0 && stage < n_dims_ ? tag_bytes_[static_cast<std::size_t>(stage)] : 0;
  }

  // ROUTE-7: the tag holds exactly what the link's two ends do not reveal.
  std::uint64_t encode(int stage, int /*sender*/, int /*receiver*/, int src,
                       int dst) const noexcept override {
    const int* s = &pc_[idx(src, 0)];
    const int* d = &pc_[idx(dst, 0)];
    radix_writer w;
    switch (mode_[static_cast<std::size_t>(stage)]) {
      case tag_mode::coords:
        for (int k = 0; k < stage; ++k) w.put(static_cast<std::uint64_t>(s[k]), radix(k));
        for (int k = stage + 1; k < n_dims_; ++k) w.put(static_cast<std::uint64_t>(d[k]), radix(k));
        break;
      case tag_mode::src_rank:
        w.put(static_cast<std::uint64_t>(src), static_cast<std::uint64_t>(n_ranks_));
        for (int k = stage + 1; k < n_dims_; ++k) w.put(static_cast<std::uint64_t>(d[k]), radix(k));
        break;
      case tag_mode::ranks:
        w.put(static_cast<std::uint64_t>(src), static_cast<std::uint64_t>(n_ranks_));
        w.put(static_cast<std::uint64_t>(dst), static_cast<std::uint64_t>(n_ranks_));
        break;
    }
    return w.tag();
  }

  void decode(int stage, int sender, int receiver, std::uint64_t tag, int& src,
              int& dst) const noexcept override {
    const int* snd = &pc_[idx(sender, 0)];
    const int* rcv = &pc_[idx(receiver, 0)];
    radix_reader rd(tag);
    const auto mode = mode_[static_cast<std::size_t>(stage)];
    if (mode == tag_mode::coords) {
      // src = (tag fields on D_0..D_{s-1}, sender's coordinates on D_s..D_{N-1}).
      int node = 0;
      for (int k = 0; k < n_dims_; ++k)
        node = child(k, node, k < stage ? rd.get(radix(k)) : snd[k]);
      src = node;
    } else {
      src = rd.get(static_cast<std::uint64_t>(n_ranks_));
    }
    if (mode == tag_mode::ranks) {
      dst = rd.get(static_cast<std::uint64_t>(n_ranks_));
      return;
    }
    // dst = (receiver's coordinates on D_0..D_s, tag fields on D_{s+1}..D_{N-1}).
    int node = 0;
    for (int k = 0; k < n_dims_; ++k) node = child(k, node, k <= stage ? rcv[k] : rd.get(radix(k)));
    dst = node;
  }

 private:
  enum class tag_mode { coords, src_rank, ranks };

  std::size_t idx(int rank, int k) const noexcept {
    return static_cast<std::size_t>(rank) * static_cast<std::size_t>(n_dims_) +
           static_cast<std::size_t>(k);
  }
  std::uint64_t radix(int k) const noexcept {
    return static_cast<std::uint64_t>(size_[static_cast<std::size_t>(k)]);
  }
  int child(int k, int node, int v) const noexcept {
    return step_[static_cast<std::size_t>(k)]
                [static_cast<std::size_t>(node) * static_cast<std::size_t>(size_[k]) +
                 static_cast<std::size_t>(v)];
  }
  /// The trie node of the prefix (c[0], ..., c[s-1]) of permuted coordinates c.
  int prefix_node(const int* c, int s) const noexcept {
    int node = 0;
    for (int k = 0; k < s; ++k) node = child(k, node, c[k]);
    return node;
  }
  /// From a level-`from` node, follow c's values (substituting around holes) to a rank.
  int complete(int node, const int* c, int from) const noexcept {
    for (int k = from; k < n_dims_; ++k) node = child(k, node, c[k]);
    return node;
  }

  void check_rank(int rank, const char* what) const {
    detail::check_index(rank, n_ranks_, what, "rank");
  }
  void check_stage(int stage, const char* what) const {
    detail::check_index(stage, n_dims_, what, "stage");
  }

  void build_trie() {
    const auto n = static_cast<std::size_t>(n_dims_);
    sorted_.resize(static_cast<std::size_t>(n_ranks_));
    std::iota(sorted_.begin(), sorted_.end(), 0);
    std::sort(sorted_.begin(), sorted_.end(), [&](int x, int y) {
      return std::lexicographical_compare(&pc_[idx(x, 0)], &pc_[idx(x, 0)] + n, &pc_[idx(y, 0)],
                                          &pc_[idx(y, 0)] + n);
    });
    step_.resize(n);
    ord_.resize(n);
    range_.resize(n);
    range_[0] = {0, n_ranks_};
    std::vector<int> present;
    for (int k = 0; k < n_dims_; ++k) {
      const auto ks = static_cast<std::size_t>(k);
      const auto& range = range_[ks];
      const std::size_t n_nodes = range.size() - 1;
      const auto sz = static_cast<std::size_t>(size_[ks]);
      step_[ks].assign(n_nodes * sz, -1);
      ord_[ks].assign(n_nodes * sz, -1);
      std::vector<int> next_range;
      int next_node = 0;
      for (std::size_t j = 0; j < n_nodes; ++j) {
        present.clear();
        const std::size_t row = j * sz;
        for (int i = range[j]; i < range[j + 1];) {
          const int v = pc_[idx(sorted_[static_cast<std::size_t>(i)], k)];
          int e = i;
          while (e < range[j + 1] && pc_[idx(sorted_[static_cast<std::size_t>(e)], k)] == v) ++e;
          const auto cell = row + static_cast<std::size_t>(v);
          if (k + 1 == n_dims_) {
            step_[ks][cell] = sorted_[static_cast<std::size_t>(i)];  // coordinates are unique
          } else {
            step_[ks][cell] = next_node++;
            next_range.push_back(i);
          }
          ord_[ks][cell] = static_cast<int>(present.size());
          present.push_back(v);
          i = e;
        }
        // ROUTE-6: the j-th missing value is replaced by the (j mod c)-th present one,
        // so each present value stands in for at most ceil((size - c) / c) missing ones.
        std::size_t missing = 0;
        for (std::size_t v = 0; v < sz; ++v)
          if (ord_[ks][row + v] < 0)
            step_[ks][row + v] =
                step_[ks][row + static_cast<std::size_t>(present[missing++ % present.size()])];
      }
      if (k + 1 < n_dims_) {
        next_range.push_back(n_ranks_);
        range_[ks + 1] = std::move(next_range);
      }
    }
  }

  void build_tags() {
    const auto p = static_cast<std::uint64_t>(n_ranks_);
    for (int s = 0; s < n_dims_; ++s) {
      std::uint64_t others = 1, later = 1;
      for (int k = 0; k < n_dims_; ++k) {
        if (k != s) others *= radix(k);
        if (k > s) later *= radix(k);
      }
      tag_mode mode = tag_mode::coords;
      std::uint64_t n_values = others;  // == P / s_{D_s} without holes
      if (holes_) {
        mode = later <= p ? tag_mode::src_rank : tag_mode::ranks;
        n_values = later <= p ? p * later : p * p;
      }
      mode_.push_back(mode);
      tag_bytes_.push_back(bytes_for(n_values));
    }
  }

  int n_ranks_;
  int n_dims_;
  std::vector<int> order_;          // order_[k] = D_k
  std::vector<int> size_;           // size_[k] = s_{D_k}
  std::vector<std::string> names_;  // names_[k] = name of D_k
  std::string shape_;
  bool holes_ = false;
  std::vector<int> pc_;                  // P x N: coordinates in stage order
  std::vector<int> sorted_;              // ranks sorted by pc_
  std::vector<std::vector<int>> step_;   // per level: node x value -> next node / rank
  std::vector<std::vector<int>> ord_;    // per level: node x value -> ordinal, -1 if missing
  std::vector<std::vector<int>> range_;  // per level: node -> [begin, end) in sorted_
  std::vector<tag_mode> mode_;
  std::vector<int> tag_bytes_;
};

}  // namespace

std::unique_ptr<route_plan> make_mesh_plan(const topology::mesh& m, std::vector<int> dim_order) {
  const int n = m.n_dims();
  if (dim_order.empty()) {
    for (int d = n - 1; d >= 0; --d) dim_order.push_back(d);
  }
  std::vector<int> sorted = dim_order;
  std::sort(sorted.begin(), sorted.end());
  bool ok = static_cast<int>(sorted.size()) == n;
  for (int d = 0; ok && d < n; ++d) ok = sorted[static_cast<std::size_t>(d)] == d;
  if (!ok)
    throw error("make_mesh_plan: dimension order {" + join(dim_order, ",") +
                "} is not a permutation of the mesh's dimensions 0.." + std::to_string(n - 1));
  return std::make_unique<mesh_plan>(m, std::move(dim_order));
}

}  // namespace convoy::router
