#pragma once
/// @file
/// The trace recorder of one engine (termination/README.md, TERM-17): a fixed-size ring of
/// compact events per rank — buffers sent and received, explicit flushes, credit stalls,
/// advance calls, termination stages closed — written when the engine is freed as one
/// Chrome trace-event JSON file (Perfetto and chrome://tracing open it). Events are per
/// buffer or per advance call, never per item; the engine holds a null recorder when
/// tracing is off, so every event site costs one test of a null pointer and no clock read.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace convoy::termination {

enum class trace_kind : std::uint8_t {
  advance,      ///< "X": one advance call (or a run of calls that recorded nothing)
  send,         ///< "i": a buffer handed to the transport
  receive,      ///< "i": a buffer taken from the transport
  flush,        ///< "i": an explicit flush()
  stall,        ///< "X": an out-link without a free buffer (no credit) until one opened
  stage_closed  ///< "i": termination closed a stage (its last buffers are posted)
};

/// Bits of trace_event::flags.
inline constexpr std::uint8_t trace_full = 1;   ///< send: the buffer could take no more records
inline constexpr std::uint8_t trace_last = 2;   ///< send/receive: a last buffer (its link's count)
inline constexpr std::uint8_t trace_items = 4;  ///< `items` is known (rigid items)
inline constexpr std::uint8_t trace_open = 8;   ///< stall: still open when the file was written

/// One event, 32 bytes. `link`: -1 for the rank as a whole, else an out-link k (sends,
/// stalls) as k, an in-link i (receives) as n_out + i.
struct trace_event {
  std::int64_t t_ns = 0;    ///< this rank's steady clock
  std::int64_t dur_ns = 0;  ///< "X" events
  std::uint32_t bytes = 0;  ///< buffer bytes, header included
  std::uint32_t items = 0;  ///< records of the buffer (with trace_items); advance: calls merged
  std::int32_t link = -1;
  trace_kind kind = trace_kind::advance;
  std::uint8_t stage = 0;
  std::uint8_t flags = 0;
  std::uint8_t pad = 0;
};

/// A ring of `capacity` events (a power of two): once full, each new event overwrites the
/// oldest one and counts as dropped. Not thread-safe (one engine, one thread).
class trace_ring {
 public:
  /// @throws convoy::error unless `capacity` is a power of two >= 2.
  explicit trace_ring(std::size_t capacity);
  void put(const trace_event& e) noexcept {
    events_[static_cast<std::size_t>(next_) & mask_] = e;
    ++next_;
  }
  /// The newest event (precondition: size() > 0), to extend it in place.
  [[nodiscard]] trace_event& newest() noexcept {
    return events_[static_cast<std::size_t>(next_ - 1) & mask_];
  }
  [[nodiscard]] std::size_t size() const noexcept {
    return next_ < events_.size() ? static_cast<std::size_t>(next_) : events_.size();
  }
  [[nodiscard]] std::size_t capacity() const noexcept { return events_.size(); }
  /// Events overwritten so far.
  [[nodiscard]] std::uint64_t dropped() const noexcept { return next_ - size(); }
  /// Events put so far.
  [[nodiscard]] std::uint64_t total() const noexcept { return next_; }
  /// The i-th event kept, oldest first (i < size()).
  [[nodiscard]] const trace_event& at(std::size_t i) const noexcept {
    return events_[static_cast<std::size_t>(next_ - size() + i) & mask_];
  }

 private:
  std::vector<trace_event> events_;
  std::size_t mask_;
  std::uint64_t next_ = 0;
};

/// What a recorder needs besides its events (engine_options::trace carries the first part).
struct trace_options {
  std::string dir;                            ///< empty: no tracing
  std::size_t events = std::size_t{1} << 16;  ///< ring capacity, a power of two
  int conveyor = 0;                           ///< index in the file name
  /// This rank's steady clock minus rank 0's, and rank 0's clock when the conveyor was
  /// made: timestamps are written as microseconds of rank 0's clock since then.
  std::int64_t clock_offset_ns = 0;
  std::int64_t epoch_ns = 0;
  std::int64_t clock_error_ns = 0;  ///< bound on |offset error| (half the best round trip)
};

/// One end of a link, to name the rows ("stage 0 → rank 3", "stage 1 ← rank 2").
struct trace_link {
  int stage = 0;
  int peer = 0;
};

/// The recorder of one engine on one rank.
class trace_recorder {
 public:
  trace_recorder(trace_options o, int rank, int n_ranks, int n_stages,
                 std::vector<trace_link> out_links, std::vector<trace_link> in_links);
  /// Writes the file (write_file) unless written already.
  ~trace_recorder();
  trace_recorder(const trace_recorder&) = delete;
  trace_recorder& operator=(const trace_recorder&) = delete;

  /// steady_clock, nanoseconds.
  [[nodiscard]] static std::int64_t now() noexcept;

  void send(int out_link, std::size_t bytes, std::size_t items, std::uint8_t flags) noexcept;
  void receive(int in_link, std::size_t bytes, std::size_t items, std::uint8_t flags) noexcept;
  void flush() noexcept;
  /// A credit stall on `out_link` starts (`ok` false: an open found no free buffer after a
  /// successful one) or ends (`ok`: the next successful open), recorded then as one span.
  /// The caller detects the edges (engine::impl::open_lane): call only on a change.
  void stall_edge(int out_link, bool ok) noexcept;
  void advance_enter() noexcept;
  /// An advance that recorded nothing extends the previous one when that recorded nothing
  /// either (`items` counts the calls), so that a spinning caller does not flood the ring.
  void advance_leave() noexcept;
  /// Termination has now closed `closed` stages of cycle `epoch`: one event per stage newly
  /// closed.
  void stages_closed(std::uint32_t epoch, int closed) noexcept;

  [[nodiscard]] const trace_ring& ring() const noexcept { return ring_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  /// "<dir>/convoy-trace.<conveyor>.<rank>.json".
  [[nodiscard]] std::string file_name() const;
  /// The Chrome trace-event JSON object (trace_json.cpp): metadata naming the process
  /// ("rank r") and its rows (advance, one per out-link and in-link), the events, and
  /// "otherData" (dropped events, clock offset and its error bound, the link table).
  void write_json(std::ostream& out) const;
  /// Writes file_name(); on failure prints one line to stderr (a destructor cannot throw).
  /// Returns whether it wrote the file.
  bool write_file() noexcept;
  /// Writes what is recorded so far, as write_file, before something that may end the
  /// process (the watchdog's abort); the destructor still writes the whole record.
  bool checkpoint() noexcept;

 private:
  void put(trace_kind k, int link, int stage, std::size_t bytes, std::size_t items,
           std::uint8_t flags) noexcept;
  bool write_to_disk() noexcept;

  trace_options options_;
  int rank_, n_ranks_, n_stages_;
  std::vector<trace_link> outs_, ins_;
  trace_ring ring_;
  std::vector<std::int64_t> stall_since_;  // per out-link, 0 if not stalled
  std::int64_t advance_start_ = 0;
  std::uint64_t total_at_enter_ = 0;
  bool last_advance_idle_ = false;  // the newest event is an advance that recorded nothing
  std::uint32_t epoch_ = 0;
  int closed_ = 0;
  bool written_ = false;
};

}  // namespace convoy::termination
