#include "hwloc_util.hpp"

#include <cctype>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <cstdlib>
#include <string>

namespace convoy::topology::detail {

namespace {
// hwloc's plugins that discovery never needs: I/O devices, GL, OpenCL, and the libxml2
// reader (hwloc's built-in XML reader remains). Loading them, with their libraries, is
// most of the cost of a process's first topology (milliseconds, every convey_new of a
// fresh process).
constexpr const char* k_unneeded_plugins = "hwloc_pci,hwloc_gl,hwloc_opencl,hwloc_xml_libxml";

hwloc_topology_t fresh() {
  // hwloc reads HWLOC_PLUGINS_BLACKLIST when a process's first topology initializes its
  // components. A user's own setting wins; ours is withdrawn at once. Discovery runs in a
  // collective constructor, on the calling thread, before the conveyor has threads.
  const bool ours = std::getenv("HWLOC_PLUGINS_BLACKLIST") == nullptr &&
                    setenv("HWLOC_PLUGINS_BLACKLIST", k_unneeded_plugins, 0) == 0;
  hwloc_topology_t t = nullptr;
  const int rc = hwloc_topology_init(&t);
  if (ours) unsetenv("HWLOC_PLUGINS_BLACKLIST");
  if (rc != 0) throw error("hwloc_topology_init failed");
  return t;
}
}  // namespace

hw_topology hw_topology::this_system() {
  hwloc_topology_t t = fresh();
#ifdef __linux__
  // Packages, cores and PUs come from the Linux backend (sysfs); the x86 backend's CPUID
  // pass adds nothing discovery reads and is slow under a hypervisor. Not when the user
  // chooses components (HWLOC_COMPONENTS).
  if (std::getenv("HWLOC_COMPONENTS") == nullptr)
    (void)hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
#endif
  if (hwloc_topology_load(t) != 0) {
    hwloc_topology_destroy(t);
    throw error("hwloc_topology_load failed for this machine");
  }
  return hw_topology(t);
}

hw_topology hw_topology::synthetic(std::string_view desc) {
  hwloc_topology_t t = fresh();
  const std::string text(desc);
  const std::string full = base::synthetic_with_pus(desc);
  if (hwloc_topology_set_synthetic(t, full.c_str()) != 0 || hwloc_topology_load(t) != 0) {
    hwloc_topology_destroy(t);
    throw error("hwloc rejects synthetic topology '" + text +
                "' (expected e.g. \"pack:2 core:4\" or \"pack:2 numa:2 core:8 pu:1\")");
  }
  return hw_topology(t);
}

hw_topology::~hw_topology() {
  if (topo_ != nullptr) hwloc_topology_destroy(topo_);
}

int hw_topology::count(hwloc_obj_type_t type) const {
  const int n = hwloc_get_nbobjs_by_type(topo_, type);
  return n < 0 ? 0 : n;
}

hw_place place_of(const hw_topology& topo, hwloc_const_cpuset_t set) {
  // The object of each type whose cpuset contains the whole binding; an unbound process
  // (binding spanning cores or packages) gets -1 for that level (TOPO-3).
  auto containing = [&](hwloc_obj_type_t type) {
    if (hwloc_bitmap_iszero(set)) return -1;
    const int n = topo.count(type);
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t o = hwloc_get_obj_by_type(topo.get(), type, static_cast<unsigned>(i));
      if (o != nullptr && o->cpuset != nullptr && hwloc_bitmap_isincluded(set, o->cpuset))
        return static_cast<int>(o->logical_index);
    }
    return -1;
  };
  return {containing(HWLOC_OBJ_PACKAGE), containing(HWLOC_OBJ_NUMANODE),
          containing(HWLOC_OBJ_CORE)};
}

}  // namespace convoy::topology::detail
