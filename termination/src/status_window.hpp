#pragma once
// The watchdog's boards over MPI (termination/README.md, TERM-15): one-sided windows
// holding every rank's status record, or, where MPI cannot make them, point-to-point
// queries and answers. Private to termination/.
#include <mpi.h>

#include <convoy/aggregation/node_map.hpp>
#include <convoy/termination/watchdog.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace convoy::termination::detail {

/// How a rank that did not answer within a read is described (both boards): by its last
/// answer, or, with none, as in the reader's cycle with nothing said; either way it has not
/// advanced or made progress since `asked_ms`, when the unanswered question was put.
void describe_silent(termination::rank_status& s, int rank, std::int64_t asked_ms,
                     const termination::rank_status& mine) noexcept;

/// How long a read waits for other ranks' answers: a quarter of the watchdog's timeout
/// `seconds`, from 1 ms to 1 s.
[[nodiscard]] std::int64_t answer_wait_ms(double seconds) noexcept;

/// Writes `text` to stderr and flushes it (both boards' print).
void print_diagnosis(const std::string& text) noexcept;

/// Ends the job (MPI_Abort on MPI_COMM_WORLD, exit code 3), once the launcher has read what
/// this rank wrote to stderr (both boards' abort). A launcher handles the abort as soon as
/// it arrives and kills every process: MPICH's Hydra then drops output still in the
/// rank's stderr pipe, so a diagnosis printed just before was lost now and then. When
/// stderr is a pipe or a socket, this waits until it holds no unread bytes (at most 2 s).
void abort_job() noexcept;

/// The board in two windows: on each node a shared-memory window whose slots the node's
/// ranks read with plain loads (no MPI call, so a rank that sleeps or computes does not
/// delay them), and, when `comm` spans nodes, a passive-target window over `comm` read with
/// MPI_Rget. MPI may complete a get only when the target calls MPI (MPICH's ch4 does, even
/// on one node), so, as status_messages does with its queries, a rank without progress for
/// half the timeout asks already, a read waits for answers for a bounded time, and a rank
/// whose get is still pending is described as silent.
class status_window final : public termination::status_board {
 public:
  /// Collective over `comm` (a duplicate, its node group aggregation::shared_node_group,
  /// one shared-memory window and, across nodes, aggregation::detail::allocate_window). `seconds`:
  /// the watchdog's timeout. Throws convoy::error on every rank alike if MPI cannot make the
  /// windows.
  status_window(MPI_Comm comm, double seconds);
  /// Collective (MPI_Win_free), unless MPI is finalized.
  ~status_window() override;
  status_window(const status_window&) = delete;
  status_window& operator=(const status_window&) = delete;

  /// Writes this rank's slots (a head and tail counter around the record): local stores,
  /// no communication.
  void publish(const termination::rank_status& s) noexcept override;
  /// Every rank's record: the node's by loads, retried while a slot is being written; the
  /// other nodes' by MPI_Rget, waited for a bounded time.
  [[nodiscard]] std::vector<termination::rank_status> read_all() override;
  void print(const std::string& text) noexcept override;
  void abort() noexcept override;

 private:
  struct far_read {  // a pending get of one off-node rank's slot
    MPI_Request request = MPI_REQUEST_NULL;
    std::int64_t asked_ms = 0;  // when it was issued; 0: none pending
  };
  void open_node_window();
  void open_far_window();
  bool poll_far(bool ask, std::int64_t now);  // asks (if `ask`) and takes; true: some pending
  void ask_far(int r, std::int64_t now);
  bool take_far(int r);  // true when r's get completed (its record taken or asked again)
  void free_windows() noexcept;

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::shared_ptr<const aggregation::node_group> node_;  // the real shared-memory node
  MPI_Win node_win_ = MPI_WIN_NULL;
  MPI_Win far_win_ = MPI_WIN_NULL;    // none when `comm` is one node
  std::byte* far_base_ = nullptr;     // this rank's slot in far_win_
  std::vector<std::byte*> near_;      // by rank of `comm`: its node slot, or null off-node
  std::vector<std::byte> far_slots_;  // by rank: the landing place of its get
  std::vector<far_read> far_;
  int pending_ = 0;                              // gets of far_ not yet taken
  std::vector<termination::rank_status> known_;  // each off-node rank's last record
  termination::rank_status mine_;
  int rank_ = 0;
  int size_ = 0;
  std::int64_t timeout_ms_ = 0;
  std::int64_t wait_ms_ = 0;
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
