# The C consumer (SOURCE) built from the installed tree in PREFIX with nothing but the C
# compiler and pkg-config: `pkg-config --cflags --libs convey` (libconvey.so), then
# `pkg-config --static` (libconvey.a); each program run as a singleton and on 2 ranks.
# convey.pc must name its private dependencies without this machine's paths.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/run_consumer.cmake)
file(GLOB_RECURSE pc_files ${PREFIX}/convey.pc)
list(GET pc_files 0 pc)
get_filename_component(pc_dir ${pc} DIRECTORY)
file(STRINGS ${pc} private REGEX "^(Libs|Requires)\\.private:")
if(private MATCHES "/")
  message(FATAL_ERROR "convey.pc carries a path in its private dependencies: ${private}")
endif()
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
file(REMOVE_RECURSE ${BINARY_DIR})
file(MAKE_DIRECTORY ${BINARY_DIR})
separate_arguments(extra UNIX_COMMAND "${FLAGS}")
set(cc_flags -std=c99 -pedantic-errors -Wall -Werror ${extra})

# pkg_config(<out> <args>...): the words `pkg-config <args> convey` prints.
function(pkg_config out)
  execute_process(COMMAND pkg-config ${ARGN} convey OUTPUT_VARIABLE words RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc)
    message(FATAL_ERROR "pkg-config ${ARGN} convey failed")
  endif()
  separate_arguments(words UNIX_COMMAND "${words}")
  set(${out} "${words}" PARENT_SCOPE)
endfunction()

pkg_config(flags --cflags --libs)
set(exe ${BINARY_DIR}/consumer)
execute_process(COMMAND ${CC} ${cc_flags} ${SOURCE} -o ${exe} ${flags} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "compiling the consumer failed: ${CC} ${SOURCE} ${flags}")
endif()
pkg_config(libdir --variable=libdir)
set(ENV{LD_LIBRARY_PATH} "${libdir}")
convoy_run_consumer(${exe})

# The static library: libconvey.a plus the private dependencies of `pkg-config --static`.
pkg_config(sflags --static --libs)
list(TRANSFORM sflags REPLACE "^-lconvey$" "${libdir}/libconvey.a")
pkg_config(cflags --cflags)
set(sexe ${BINARY_DIR}/consumer_static)
execute_process(COMMAND ${CC} ${cc_flags} ${cflags} ${SOURCE} -o ${sexe} ${sflags}
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "linking the consumer statically failed: ${sflags}")
endif()
execute_process(COMMAND ldd ${sexe} OUTPUT_VARIABLE deps)
if(deps MATCHES "libconvey")
  message(FATAL_ERROR "consumer_static still loads libconvey.so:\n${deps}")
endif()
convoy_run_consumer(${sexe})
