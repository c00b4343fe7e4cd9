#pragma once
/// @file
/// The streaming engine of one rank (seed 000 sec. 3, TRAM sec. III). It composes the
/// user's components: the router's forwarding step (router/forwarding.hpp: first hops, the
/// next hop of an arrived record), aggregation's per-peer buffers (send lanes, receive
/// queues, the delivery window) and termination's counting protocol and state machine
/// (counting.hpp, state_machine.hpp).
///
/// An engine moves untyped items (fixed size per begin/reset cycle, or elastic: each item
/// with its own size) from push() on any rank to pull() on the destination rank, over the
/// stages of a route plan, through a transport. Several engines may be alive and active at
/// once (each owns its transport; MPI transports duplicate their communicator).
///
/// States (seed 000 sec. 3.2): DORMANT -begin-> WORKING -advance(true)-> ENDGAME ->
/// CLEANUP -> COMPLETE -reset-> DORMANT. Its guarantees are TERM-1..12 of
/// termination/README.md (exactly once, FIFO per pair, source, no CLEANUP while anyone
/// works, bounded memory and backpressure, steady, non-blocking advance, cycles).
/// Return convention (as bale): positive success, 0 ordinary failure, negative misuse
/// (an engine_error value); a failed call moves no data and changes no state.
#include <convoy/aggregation/delivery_window.hpp>
#include <convoy/aggregation/packing.hpp>
#include <convoy/aggregation/send_lanes.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/router/forwarding.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/termination/state_machine.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace convoy::termination {

struct engine_options {
  /// Bytes per buffer, 16-byte header included. An item (tag + size field + payload)
  /// must fit in one buffer.
  std::size_t capacity_bytes = base::default_buffer_bytes;
  /// Buffers per link on each side (1, 2, 4, ...).
  int n_buffers = 2;
  /// Steady (TRAM periodic dispatch, seed 000 sec. 3.6): a partly filled buffer is sent
  /// once it has waited `steady_period` advance() calls without filling up.
  bool steady = false;
  int steady_period = 1;
  /// Items carry their own size (elastic); begin()'s item_bytes is then the default size
  /// that a rigid pull() accepts.
  bool elastic = false;
  /// Plans over at most this many ranks get a per-destination table of first hops
  /// (8 bytes per rank, counted in memory_bytes()), so that push() makes no virtual call.
  /// Above it, push() asks the route plan for every item.
  int route_table_max_ranks = 1 << 16;
};

/// Counters per stage, for the current begin/reset cycle and for the engine's lifetime.
struct stage_stats {
  std::uint64_t items = 0;    ///< items put into this stage's buffers
  std::uint64_t buffers = 0;  ///< buffers sent on this stage
  std::uint64_t bytes = 0;    ///< bytes sent on this stage, headers included
  /// bytes / (buffers * capacity): how full the sent buffers were.
  [[nodiscard]] double fill_ratio(std::size_t capacity_bytes) const noexcept {
    return buffers ? static_cast<double>(bytes) /
                         (static_cast<double>(buffers) * static_cast<double>(capacity_bytes))
                   : 0.0;
  }
};

struct engine_stats {
  std::uint64_t begins = 0, pushes = 0, pulls = 0, unpulls = 0, advances = 0;
  std::uint64_t buffers_sent = 0;  ///< all stages
  std::uint64_t bytes_sent = 0;    ///< all stages, headers included
  std::uint64_t buffers_received = 0;
  std::vector<stage_stats> stages;
};

/// One delivered item, as returned by pull(). `data` stays valid until the next pull,
/// unpull, advance or reset on this engine. It is not necessarily aligned.
struct item_view {
  const std::byte* data = nullptr;
  std::size_t bytes = 0;
  int from = -1;
};

/// What push() and pull() read and write inline: the lanes and first hops, the delivery
/// window, the per-cycle counts. Its layout is published: <convoy/convey_view.h> declares
/// the same bytes as `convey_view_t`, which the C façade's inline `convey_push` and
/// `convey_pull` use, and conveyor_api checks every offset against it at compile time
/// (termination/README.md, "Hot path"). Change both together, with CONVEY_VIEW_VERSION.
struct hot_state {
  /// An inline push may proceed: WORKING, rigid items, a first-hop table, not done pushing.
  bool push_ok = false;
  unsigned n_ranks = 0;
  std::size_t item_bytes = 0;
  aggregation::send_lane* lanes = nullptr;        // the impl's send lanes
  const router::first_hop* first_hops = nullptr;  // the impl's table, per destination
  aggregation::delivery_window window;
  std::uint64_t pushes = 0, pulls = 0;  // this cycle
};

class engine {
 public:
  /// Sets up the engine of `rank` over `plan` and opens `transport` (collective for MPI
  /// transports: call on every rank). Throws convoy::error on invalid options (capacity
  /// below the header or too large, n_buffers < 1) or a transport failure.
  engine(std::shared_ptr<const router::route_plan> plan, int rank,
         std::unique_ptr<aggregation::transport> transport, engine_options options = {});
  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  /// DORMANT -> WORKING. Collective (not synchronizing). Returns 1, or error_state,
  /// error_size (item_bytes == 0 on a rigid engine, or item too large for a buffer).
  int begin(std::size_t item_bytes);

  /// Pushes `item` (item_bytes() bytes) to `dest`. WORKING only. Returns 1 if accepted,
  /// 0 if the buffer toward its next hop is full (call advance() and pull, then retry),
  /// error_state, error_rank, error_argument. Hot path: no allocation after warm-up.
  /// `N`, if not 0, is the item size known at compile time (it must equal item_bytes();
  /// the typed API passes sizeof(T)), so that the copy is a fixed-size move.
  template <std::size_t N = 0>
  [[nodiscard]] int push(const void* item, int dest) noexcept {
    // Hot path (rigid, WORKING, first-hop table present): one table load and a copy into
    // the lane toward the first hop; everything else goes through push_slow().
    if (hot_.push_ok && static_cast<unsigned>(dest) < hot_.n_ranks && item &&
        (N == 0 || N == hot_.item_bytes)) [[likely]] {
      const router::first_hop h = hot_.first_hops[static_cast<std::size_t>(dest)];
      aggregation::send_lane& lane = hot_.lanes[h.out_link];
      if (lane.used <= lane.limit) [[likely]] {
        ++hot_.pushes;
        const bool full = lane.put_rigid<N>(h.tag, item, hot_.item_bytes);
        if (full) [[unlikely]]
          lane_full(h.out_link);
        return 1;
      }
    }
    return push_slow(item, dest);
  }
  /// Posts lane `lane`, which a push outside this class (the C façade's inline push, over
  /// hot()) has filled past its limit: what push() itself does when put_rigid says full.
  void lane_full(std::uint32_t lane) noexcept;
  /// The inline paths' state, for callers that inline push and pull themselves (the C
  /// façade): they must do exactly what push() and pull() do with it.
  [[nodiscard]] hot_state& hot() noexcept { return hot_; }

  /// Elastic push of `bytes` bytes (0 allowed). Returns as push(), plus error_elastic on
  /// a rigid engine and error_size if the item cannot fit in a buffer.
  [[nodiscard]] int epush(const void* item, std::size_t bytes, int dest) noexcept;

  /// Pulls the next delivered item. Returns 1 and fills `out`, 0 if none is ready,
  /// error_state in DORMANT. On an elastic engine with rigid==true, an item whose size
  /// is not item_bytes() is not pulled: returns error_elastic and leaves it to be pulled.
  [[nodiscard]] int pull(item_view& out, bool rigid = true) noexcept {
    // Hot path: the next item of the delivery window (rigid items for this rank: last-stage
    // buffers, their source from the link or a one-byte tag, and items to self).
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
  /// Puts back the item of the most recent successful pull (no pull, advance or reset on
  /// this engine since). Returns 1, error_unpull or error_state.
  [[nodiscard]] int unpull() noexcept;

  /// Moves buffers, forwards items, runs termination. WORKING (done or not), ENDGAME and
  /// CLEANUP (done must be true), COMPLETE (returns done). Returns ok, near, done or a
  /// negative code (error_state; error_transport with last_message()).
  [[nodiscard]] int advance(bool done) noexcept;

  /// Sends every partly filled buffer now (an explicit flush; steady engines do this on
  /// their own). WORKING or ENDGAME. Returns 1, error_state, or error_transport.
  int flush() noexcept;

  /// COMPLETE -> DORMANT (no-op in DORMANT). Returns 1 or error_state.
  int reset() noexcept;

  /// True while this engine holds records it has not handed to its transport (a partly
  /// filled lane) or its transport has sends queued or in flight: only advance() moves
  /// them on. A caller that stops advancing an engine while it is sending can leave other
  /// ranks waiting (convoy::async's reply conveyor asks this before it rests).
  [[nodiscard]] bool sending() const noexcept;
  [[nodiscard]] state current_state() const noexcept { return state_.current(); }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int n_ranks() const noexcept;
  [[nodiscard]] std::size_t item_bytes() const noexcept { return hot_.item_bytes; }
  [[nodiscard]] const engine_options& options() const noexcept { return options_; }
  [[nodiscard]] const router::route_plan& plan() const noexcept { return *plan_; }
  /// Largest item (payload bytes) that fits in a buffer on every stage.
  [[nodiscard]] std::size_t max_item_bytes() const noexcept;
  /// Counters since the last begin (cumulative=false) or over the engine's lifetime.
  [[nodiscard]] engine_stats stats(bool cumulative = false) const;
  /// Buffer memory now / at most: link buffers (router::link_buffer_bytes) plus this
  /// engine's fixed costs (self queue, staging).
  [[nodiscard]] std::size_t memory_bytes() const noexcept;
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept;
  /// Text of the last transport failure, empty if none.
  [[nodiscard]] const std::string& last_message() const noexcept { return last_message_; }

 private:
  struct impl;

  [[nodiscard]] int push_slow(const void* item, int dest) noexcept;
  [[nodiscard]] int pull_slow(item_view& out, bool rigid) noexcept;

  hot_state hot_;  // first: the hot path's one or two cache lines

  std::shared_ptr<const router::route_plan> plan_;
  int rank_;
  engine_options options_;
  conveyor_state state_;
  std::string last_message_;
  std::unique_ptr<impl> impl_;
};

}  // namespace convoy::termination
