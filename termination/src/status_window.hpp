#pragma once
// The watchdog's boards over MPI (termination/README.md, TERM-15): one passive-target RMA
// window over the conveyor's communicator holding every rank's status record, or, where
// MPI cannot make that window, point-to-point queries and answers. Private to termination/.
#include <mpi.h>

#include <convoy/termination/watchdog.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace convoy::termination::detail {

class status_window final : public termination::status_board {
 public:
  /// Collective over `comm` (a duplicate, aggregation::detail::allocate_window, one
  /// barrier). Throws convoy::error on every rank alike if MPI cannot make the window.
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
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* base_ = nullptr;  // this rank's slot
  int rank_ = 0;
  int size_ = 0;
};

/// The board without one-sided MPI (TERM-61): publish() keeps this rank's record and
/// answers the queries that have arrived; read_all() asks every other rank for its record
/// and waits for the answers at most a quarter of the timeout (and 1 s); a rank without
/// progress for half the timeout asks already. Ranks that are advancing publish at least
/// every 100 ms, so they answer; a rank that does not answer is described by its last
/// answer (or, with none, as in the reader's cycle with nothing said), with its last
/// advance no later than the first query it left unanswered or the reader's stall began.
class status_messages final : public termination::status_board {
 public:
  /// Collective over `comm` (a duplicate). `seconds`: the watchdog's timeout.
  status_messages(MPI_Comm comm, double seconds);
  /// Collective (MPI_Comm_free), unless MPI is finalized.
  ~status_messages() override;
  status_messages(const status_messages&) = delete;
  status_messages& operator=(const status_messages&) = delete;

  void publish(const termination::rank_status& s) noexcept override;
  [[nodiscard]] std::vector<termination::rank_status> read_all() override;
  void print(const std::string& text) noexcept override;
  void abort() noexcept override;

 private:
  void ask_all(std::int64_t now);  // queries every rank not asked yet
  void serve();                    // answers the queries that have arrived, takes the answers
  void reap() noexcept;            // completes finished sends

  struct answer {
    MPI_Request request = MPI_REQUEST_NULL;
    termination::rank_status record;
  };
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 0;
  std::int64_t timeout_ms_ = 0;
  std::int64_t wait_ms_ = 0;                      // read_all's longest wait for answers
  termination::rank_status mine_;                 // this rank's last record
  std::vector<termination::rank_status> known_;   // each rank's last answer
  std::vector<std::int64_t> asked_ms_;            // the unanswered query to each rank, or 0
  std::vector<MPI_Request> queries_;              // one per rank (empty messages)
  std::vector<std::unique_ptr<answer>> answers_;  // sends in flight
};

/// The board of an engine of `comm`, or null when the watchdog is off (`seconds` <= 0):
/// the window, or point-to-point messages where MPI cannot make one (a line on rank 0,
/// once per job). Collective.
std::shared_ptr<termination::status_board> make_status_board(MPI_Comm comm, double seconds);

}  // namespace convoy::termination::detail
