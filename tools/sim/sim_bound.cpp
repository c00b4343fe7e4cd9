#include "sim_bound.hpp"

#include <algorithm>

#include "sim_run.hpp"

namespace convoy::sim {

namespace {

using aggregation::link_class;

link_class class_of(const std::vector<int>& node_of, const std::vector<int>& socket_of, int a,
                    int b) {
  const auto i = static_cast<std::size_t>(a), j = static_cast<std::size_t>(b);
  if (node_of[i] != node_of[j]) return link_class::off_node;
  return socket_of[i] != socket_of[j] ? link_class::same_node : link_class::same_socket;
}

}  // namespace

time_bound lower_bound(const run_config& c, const router::route_plan& plan,
                       const std::vector<int>& node_of, const std::vector<int>& socket_of,
                       const traffic_matrix* matrix) {
  const int p = plan.n_ranks();
  const bool from_matrix = c.workload == workload_kind::traffic;
  // The matrix's rows give a rank's items and their destinations without expanding them.
  const destinations dest(from_matrix ? workload_kind::uniform : c.workload, p, c.items_per_rank,
                          c.seed, nullptr);
  auto items_of = [&](int r) {
    if (!from_matrix) return dest.items_of(r);
    std::uint64_t n = 0;
    for (const auto& e : matrix->rows[static_cast<std::size_t>(r)]) n += e.items;
    return n;
  };
  const std::uint64_t planes = c.workload == workload_kind::request_reply ? 2 : 1;
  time_bound b;
  for (const int r : {0, p / 2, p - 1}) {
    std::uint64_t ends[aggregation::n_link_classes] = {};
    for (int s = 0; s < plan.n_stages(); ++s) {
      for (const int peer : plan.out_peers(r, s))
        ++ends[static_cast<int>(class_of(node_of, socket_of, r, peer))];
      for (const int peer : plan.in_peers(r, s))
        ++ends[static_cast<int>(class_of(node_of, socket_of, r, peer))];
    }
    double cpu = (c.model.push_s + c.model.app_s) * static_cast<double>(items_of(r));
    for (int k = 0; k < aggregation::n_link_classes; ++k) {
      ends[k] *= planes;
      cpu += c.model.links[k].alpha_s * static_cast<double>(ends[k]);
    }
    if (r == 0 || cpu > b.cpu_seconds) {
      b.cpu_seconds = cpu;
      b.rank = r;
      std::copy(std::begin(ends), std::end(ends), std::begin(b.link_ends));
    }
  }
  // Items leaving node 0, counted item by item over node 0's ranks; on one node there are
  // none, and counting them would cost P x items (the bound stays linear in P).
  const bool one_node =
      std::all_of(node_of.begin(), node_of.end(), [&](int n) { return n == node_of[0]; });
  for (int r = 0; r < p && !one_node; ++r) {
    if (node_of[static_cast<std::size_t>(r)] != node_of[0]) continue;
    if (from_matrix) {
      for (const auto& e : matrix->rows[static_cast<std::size_t>(r)])
        b.offnode_items += node_of[static_cast<std::size_t>(e.dst)] != node_of[0] ? e.items : 0;
      continue;
    }
    const std::uint64_t n = dest.items_of(r);
    for (std::uint64_t i = 0; i < n; ++i)
      b.offnode_items += node_of[static_cast<std::size_t>(dest(r, i))] != node_of[0] ? 1 : 0;
  }
  b.nic_seconds = c.model.links[static_cast<int>(link_class::off_node)].beta_s_per_byte *
                  static_cast<double>(c.item_bytes) * static_cast<double>(b.offnode_items);
  b.seconds = std::max(b.cpu_seconds, b.nic_seconds);
  return b;
}

}  // namespace convoy::sim
