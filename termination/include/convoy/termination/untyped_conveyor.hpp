#pragma once
/// @file
/// A conveyor of untyped items: the item size is set at begin() (or carried by each item,
/// elastic). It builds the engine of its kind (conveyor_options::kind: the streaming
/// engine, the bulk-synchronous bulk_engine, or the elastic_engine over a streaming engine
/// and a large-item channel), calls it through the one engine interface
/// (termination/conveyor_engine.hpp), and adds what a conveyor needs around it: DYNAMIC
/// buffers (the engine exists only from begin to reset, statistics kept across), the
/// allocator hook and custom transports (conveyor_options), and bale's rule that a pulled
/// item stays where it is across advance (advance_keeping_pull). It is the core of
/// convoy::conveyor<T>, of biconveyors and of the C façade's conveyors.
///
/// Calls return the engine's codes (termination/engine.hpp: positive success, 0 ordinary
/// failure, negative termination::engine_error) and never throw, except the collective
/// ones that build an engine (constructor, begin and reset of a dynamic conveyor), which
/// throw convoy::error. push, epush, pull and unpull are inline: a push is the engine's
/// table load and fixed-size copy (termination/README.md, "Hot path").
#include <mpi.h>

#include <convoy/termination/bulk_engine.hpp>
#include <convoy/termination/conveyor_options.hpp>
#include <convoy/termination/elastic_engine.hpp>
#include <convoy/termination/engine.hpp>
#include <convoy/termination/state_machine.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace convoy::termination {

class untyped_conveyor {
 public:
  /// No engine: every call fails with error_state (a placeholder).
  untyped_conveyor() noexcept;
  /// Collective over `comm`: builds the route plan (topology discovery) and the engine. A
  /// dynamic conveyor builds it once to validate the options and learn its memory, then
  /// drops it until begin(). The bulk kind builds make_bulk_engine() (which holds its
  /// buffers only from begin to reset when dynamic) and has no plan. `plan`, if given, is
  /// one make_plan() built before over `comm` and `options` (several conveyors, one
  /// topology discovery); the bulk kind ignores it. Throws convoy::error.
  untyped_conveyor(MPI_Comm comm, conveyor_options options,
                   std::shared_ptr<const router::route_plan> plan = nullptr);
  /// Over an engine built elsewhere (e.g. on a simulated transport); never dynamic.
  explicit untyped_conveyor(std::unique_ptr<termination::engine> engine);
  ~untyped_conveyor();
  untyped_conveyor(untyped_conveyor&&) noexcept;
  untyped_conveyor& operator=(untyped_conveyor&&) noexcept;
  untyped_conveyor(const untyped_conveyor&) = delete;
  untyped_conveyor& operator=(const untyped_conveyor&) = delete;

  /// DORMANT -> WORKING, collective. A dynamic conveyor attaches its engine here and
  /// detaches it again if the engine refuses the begin. Returns the engine's begin().
  int begin(std::size_t item_bytes);
  /// Combining from the next begin on (termination::engine::set_combine; `spec.fn` null:
  /// off), kept for the engines a dynamic conveyor builds. DORMANT, streaming kind only.
  /// Returns 1, error_state (not DORMANT, a placeholder), error_mode (the bulk kind, a
  /// broadcast conveyor) or error_elastic (elastic items).
  int set_combine(const aggregation::combine_spec& spec);

  /// Dynamic conveyors, collective: builds the engine now (its link buffers from
  /// options().buffers), so that a caller can take further buffers after the engine's and
  /// give them back before (LIFO). Does nothing if there is an engine. Throws convoy::error.
  void attach();
  /// Dynamic conveyors in DORMANT, collective: destroys the engine (its transport gives the
  /// link buffers back), keeping its statistics. Does nothing otherwise.
  void detach() noexcept;

  /// The engine's calls (termination/conveyor_engine.hpp), one interface for every kind:
  /// push and pull inline over its hot state. Without an engine (placeholder; dynamic
  /// conveyor outside begin..reset) they return error_state.
  template <std::size_t N = 0>
  [[nodiscard]] int push(const void* item, int dest) noexcept {
    if (engine_) [[likely]]
      return engine_->template push<N>(item, dest);
    return without_engine(termination::call::push);
  }
  /// Broadcast to every rank (a conveyor of the broadcast kind; else error_mode).
  [[nodiscard]] int broadcast(const void* item) noexcept {
    return engine_ ? engine_->broadcast(item) : without_engine(termination::call::push);
  }
  /// `n` broadcasts at once (conveyor_engine::broadcast_batch): the number sent, or a code.
  [[nodiscard]] std::int64_t broadcast_batch(const void* items, std::size_t n) noexcept {
    return engine_ ? engine_->broadcast_batch(items, n) : without_engine(termination::call::push);
  }
  /// Elastic push (bulk kind: error_elastic).
  [[nodiscard]] int epush(const void* item, std::size_t bytes, int dest) noexcept {
    return engine_ ? engine_->epush(item, bytes, dest) : without_engine(termination::call::push);
  }
  [[nodiscard]] int pull(termination::item_view& out, bool rigid = true) noexcept {
    if (engine_) [[likely]]
      return engine_->pull(out, rigid);
    return without_engine(termination::call::pull);
  }
  /// Up to `max` items at once (conveyor_engine::pull_batch): their number, or a code.
  [[nodiscard]] std::int64_t pull_batch(termination::item_batch& out, std::size_t max = SIZE_MAX,
                                        bool rigid = true) noexcept {
    if (engine_) [[likely]]
      return engine_->pull_batch(out, max, rigid);
    return without_engine(termination::call::pull);
  }
  /// After advance_keeping_pull() took the last pull back and pulled it again, with no
  /// pull since: error_unpull, as after an advance without one.
  [[nodiscard]] int unpull() noexcept {
    if (!engine_) return without_engine(termination::call::unpull);
    if (retaken_ && engine_->hot().pulls == retake_mark_) return termination::error_unpull;
    return engine_->unpull();
  }
  /// The bulk kind's is collective while WORKING or ENDGAME (API-18).
  [[nodiscard]] int advance(bool done) noexcept {
    return engine_ ? engine_->advance(done)
                   : without_engine(done ? termination::call::advance_done
                                         : termination::call::advance);
  }
  /// advance(done) that keeps the item of the last pull where it is, valid until the next
  /// pull or unpull (bale's apull contract; conveyor_api/README.md, CAPI-7): if the engine
  /// can still unpull it, it is put back first in line, so that its buffer stays, and taken
  /// again after the advance. The take-back counts as neither a pull nor an unpull.
  [[nodiscard]] int advance_keeping_pull(bool done) noexcept;
  int flush() noexcept {
    return engine_ ? engine_->flush() : without_engine(termination::call::flush);
  }

  /// COMPLETE -> DORMANT, collective (DORMANT: does nothing), then detach().
  int reset();

  [[nodiscard]] termination::state current_state() const noexcept {
    return engine_ ? engine_->current_state() : termination::state::dormant;
  }
  [[nodiscard]] conveyor_kind kind() const noexcept { return options_.kind; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int n_ranks() const noexcept { return n_ranks_; }
  /// Item size given to the current begin (0 when DORMANT without an engine).
  [[nodiscard]] std::size_t item_bytes() const noexcept {
    return engine_ ? engine_->item_bytes() : 0;
  }
  /// Largest item (payload bytes) accepted: what fits in a buffer; the elastic kind's bound.
  [[nodiscard]] std::size_t max_item_bytes() const noexcept { return max_item_bytes_; }
  /// Largest item that travels in the engine's buffers (the elastic kind hands larger ones
  /// out in their own buffer); max_item_bytes() for the other kinds.
  [[nodiscard]] std::size_t max_buffered_item_bytes() const noexcept { return max_buffered_; }
  /// Counters since the last begin (between a dynamic reset and the next begin: the last
  /// cycle's) or over the conveyor's lifetime, retired engines included.
  [[nodiscard]] termination::engine_stats stats(bool cumulative = false) const;
  /// Buffer memory now (0 while a dynamic conveyor has no engine) / at most.
  [[nodiscard]] std::size_t memory_bytes() const noexcept;
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept { return max_memory_bytes_; }
  /// The engine's resolved options (steady, capacity, n_buffers, ...; bulk: steady and
  /// buffer_bytes, one per-rank buffer).
  [[nodiscard]] const termination::engine_options& engine_options() const noexcept {
    return engine_options_;
  }
  [[nodiscard]] const conveyor_options& options() const noexcept { return options_; }
  /// The route plan (null for a placeholder and the bulk kind).
  [[nodiscard]] const std::shared_ptr<const router::route_plan>& plan() const noexcept {
    return plan_;
  }
  /// The engine, or null (placeholder; dynamic conveyor outside begin..reset).
  [[nodiscard]] termination::conveyor_engine* engine() noexcept { return engine_.get(); }
  [[nodiscard]] const termination::conveyor_engine* engine() const noexcept {
    return engine_.get();
  }
  /// The streaming engine (its plan, options, transport): the engine of the streaming kind,
  /// the one under the elastic kind's; null for the bulk kind and without an engine.
  [[nodiscard]] termination::engine* streaming() noexcept { return streaming_; }
  [[nodiscard]] const termination::engine* streaming() const noexcept { return streaming_; }
  /// The engine of the bulk kind (saved_bytes(), its exchange), else null.
  [[nodiscard]] bulk_engine* bulk() noexcept { return bulk_; }
  [[nodiscard]] const bulk_engine* bulk() const noexcept { return bulk_; }
  /// The engine of the elastic kind (its channel, detailed_stats()), else null.
  [[nodiscard]] elastic_engine* elastic() noexcept { return elastic_; }
  /// Text of the engine's last transport failure, empty if none.
  [[nodiscard]] std::string last_message() const;

  /// How the CONVOY_STATS document names this conveyor (docs/stats-format.md): the API
  /// that made it ("cpp" unless set: "convey", "biconvey") and its kind (default "mesh",
  /// "tensor" or "bulk"). No effect without CONVOY_STATS.
  void set_report_label(std::string api, std::string kind);

 private:
  /// The one table's code for call `c` of a conveyor without an engine: DORMANT's.
  [[nodiscard]] static int without_engine(termination::call c) noexcept {
    return termination::refusal(termination::state::dormant, c).value_or(termination::error_state);
  }
  void build(bool first);
  void drop() noexcept;
  void learn_shape();
  void record_report() noexcept;

  std::unique_ptr<termination::conveyor_engine> engine_;  // first: the hot path loads it
  // The elastic kind's streaming engine, under engine_ (destroyed after it).
  std::unique_ptr<termination::engine> base_;
  termination::engine* streaming_ = nullptr;  // engine_ or base_, by kind
  bulk_engine* bulk_ = nullptr;
  elastic_engine* elastic_ = nullptr;
  // DYNAMIC streaming and elastic kinds: an engine is built at every begin and dropped at
  // reset (the bulk kind's engine takes and gives back its buffers itself).
  bool rebuilds_ = false;
  // advance_keeping_pull: the last pull was taken back and again at hot().pulls ==
  // retake_mark_; take-backs this cycle and over the lifetime (not the user's calls).
  bool retaken_ = false;
  std::uint64_t retake_mark_ = 0;
  std::uint64_t retakes_now_ = 0, retakes_life_ = 0;
  std::string message_;  // a failure of the core's own (advance_keeping_pull)
  std::size_t max_buffered_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  conveyor_options options_;
  std::shared_ptr<const router::route_plan> plan_;
  termination::engine_options engine_options_;
  int rank_ = 0;
  int n_ranks_ = 0;
  std::size_t max_item_bytes_ = 0;
  std::size_t max_memory_bytes_ = 0;   // set_combine keeps it current
  std::size_t combine_max_bytes_ = 0;  // the combining tables' share while combining
  termination::engine_stats retired_;  // lifetime counters of dropped engines
  termination::engine_stats last_;     // the last cycle's, once its engine is dropped
  // CONVOY_STATS: this conveyor's entry, written at destruction (API-30); null without the
  // setting, and in a moved-from conveyor.
  struct report;
  std::unique_ptr<report> report_;
};

}  // namespace convoy::termination
