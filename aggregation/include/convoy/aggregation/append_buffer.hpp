#pragma once
/// @file
/// One-sided append (Dinan & Flajslik 2014):
/// every rank owns one receive buffer of the same size; any rank appends bytes to any
/// rank's buffer with push(), without the receiver taking part. Usable without a conveyor.
///
/// Implementation (Dinan & Flajslik 2014, sec. 3, "implemented on top of the existing API", and its
/// "counting push" of sec. 2.1): a sender reserves space with an atomic fetch-and-add on
/// the target's offset counter (MPI_Fetch_and_op), writes its bytes there (MPI_Put, flush)
/// and then adds what it wrote to the target's completion counters (bytes and appends,
/// MPI_Accumulate, flush). When the completed bytes equal the reserved ones (capped at the
/// capacity), every byte of the buffer up to that length is valid: the receiver can read
/// without a barrier (local_view().complete). Invariants AGG-100..AGG-105
/// (docs/aggregation-reference.md, "One-sided append").
#include <mpi.h>

#include <convoy/aggregation/detail/rma_window.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace convoy::aggregation {

class append_buffer {
 public:
  /// What has arrived in this rank's buffer (a local query; no communication).
  struct view {
    const std::byte* data = nullptr;  ///< start of the buffer (valid until free/reset)
    std::size_t bytes = 0;            ///< appended bytes: min(requested, capacity)
    std::size_t requested_bytes = 0;  ///< bytes pushes asked for; > capacity: truncated
    std::uint64_t n_appends = 0;      ///< completed pushes that wrote at least one byte
    bool complete = false;            ///< every push that reserved space here is complete:
                                      ///< data[0, bytes) is valid
  };

  /// Collective over `comm`: every rank gets a buffer of `buffer_bytes`, which must be
  /// the same on every rank (the truncation rule needs it, Dinan & Flajslik 2014, sec. 2.1). Throws
  /// convoy::error (on every rank) if the sizes differ or MPI fails.
  append_buffer(MPI_Comm comm, std::size_t buffer_bytes);
  /// Frees the buffer if free() was not called (then collective, like free()).
  ~append_buffer();
  append_buffer(const append_buffer&) = delete;
  append_buffer& operator=(const append_buffer&) = delete;

  /// Appends `bytes` to the buffer of `rank`; not collective; blocks only for the three
  /// one-sided round trips (reserve, put, publish). Returns the number of bytes appended:
  /// all of them, fewer if the target's buffer fills up (the first bytes of `bytes` are
  /// kept), 0 if it is full or `bytes` is empty (an empty push does not communicate).
  /// Concurrent pushes from several ranks to one target land in disjoint ranges in an
  /// unspecified order; the bytes of one push are contiguous. Throws convoy::error naming
  /// the problem after free() or for a rank outside [0, n_ranks()), or if MPI fails.
  std::size_t push(int rank, std::span<const std::byte> bytes);

  /// This rank's buffer as it is now. After every push to it has returned (e.g. after a
  /// barrier), complete is true. Throws after free().
  [[nodiscard]] view local_view();

  /// Collective: waits until every rank is here (so every push of the cycle has
  /// returned), empties every rank's buffer, and waits again, so no push of the next
  /// cycle precedes a reset. Throws after free().
  void reset();

  /// Collective: releases the buffer; every later call but freed() throws. Calling it
  /// twice throws.
  void free();

  [[nodiscard]] bool freed() const noexcept { return !window_; }
  [[nodiscard]] std::size_t buffer_bytes() const noexcept { return capacity_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int n_ranks() const noexcept { return n_ranks_; }

 private:
  void check_live(const char* call) const;

  std::unique_ptr<detail::rma_window> window_;
  std::size_t capacity_ = 0;
  int rank_ = 0;
  int n_ranks_ = 1;
};

}  // namespace convoy::aggregation
