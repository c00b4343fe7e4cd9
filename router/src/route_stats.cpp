#include <convoy/base/error.hpp>
#include <convoy/router/route_stats.hpp>
#include <string>

namespace convoy::router {

int route_hops(const route_plan& plan, int src, int dst) noexcept {
  const int p = plan.n_ranks();
  if (src < 0 || src >= p || dst < 0 || dst >= p) return -1;
  int at = src;
  int first = 0;
  for (int hops = 0; hops <= plan.max_hops(); ++hops) {
    const hop h = plan.next_hop(at, dst, first);
    if (h.stage == plan.n_stages()) return at == dst ? hops : -1;
    if (h.stage < first || h.stage > plan.n_stages() || h.rank < 0 || h.rank >= p) return -1;
    at = h.rank;
    first = h.stage + 1;
  }
  return -1;
}

std::vector<std::int64_t> hop_histogram(const route_plan& plan, int src) {
  if (src < 0 || src >= plan.n_ranks())
    throw error("hop_histogram: rank " + std::to_string(src) + " is outside 0.." +
                std::to_string(plan.n_ranks() - 1));
  std::vector<std::int64_t> counts(static_cast<std::size_t>(plan.max_hops()) + 1, 0);
  for (int dst = 0; dst < plan.n_ranks(); ++dst) {
    const int k = route_hops(plan, src, dst);
    if (k < 0)
      throw error("hop_histogram: " + plan.name() + " fails to route " + std::to_string(src) +
                  " -> " + std::to_string(dst));
    ++counts[static_cast<std::size_t>(k)];
  }
  return counts;
}

}  // namespace convoy::router
