# The consumers built from the installed tree in PREFIX (a moved one: install_prefix.cmake)
# with nothing but the plain compilers (CC, CXX: not mpicc) and pkg-config, as
# docs/install.md shows:
#   shared  C_SOURCE with `pkg-config --cflags --libs convey` and an rpath to its libdir,
#           once as it is and once calling MPI itself (-DCONSUMER_CALLS_MPI)
#   static  C_SOURCE with `pkg-config --cflags --libs convey-static`: libconvey.a, no
#           libconvey.so loaded
#   C++     CXX_SOURCE with `pkg-config --cflags --libs convoy`: the component archives
# each run as a singleton and on 2 ranks under a clean environment (CLEAN_ENV). The .pc
# files carry VERSION and no path of this machine in their dependencies.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/run_consumer.cmake)
file(GLOB_RECURSE pc_files ${PREFIX}/convey.pc)
list(GET pc_files 0 pc)
get_filename_component(pc_dir ${pc} DIRECTORY)
foreach(module convey convey-static convoy)
  file(STRINGS ${pc_dir}/${module}.pc deps REGEX "^(Libs|Requires)(\\.private)?:")
  string(REPLACE "\${libdir}/libconvey.a" "" deps "${deps}")
  if(deps MATCHES "/")
    message(FATAL_ERROR "${module}.pc carries a path in its dependencies: ${deps}")
  endif()
  file(STRINGS ${pc_dir}/${module}.pc url REGEX "^URL:")
  if(url MATCHES "bale")
    message(FATAL_ERROR "${module}.pc names bale's home: ${url}")
  endif()
endforeach()
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
file(REMOVE_RECURSE ${BINARY_DIR})
file(MAKE_DIRECTORY ${BINARY_DIR})
separate_arguments(extra UNIX_COMMAND "${FLAGS}")
set(cc_flags -std=c99 -pedantic-errors -Wall -Werror ${extra})

# pkg_config(<out> <module> <args>...): the words `pkg-config <args> <module>` prints.
function(pkg_config out module)
  execute_process(COMMAND pkg-config ${ARGN} ${module} OUTPUT_VARIABLE words RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc)
    message(FATAL_ERROR "pkg-config ${ARGN} ${module} failed")
  endif()
  separate_arguments(words UNIX_COMMAND "${words}")
  set(${out} "${words}" PARENT_SCOPE)
endfunction()

foreach(module convey convey-static convoy)
  pkg_config(version ${module} --modversion)
  if(NOT version STREQUAL VERSION)
    message(FATAL_ERROR "pkg-config --modversion ${module}: '${version}', not ${VERSION}")
  endif()
endforeach()

# Shared: libconvey.so found at run time through the rpath alone.
pkg_config(flags convey --cflags --libs)
pkg_config(libdir convey --variable=libdir)
foreach(variant consumer consumer_mpi)
  set(defines)
  if(variant STREQUAL "consumer_mpi")
    set(defines -DCONSUMER_CALLS_MPI)
  endif()
  set(exe ${BINARY_DIR}/${variant})
  execute_process(COMMAND ${CC} ${cc_flags} ${defines} ${C_SOURCE} -o ${exe} ${flags}
                          -Wl,-rpath,${libdir} RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "compiling the consumer failed: ${CC} ${defines} ${C_SOURCE} ${flags}")
  endif()
  execute_process(COMMAND ldd ${exe} OUTPUT_VARIABLE deps)
  if(NOT deps MATCHES "libconvey\\.so")
    message(FATAL_ERROR "${variant} does not load libconvey.so:\n${deps}")
  endif()
  convoy_run_consumer(${exe})
endforeach()

# Static: convey-static names the archive and what it needs.
pkg_config(sflags convey-static --cflags --libs)
set(sexe ${BINARY_DIR}/consumer_static)
execute_process(COMMAND ${CC} ${cc_flags} ${C_SOURCE} -o ${sexe} ${sflags} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "linking the consumer statically failed: ${sflags}")
endif()
execute_process(COMMAND ldd ${sexe} OUTPUT_VARIABLE deps)
if(deps MATCHES "libconvey")
  message(FATAL_ERROR "consumer_static still loads libconvey.so:\n${deps}")
endif()
convoy_run_consumer(${sexe})

# C++: convoy.pc names the component archives and MPI; the program calls MPI itself.
pkg_config(cxxflags convoy --cflags --libs)
set(cxxexe ${BINARY_DIR}/cxx_consumer)
execute_process(COMMAND ${CXX} -std=c++20 -Wall -Werror ${extra} ${CXX_SOURCE} -o ${cxxexe}
                        ${cxxflags} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "compiling the C++ consumer failed: ${CXX} ${CXX_SOURCE} ${cxxflags}")
endif()
convoy_run_consumer(${cxxexe})
