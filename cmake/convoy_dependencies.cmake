# Every dependency comes from the system (Debian packages); nothing is downloaded.
find_package(MPI REQUIRED COMPONENTS C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
find_package(Threads REQUIRED)
if(CONVOY_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(CONVOY_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# mpi.h without OpenMPI's deprecated C++ bindings.
if(NOT TARGET convoy_mpi)
  add_library(convoy_mpi INTERFACE)
  target_link_libraries(convoy_mpi INTERFACE MPI::MPI_C)
  target_compile_definitions(convoy_mpi INTERFACE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
endif()
