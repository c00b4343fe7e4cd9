#pragma once
// Shared by the examples: a deterministic hash for inputs, and a verdict agreed by all ranks.
#include <mpi.h>

#include <cstdint>
#include <cstdio>

namespace example {

inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Prints the verdict on rank 0; returns the exit code (0 only if every rank agrees ok).
inline int verdict(const char* name, bool ok) {
  int mine = ok ? 1 : 0, all = 0, rank = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("%s: %s\n", name, all ? "verified" : "WRONG");
  return all ? 0 : 1;
}

}  // namespace example
