#pragma once
/// @file
/// Shared pieces of the MPI benchmark programs (bench/README.md): command-line options,
/// the counter-based random streams every kernel draws from, and item payloads.
///
/// Everything here is plain C++ over MPI so that the same benchmark sources can be built
/// against another conveyor library that offers bale's convey.h (bench/README.md,
/// "Comparing with bale").
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace convoy::bench {

/// Command-line options shared by every kernel (bench/README.md lists them).
struct options {
  std::uint64_t items = 10'000'000;  ///< items pushed per rank per cycle
  std::vector<std::size_t> sizes{8, 16, 32, 128};
  std::vector<std::string> kinds;  ///< empty: every kind this build offers
  int reps = 1;                    ///< timed cycles; the median is reported
  int warmup = 1;                  ///< untimed cycles before the timed ones
  std::uint64_t table = 100'000;   ///< table entries per rank (histogram, index-gather)
  std::uint64_t seed = 1;
  double skew = 0;  ///< Zipf exponent of the histogram's keys; 0: uniform (bench/zipf.hpp)
  /// C++ API kinds (mesh-*): 0 or empty take the library defaults (environment, tune file).
  std::size_t buffer_bytes = 0;
  int n_buffers = 0;
  std::string mesh;  ///< spec of kind "mesh" (default auto)
  /// Kind combine: hold-back cache entries per lane that leaves the node; 0: none; unset:
  /// the library's (CONVOY_COMBINE_CACHE, else its default budget).
  std::optional<std::size_t> combine_cache;
  /// convey.h kinds (simple, tensor*): bale's benchmark defaults unless given.
  std::size_t convey_capacity = 0;  ///< 0: CONVEY_BUFFER_SIZE, else 10000
  int convey_buffers = 0;           ///< 0: 1 (bale's alltoallv default)
  std::size_t convey_n_local = 0;   ///< 0: the library's choice (ranks per node)
  int naive_window = 256;           ///< outstanding Isends / posted Irecvs (naive)
  std::string json;                 ///< also write JSON records here (rank 0)
  bool table_output = false;        ///< print a human table as well
  bool quiet = false;               ///< no RESULT lines (demo)
};

/// Options to run with, or the exit code of a program that must stop now.
struct parsed_options {
  options opt;
  int exit_code = -1;  ///< -1: run; 0: --help was printed; 2: a bad option was reported
};

/// Parses argv with CLI11 (bench/options.cpp). Every rank parses the same argv and gets
/// the same outcome; only `print` (rank 0) writes --help or the error message. Options
/// start from `defaults` (the demo's), so a flag given later overrides them.
[[nodiscard]] parsed_options parse_options(int argc, char** argv, const char* program,
                                           const char* kernel_help, bool print,
                                           const options& defaults = {});

/// splitmix64's finalizer: a bijective 64-bit mix (counter-based random numbers).
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Uniform value in [0, n) from 32 random bits (Lemire's multiply-shift, no division).
[[nodiscard]] constexpr std::uint32_t below(std::uint32_t bits, std::uint64_t n) noexcept {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(bits) * n) >> 32);
}

/// The i-th random draw of `rank` in stream `seed`: the same on every run and rank count.
[[nodiscard]] constexpr std::uint64_t draw(std::uint64_t seed, int rank, std::uint64_t i) noexcept {
  return mix64((seed << 48) ^ (static_cast<std::uint64_t>(rank) << 34) ^ i);
}

inline constexpr std::uint64_t word_step = 0x9e3779b97f4a7c15ULL;

/// Fills `words` 8-byte words at `out` (unaligned) with key ^ j*step, j = 0..words-1.
inline void fill_words(void* out, std::uint64_t key, std::size_t words) noexcept {
  auto* p = static_cast<std::byte*>(out);
  for (std::size_t j = 0; j < words; ++j) {
    const std::uint64_t w = key ^ (j * word_step);
    std::memcpy(p + 8 * j, &w, 8);
  }
}

/// True if `in` holds what fill_words(in, key, words) wrote.
[[nodiscard]] inline bool check_words(const void* in, std::uint64_t key,
                                      std::size_t words) noexcept {
  const auto* p = static_cast<const std::byte*>(in);
  for (std::size_t j = 0; j < words; ++j) {
    std::uint64_t w;
    std::memcpy(&w, p + 8 * j, 8);
    if (w != (key ^ (j * word_step))) return false;
  }
  return true;
}

/// Facts about the job, printed with every result (style.md "Benchmarks": context).
struct job {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  int n_ranks = 1;
  int ranks_per_node = 1;  ///< ranks on this rank's node (emulated or MPI_COMM_TYPE_SHARED)
  int n_nodes = 1;
  /// Ranks per node when every node has as many and they divide the job, else 1: the
  /// default n_local of tensor kinds (bale's benchmarks use ranks per node).
  int uniform_ranks_per_node = 1;
  /// CONVOY_EMULATE_NODES as given, "" if unset. When set, nodes are the emulated ones
  /// (block placement, or round-robin with CONVOY_EMULATE_MAP=cyclic), as convoy sees them.
  std::string emulate_nodes;
  std::vector<int> rank_node;  ///< the node of every rank, numbered from 0, as above
  std::string impl;            ///< "convoy" or the library the façade kinds were linked against
};

/// Collective. @throws std::runtime_error if CONVOY_EMULATE_NODES is malformed or its sizes
/// do not add up to the rank count (every rank throws alike).
[[nodiscard]] job describe_job(MPI_Comm comm);

}  // namespace convoy::bench
