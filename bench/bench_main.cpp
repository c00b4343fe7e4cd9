/// @file
/// The shared main of the Google Benchmark micro-benchmarks (style.md "Benchmarks"):
/// initializes MPI (components may query it), then Google Benchmark; only rank 0 reports.
/// Run one process: `convoy-micro --benchmark_format=json`; context carries git and MPI.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <string>

#ifndef CONVOY_BENCH_GIT
#define CONVOY_BENCH_GIT "unknown"
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  benchmark::Initialize(&argc, argv);
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(mpi, &len);
  std::string mpi_line(mpi, static_cast<std::size_t>(len));
  if (auto nl = mpi_line.find('\n'); nl != std::string::npos) mpi_line.resize(nl);
  benchmark::AddCustomContext("git", CONVOY_BENCH_GIT);
  benchmark::AddCustomContext("mpi", mpi_line);
  benchmark::AddCustomContext("ranks", std::to_string(size));
  // Micro-benchmarks run in one process; under a launcher only rank 0 runs and reports.
  if (rank == 0) benchmark::RunSpecifiedBenchmarks();
  MPI_Barrier(MPI_COMM_WORLD);
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
