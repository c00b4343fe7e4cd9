#include <convoy/base/error.hpp>
#include <convoy/router/memory.hpp>
#include <string>

namespace convoy::router {

std::size_t link_count(const route_plan& plan, int rank) {
  if (rank < 0 || rank >= plan.n_ranks())
    throw error("link_count: rank " + std::to_string(rank) + " is outside 0.." +
                std::to_string(plan.n_ranks() - 1));
  std::size_t links = 0;
  for (int s = 0; s < plan.n_stages(); ++s)
    links += plan.out_peers(rank, s).size() + plan.in_peers(rank, s).size();
  return links;
}

std::size_t link_buffer_bytes(const route_plan& plan, int rank, std::size_t buffer_bytes,
                              int n_buffers) {
  if (buffer_bytes == 0) throw error("link_buffer_bytes: buffer_bytes must be > 0");
  if (n_buffers < 1)
    throw error("link_buffer_bytes: n_buffers " + std::to_string(n_buffers) + " must be >= 1");
  return link_count(plan, rank) * static_cast<std::size_t>(n_buffers) * buffer_bytes;
}

}  // namespace convoy::router
