#pragma once
/// @file
/// A conveyor of untyped items: the item size is set at begin() (or carried by each item,
/// elastic). It owns the engine of its kind (conveyor_options::kind: the streaming engine,
/// or the bulk-synchronous bulk_engine), calls it through the one engine interface
/// (termination/conveyor_engine.hpp), and adds what a conveyor needs around it: DYNAMIC
/// buffers (the engine exists only from begin to reset, statistics kept across), the
/// allocator hook and custom transports (conveyor_options). It is the core of
/// convoy::conveyor<T>, of biconveyors and of the C façade's conveyors.
///
/// Calls return the engine's codes (termination/engine.hpp: positive success, 0 ordinary
/// failure, negative termination::engine_error) and never throw, except the collective
/// ones that build an engine (constructor, begin and reset of a dynamic conveyor), which
/// throw convoy::error. push, epush, pull and unpull are inline: a push is the engine's
/// table load and fixed-size copy (termination/README.md, "Hot path").
#include <mpi.h>

#include <convoy/conveyor_api/bulk_engine.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy/termination/engine.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace convoy {

class untyped_conveyor {
 public:
  /// No engine: every call fails with error_state (a placeholder).
  untyped_conveyor() noexcept;
  /// Collective over `comm`: builds the route plan (topology discovery) and the engine. A
  /// dynamic conveyor builds it once to validate the options and learn its memory, then
  /// drops it until begin(). The bulk kind builds make_bulk_engine() (which holds its
  /// buffers only from begin to reset when dynamic) and has no plan. Throws convoy::error.
  untyped_conveyor(MPI_Comm comm, conveyor_options options);
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
  /// Returns 1, error_state (not DORMANT, the bulk kind, a placeholder) or error_elastic.
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
    return termination::error_state;
  }
  /// Broadcast to every rank (a conveyor built with options.broadcast; else error_mode).
  [[nodiscard]] int broadcast(const void* item) noexcept {
    return engine_ ? engine_->broadcast(item) : termination::error_state;
  }
  /// Elastic push (bulk kind: error_elastic).
  [[nodiscard]] int epush(const void* item, std::size_t bytes, int dest) noexcept {
    return engine_ ? engine_->epush(item, bytes, dest) : termination::error_state;
  }
  [[nodiscard]] int pull(termination::item_view& out, bool rigid = true) noexcept {
    if (engine_) [[likely]]
      return engine_->pull(out, rigid);
    return termination::error_state;
  }
  [[nodiscard]] int unpull() noexcept {
    return engine_ ? engine_->unpull() : termination::error_state;
  }
  /// The bulk kind's is collective while WORKING or ENDGAME (API-18).
  [[nodiscard]] int advance(bool done) noexcept {
    return engine_ ? engine_->advance(done) : termination::error_state;
  }
  int flush() noexcept { return engine_ ? engine_->flush() : termination::error_state; }

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
  /// Largest item (payload bytes) that fits in a buffer.
  [[nodiscard]] std::size_t max_item_bytes() const noexcept { return max_item_bytes_; }
  /// Counters since the last begin (between a dynamic reset and the next begin: the last
  /// cycle's) or over the conveyor's lifetime, retired engines included.
  [[nodiscard]] termination::engine_stats stats(bool cumulative = false) const;
  /// Buffer memory now (0 while a dynamic conveyor has no engine) / at most.
  [[nodiscard]] std::size_t memory_bytes() const noexcept;
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept { return max_memory_bytes_; }
  /// The engine's resolved options (steady, capacity, n_buffers, ...; bulk: steady and
  /// capacity_bytes, one per-rank buffer).
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
  /// The engine when it is the streaming kind (its plan, options, transport), else null.
  [[nodiscard]] termination::engine* streaming() noexcept {
    return dynamic_cast<termination::engine*>(engine_.get());
  }
  [[nodiscard]] const termination::engine* streaming() const noexcept {
    return dynamic_cast<const termination::engine*>(engine_.get());
  }
  /// The engine when it is the bulk kind (saved_bytes(), its exchange), else null.
  [[nodiscard]] bulk_engine* bulk() noexcept { return dynamic_cast<bulk_engine*>(engine_.get()); }
  [[nodiscard]] const bulk_engine* bulk() const noexcept {
    return dynamic_cast<const bulk_engine*>(engine_.get());
  }
  /// Text of the engine's last transport failure, empty if none.
  [[nodiscard]] std::string last_message() const;

  /// How the CONVOY_STATS document names this conveyor (docs/stats-format.md): the API
  /// that made it ("cpp" unless set: "convey", "biconvey") and its kind (default "mesh",
  /// "tensor" or "bulk"). No effect without CONVOY_STATS.
  void set_report_label(std::string api, std::string kind);
  /// The user's pushes, pulls and unpulls over the lifetime, for the CONVOY_STATS document,
  /// when a wrapper counts them otherwise than the engine (the C façade: elastic conveyors,
  /// pulls an advance took back and pulled again). Set just before destruction.
  void set_report_calls(std::uint64_t pushes, std::uint64_t pulls, std::uint64_t unpulls);

 private:
  void learn_shape();
  void record_report() noexcept;

  std::unique_ptr<termination::conveyor_engine> engine_;  // first: the hot path loads it
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

}  // namespace convoy
