// The one-sided window under the RMA transport, the one-sided append and the watchdog's
// board (aggregation/detail/rma_window.hpp): a get or put aimed at rank r lands exactly at
// r's `base()`, whatever the size of the parts. Sizes that are not multiples of 16 bytes
// are the point: MPICH 4.0 addressed such parts 8 bytes off across nodes, inside the
// previous rank's part. Each rank's words are derived from (rank, size, index), so every
// reader checks every word on its own.
#include <gtest/gtest.h>
#include <mpi.h>

#include <convoy/aggregation/detail/rma_window.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "convoy_test/mpi.hpp"

namespace detail = convoy::aggregation::detail;
using convoy_test::all_ranks;

namespace {

constexpr std::size_t sizes[] = {8, 24, 40, 72, 200};

std::uint64_t word_of(int rank, std::size_t bytes, std::size_t i, std::uint64_t salt) {
  return (static_cast<std::uint64_t>(rank) << 48) ^ (std::uint64_t{bytes} << 24) ^ (i << 4) ^ salt;
}

// Every rank's words as every rank reads them one-sidedly; "" when all are right.
std::string read_everyone(detail::rma_window& w, std::size_t bytes, std::uint64_t salt) {
  const auto n = static_cast<int>(bytes / sizeof(std::uint64_t));
  std::vector<std::uint64_t> got(static_cast<std::size_t>(n));
  for (int r = 0; r < w.n_ranks(); ++r) {
    w.read_words(r, 0, got.data(), n);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t want = word_of(r, bytes, static_cast<std::size_t>(i), salt);
      if (got[static_cast<std::size_t>(i)] != want)
        return "rank " + std::to_string(w.rank()) + " read word " + std::to_string(i) +
               " of rank " + std::to_string(r) + "'s " + std::to_string(bytes) + "-byte part as " +
               std::to_string(got[static_cast<std::size_t>(i)]) + ", not " + std::to_string(want);
    }
  }
  return "";
}

TEST(RmaWindow, GetsAndPutsLandAtEachRanksBase) {
  for (const std::size_t bytes : sizes) {
    detail::rma_window w(MPI_COMM_WORLD, bytes);
    const auto n = bytes / sizeof(std::uint64_t);
    // Written locally through base(), read remotely.
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t v = word_of(w.rank(), bytes, i, 1);
      std::memcpy(w.base() + i * sizeof v, &v, sizeof v);
    }
    w.sync();
    MPI_Barrier(MPI_COMM_WORLD);
    std::string problem = read_everyone(w, bytes, 1);
    EXPECT_EQ(problem, "");
    MPI_Barrier(MPI_COMM_WORLD);
    // Written remotely by the previous rank, read locally through base() and remotely.
    const int next = (w.rank() + 1) % w.n_ranks();
    std::vector<std::uint64_t> words(n);
    for (std::size_t i = 0; i < n; ++i) words[i] = word_of(next, bytes, i, 2);
    w.put(next, 0, words.data(), bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    w.sync();
    for (std::size_t i = 0; i < n && problem.empty(); ++i) {
      std::uint64_t v = 0;
      std::memcpy(&v, w.base() + i * sizeof v, sizeof v);
      if (v != word_of(w.rank(), bytes, i, 2))
        problem = "rank " + std::to_string(w.rank()) + "'s word " + std::to_string(i) + " of " +
                  std::to_string(bytes) + " bytes is " + std::to_string(v) +
                  " after the previous rank's put";
    }
    EXPECT_EQ(problem, "");
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_EQ(read_everyone(w, bytes, 2), "");
    ASSERT_TRUE(all_ranks(!HasFailure())) << bytes << "-byte parts";
  }
}

}  // namespace
