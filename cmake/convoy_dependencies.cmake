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
# JSON: the CONVOY_STATS document (conveyor_api, to build only), the command-line programs'
# results (tools/, bench/).
find_package(nlohmann_json 3 REQUIRED)
# The command-line programs (tools/, bench/): command lines.
if(CONVOY_BUILD_TOOLS OR CONVOY_BUILD_BENCH)
  find_package(CLI11 REQUIRED)
endif()

# mpi.h without OpenMPI's deprecated C++ bindings. Installed as convoy::mpi; the installed
# convoyConfig.cmake links it to MPI::MPI_C or MPI::MPI_CXX, whichever language the
# consumer enabled (a C++-only project has no MPI::MPI_C).
if(NOT TARGET convoy_mpi)
  add_library(convoy_mpi INTERFACE)
  target_link_libraries(convoy_mpi INTERFACE $<BUILD_INTERFACE:MPI::MPI_C>)
  target_compile_definitions(convoy_mpi INTERFACE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
  set_target_properties(convoy_mpi PROPERTIES EXPORT_NAME mpi)
endif()

# The C++ runtime a C program needs to link the static libconvey.a with the C linker (what
# the C++ compiler links beyond the C compiler's own libraries: stdc++ and m with GCC).
set(CONVOY_CXX_RUNTIME_LIBS ${CMAKE_CXX_IMPLICIT_LINK_LIBRARIES})
list(REMOVE_ITEM CONVOY_CXX_RUNTIME_LIBS ${CMAKE_C_IMPLICIT_LINK_LIBRARIES})
list(REMOVE_DUPLICATES CONVOY_CXX_RUNTIME_LIBS)

# How the pkg-config modules name MPI (cmake/convoy_install.cmake), without this machine's
# paths: the MPI's own pkg-config module if it is the MPI found above, else -l<name> for
# each of its libraries (Libs).
set(CONVOY_MPI_PC_REQUIRES "")
set(CONVOY_MPI_PC_LIBS "")
list(GET MPI_C_LIBRARIES 0 convoy_libmpi)
get_filename_component(convoy_libmpi_dir "${convoy_libmpi}" DIRECTORY)
foreach(module ompi-c mpich mpi-c)
  pkg_check_modules(CONVOY_MPI_PC QUIET ${module})
  if(CONVOY_MPI_PC_FOUND AND convoy_libmpi_dir IN_LIST CONVOY_MPI_PC_LIBRARY_DIRS)
    set(CONVOY_MPI_PC_REQUIRES ${module})
    break()
  endif()
endforeach()
if(NOT CONVOY_MPI_PC_REQUIRES)
  foreach(lib IN LISTS MPI_C_LIBRARIES)
    get_filename_component(name "${lib}" NAME_WE)
    string(REGEX REPLACE "^lib" "" name "${name}")
    string(APPEND CONVOY_MPI_PC_LIBS " -l${name}")
  endforeach()
endif()
