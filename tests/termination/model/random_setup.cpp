#include "random_setup.hpp"

#include <algorithm>
#include <convoy/topology/mesh.hpp>
#include <numeric>
#include <vector>

namespace convoy_test::model {

namespace {

int uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// A mesh of 1-3 dimensions with at most max_ranks ranks; some cells may be holes and the
// ranks are placed on the cells in random order.
std::shared_ptr<const convoy::router::route_plan> random_mesh(std::mt19937_64& rng, int max_ranks,
                                                              std::string& label) {
  const int n_dims = uniform(rng, 1, 3);
  std::vector<convoy::topology::dimension> dims;
  int cells = 1;
  for (int d = 0; d < n_dims; ++d) {
    const int most = std::max(1, std::min(5, (2 * max_ranks) / cells));
    const int size = uniform(rng, 1, most);
    dims.push_back({"d" + std::to_string(d), size});
    cells *= size;
  }
  std::vector<std::vector<int>> all;
  for (int c = 0; c < cells; ++c) {
    std::vector<int> coord(static_cast<std::size_t>(n_dims));
    for (int d = n_dims - 1, rest = c; d >= 0; --d) {
      const int s = dims[static_cast<std::size_t>(d)].size;
      coord[static_cast<std::size_t>(d)] = rest % s;
      rest /= s;
    }
    all.push_back(coord);
  }
  std::shuffle(all.begin(), all.end(), rng);
  // Ragged in half the cases: drop cells (holes); never more ranks than max_ranks.
  int n = std::min(cells, max_ranks);
  if (uniform(rng, 0, 1) == 1) n = uniform(rng, 1, n);
  all.resize(static_cast<std::size_t>(n));
  if (uniform(rng, 0, 2) == 0) std::sort(all.begin(), all.end());  // rank order = row-major
  std::vector<int> order;
  if (uniform(rng, 0, 1) == 1) {
    order.resize(static_cast<std::size_t>(n_dims));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
  }
  convoy::topology::mesh m(dims, all);
  label = "mesh " + m.shape_string() + " ranks " + std::to_string(n) + " holes " +
          std::to_string(m.n_holes()) + " order";
  for (int o : order) label += " " + std::to_string(o);
  return convoy::router::make_mesh_plan(m, order);
}

std::shared_ptr<const convoy::router::route_plan> random_tensor(std::mt19937_64& rng, int max_ranks,
                                                                std::string& label) {
  const int order = uniform(rng, 1, 3);
  const int p = uniform(rng, 1, max_ranks);
  std::vector<int> divisors;
  for (int k = 1; k <= p; ++k)
    if (p % k == 0) divisors.push_back(k);
  const int n_local =
      divisors[static_cast<std::size_t>(uniform(rng, 0, static_cast<int>(divisors.size()) - 1))];
  label = "tensor order " + std::to_string(order) + " P " + std::to_string(p) + " n_local " +
          std::to_string(n_local);
  return convoy::router::make_tensor_plan(order, p, n_local);
}

}  // namespace

setup random_setup(std::mt19937_64& rng, int max_ranks) {
  setup s;
  s.plan = uniform(rng, 0, 2) == 0 ? random_tensor(rng, max_ranks, s.label)
                                   : random_mesh(rng, max_ranks, s.label);
  auto& o = s.options;
  // Small buffers: a few items each, so pushes meet full paths often.
  o.buffer_bytes = static_cast<std::size_t>(uniform(rng, 0, 3) == 0 ? uniform(rng, 40, 64)
                                                                    : uniform(rng, 64, 320));
  o.n_buffers = uniform(rng, 1, 4);
  o.mode = uniform(rng, 0, 2) == 0 ? convoy::termination::item_mode::elastic
                                   : convoy::termination::item_mode::rigid;
  o.steady = uniform(rng, 0, 2) == 0;
  o.steady_period = uniform(rng, 1, 4);
  if (uniform(rng, 0, 4) == 0) o.route_table_max_ranks = 0;
  s.label += " capacity " + std::to_string(o.buffer_bytes) + " n_buffers " +
             std::to_string(o.n_buffers) + " " + convoy::termination::to_string(o.mode) +
             (o.steady ? " steady/" + std::to_string(o.steady_period) : "") +
             (o.route_table_max_ranks == 0 ? " no-route-table" : "");
  return s;
}

}  // namespace convoy_test::model
