#pragma once
/// @file
/// The watchdog (termination/README.md, TERM-15): when a rank has been inside a conveyor
/// cycle without progress for a set time, one rank prints a diagnosis that names the
/// likely culprit of the hang — a rank that has not said done, one that stopped calling
/// advance, one that does not pull what it holds — without any collective call.
///
/// Every rank publishes a small fixed-size record of its state (rank_status) to a
/// status_board; a rank that is still advancing and sees no progress reads every record
/// and prints, unless another rank has or a lower one will (is_printer). The board over MPI is a
/// passive-target RMA window (src/status_window.cpp); local_board keeps the records of the engines
/// of one process (the simulated transport, tests). diagnose() turns the records into the
/// text and is a pure function.
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace convoy::termination {

/// One link's waiting work, as published.
struct link_status {
  std::int32_t peer = -1;     ///< the rank at the link's other end
  std::int16_t stage = 0;     ///< the link's stage
  std::int16_t out = 0;       ///< 1: out-link, 0: in-link
  std::uint32_t items = 0;    ///< out: records in the open buffer; in: records not yet
                              ///< forwarded or pulled (rigid items; 0 if unknown)
  std::uint32_t buffers = 0;  ///< in: received buffers held (credits owed to `peer`)
};

/// What a rank publishes: trivially copyable, the same bytes on every rank of a board.
struct rank_status {
  static constexpr int max_links = 8;  ///< the most loaded links are published
  static constexpr std::uint32_t unknown = 0xffffffffU;

  std::int32_t rank = -1;      ///< -1: nothing published yet
  std::int32_t state = 0;      ///< termination::state
  std::uint32_t epoch = 0;     ///< begin/reset cycles begun on this engine
  std::uint8_t said_done = 0;  ///< advance(done = true) was called this cycle
  std::uint8_t sending = 0;    ///< buffers posted to the transport have not all left
  std::uint8_t elastic = 0;    ///< item counts are unknown (elastic items)
  std::uint8_t reserved = 0;
  std::int64_t last_advance_ms = 0;   ///< wall clock (ms since the epoch) of the last advance
  std::int64_t last_progress_ms = 0;  ///< ... of the last push, pull or buffer moved
  std::int64_t last_pull_ms = 0;      ///< ... of the last pull (or begin)
  std::int64_t diagnosed_ms = 0;      ///< ... of the last diagnosis this rank printed
  std::uint64_t advances = 0;         ///< advance calls this cycle
  std::uint64_t unpulled = 0;         ///< items delivered here and not pulled
  std::uint32_t credits_owed = 0;     ///< received buffers held, all in-links
  std::int32_t closing_stage = -1;    ///< the stage it cannot close yet (-1: all closed)
  std::int32_t wait_peer = -1;        ///< the in-link whose count it misses (-1: none)
  std::int32_t wait_stage = -1;
  std::uint32_t wait_received = 0;        ///< buffers received on that link this cycle
  std::uint32_t wait_expected = unknown;  ///< its count, or unknown: no last buffer yet
  std::uint32_t unfinished = 0;           ///< in-links whose count is not complete
  std::uint32_t n_links = 0;              ///< entries of `links` in use
  std::array<link_status, max_links> links{};
};

/// Where ranks publish their records. Implementations are safe to call from the engine's
/// advance; none calls a collective.
class status_board {
 public:
  virtual ~status_board() = default;
  status_board() = default;
  status_board(const status_board&) = delete;
  status_board& operator=(const status_board&) = delete;

  /// Publishes this rank's record (`s.rank` says whose).
  virtual void publish(const rank_status& s) noexcept = 0;
  /// Every rank's last published record, by rank. May throw convoy::error.
  [[nodiscard]] virtual std::vector<rank_status> read_all() = 0;
  /// Prints the diagnosis (stderr).
  virtual void print(const std::string& text) noexcept = 0;
  /// Ends the job with a non-zero exit (CONVOY_WATCHDOG_ABORT=1).
  virtual void abort() noexcept = 0;
};

/// The records of the engines of one process (simulations, tests): publish stores, print
/// appends to `printed`, abort counts.
class local_board final : public status_board {
 public:
  explicit local_board(int n_ranks) : records_(static_cast<std::size_t>(n_ranks)) {}
  void publish(const rank_status& s) noexcept override;
  [[nodiscard]] std::vector<rank_status> read_all() override;
  void print(const std::string& text) noexcept override;
  void abort() noexcept override { ++aborts_; }
  [[nodiscard]] std::vector<std::string> printed() const;
  [[nodiscard]] int aborts() const noexcept { return aborts_; }

 private:
  mutable std::mutex lock_;
  std::vector<rank_status> records_;
  std::vector<std::string> printed_;
  int aborts_ = 0;
};

/// The watchdog's settings, for engine_options.
struct watchdog_options {
  double seconds = 0;  ///< 0: off
  bool abort = false;  ///< abort the job after the diagnosis
  std::shared_ptr<status_board> board;
};

/// Why a rank holds the others up, most telling first.
enum class culprit_kind {
  not_begun,          ///< still in an earlier cycle while others wait in this one
  stopped_advancing,  ///< in a cycle, no advance call for the timeout or longer
  not_pulling,        ///< holds unpulled items and has not pulled for the timeout or longer
  not_done            ///< advancing, but has not called advance(done = true)
};

struct culprit {
  int rank = -1;
  culprit_kind kind = culprit_kind::not_done;
  [[nodiscard]] bool operator==(const culprit&) const = default;
};

/// The ranks that hold the cycle up, at most one cause per rank (the first that applies in
/// culprit_kind's order), by rank. `reporter` is the rank that diagnoses; `now_ms` the wall
/// clock; records with rank -1 are skipped. Pure.
[[nodiscard]] std::vector<culprit> find_culprits(const std::vector<rank_status>& all, int reporter,
                                                 std::int64_t now_ms, double timeout_seconds);

/// The latest progress any rank's record shows (wall-clock ms; 0 if none). A stall is no
/// progress anywhere for the timeout: a rank that waits while a slow one still pushes and
/// advances is not stalled, however long it has itself waited. Pure.
[[nodiscard]] std::int64_t last_progress_anywhere(const std::vector<rank_status>& all) noexcept;

/// Whether `me`, whose last progress was at `stall_began_ms`, prints the diagnosis of its
/// stall: no rank has printed one since (diagnosed_ms), and no lower rank of its cycle is
/// advancing (an advance within half the timeout) with no progress for half the timeout
/// or longer — that rank prints, within half a timeout. So one rank prints per stall: a
/// rank that defers to a lower one finds its diagnosis, and a lower one that stalls later
/// finds the higher one's. Pure.
[[nodiscard]] bool is_printer(const std::vector<rank_status>& all, int me,
                              std::int64_t stall_began_ms, std::int64_t now_ms,
                              double timeout_seconds);

/// The diagnosis text: a first line starting "convoy watchdog:", the likely causes in
/// words ("rank 3 has not called convey_advance(c, done=1) ...", "rank 5 has not called
/// advance for 41.0 s", "rank 2 holds 812 unpulled items ..."), the ranks that have not said
/// done, then one line per rank (state, last advance and pull, unpulled items, credits
/// owed, the termination stage it waits on and whose count, the links where work waits).
/// Pure.
[[nodiscard]] std::string diagnose(const std::vector<rank_status>& all, int reporter,
                                   std::int64_t now_ms, double timeout_seconds);

/// Milliseconds since the Unix epoch (wall clock: comparable between nodes).
[[nodiscard]] std::int64_t wall_clock_ms() noexcept;

}  // namespace convoy::termination
