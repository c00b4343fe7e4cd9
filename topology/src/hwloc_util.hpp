#pragma once
// Private to topology/: a thin RAII layer over the hwloc calls discovery needs.
#include <hwloc.h>

#include <string>
#include <string_view>

namespace convoy::topology::detail {

/// Owns one loaded hwloc topology.
class hw_topology {
 public:
  /// This machine, as the OS reports it. @throws convoy::error if hwloc fails.
  static hw_topology this_system();
  /// An hwloc synthetic topology such as "pack:2 core:2".
  /// @throws convoy::error "hwloc rejects synthetic topology '<desc>'".
  static hw_topology synthetic(std::string_view desc);

  hw_topology(hw_topology&& o) noexcept : topo_(o.topo_) { o.topo_ = nullptr; }
  hw_topology& operator=(hw_topology&&) = delete;
  hw_topology(const hw_topology&) = delete;
  hw_topology& operator=(const hw_topology&) = delete;
  ~hw_topology();

  [[nodiscard]] hwloc_topology_t get() const noexcept { return topo_; }
  [[nodiscard]] int count(hwloc_obj_type_t type) const;

 private:
  explicit hw_topology(hwloc_topology_t t) noexcept : topo_(t) {}
  hwloc_topology_t topo_;
};

/// Package, NUMA node and core (hwloc logical indexes) that contain all of `set`; -1 for a
/// level where no single object contains it (e.g. an unbound process spanning cores).
struct hw_place {
  int package = -1;
  int numa = -1;
  int core = -1;
};
[[nodiscard]] hw_place place_of(const hw_topology& topo, hwloc_const_cpuset_t set);

}  // namespace convoy::topology::detail
