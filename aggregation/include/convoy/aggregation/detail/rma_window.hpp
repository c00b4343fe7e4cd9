#pragma once
/// @file
/// An MPI-3 passive-target window held open for its whole life (MPI_Win_allocate, then
/// MPI_Win_lock_all), with the few atomic and put helpers the one-sided append
/// (append_buffer.hpp) and the RMA transport (rma_transport.hpp) share.
///
/// Every rank exposes `bytes` of memory at displacement 0; all accesses use byte
/// displacements (disp_unit 1). Counters are 64-bit words accessed only through
/// accumulate-family calls (MPI-3 sec. 11.7: concurrent atomics on one location are
/// defined only between accumulate operations), data through MPI_Put.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace convoy::aggregation::detail {

/// Allocates an RMA window of `size` bytes per rank over `comm` (collective) and sets
/// `*base` to this rank's part: MPI_Win_allocate_shared (OpenMPI's `sm` component) when
/// every rank of `comm` shares one node, else MPI_Win_allocate (AGG-117: the `rdma`
/// component over the `vader` BTL crashes once a window has been freed and another
/// allocated). Each rank's part is rounded up to whole cache lines (MPICH 4.0 addresses a
/// part that does not start on 16 bytes wrongly). `comm` must return errors (MPI_ERRORS_RETURN); so does the window. Every
/// rank gets a window or every rank throws convoy::error with the lowest failing rank's
/// reason, window_failure()'s text (AGG-161).
MPI_Win allocate_window(MPI_Comm comm, MPI_Aint size, void** base);

/// "MPI cannot make one-sided windows across these ranks (CALL: MPI's text for CODE)".
[[nodiscard]] std::string window_failure(const char* call, int code);

class rma_window {
 public:
  /// Collective over `comm`: duplicates it (MPI_ERRORS_RETURN), allocates `bytes` (zeroed)
  /// on every rank, opens a lock_all epoch. Throws convoy::error if MPI fails.
  rma_window(MPI_Comm comm, std::size_t bytes);
  /// Collective: closes the epoch and frees the window and the communicator. Does
  /// nothing after MPI_Finalize.
  ~rma_window();
  rma_window(const rma_window&) = delete;
  rma_window& operator=(const rma_window&) = delete;

  [[nodiscard]] std::byte* base() const noexcept { return base_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int n_ranks() const noexcept { return n_ranks_; }
  [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }

  /// Atomic fetch-and-add of `add` to the word at `disp` on `target`; returns the old
  /// value once the operation is complete (one round trip).
  std::uint64_t fetch_add(int target, std::size_t disp, std::uint64_t add);
  /// Atomic read of `n` consecutive words at `disp` on `target` into `out`, complete.
  void read_words(int target, std::size_t disp, std::uint64_t* out, int n);
  /// Atomic compare-and-swap of the word at `disp` on `target`; returns the old value.
  std::uint64_t compare_swap(int target, std::size_t disp, std::uint64_t expected,
                             std::uint64_t desired);
  /// Atomically adds `n` words from `add` to the words at `disp` on `target` and waits
  /// until the update is complete at the target.
  void add_words(int target, std::size_t disp, const std::uint64_t* add, int n);
  /// Atomically stores `n` words at `disp` on `target`, complete at the target on return.
  void store_words(int target, std::size_t disp, const std::uint64_t* values, int n);
  /// Writes `len` bytes (any size: split into pieces of at most INT_MAX) at `disp` on
  /// `target` and waits until they are complete at the target.
  void put(int target, std::size_t disp, const void* src, std::size_t len);
  /// Makes remote writes to this rank's memory visible to its own loads (MPI_Win_sync).
  void sync();

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* base_ = nullptr;
  std::size_t bytes_ = 0;
  int rank_ = 0;
  int n_ranks_ = 1;
};

}  // namespace convoy::aggregation::detail
