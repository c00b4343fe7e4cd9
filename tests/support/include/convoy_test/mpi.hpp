#pragma once
// Small helpers shared by the MPI tests.
#include <mpi.h>

namespace convoy_test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// True on every rank iff `ok` is true on every rank.
inline bool all_ranks(bool ok) {
  int local = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

}  // namespace convoy_test
