#pragma once
// Route plans the router and termination tests build again and again: a cartesian mesh
// (optionally with its stage order) and ragged nodes as a node x core mesh with holes.
// Header-only; a test that includes it links convoy::router (which brings convoy::topology).
#include <algorithm>
#include <convoy/router/route_plan.hpp>
#include <convoy/topology/mesh.hpp>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace convoy_test {

using plan_ptr = std::shared_ptr<const convoy::router::route_plan>;

// The TRAM mesh plan of a full cartesian mesh of `shape`, stages in `order` (default: the
// plan's own).
inline plan_ptr mesh_plan(const std::vector<int>& shape, std::vector<int> order = {}) {
  return convoy::router::make_mesh_plan(convoy::topology::mesh::cartesian(shape), std::move(order));
}

// Ragged nodes (`node_sizes[n]` ranks on node n) as a node x core mesh with holes.
inline plan_ptr ragged_plan(const std::vector<int>& node_sizes, std::vector<int> order = {}) {
  int widest = 0;
  std::vector<std::vector<int>> coords;
  for (int n = 0; n < static_cast<int>(node_sizes.size()); ++n)
    for (int c = 0; c < node_sizes[static_cast<std::size_t>(n)]; ++c) coords.push_back({n, c});
  for (int s : node_sizes) widest = std::max(widest, s);
  const convoy::topology::mesh m({{"node", static_cast<int>(node_sizes.size())}, {"core", widest}},
                                 coords);
  return convoy::router::make_mesh_plan(m, std::move(order));
}

}  // namespace convoy_test
