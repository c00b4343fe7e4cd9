#pragma once
// Route plans the router and termination tests build again and again: a cartesian mesh
// (optionally with its stage order), ragged nodes as a node x core mesh with holes, and the
// small plans every engine property is checked on.
// Header-only; a test that includes it links convoy::router (which brings convoy::topology).
#include <algorithm>
#include <convoy/router/route_plan.hpp>
#include <convoy/topology/mesh.hpp>
#include <cstddef>
#include <memory>
#include <string>
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

struct plan_case {
  std::string label;
  plan_ptr plan;
};

// Small plans of every shape the engine meets: one rank, a line, full meshes in both stage
// orders, ragged nodes, and bale's tensor routes of order 1 to 3.
inline std::vector<plan_case> small_plans() {
  using convoy::router::make_tensor_plan;
  return {
      {"single", mesh_plan({1})},
      {"line7", mesh_plan({7})},
      {"mesh2x4", mesh_plan({2, 4})},
      {"mesh2x4_outer_first", mesh_plan({2, 4}, {0, 1})},
      {"mesh3x3x3", mesh_plan({3, 3, 3})},
      {"mesh2x3x2_order", mesh_plan({2, 3, 2}, {1, 0, 2})},
      {"ragged_4_2_3", ragged_plan({4, 2, 3})},
      {"ragged_3_3_2_node_first", ragged_plan({3, 3, 2}, {0, 1})},
      {"ragged_5_1", ragged_plan({5, 1})},
      {"tensor1_p6", make_tensor_plan(1, 6, 1)},
      {"tensor2_p8_n4", make_tensor_plan(2, 8, 4)},
      // One group: the local stage carries no tag, every record is the receiver's and is
      // delivered in whole-buffer windows although it is not the last stage.
      {"tensor2_p4_one_group", make_tensor_plan(2, 4, 4)},
      {"tensor3_p8_n2", make_tensor_plan(3, 8, 2)},
      {"tensor3_p12_n2", make_tensor_plan(3, 12, 2)},
      {"tensor3_p18_n3", make_tensor_plan(3, 18, 3)},
  };
}

}  // namespace convoy_test
