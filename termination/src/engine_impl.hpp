#pragma once
// The engine's composition (private): the router's forwarder and first-hop table,
// aggregation's send lanes and receive queues, termination's counting protocol, and the
// glue between them — what happens to a buffer from the moment a lane opens until its
// last record is forwarded or pulled. termination/README.md states the guarantees
// (TERM-n) cited here.
#include <chrono>
#include <convoy/aggregation/combine_cache.hpp>
#include <convoy/aggregation/combine_table.hpp>
#include <convoy/aggregation/receive_queue.hpp>
#include <convoy/aggregation/send_lanes.hpp>
#include <convoy/aggregation/transport.hpp>
#include <convoy/router/forwarding.hpp>
#include <convoy/termination/counting.hpp>
#include <convoy/termination/engine.hpp>
#include <convoy/termination/trace.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

namespace convoy::termination {

struct engine::impl final : link_layer {
  // One in-link as the engine sees it: its buffers (aggregation) and how they are
  // delivered. The last in-link is the loopback, fed by this rank's own loopback lane.
  struct in_link {
    // Ordered to pack: a large simulation holds one per in-link of every rank.
    int stage = 0;
    int tag_bytes = 0;  // of the link's stage (0 on the loopback)
    // Whole buffers become the delivery window (rigid records, all for this rank): all from
    // `whole_from` (>= 0), or each from source_of_tag[its one-byte tag] (`tagged_window`).
    int whole_from = -1;
    int head_src = -1;
    aggregation::receive_queue queue;         // received buffers, front being processed
    std::vector<std::int32_t> source_of_tag;  // 256 entries, -1 until a tag is seen
    // Rigid records forwarded by runs (step table); those for this rank are moved to the
    // front of their buffer, [header, kept), which becomes a window once every other
    // record of it has left (TERM-13).
    std::size_t kept = aggregation::header_bytes;
    aggregation::record head;  // the decoded head record (per-record delivery)
    bool ready = false;        // on the ready list: head record or whole buffer
    bool tagged_window = false;
    bool runs = false;
    bool loopback = false;  // items this rank pushed to itself (not counted)
    // Broadcast engines (BCAST-2): the link's records are copied onto every out-link of a
    // later stage before they are delivered here; `fanout_next` is the next out-link to copy
    // to (-1: not started), so a full lane stops the fan-out there and it resumes there
    // (BCAST-3). Per record, or (`fan_whole`) the front buffer's records from `fan_at` on,
    // their one-byte tags translated by `fan_xlat`: 256 entries per later out-link.
    bool fanout = false;
    bool fan_whole = false;
    int fanout_next = -1;
    std::size_t fan_at = 0;
    std::vector<std::uint8_t> fan_xlat;
    [[nodiscard]] bool windowed() const noexcept { return whole_from >= 0 || tagged_window; }
    // The front buffer is delivered as a window: always on windowed links; on runs links
    // once every record has been forwarded or kept.
    [[nodiscard]] bool window_ready() const noexcept {
      return windowed() || (runs && queue.offset >= queue.front_bytes());
    }
  };

  // Where the last per-record pull came from, for unpull (window pulls: hot_.window.pulled).
  struct last_pull {
    bool valid = false;
    int in_link = -1;
    std::size_t offset = 0;
    bool buffer_popped = false;
  };

  impl(engine& owner, std::unique_ptr<aggregation::transport> t);

  engine& e;
  std::unique_ptr<aggregation::transport> transport;
  router::forwarder route;
  std::vector<router::first_hop> first_hops;  // per destination; empty above the limit
  aggregation::send_lanes lanes;              // one per out-link, then the loopback lane
  stage_counting counting;
  std::vector<in_link> ins;  // the transport's in-links, then the loopback
  int loopback_in = 0;
  std::vector<aggregation::received> ring_slots;  // storage of every in-link's queue
  std::deque<int> ready;                          // in-links whose head is deliverable
  last_pull last;
  aggregation::received pending_release;  // fully pulled buffer kept until settle()
  bool has_pending_release = false;
  std::size_t max_item_bytes = 0;  // largest payload that fits every stage
  bool post_failed = false;        // the transport threw in a post from the push hot path
  std::uint64_t tick = 0;          // advance calls this cycle (steady dispatch)
  // Idle detection: advance() calls in a row that saw no push, pull or buffer move.
  static constexpr int idle_rounds_before_yield = 8;
  std::uint64_t activity_mark = 0;
  int idle_advances = 0;
  engine_stats now, life;  // pushes, pulls and per-stage items live in the engine/lanes
  // Where each out-link (lane) and each in-link counts: stage and index into its links
  // (the loopback is no link: -1).
  struct link_slot {
    int stage = -1;
    int link = -1;
  };
  std::vector<link_slot> out_slots, in_slots;
  std::vector<std::uint8_t> out_stalled;  // per out-link: its last open found no free buffer
  std::uint64_t saved_mark = 0;           // the transport's saved_bytes() at begin
  std::uint64_t self_items = 0;           // items pushed to this rank over the lifetime, folded
  std::chrono::steady_clock::time_point cycle_start{};
  // The watchdog's view of this rank (TERM-15); null when it is off.
  struct watch_state {
    std::int64_t timeout_ms = 0;
    std::int64_t publish_period_ms = 0;
    std::uint64_t activity = ~std::uint64_t{0};
    std::uint64_t pulls = ~std::uint64_t{0};
    std::uint32_t epoch = 0;
    std::int64_t last_advance = 0, last_progress = 0, last_pull = 0, last_publish = 0;
    std::int64_t diagnosed_stall = -1;  // the last progress time of the stall diagnosed
    std::int64_t diagnosed_at = 0;      // when this rank printed its last diagnosis
    std::int64_t saved_stall = -1;      // the last progress time of the stall whose trace
                                        // this rank wrote (once per stall)
    std::int64_t next_read = 0;         // a stalled rank reads the board from then on
    std::int32_t published_state = -1;
    bool published_done = false;
  };
  std::unique_ptr<watch_state> watch;
  // Combining (TERM-20..24; engine_combine.cpp): one table and gate per lane, the loopback
  // lane included; null unless engine_options::combine.fn is set.
  struct combining {
    aggregation::combine_spec spec;
    std::size_t item_bytes = 0;                      // the tables are sized for it
    std::vector<aggregation::combining_lane> lanes;  // per lane
    // Hold-back caches (TERM-27): caches[k] for out-link lane k where it has one (the
    // links of engine_options::combine_cache_link), none when neither
    // combine_cache_entries nor the budget gives them entries; held_since[k]: the tick at
    // which cache k last went from empty to holding.
    std::vector<std::optional<aggregation::combine_cache>> caches;
    aggregation::cache_pass_fn cache_pass = nullptr;  // their fold pass (pick_cache_pass)
    std::vector<std::uint64_t> held_since;
    std::vector<std::byte> victim;  // an evicted entry's item, on its way into the lane
    bool draining = false;          // a cache is being drained into its lane
    // What a saved record is worth per lane (TERM-28), measured over windows of at least
    // value_window_ns from each begin: `records` sealed into buffers and pulls, the time
    // inside the engine's calls that did work (`inside_ns`) and the fold passes' share of
    // it, and per out-link its stall time and the bytes it posted. stall_since[k]: when
    // out-link k's stall began (0: not stalled).
    // The program's own time on what it pulls: from a pull that took a new buffer to the
    // next pull that had to look for one, less the engine's calls in between, over the
    // records pulled in that span (`span_*`: where the open span began; span_at 0: none).
    struct value_window {
      std::uint64_t t0 = 0, records = 0, pulls0 = 0, fold0 = 0, inside_ns = 0;
      std::uint64_t use_ns = 0, use_records = 0;
      std::int64_t span_at = 0;
      std::uint64_t span_inside = 0, span_pulls = 0;
      std::vector<std::uint64_t> stall_ns, stall_since, bytes;
    } window;
    std::vector<aggregation::wire_worth> wire;  // per out-link, across windows
    std::uint64_t inside_total = 0;             // inside_ns over the engine's life
    double record_ns = 0.0;  // h of the last closed window: handling a record, here
    double use_ns = 0.0;     // and the program's time per record it pulled
  };
  std::unique_ptr<combining> comb;
  // Broadcast (BCAST-1..8; engine_broadcast.cpp): per out-link, the tag of a copy this rank
  // broadcasts as the root; empty on point-to-point engines.
  std::vector<std::uint64_t> root_tags;
  // The tag of root r's copy on out-link k at [r * n_out + k], filled on first use (known:
  // 1), so that a fan-out copy costs no encode; empty when P x n_out is above
  // fan_tag_entries_max (then encoded per copy).
  static constexpr std::size_t fan_tag_entries_max = std::size_t{1} << 16;
  std::vector<std::uint64_t> fan_tags;
  std::vector<std::uint8_t> fan_known;
  // The trace recorder (TERM-17); null when tracing is off.
  std::unique_ptr<trace_recorder> trace;

  [[nodiscard]] bool elastic() const noexcept { return e.rules().carries_size; }
  [[nodiscard]] int loopback_lane() const noexcept { return lanes.loopback(); }

  // ---- cycle (engine_cycle.cpp) ----
  void start_cycle(std::size_t item_bytes);

  // ---- counters (engine_counters.cpp) ----
  void init_counters();
  // Zero counters with the stages and links (peers) of `shape`.
  [[nodiscard]] static engine_stats blank_counters(const engine_stats& shape);
  void fold_counters() noexcept;
  // fold_counters' and stats' one walk over the out-lanes (engine_counters.cpp).
  template <class Items>
  void add_items_sent(engine_stats& s, Items items_of) const;
  [[nodiscard]] engine_stats stats(bool cumulative) const;
  // A buffer of `bytes` posted on out-link `lane`: `full` when the next record did not fit.
  void count_post(int lane, std::size_t bytes, bool full) noexcept;
  // A credit stall began on out-link `lane` (open_lane detects the edge).
  void count_stall(int lane) noexcept;
  // A buffer admitted on in-link `id` in the current cycle (not the loopback). Returns its
  // records (rigid: by size; elastic: walked).
  std::uint64_t count_received(int id, const aggregation::received& r) noexcept;
  // The end of an advance call that began at `entered`; `completed`: the cycle ended.
  // Adds the call's time to the counters; returns it, ns.
  std::uint64_t count_advance(std::chrono::steady_clock::time_point entered,
                              bool completed) noexcept;
  [[nodiscard]] std::size_t fixed_bytes(bool at_most) const noexcept;
  void use_step_tables();
  [[nodiscard]] std::uint64_t activity() const noexcept;

  // ---- the watchdog (engine_watch.cpp) ----
  [[nodiscard]] rank_status status() const;
  void status_links(rank_status& s) const;
  void status_termination(rank_status& s) const;
  // After advance (`advanced`), begin and reset: notes progress, publishes this rank's
  // record when it changed or is due, and diagnoses a stall of the timeout or longer.
  void watch_step(bool advanced) noexcept;
  /// On entering advance, before any MPI call of it: publishes the record with this call's
  /// time when the publish period has passed (not counted as the period's publish, so
  /// watch_step at the end of the call publishes too).
  void watch_enter() noexcept;
  /// The watch's clocks at `t`: the last advance (if `advanced`), progress and pull.
  void watch_sample(std::int64_t t, bool advanced) noexcept;

  // ---- the trace's event sites (engine_trace.cpp) ----
  void start_trace();
  // `full` as post's (count_post counts the same).
  void trace_post(int lane, std::uint32_t flags, bool full) noexcept;
  // `items`: count_received's, or unknown (-1) for a buffer of the next cycle, held.
  void trace_receive(int id, const aggregation::buffer_header& h, std::int64_t items) noexcept;

  // ---- sending (engine_send.cpp) ----
  [[nodiscard]] bool open_lane(int lane);
  // `full`: posted because the next record does not fit (statistics only).
  void post(int lane, std::uint32_t seq, std::uint32_t flags, bool full);
  void post_data(int lane, bool full = false);
  // A rigid lane filled to its limit: more room if the transport's buffers grow and the
  // lane is below capacity (AGG-144), else posted. Once per buffer: out of line, so that
  // the per-record loops that call it stay small.
  void lane_filled(int lane);
  // Appends a record to `lane`. Returns false (nothing written) if the lane has no free
  // buffer: backpressure (TERM-5). Inline: the per-record forwarding path calls it.
  [[nodiscard]] bool append(int lane, std::uint64_t tag, const void* payload, std::size_t n) {
    if (lanes.has_buffer(lane) && !lanes.fits(lane, n)) post_data(lane, true);
    if (!lanes.has_buffer(lane) && !open_lane(lane)) return false;
    if (lanes.put(lane, tag, payload, n)) lane_filled(lane);
    return true;
  }
  [[nodiscard]] int push_item(const void* item, std::size_t n, int dest) noexcept;

  // ---- combining (engine_combine.cpp) ----
  void setup_combining();
  void start_combining(std::size_t item_bytes);
  // Lane `lane` filled: its fold pass (through its cache, if it has one and no drain is
  // under way); true if that freed room enough to go on filling (TERM-20).
  [[nodiscard]] bool fold_filled(int lane);
  // A fold pass over lane `lane`'s open buffer; `cached`: through its cache.
  [[nodiscard]] aggregation::fold_result fold_pass(int lane, bool cached);
  // Moves cache `lane`'s held entries into the lane; true once it is empty (false: the
  // lane has no free buffer, the rest waits). Caches that waited `period` ticks (all, at 0).
  [[nodiscard]] bool drain_cache(int lane);
  // The hold-back cache of out-link lane `lane`, null if it has none (TERM-27).
  [[nodiscard]] aggregation::combine_cache* cache_of(int lane) noexcept;
  void drain_caches_older_than(std::uint64_t period);
  [[nodiscard]] bool caches_hold() const noexcept;
  bool prepare_last(int out_link) override;
  void combine_opened(int lane) noexcept;
  void combine_sealing(int lane) noexcept;
  void combine_stall_edge(int lane, bool ended) noexcept;
  void start_value_window() noexcept;
  void close_value_window(std::uint64_t t) noexcept;
  // Time spent inside an engine call that did work, from `since` (trace_recorder::now());
  // returns the time it read.
  std::int64_t combine_inside(std::int64_t since) noexcept;
  // An advance took `ns`; `worked`: anything happened since the last.
  void combine_advanced(std::uint64_t ns, bool worked) noexcept {
    comb->inside_total += ns;
    if (worked) comb->window.inside_ns += ns;
  }
  // At `since` a pull looks for a new buffer: the program used up what the last one
  // took. Then it took one, the pull count before it `pulls_before`.
  void combine_used_up(std::int64_t since) noexcept;
  void combine_took(std::int64_t since, std::uint64_t pulls_before) noexcept;
  [[nodiscard]] std::uint64_t fold_ns() const noexcept;  // the lanes' fold passes, in all
  // This cycle's folds and gate stops, added to `into` (take: and zeroed), and the
  // gate's last measures (report_measures).
  void add_combine_counters(engine_stats& into) const noexcept;
  void take_combine_counters(engine_stats& into) noexcept;
  void count_lane(engine_stats& into, std::size_t lane, std::uint64_t stops) const noexcept;
  void report_measures(engine_stats& into) const noexcept;
  [[nodiscard]] std::size_t combine_bytes(bool at_most) const noexcept;
  [[nodiscard]] std::size_t cache_bytes() const noexcept;
  void flush_older_than(std::uint64_t period);
  bool flush_loopback();
  bool send_last(int out_link, std::uint32_t count) override;

  // ---- broadcast (engine_broadcast.cpp) ----
  void setup_broadcast();
  // The root's copies of `item`: one per out-link (every stage) and one to the loopback
  // lane, all or none. Returns 1, 0 (a lane has no free buffer) or error_transport.
  [[nodiscard]] int broadcast_item(const void* item) noexcept;
  [[nodiscard]] std::int64_t broadcast_items(const std::byte* items, std::size_t n) noexcept;
  // The record at the front of fan-out link `id` (on whole-buffer links, its front buffer:
  // fan_buffer): copied onto every later out-link, then kept for the window (one-byte tags
  // or none) or made the link's head. Returns true if kept (look at the next record),
  // false if it is the head now or a lane had no room.
  [[nodiscard]] bool fan_out(int id);
  // The whole-buffer fan-out of in-link `id`'s front buffer (BCAST-2, BCAST-3): false if
  // a lane had no free buffer (it resumes there), true once the buffer is this rank's
  // window.
  [[nodiscard]] bool fan_buffer(int id);
  // Every tag of in-link `id`'s front buffer gets its root and its tag on each later
  // out-link (a route step and an encode for a tag the link has not carried before).
  void learn_fan_tags(int id);
  // Out-links of the stages after `l`'s: the rows of its fan_xlat.
  [[nodiscard]] std::size_t later_out_links(const in_link& l) const noexcept;
  [[nodiscard]] std::uint64_t fan_tag(int root, int out_link);

  // ---- receiving (engine_receive.cpp) ----
  void release_buffer(const aggregation::received& r);
  void settle();
  void drain_transport();
  void deliver_loopback(const aggregation::sealed_buffer& b);
  void examine(int id);
  void forward_all();
  [[nodiscard]] int take_ready(item_view& out, bool rigid);
  void unpull_record();
  [[nodiscard]] bool drained(int id) const override {
    return ins[static_cast<std::size_t>(id)].queue.empty();
  }
  [[nodiscard]] bool nothing_to_pull() const noexcept;

 private:
  void accept(int id, const aggregation::received& r);
  void make_ready(int id) {
    in_link& l = ins[static_cast<std::size_t>(id)];
    if (!l.ready) {
      l.ready = true;
      ready.push_back(id);
    }
  }
  void close_window();
  void release_pending();
  void open_window(int id);
  // Forwarding by runs (ROUTE-24, TERM-13): the front buffer's rigid records, each a step
  // table load and a fixed-size copy into its next lane (or, for this rank, to the kept
  // front of the buffer), until one needs next() (an uncached step) or a lane has no free
  // buffer.
  enum class run_end { buffer_done, stopped, per_record };
  template <std::size_t N>
  [[nodiscard]] run_end forward_run(int id);
  [[nodiscard]] run_end forward_run_any(int id);
  [[nodiscard]] bool forward_record(int id);
};

}  // namespace convoy::termination
