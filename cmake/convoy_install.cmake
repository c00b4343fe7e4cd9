# Installs the component libraries and headers with an exported CMake package:
# find_package(convoy) -> convoy::convoy (umbrella), convoy::<comp>, convoy::convey(_static).
include(CMakePackageConfigHelpers)
get_property(convoy_components GLOBAL PROPERTY CONVOY_COMPONENTS)
install(TARGETS ${convoy_components} convoy_convoy convoy_mpi EXPORT convoyTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Every component's headers (base, topology, ..., conveyor_api: the CONVOY_COMPONENTS list
# that convoy_component() fills, so a new component is installed without editing this file).
foreach(tgt IN LISTS convoy_components)
  get_target_property(comp_dir ${tgt} SOURCE_DIR)
  install(DIRECTORY ${comp_dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(EXPORT convoyTargets NAMESPACE convoy:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/convoy)
# The MPI convoy was built for, by its compiler wrappers' names (no paths of this machine):
# convoyConfig.cmake hands them to FindMPI unless the consumer chose its own.
get_filename_component(CONVOY_MPI_C_WRAPPER "${MPI_C_COMPILER}" NAME)
if(MPI_CXX_COMPILER)
  get_filename_component(CONVOY_MPI_CXX_WRAPPER "${MPI_CXX_COMPILER}" NAME)
else()  # the C wrapper's sibling: mpicc -> mpicxx, mpicc.mpich -> mpicxx.mpich
  string(REGEX REPLACE "^mpicc" "mpicxx" CONVOY_MPI_CXX_WRAPPER "${CONVOY_MPI_C_WRAPPER}")
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/convoyConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/convoyConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/convoy)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/convoyConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/convoyConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/convoyConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/convoy)

# pkg-config modules, relocatable (the prefix is found from the .pc file's own directory)
# and without this machine's paths: MPI by its own module (or -l names;
# cmake/convoy_dependencies.cmake), hwloc as -lhwloc (its module's static dependencies are
# those of a static libhwloc, e.g. -ludev, which convoy does not need).
#   convey.pc         the C library, shared. MPI is public (Requires): a program that calls
#                     MPI itself builds with the plain C compiler. The rest of what
#                     libconvey.a would need is private, for `pkg-config --static` and -static.
#   convey-static.pc  the C library, static: names the archive itself (-lconvey would find
#                     libconvey.so first) and, public, what it needs, the C++ runtime too.
#   convoy.pc         the C++ API: every component archive in link order (the shared
#                     libconvey exports the C ABI only).
file(RELATIVE_PATH convoy_convey_pc_up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
set(convoy_convey_pc_url "")
if(PROJECT_HOMEPAGE_URL)
  set(convoy_convey_pc_url "URL: ${PROJECT_HOMEPAGE_URL}\n")
endif()
list(TRANSFORM CONVOY_CXX_RUNTIME_LIBS PREPEND " -l" OUTPUT_VARIABLE convoy_convey_pc_runtime)
string(REPLACE ";" "" convoy_convey_pc_runtime "${convoy_convey_pc_runtime}")
set(convoy_pc_component_libs "")
foreach(tgt IN LISTS convoy_components)
  get_target_property(name ${tgt} OUTPUT_NAME)
  if(NOT name)
    set(name ${tgt})
  endif()
  string(PREPEND convoy_pc_component_libs " -l${name}")  # users before what they use
endforeach()
foreach(pc convey convey-static convoy)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc
                 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# The documents a user of the installed tree reads: the README, the guides and the
# scripts they use (tools/cluster and bench/emulate as convoy-cluster and convoy-emulate).
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md
              ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md")
# In the source tree they source tools/mpi_family.bash; the installed copies have it
# written in, so that bin/ holds programs only.
file(READ ${PROJECT_SOURCE_DIR}/tools/mpi_family.bash mpi_family)
set(source_line "# shellcheck source=tools/mpi_family.bash\nsource \"\${self%/*}/../tools/mpi_family.bash\"\n")
foreach(script tools/cluster bench/emulate)
  get_filename_component(name ${script} NAME)
  file(READ ${PROJECT_SOURCE_DIR}/${script} text)
  string(FIND "${text}" "${source_line}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${script} does not source tools/mpi_family.bash as expected")
  endif()
  string(REPLACE "${source_line}" "${mpi_family}" text "${text}")
  file(WRITE ${PROJECT_BINARY_DIR}/scripts/convoy-${name}.in "${text}")
  configure_file(${PROJECT_BINARY_DIR}/scripts/convoy-${name}.in
                 ${PROJECT_BINARY_DIR}/scripts/convoy-${name} @ONLY
                 FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                                  WORLD_READ WORLD_EXECUTE)
  install(PROGRAMS ${PROJECT_BINARY_DIR}/scripts/convoy-${name} DESTINATION ${CMAKE_INSTALL_BINDIR})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${script})
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${PROJECT_SOURCE_DIR}/tools/mpi_family.bash)
