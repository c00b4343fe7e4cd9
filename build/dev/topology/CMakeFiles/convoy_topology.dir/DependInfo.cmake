
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/topology/src/error.cpp" "topology/CMakeFiles/convoy_topology.dir/src/error.cpp.o" "gcc" "topology/CMakeFiles/convoy_topology.dir/src/error.cpp.o.d"
  "/work/main/topology/src/mesh.cpp" "topology/CMakeFiles/convoy_topology.dir/src/mesh.cpp.o" "gcc" "topology/CMakeFiles/convoy_topology.dir/src/mesh.cpp.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
