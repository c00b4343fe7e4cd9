# A second set of benchmark programs whose convey.h kinds (simple, tensor1-3, convey) run
# over another implementation of bale's convey.h, so that the same kernels measure both
# libraries in one run (bench/README.md "Comparing with another convey.h library").
#
#   -DCONVOY_BENCH_CONVEY_PREFIX=/path/prefix   include/convey.h and lib/libconvey.a
#   -DCONVOY_BENCH_CONVEY_NAME=bale             printed as impl=<name> (default ext)
#
# Builds bench-histogram-ext, bench-index-gather-ext, bench-all-to-all-ext and
# bench-permute-ext. They hold the convey.h kinds and the MPI baselines (naive,
# alltoallv), not convoy's C++ kinds, and link nothing of convoy's: both libraries define
# convey_push and the rest. Nothing here builds the other library.
set(CONVOY_BENCH_CONVEY_PREFIX "" CACHE PATH
    "Prefix of another convey.h library (include/convey.h, lib/libconvey.a) to benchmark")
set(CONVOY_BENCH_CONVEY_NAME "ext" CACHE STRING "impl= name of that library in results")

if(NOT CONVOY_BENCH_CONVEY_PREFIX)
  return()
endif()
set(ext_include ${CONVOY_BENCH_CONVEY_PREFIX}/include)
find_library(CONVOY_BENCH_CONVEY_LIBRARY NAMES libconvey.a convey
             PATHS ${CONVOY_BENCH_CONVEY_PREFIX}/lib NO_DEFAULT_PATH)
if(NOT EXISTS ${ext_include}/convey.h OR NOT CONVOY_BENCH_CONVEY_LIBRARY)
  message(FATAL_ERROR "CONVOY_BENCH_CONVEY_PREFIX=${CONVOY_BENCH_CONVEY_PREFIX}: "
                      "expected include/convey.h and lib/libconvey.a there")
endif()

# bale's MPI build keeps its rank and size in globals that only its xmpi_init sets.
set(ext_xmpi 0)
if(CMAKE_NM)
  execute_process(COMMAND ${CMAKE_NM} -g ${CONVOY_BENCH_CONVEY_LIBRARY}
                  OUTPUT_VARIABLE ext_symbols ERROR_QUIET)
  if(ext_symbols MATCHES "T xmpi_init")
    set(ext_xmpi 1)
  endif()
endif()

add_library(convoy_bench_harness_ext STATIC harness.cpp report.cpp channels.cpp baseline_channels.cpp
            options.cpp)
# SYSTEM: another library's header is not held to our warning flags.
target_include_directories(convoy_bench_harness_ext SYSTEM PUBLIC ${ext_include})
target_link_libraries(convoy_bench_harness_ext
  PUBLIC ${CONVOY_BENCH_CONVEY_LIBRARY} convoy_mpi convoy_bench_rows m
  PRIVATE CLI11::CLI11 convoy_warnings)
target_compile_features(convoy_bench_harness_ext PUBLIC cxx_std_20)
target_compile_definitions(convoy_bench_harness_ext PUBLIC
  CONVOY_BENCH_HAVE_CONVEY=1
  CONVOY_BENCH_BALE_MPI=${ext_xmpi}
  CONVOY_BENCH_IMPL="${CONVOY_BENCH_CONVEY_NAME}"
  CONVOY_BENCH_GIT="${CONVOY_BENCH_GIT}")

convoy_bench_programs(convoy_bench_harness_ext -ext CONVOY_BENCH_EXT_PROGRAMS)
message(STATUS "bench: ${CONVOY_BENCH_EXT_PROGRAMS} over ${CONVOY_BENCH_CONVEY_LIBRARY} "
               "(impl=${CONVOY_BENCH_CONVEY_NAME})")

if(CONVOY_BUILD_TESTS AND COMMAND convoy_add_mpi_test)
  foreach(prog ${CONVOY_BENCH_EXT_PROGRAMS})
    convoy_add_mpi_test(NAME ${prog}.smoke TARGET ${prog} RANKS 2 4
      ARGS --items 20000 --sizes 8,24 --reps 1 --warmup 1 --table 1000
      LABELS bench TIMEOUT 300)
  endforeach()
endif()
