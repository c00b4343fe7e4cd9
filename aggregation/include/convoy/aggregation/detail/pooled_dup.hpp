#pragma once
/// @file
/// A duplicate of a communicator for one transport, taken from the duplicates that earlier
/// transports on the same communicator handed back (aggregation/README.md, AGG-69): a
/// construction costs one MPI_Allreduce instead of an MPI_Comm_dup.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace convoy::aggregation::detail {

class dup_pool;

class pooled_dup {
 public:
  /// The duplicates kept per communicator at most; one handed back beyond is freed.
  static constexpr std::size_t max_kept = 8;

  pooled_dup() = default;
  /// Collective over `parent`: one MPI_Allreduce finds whether every rank offers the same
  /// kept duplicate (the oldest it holds); if so it is taken, else a new MPI_Comm_dup is
  /// made, and every rank that offered one frees it (not every rank keeps it).
  /// The duplicate returns errors. Throws convoy::error if MPI fails.
  explicit pooled_dup(MPI_Comm parent);
  pooled_dup(const pooled_dup&) = delete;
  pooled_dup& operator=(const pooled_dup&) = delete;
  pooled_dup(pooled_dup&& other) noexcept;
  pooled_dup& operator=(pooled_dup&& other) noexcept;
  /// Frees the duplicate unless it was handed back (nothing after MPI_Finalize).
  ~pooled_dup();

  [[nodiscard]] MPI_Comm get() const noexcept { return comm_; }

  /// Local. `settled`: nothing this rank sent on the duplicate is unreceived, nothing sent
  /// to it is unreceived and no request on it is pending (a transport whose peers settled
  /// too): it is kept for the next pooled_dup of the parent. Otherwise it is freed now.
  void end(bool settled) noexcept;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::uint64_t serial_ = 0;  ///< the same on every rank for one duplicate
  std::shared_ptr<dup_pool> pool_;
};

}  // namespace convoy::aggregation::detail
