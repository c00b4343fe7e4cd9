// The index-gather benchmark program (bench/README.md).
#include "index_gather.hpp"

int main(int argc, char** argv) {
  return convoy::bench::run_main<convoy::bench::index_gather_kernel>(argc, argv);
}
