#pragma once
/// @file
/// The streaming engine of one rank (Maley & DeVinney 2019, sec. 3, Wesolowski et al. 2014, sec.
/// III). It composes the user's components: the router's forwarding step (router/forwarding.hpp:
/// first hops, the next hop of an arrived record), aggregation's per-peer buffers (send lanes,
/// receive queues, the delivery window) and termination's counting protocol and state machine
/// (counting.hpp, state_machine.hpp).
///
/// An engine moves untyped items (fixed size per begin/reset cycle, or elastic: each item
/// with its own size) from push() on any rank to pull() on the destination rank, over the
/// stages of a route plan, through a transport. Several engines may be alive and active at
/// once (each owns its transport; MPI transports duplicate their communicator).
///
/// States (Maley & DeVinney 2019, sec. 3.2): DORMANT -begin-> WORKING -advance(true)-> ENDGAME ->
/// CLEANUP -> COMPLETE -reset-> DORMANT. Its guarantees are TERM-1..12 of
/// termination/README.md (exactly once, FIFO per pair, source, no CLEANUP while anyone
/// works, bounded memory and backpressure, steady, non-blocking advance, cycles).
/// Return convention (as bale): positive success, 0 ordinary failure, negative misuse
/// (an engine_error value); a failed call moves no data and changes no state.
#include <convoy/aggregation/combine_spec.hpp>
#include <convoy/aggregation/delivery_window.hpp>
#include <convoy/aggregation/packing.hpp>
#include <convoy/aggregation/send_lanes.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/router/forwarding.hpp>
#include <convoy/router/route_plan.hpp>
#include <convoy/termination/conveyor_engine.hpp>
#include <convoy/termination/item_mode.hpp>
#include <convoy/termination/state_machine.hpp>
#include <convoy/termination/trace.hpp>
#include <convoy/termination/watchdog.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace convoy::termination {

/// A budget's hold-back caches (engine_options::combine_cache_budget, TERM-27): the entries
/// a cached link gets at least (at most: base::default_combine_cache_entries).
inline constexpr std::size_t combine_cache_least_entries = 64;

struct engine_options {
  /// Bytes per buffer, 16-byte header included. An item (tag + size field + payload)
  /// must fit in one buffer.
  std::size_t buffer_bytes = base::default_buffer_bytes;
  /// Buffers per link on each side (1, 2, 4, ...).
  int n_buffers = 2;
  /// Steady (TRAM periodic dispatch, Maley & DeVinney 2019, sec. 3.6): a partly filled buffer is
  /// sent once it has waited `steady_period` advance() calls without filling up.
  bool steady = false;
  int steady_period = 1;
  /// Rigid, elastic (items carry their own size) or broadcast items (item_mode.hpp).
  /// Broadcast needs a plan with a broadcast tree (route_plan::broadcast_tree(): not
  /// tensor order 3).
  item_mode mode = item_mode::rigid;
  /// Plans over at most this many ranks get a per-destination table of first hops
  /// (8 bytes per rank, counted in memory_bytes()), so that push() makes no virtual call.
  /// Above it, push() asks the route plan for every item.
  int route_table_max_ranks = 1 << 16;
  /// The hang watchdog (watchdog.hpp, TERM-15): off unless `watchdog.seconds` > 0 and a
  /// board is given. Off, it costs advance one test of a null pointer.
  watchdog_options watchdog;
  /// Combining (TERM-20..24): with `combine.fn` set, a record pushed or forwarded into a
  /// lane whose open buffer already holds a record with the same destination and the same
  /// key bytes is folded into that record's value instead of being appended, at the source
  /// and at every forwarding rank. Pulls then see one item per (destination, key) and
  /// buffer, in no particular order, with `from` unspecified. Rigid mode only
  /// (combine_refusal); begin() checks `combine` against its item size.
  aggregation::combine_spec combine;
  /// When a lane stops combining: too few of its records fold, or they save less time than
  /// the passes cost (AGG-155, AGG-162, TERM-28).
  aggregation::combine_gate_policy combine_gate;
  /// Slots of a lane's combining table at most (4 bytes each, AGG-151).
  std::size_t combine_max_slots = 4096;
  /// Entries of the hold-back cache in front of each combining out-link lane of
  /// `combine_cache_link` (TERM-27, AGG-157..160), rounded down to a power of two; 0: as
  /// `combine_cache_budget` allows. Each costs 12 + item bytes, rounded up to 8.
  std::size_t combine_cache_entries = 0;
  /// With combine_cache_entries 0: the bytes this rank's hold-back caches may take
  /// together. At each combining begin, each cached link gets the largest power of two of
  /// entries, at most base::default_combine_cache_entries, whose cache of that item size
  /// fits its share; none below combine_cache_least_entries (TERM-27). 0: no caches.
  std::size_t combine_cache_budget = 0;
  /// Whether a size or a budget gives the combining lanes hold-back caches.
  [[nodiscard]] bool has_combine_caches() const noexcept {
    return combine_cache_entries > 0 || combine_cache_budget > 0;
  }
  /// Which out-links get a hold-back cache: (this rank, the link's peer) -> true; empty:
  /// every out-link. make_mpi_engine gives the links that leave the node (TERM-27).
  std::function<bool(int rank, int peer)> combine_cache_link;
  /// The trace recorder (trace.hpp, TERM-17): on when `trace.dir` is not empty. Off, each
  /// event site tests one null pointer.
  trace_options trace;
  /// Per-link counters in stats() (stage_stats::links: 2 x 72 bytes per peer, for the
  /// lifetime and the cycle). Off, stats() has the per-stage and per-rank counts only and
  /// empty `links`: convoy-sim turns them off, where they are GiBs at 2^17 ranks.
  bool link_counters = true;
};

class engine final : public conveyor_engine {
 public:
  /// Sets up the engine of `rank` over `plan` and opens `transport` (collective for MPI
  /// transports: call on every rank). Throws convoy::error on invalid options (capacity
  /// below the header or too large, n_buffers < 1) or a transport failure.
  engine(std::shared_ptr<const router::route_plan> plan, int rank,
         std::unique_ptr<aggregation::transport> transport, engine_options options = {});
  ~engine() override;
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  /// DORMANT -> WORKING. Collective (not synchronizing). Returns 1, or error_state,
  /// error_size (item_bytes == 0 on a rigid engine, or item too large for a buffer).
  int begin(std::size_t item_bytes) override;

  /// push() and pull() are conveyor_engine's (conveyor_engine.hpp): inline over the
  /// lanes, the first-hop table and the delivery window this engine publishes in hot().
  /// Posts lane `lane` (filled past its limit by an inline push).
  void lane_full(std::uint32_t lane) noexcept override;
  /// Elastic push of `bytes` bytes (0 allowed). Returns as push(), plus error_elastic on
  /// a rigid engine and error_size if the item cannot fit in a buffer.
  [[nodiscard]] int epush(const void* item, std::size_t bytes, int dest) noexcept override;
  /// On a broadcast engine: sends `item` (item_bytes() bytes) to every rank, this one
  /// included (BCAST-1). WORKING only. Returns 1, 0 if some lane toward the first hops has
  /// no free buffer (nothing was sent: advance, pull and retry), error_state,
  /// error_argument (null item), error_transport; error_mode on a point-to-point engine.
  [[nodiscard]] int broadcast(const void* item) noexcept override;
  /// `n` broadcasts at once (BCAST-7): the number sent from the front (0..n), or the codes
  /// of broadcast() (error_argument: null items with n > 0).
  [[nodiscard]] std::int64_t broadcast_batch(const void* items, std::size_t n) noexcept override;
  /// Puts back the item of the most recent successful pull (no pull, advance or reset on
  /// this engine since). Returns 1, error_unpull or error_state.
  [[nodiscard]] int unpull() noexcept override;

  /// Moves buffers, forwards items, runs termination. WORKING (done or not), ENDGAME and
  /// CLEANUP (done must be true), COMPLETE (returns done). Returns ok, near, done or a
  /// negative code (error_state; error_transport with last_message()).
  [[nodiscard]] int advance(bool done) noexcept override;

  /// Sends every partly filled buffer now (an explicit flush; steady engines do this on
  /// their own). WORKING or ENDGAME. Returns 1, error_state, or error_transport.
  int flush() noexcept override;

  /// COMPLETE -> DORMANT (no-op in DORMANT). Returns 1 or error_state.
  int reset() noexcept override;

  /// True while this engine holds records it has not handed to its transport (a partly
  /// filled lane) or its transport has sends queued or in flight: only advance() moves
  /// them on. A caller that stops advancing an engine while it is sending can leave other
  /// ranks waiting (convoy::async's reply conveyor asks this before it rests).
  [[nodiscard]] bool sending() const noexcept override;
  [[nodiscard]] const engine_options& options() const noexcept { return options_; }
  /// Its item mode's rules (item_mode.hpp).
  [[nodiscard]] const item_rules& rules() const noexcept { return rules_of(options_.mode); }
  /// Combining (TERM-20..25) from the next begin on: `spec.fn` set turns it on with that
  /// key and value, null turns it off; options().combine is `spec` afterwards. DORMANT
  /// only. begin() checks the spec against the item size (error_size, last_message()).
  /// Every rank must give the same spec before the same begin: the forwarded tags change
  /// with it (ROUTE-25). The combined counts of the last cycle move to the lifetime ones.
  /// Returns 1, error_state (not DORMANT), or combine_refusal's code (an elastic or
  /// broadcast engine, spec.fn set).
  int set_combine(const aggregation::combine_spec& spec) noexcept;
  [[nodiscard]] const router::route_plan& plan() const noexcept { return *plan_; }
  /// Largest item (payload bytes) that fits in a buffer on every stage.
  [[nodiscard]] std::size_t max_item_bytes() const noexcept override;
  /// Counters since the last begin (cumulative=false) or over the engine's lifetime.
  [[nodiscard]] engine_stats stats(bool cumulative = false) const override;
  /// Buffer memory now / at most: link buffers (router::link_buffer_bytes) plus this
  /// engine's fixed costs (self queue, staging).
  [[nodiscard]] std::size_t memory_bytes() const noexcept override;
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept override;
  /// The combining tables' share of max_memory_bytes() while combining is set (one table
  /// per lane at its largest, AGG-151, and once a combining cycle has set the item size,
  /// the out-links' caches, AGG-160), whether it is set now or not.
  [[nodiscard]] std::size_t combine_max_bytes() const noexcept;
  /// What this rank publishes to the watchdog's board (TERM-15): state, said done, unpulled
  /// items, credits owed, the termination stage it waits on and whose count, the links where
  /// work waits. Its times are the watchdog's (0 when it is off).
  [[nodiscard]] rank_status status() const;

 private:
  struct impl;

  [[nodiscard]] int push_slow(const void* item, int dest) noexcept override;
  [[nodiscard]] int pull_slow(item_view& out, bool rigid) noexcept override;

  std::shared_ptr<const router::route_plan> plan_;
  engine_options options_;
  std::unique_ptr<impl> impl_;
};

}  // namespace convoy::termination
