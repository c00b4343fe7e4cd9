// The permute benchmark program (bench/README.md).
#include "permute.hpp"

int main(int argc, char** argv) {
  return convoy::bench::run_main<convoy::bench::permute_kernel>(argc, argv);
}
