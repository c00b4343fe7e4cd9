#pragma once
// Small helpers shared by the MPI tests.
#include <mpi.h>

#include <cstddef>
#include <string>

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

// Rank 0's copy of `s` (collective over MPI_COMM_WORLD).
inline std::string from_root(std::string s) {
  int len = static_cast<int>(s.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  s.resize(static_cast<size_t>(len));
  MPI_Bcast(s.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
  return s;
}

// The MPI library's own name for itself (MPI_Get_library_version), e.g. "Open MPI v4.1.4,
// ..." or "MPICH Version: 4.0.2 ...".
inline std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  return {text, static_cast<std::size_t>(len)};
}

// True when the MPI is MPICH or one derived from it (Intel MPI, MVAPICH, Cray MPICH).
inline bool mpich_family() {
  const std::string v = library_version();
  return v.find("MPICH") != std::string::npos || v.find("Intel(R) MPI") != std::string::npos ||
         v.find("MVAPICH") != std::string::npos;
}

// True on every rank iff every rank holds the same `s`.
inline bool same_everywhere(const std::string& s) { return all_ranks(from_root(s) == s); }

}  // namespace convoy_test
