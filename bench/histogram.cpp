// The histogram benchmark program (bench/README.md).
#include "histogram.hpp"

int main(int argc, char** argv) {
  return convoy::bench::run_main<convoy::bench::histogram_kernel>(argc, argv);
}
