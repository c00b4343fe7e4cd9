#pragma once
/// @file
/// The one engine interface. Every engine kind implements it: the streaming engine
/// (engine.hpp: routed buffers over a mesh), the bulk-synchronous engine (bulk_engine:
/// one buffer per destination, MPI_Alltoallv) and the elastic engine (elastic_engine:
/// items of any size). The C++ API and the C façade call an engine only through this
/// class (termination/README.md, "One engine interface").
///
/// The interface owns what every kind shares: the state machine (state_machine.hpp), the
/// error text, and the hot state that push() and pull() use inline. A kind whose push is
/// "a table load and a copy into a lane" (streaming, bulk) publishes its lanes and its
/// delivery window in `hot_`; a kind without that path (elastic) leaves `hot_` closed, so
/// that every push and pull reaches its push_slow and pull_slow. Slow paths, advance and
/// the per-cycle calls are virtual: one indirect call where the inline path ends.
///
/// Return convention (as bale): positive success, 0 ordinary failure, negative misuse
/// (an engine_error value); a failed call moves no data and changes no state.
#include <algorithm>
#include <convoy/aggregation/delivery_window.hpp>
#include <convoy/aggregation/send_lanes.hpp>
#include <convoy/router/forwarding.hpp>
#include <convoy/termination/state_machine.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace convoy::termination {

/// Counters of one link: this rank and one peer on one stage (termination/README.md,
/// "Counters"). Sent counts are of buffers this rank posted to the peer on the stage, received
/// counts of buffers that arrived from it on the stage. Counted per buffer, never per push.
struct link_stats {
  int peer = -1;                      ///< the other rank
  std::uint64_t items_sent = 0;       ///< records put into buffers toward the peer
  std::uint64_t bytes_sent = 0;       ///< bytes of those buffers, headers included
  std::uint64_t buffers_full = 0;     ///< posted because the next record did not fit
  std::uint64_t buffers_partial = 0;  ///< posted partly filled (flush, steady, last)
  std::uint64_t credit_stalls = 0;  ///< times a buffer toward the peer was wanted and none was free
  std::uint64_t items_received = 0;    ///< records in buffers that arrived from the peer
  std::uint64_t bytes_received = 0;    ///< bytes of those buffers, headers included
  std::uint64_t buffers_received = 0;  ///< buffers that arrived from the peer
  /// Combining engines, the lane toward the peer (TERM-24, 28): records folded into
  /// another there, buffers whose combining its gate stopped, and the gate's last measures
  /// (0: none yet; the newest when accumulated), ns: what examining a record costs, and
  /// what a record saved is worth.
  std::uint64_t combined = 0, combine_stops = 0;
  double combine_ns_per_record = 0.0, combine_saved_ns = 0.0;
};

/// Counters per stage, for the current begin/reset cycle and for the engine's lifetime.
struct stage_stats {
  std::uint64_t items = 0;    ///< items put into this stage's buffers
  std::uint64_t buffers = 0;  ///< buffers sent on this stage
  std::uint64_t bytes = 0;    ///< bytes sent on this stage, headers included
  /// One per peer this rank sends to or receives from on the stage, by ascending peer;
  /// empty for kinds without links (the elastic engine's large-item channel is not one).
  std::vector<link_stats> links;
  /// bytes / (buffers * capacity): how full the sent buffers were.
  [[nodiscard]] double fill_ratio(std::size_t buffer_bytes) const noexcept {
    return buffers ? static_cast<double>(bytes) /
                         (static_cast<double>(buffers) * static_cast<double>(buffer_bytes))
                   : 0.0;
  }
};

struct engine_stats {
  std::uint64_t begins = 0, pushes = 0, pulls = 0, unpulls = 0, advances = 0;
  std::uint64_t buffers_sent = 0;  ///< all stages
  std::uint64_t bytes_sent = 0;    ///< all stages, headers included, as sent (compressed)
  std::uint64_t buffers_received = 0;
  /// Collective MPI calls (the bulk kind's agreements and exchanges); 0 for the others.
  std::uint64_t collectives = 0;
  /// Items this rank put into a buffer toward another rank that it did not push itself:
  /// items it routed on for others.
  std::uint64_t items_forwarded = 0;
  /// Sum of the links' credit_stalls.
  std::uint64_t credit_stalls = 0;
  /// Time inside advance(), and from each begin to its cycle's end (COMPLETE), seconds.
  double advance_seconds = 0.0;
  double cycle_seconds = 0.0;
  /// The most buffer memory (memory_bytes()) seen: at each cycle's end and when read.
  std::uint64_t memory_high_water = 0;
  /// Combining engines (TERM-24): items folded into a record already in a buffer, and
  /// buffers whose lane stopped combining because their folds did not pay; every lane's,
  /// the loopback lane's too (the links have the others').
  std::uint64_t combined = 0, combine_stops = 0;
  /// Combining engines (TERM-28), the gate's last measure (0: none yet; the newest when
  /// accumulated): what handling one record cost this rank inside the conveyor, and the
  /// program's own time per record it pulled, ns.
  double combine_record_ns = 0.0, combine_use_ns = 0.0;
  std::vector<stage_stats> stages;
};

/// Adds `s` into `into` (counters summed, high-water the larger): lifetimes of successive
/// engines of one conveyor. Stages and links are matched by position.
void accumulate(engine_stats& into, const engine_stats& s);

/// One delivered item, as returned by pull(). `data` stays valid until the next pull,
/// unpull, advance or reset on this engine. It is not necessarily aligned.
struct item_view {
  const std::byte* data = nullptr;
  std::size_t bytes = 0;
  int from = -1;
};

/// Delivered items taken at once (pull_batch): `count` items, item i's `bytes` bytes at
/// data + i x stride (not necessarily aligned), valid as a pull()'s item. Either all from
/// `from` (>= 0), or each from source_of_tag[the byte before it].
struct item_batch {
  const std::byte* data = nullptr;
  std::size_t count = 0;
  std::size_t stride = 0;
  std::size_t bytes = 0;
  int from = -1;
  const std::int32_t* source_of_tag = nullptr;

  [[nodiscard]] const std::byte* item(std::size_t i) const noexcept { return data + i * stride; }
  [[nodiscard]] int source(std::size_t i) const noexcept {
    return from >= 0 ? from : source_of_tag[std::to_integer<unsigned>(item(i)[-1])];
  }
};

/// What push() and pull() read and write inline: the lanes and first hops, the delivery
/// window, the per-cycle counts. Its layout is published: <convoy/convey_view.h> declares
/// the same bytes as `convey_view_t`, which the C façade's inline `convey_push` and
/// `convey_pull` use, and the C façade checks every offset against it at compile time
/// (termination/README.md, "Hot path"). Change both together, with CONVEY_VIEW_VERSION.
///
/// A push writes lane `first_hops[dest].out_link` while `used <= limit`: an 8-byte store of
/// the hop's tag at `buf + used` (its upper bytes overwritten by the payload), then the
/// payload at `buf + used + tag_bytes`. So a lane's buffer must have 8 bytes of room after
/// its last record. When the push leaves `used > limit`, the pusher calls lane_full().
struct hot_state {
  /// An inline push may proceed: WORKING, rigid items, a first-hop table, not done pushing.
  bool push_ok = false;
  unsigned n_ranks = 0;
  std::size_t item_bytes = 0;
  aggregation::send_lane* lanes = nullptr;        // the kind's send lanes
  const router::first_hop* first_hops = nullptr;  // per destination
  aggregation::delivery_window window;
  std::uint64_t pushes = 0, pulls = 0;  // this cycle

  /// The inline push's fast case toward `dest`: when it holds, reserves the record in the
  /// lane toward the first hop (send_lane::reserve), counts the push and returns where the
  /// payload goes, with the lane and whether it is now full; nullptr when the slow path
  /// must take the push. The C++ twin of convey.h's `convoy_reserve_`.
  std::byte* reserve(int dest, std::uint32_t& lane, bool& full) noexcept {
    if (push_ok && static_cast<unsigned>(dest) < n_ranks) {
      const router::first_hop h = first_hops[static_cast<std::size_t>(dest)];
      aggregation::send_lane& l = lanes[h.out_link];
      if (l.used <= l.limit) {
        lane = h.out_link;
        ++pushes;
        return l.reserve(h.tag, full);
      }
    }
    return nullptr;
  }
};

class conveyor_engine {
 public:
  virtual ~conveyor_engine();
  conveyor_engine(const conveyor_engine&) = delete;
  conveyor_engine& operator=(const conveyor_engine&) = delete;

  /// DORMANT -> WORKING. Collective (not synchronizing). Returns 1, or error_state,
  /// error_size (item_bytes == 0 on a rigid engine, or too large), error_alloc,
  /// error_transport.
  virtual int begin(std::size_t item_bytes) = 0;

  /// Pushes `item` (item_bytes() bytes) to `dest`. WORKING only. Returns 1 if accepted,
  /// 0 if the buffer toward its next hop is full (call advance() and pull, then retry),
  /// error_state, error_rank, error_argument. Hot path: no allocation after warm-up.
  /// `N`, if not 0, is the item size known at compile time (it must equal item_bytes();
  /// the typed API passes sizeof(T)), so that the copy is a fixed-size move.
  template <std::size_t N = 0>
  [[nodiscard]] int push(const void* item, int dest) noexcept {
    // Hot path: one table load and a copy into the lane toward the first hop; everything
    // else goes through push_slow().
    if (item && (N == 0 || N == hot_.item_bytes)) [[likely]] {
      std::uint32_t lane = 0;
      bool full = false;
      if (std::byte* p = hot_.reserve(dest, lane, full)) [[likely]] {
        if constexpr (N != 0)
          std::memcpy(p, item, N);
        else
          aggregation::copy_item(p, item, hot_.item_bytes);
        if (full) [[unlikely]]
          lane_full(lane);
        return 1;
      }
    }
    return push_slow(item, dest);
  }
  /// Lane `lane` was filled past its limit by a push over hot(): what push() itself does
  /// when its reserve says full (the streaming engine posts the buffer, the bulk engine
  /// marks that an exchange is due).
  virtual void lane_full(std::uint32_t lane) noexcept = 0;
  /// The inline paths' state, for callers that inline push and pull themselves (the C
  /// façade): they must do exactly what push() and pull() do with it.
  [[nodiscard]] hot_state& hot() noexcept { return hot_; }

  /// Sends `item` to every rank, this one included, on an engine built for broadcast
  /// (termination/README.md, BCAST-1..8); pulls report the root as `from`. Returns 1, 0
  /// (full: advance and retry), error_state, error_argument; error_mode (the default) on
  /// engines that send point to point.
  [[nodiscard]] virtual int broadcast(const void* /*item*/) noexcept { return error_mode; }
  /// Sends `n` items stored one after another (item_bytes() each) to every rank, as n
  /// broadcast() calls in order would, copying them a block at a time (BCAST-7). Returns
  /// the number sent, from the front (fewer than n, 0 included, when some buffer toward a
  /// first hop is full: advance and send the rest), or a code as broadcast().
  [[nodiscard]] virtual std::int64_t broadcast_batch(const void* /*items*/,
                                                     std::size_t /*n*/) noexcept {
    return error_mode;
  }

  /// Elastic push of `bytes` bytes (0 allowed). Returns as push(), plus error_elastic on
  /// a rigid engine and error_size if the item is too large.
  [[nodiscard]] virtual int epush(const void* item, std::size_t bytes, int dest) noexcept = 0;

  /// Pulls the next delivered item. Returns 1 and fills `out`, 0 if none is ready,
  /// error_state in DORMANT. On an elastic engine with rigid==true, an item whose size
  /// is not item_bytes() is not pulled: returns error_elastic and leaves it to be pulled.
  [[nodiscard]] int pull(item_view& out, bool rigid = true) noexcept {
    // Hot path: the next record of the delivery window.
    if (hot_.window.cur < hot_.window.end) [[likely]] {
      out.data = hot_.window.cur;
      out.bytes = hot_.item_bytes;
      out.from = hot_.window.source();
      hot_.window.cur += hot_.window.stride;
      hot_.window.pulled = true;
      ++hot_.pulls;
      return 1;
    }
    return pull_slow(out, rigid);
  }
  /// Pulls up to `max` delivered items at once: the rest of the delivered buffer
  /// being pulled, else of the next one, or a single item where items are delivered one
  /// by one (elastic items, records that arrived mixed with others'). As that many pull()
  /// calls: returns the number of items in `out` (0 if none is ready, or `max` is 0) or
  /// pull()'s codes; unpull() puts back the last of them.
  [[nodiscard]] std::int64_t pull_batch(item_batch& out, std::size_t max = SIZE_MAX,
                                        bool rigid = true) noexcept {
    aggregation::delivery_window& w = hot_.window;
    if (max == 0) return 0;
    if (w.cur >= w.end) {
      item_view v;
      const int rc = pull(v, rigid);
      if (rc <= 0) return rc;
      if (!w.pulled || max == 1) {  // one by one: a batch of that item
        out = {v.data, 1, w.stride, v.bytes, v.from, nullptr};
        return 1;
      }
      w.cur -= w.stride;  // the first item of a window just opened: taken below with the rest
      --hot_.pulls;
    }
    const std::size_t n = std::min(max, static_cast<std::size_t>(w.end - w.cur) / w.stride);
    out = {w.cur, n, w.stride, hot_.item_bytes, w.from, w.source_of_tag};
    w.cur += n * w.stride;
    w.pulled = true;
    hot_.pulls += n;
    return static_cast<std::int64_t>(n);
  }
  /// Puts back the item of the most recent successful pull (no pull, advance or reset on
  /// this engine since). Returns 1, error_unpull, error_state (DORMANT), 0 (COMPLETE).
  [[nodiscard]] virtual int unpull() noexcept = 0;

  /// Moves buffers and runs termination. WORKING (done or not), ENDGAME and CLEANUP (done
  /// must be true), COMPLETE (returns done). Returns ok, near, done or a negative code
  /// (error_state; error_transport with last_message()). Non-blocking for the streaming
  /// and elastic kinds; collective while WORKING or ENDGAME for the bulk kind.
  [[nodiscard]] virtual int advance(bool done) noexcept = 0;
  /// Sends every partly filled buffer at the next opportunity. WORKING or ENDGAME. Returns
  /// 1, error_state, or error_transport.
  virtual int flush() noexcept = 0;
  /// COMPLETE -> DORMANT (no-op in DORMANT). Returns 1 or error_state.
  virtual int reset() noexcept = 0;

  /// True while this engine holds items it has not handed to its transport, or sends are
  /// in flight: only advance() moves them on.
  [[nodiscard]] virtual bool sending() const noexcept = 0;
  /// The conveyor's state (TERM-9). An engine over another engine (the elastic engine
  /// over a streaming one) reports the state of the one below: one state per conveyor.
  [[nodiscard]] virtual state current_state() const noexcept { return state_.current(); }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int n_ranks() const noexcept { return n_ranks_; }
  /// The item size given to begin (the default size of an elastic engine).
  [[nodiscard]] std::size_t item_bytes() const noexcept { return hot_.item_bytes; }
  /// Largest item (payload bytes) this engine accepts.
  [[nodiscard]] virtual std::size_t max_item_bytes() const noexcept = 0;
  /// Counters since the last begin (cumulative=false) or over the engine's lifetime.
  [[nodiscard]] virtual engine_stats stats(bool cumulative = false) const = 0;
  /// Buffer memory now / at most.
  [[nodiscard]] virtual std::size_t memory_bytes() const noexcept = 0;
  [[nodiscard]] virtual std::size_t max_memory_bytes() const noexcept = 0;
  /// Text of the last transport failure, empty if none.
  [[nodiscard]] virtual const std::string& last_message() const noexcept { return last_message_; }

 protected:
  conveyor_engine(int rank, int n_ranks) noexcept : rank_(rank), n_ranks_(n_ranks) {}

  /// Everything the inline push does not take: misuse, a full lane, no inline path.
  [[nodiscard]] virtual int push_slow(const void* item, int dest) noexcept = 0;
  /// Everything the inline pull does not take: an empty window, misuse, no inline path.
  [[nodiscard]] virtual int pull_slow(item_view& out, bool rigid) noexcept = 0;

  hot_state hot_;  // first: the hot path's one or two cache lines
  conveyor_state state_;
  int rank_;
  int n_ranks_;
  std::string last_message_;
};

}  // namespace convoy::termination
