# clang-tidy while compiling (CONVOY_CLANG_TIDY, on in the dev preset and so in CI): every
# C++ source of the product, libraries, tools, benchmarks and examples, is checked with the
# root .clang-tidy (bugprone, performance, a few modernize; findings are errors, and
# headers under <comp>/include/convoy/ are checked where they are included). The tests'
# own sources are checked only with CONVOY_CLANG_TIDY_TESTS: with GoogleTest's headers in
# every translation unit they took 45 % of the checking time (tests/CMakeLists.txt).
# Generated sources (the header self-containment tests) only include one header each;
# third-party code is never compiled here (GoogleTest, Google Benchmark, MPI and hwloc are
# system packages). Adds about 40 % to the compile time of a build from scratch.
option(CONVOY_CLANG_TIDY "Run clang-tidy on convoy's C++ sources while compiling" OFF)
option(CONVOY_CLANG_TIDY_TESTS "With CONVOY_CLANG_TIDY, check the tests' sources too" OFF)
if(CONVOY_CLANG_TIDY)
  find_program(CONVOY_CLANG_TIDY_EXE NAMES clang-tidy clang-tidy-16 clang-tidy-15 clang-tidy-14
               REQUIRED)
  set(CMAKE_CXX_CLANG_TIDY ${CONVOY_CLANG_TIDY_EXE} --quiet)
endif()
