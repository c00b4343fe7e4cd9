#pragma once
// The watchdog's board over MPI (termination/README.md, TERM-15): one passive-target RMA
// window over the conveyor's communicator holding every rank's status record. Private to
// conveyor_api.
#include <mpi.h>

#include <convoy/termination/watchdog.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace convoy::detail {

class status_window final : public termination::status_board {
 public:
  /// Collective over `comm` (MPI_Win_allocate and one barrier). Throws convoy::error.
  explicit status_window(MPI_Comm comm);
  /// Collective (MPI_Win_free), unless MPI is finalized.
  ~status_window() override;
  status_window(const status_window&) = delete;
  status_window& operator=(const status_window&) = delete;

  /// Writes this rank's slot (a sequence-locked copy): local stores, no communication.
  void publish(const termination::rank_status& s) noexcept override;
  /// MPI_Get of every rank's slot under the window's lock_all epoch (passive target: the
  /// other ranks need not call MPI), retried while a slot is being written.
  [[nodiscard]] std::vector<termination::rank_status> read_all() override;
  void print(const std::string& text) noexcept override;
  void abort() noexcept override;

 private:
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* base_ = nullptr;  // this rank's slot
  int rank_ = 0;
  int size_ = 0;
};

/// The board of an engine of `comm`, or null when the watchdog is off (`seconds` <= 0).
/// Collective.
std::shared_ptr<termination::status_board> make_status_board(MPI_Comm comm, double seconds);

}  // namespace convoy::detail
