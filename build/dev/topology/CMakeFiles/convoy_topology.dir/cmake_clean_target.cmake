file(REMOVE_RECURSE
  "libconvoy_topology.a"
)
