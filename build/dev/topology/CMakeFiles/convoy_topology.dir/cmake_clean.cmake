file(REMOVE_RECURSE
  "CMakeFiles/convoy_topology.dir/src/error.cpp.o"
  "CMakeFiles/convoy_topology.dir/src/error.cpp.o.d"
  "CMakeFiles/convoy_topology.dir/src/mesh.cpp.o"
  "CMakeFiles/convoy_topology.dir/src/mesh.cpp.o.d"
  "libconvoy_topology.a"
  "libconvoy_topology.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/convoy_topology.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
