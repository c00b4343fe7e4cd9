# Test registration helpers.
#
#   convoy_add_test(NAME <name> SOURCES <src>... [LIBS <lib>...] [LABELS ...] [TIMEOUT s] [ENV ...])
#     One gtest program, one CTest entry, no MPI launcher (the program may still call
#     MPI_Init as a singleton).
#
#   convoy_add_mpi_test(NAME <name> (SOURCES <src>... | TARGET <existing>) [LIBS ...]
#                       RANKS <n>... [ARGS ...] [ENV <VAR=value>...] [LABELS ...] [TIMEOUT s])
#     One gtest program run under the MPI launcher once per rank count; each run is a
#     CTest entry "<name>.np<n>". TARGET reuses a program registered before, so one
#     program can run under several environments (emulated layouts).
#
# The launcher is MPIEXEC_EXECUTABLE with CONVOY_MPIEXEC_PREFLAGS; override both for a
# cluster, e.g. -DMPIEXEC_EXECUTABLE=srun -DCONVOY_MPIEXEC_PREFLAGS="" -DMPIEXEC_NUMPROC_FLAG=-n.

# The MPI family of the launcher (its --version): "openmpi" (OpenRTE/PRRTE), "mpich"
# (Hydra: MPICH, Intel MPI, MVAPICH) or "other". Launch flags follow it; tests that need one
# family's own components or launcher are skipped under another, saying why
# (convoy_add_skipped_test).
if(NOT DEFINED CACHE{CONVOY_MPI_FAMILY})
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE version_text
    ERROR_VARIABLE version_text TIMEOUT 20)
  if(version_text MATCHES "Open MPI|OpenRTE|PRRTE")
    set(family openmpi)
  elseif(version_text MATCHES "HYDRA|Intel\\(R\\) MPI")
    set(family mpich)
  else()
    set(family other)
  endif()
  set(CONVOY_MPI_FAMILY ${family} CACHE STRING
    "MPI family of MPIEXEC_EXECUTABLE: openmpi, mpich or other")
endif()
if(CONVOY_MPI_FAMILY STREQUAL "openmpi")
  # pml ob1 is what Open MPI picks with these btls; naming it skips probing the others
  # (UCX, the MTLs), about 0.2 s of every launch.
  set(preflags
      "--oversubscribe;--mca;mpi_yield_when_idle;1;--mca;pml;ob1;--mca;btl;self,vader;--bind-to;none")
  # Ranks of emulated nodes talk over the kernel's TCP stack (bench/emulate).
  set(tcp_flags --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 --mca pml ob1
                --mca btl self,tcp --mca btl_tcp_if_include lo)
else()
  # Hydra oversubscribes and leaves ranks unbound by default.
  set(preflags "")
  # Hydra has no portable way to force TCP between ranks of one host (with UCX_TLS=tcp,self
  # Debian's ch4:ucx MPICH hangs at start-up): the emulated nodes talk over shared memory.
  set(tcp_flags "")
endif()
set(CONVOY_MPIEXEC_PREFLAGS "${preflags}"
    CACHE STRING "Flags placed before the program by the MPI launcher in tests")
set(CONVOY_MPIEXEC_TCP_FLAGS "${tcp_flags}" CACHE STRING
    "Launcher flags of the tests whose emulated nodes talk over TCP (bench/emulate)")

# convoy_add_skipped_test(NAME <name> LABELS <labels> REASON <text>)
# An entry that says why it cannot run with this build's MPI and reports Skipped.
function(convoy_add_skipped_test)
  cmake_parse_arguments(ARG "" "NAME;LABELS;REASON" "" ${ARGN})
  add_test(NAME ${ARG_NAME}
    COMMAND ${CMAKE_COMMAND} -E echo "SKIPPED (${CONVOY_MPI_FAMILY} MPI): ${ARG_REASON}")
  set_tests_properties(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}"
    SKIP_REGULAR_EXPRESSION "SKIPPED \\(")
endfunction()

# convoy_mpi_entry_skip(<out> <np> <labels> <env>): why an MPI entry of <np> ranks cannot
# run here, or "" in <out>. Under MPICH a passive-target operation completes only when its
# target calls MPI, and MPICH's flush waits without yielding the core; on a host with
# fewer cores than ranks each one-sided operation of the rma transport then waits for the
# target's time slice, and its entries take minutes. They run with a core per rank, and
# across nodes (cluster.conveyor_transport_rma).
cmake_host_system_information(RESULT CONVOY_HOST_CORES QUERY NUMBER_OF_LOGICAL_CORES)
function(convoy_mpi_entry_skip out np labels env)
  set(why "")
  if(CONVOY_MPI_FAMILY STREQUAL "mpich" AND np GREATER CONVOY_HOST_CORES AND
     ("CONVOY_TRANSPORT=rma" IN_LIST env OR "rma_transport" IN_LIST labels))
    set(why "the rma transport with ${np} ranks on ${CONVOY_HOST_CORES} cores: MPICH's \
passive-target operations wait for their target's time slice (docs/cluster.md, MPI families)")
  endif()
  set(${out} "${why}" PARENT_SCOPE)
endfunction()

set(CONVOY_TEST_TIMEOUT 180 CACHE STRING "Default timeout (s) of one CTest entry")

set(CONVOY_TEST_ENV
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_rmaps_base_oversubscribe=1
    # OpenMPI and hwloc keep some allocations until exit; their leaks are not ours.
    "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp:print_suppressions=0"
    "ASAN_OPTIONS=abort_on_error=0:detect_odr_violation=0"
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)

# LeakSanitizer cannot unwind through OpenMPI's own allocations with its fast unwinder, so
# every MPI program "leaks" at MPI_Finalize; fast_unwind_on_malloc=0 fixes that but is ~10x
# slower. MPI programs therefore run without leak detection; unit tests (no MPI) keep it.
set(CONVOY_MPI_TEST_ENV
    "ASAN_OPTIONS=abort_on_error=0:detect_odr_violation=0:detect_leaks=0")

function(_convoy_test_program name main)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} ${main} convoy_test_support convoy_warnings)
  if(TARGET convoy_test_pch)
    target_precompile_headers(${name} REUSE_FROM convoy_test_pch)
  endif()
endfunction()

function(convoy_add_test)
  cmake_parse_arguments(ARG "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS;ENV;ARGS" ${ARGN})
  _convoy_test_program(${ARG_NAME} GTest::gtest_main SOURCES ${ARG_SOURCES} LIBS ${ARG_LIBS})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT ${CONVOY_TEST_TIMEOUT})
  endif()
  add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME} ${ARG_ARGS})
  set_tests_properties(${ARG_NAME} PROPERTIES TIMEOUT ${ARG_TIMEOUT}
    LABELS "unit;${ARG_LABELS}" ENVIRONMENT "${CONVOY_TEST_ENV};${ARG_ENV}")
endfunction()

# convoy_add_mpi_entry(<test> <np> <program> [ARGS ...] [TIMEOUT s] [LABELS ...] [ENV ...]
#                      [PROPERTIES <prop> <value>...])
# One CTest entry: <program> (a target) under the MPI launcher with <np> ranks, or an entry
# that says why it cannot run here (convoy_mpi_entry_skip). ENV is the whole environment.
function(convoy_add_mpi_entry test np prog)
  cmake_parse_arguments(ARG "" "TIMEOUT" "ARGS;LABELS;ENV;PROPERTIES" ${ARGN})
  convoy_mpi_entry_skip(why ${np} "${ARG_LABELS}" "${ARG_ENV}")
  if(why)
    convoy_add_skipped_test(NAME ${test} LABELS "${ARG_LABELS}" REASON "${why}")
    return()
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT ${CONVOY_TEST_TIMEOUT})
  endif()
  add_test(NAME ${test}
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${CONVOY_MPIEXEC_PREFLAGS}
            $<TARGET_FILE:${prog}> ${ARG_ARGS})
  # PROCESSORS: a run of np ranks occupies np cores (ranks waiting in MPI spin, yielding);
  # ctest -j counts it as at most all of its -j, so one of np >= 2 on the 2-core machine
  # runs alone and one of a single rank beside another entry.
  set_tests_properties(${test} PROPERTIES TIMEOUT ${ARG_TIMEOUT} PROCESSORS ${np}
    LABELS "${ARG_LABELS}" ENVIRONMENT "${ARG_ENV}" ${ARG_PROPERTIES})
endfunction()

function(convoy_add_mpi_test)
  cmake_parse_arguments(ARG "" "NAME;TARGET;TIMEOUT" "SOURCES;LIBS;RANKS;ARGS;ENV;LABELS" ${ARGN})
  if(ARG_TARGET)
    set(prog ${ARG_TARGET})
  else()
    set(prog ${ARG_NAME})
    _convoy_test_program(${prog} convoy_mpi_gtest_main SOURCES ${ARG_SOURCES} LIBS ${ARG_LIBS})
  endif()
  if(NOT ARG_RANKS)
    set(ARG_RANKS 1 2 3 4 6 8)
  endif()
  foreach(np IN LISTS ARG_RANKS)
    convoy_add_mpi_entry(${ARG_NAME}.np${np} ${np} ${prog} ARGS ${ARG_ARGS}
      TIMEOUT ${ARG_TIMEOUT} LABELS mpi np${np} ${ARG_LABELS}
      ENV ${CONVOY_TEST_ENV} ${CONVOY_MPI_TEST_ENV} ${ARG_ENV})
  endforeach()
endfunction()

# convoy_add_header_tests()
# Each public header of every component (the HEADERS of convoy_component) compiles alone,
# as the first and only include of its translation unit, twice (the second include checks
# the include guard). One OBJECT library per component, built with the tests, so a header
# that is not self-contained breaks the test build (Abseil/Kokkos practice). The C headers
# are also checked as C99 by tests/c_api.
function(convoy_add_header_tests)
  get_property(components GLOBAL PROPERTY CONVOY_COMPONENTS)
  foreach(tgt IN LISTS components)
    get_target_property(headers ${tgt} CONVOY_HEADERS)
    if(NOT headers)
      continue()
    endif()
    set(sources "")
    foreach(h IN LISTS headers)
      string(REGEX REPLACE "[/.]" "_" stem "${h}")
      set(src "${CMAKE_CURRENT_BINARY_DIR}/headers/${tgt}/${stem}.cpp")
      file(CONFIGURE OUTPUT "${src}"
        CONTENT "// Generated: ${h} compiles alone (cmake/convoy_testing.cmake).\n#include <${h}>\n#include <${h}>\n")
      list(APPEND sources "${src}")
    endforeach()
    add_library(${tgt}_headers_self_contained OBJECT ${sources})
    target_link_libraries(${tgt}_headers_self_contained PRIVATE ${tgt} convoy_warnings)
    # No clang-tidy here: each header is checked where real sources include it, and the C
    # headers (convey.h) compiled as C++ would be held to C++ rules (typedef -> using).
    set_target_properties(${tgt}_headers_self_contained PROPERTIES CXX_CLANG_TIDY "")
  endforeach()
  # Every header under a component's include/ is in its HEADERS list (checked when the
  # tests run, so that a new header cannot escape the check above).
  set(listed "")
  foreach(tgt IN LISTS components)
    get_target_property(dir ${tgt} SOURCE_DIR)
    get_target_property(headers ${tgt} CONVOY_HEADERS)
    if(headers)
      string(REPLACE ";" "|" hs "${headers}")
      list(APPEND listed "${dir}/include=${hs}")
    endif()
  endforeach()
  add_test(NAME headers_listed COMMAND ${CMAKE_COMMAND} "-DLISTED=${listed}"
           -P ${PROJECT_SOURCE_DIR}/cmake/convoy_check_headers.cmake)
  set_tests_properties(headers_listed PROPERTIES LABELS "unit;headers" TIMEOUT 60)
endfunction()
