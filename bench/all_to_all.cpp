// The all-to-all benchmark program (bench/README.md).
#include "all_to_all.hpp"

int main(int argc, char** argv) {
  return convoy::bench::run_main<convoy::bench::all_to_all_kernel>(argc, argv);
}
