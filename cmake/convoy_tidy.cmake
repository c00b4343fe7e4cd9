# clang-tidy while compiling (CONVOY_CLANG_TIDY, on in the dev preset and so in CI): every
# C++ source of this build, libraries, tools, tests and benchmarks alike, is checked with
# the root .clang-tidy (bugprone, performance, a few modernize; findings are errors, and
# headers under <comp>/include/convoy/ are checked where they are included). Generated
# sources (the header self-containment tests) only include one header each; third-party
# code is never compiled here (GoogleTest, Google Benchmark, MPI and hwloc are system
# packages). Adds about half to the compile time of a build from scratch (README.md, Tests).
option(CONVOY_CLANG_TIDY "Run clang-tidy on convoy's C++ sources while compiling" OFF)
if(CONVOY_CLANG_TIDY)
  find_program(CONVOY_CLANG_TIDY_EXE NAMES clang-tidy clang-tidy-16 clang-tidy-15 clang-tidy-14
               REQUIRED)
  set(CMAKE_CXX_CLANG_TIDY ${CONVOY_CLANG_TIDY_EXE} --quiet)
endif()
