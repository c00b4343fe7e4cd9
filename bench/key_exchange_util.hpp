#pragma once
// Helpers of the one-sided benchmark programs (bench-key-exchange, bench-sparse-rounds):
// collective reductions of a cycle's outcome and the shared main.
#include <mpi.h>

#include <cstdio>
#include <exception>

#include "harness.hpp"

namespace convoy::bench {

/// The slowest rank's time (collective over MPI_COMM_WORLD).
inline double max_over_ranks(double t) {
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

/// True on every rank iff `ok` on every rank (collective).
inline bool all_ranks(bool ok) {
  int v = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

/// main(): MPI up, `run(argc, argv)` (its status: 0 ok, 1 not verified, 2 usage), MPI down;
/// an exception is reported with the program's name and gives status 2.
template <class Run>
int program_main(int argc, char** argv, const char* name, Run run) {
  init_mpi(argc, argv);
  int status = 0;
  try {
    status = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    status = 2;
  }
  finalize_mpi();
  return status;
}

}  // namespace convoy::bench
