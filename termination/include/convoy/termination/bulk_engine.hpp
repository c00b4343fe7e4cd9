#pragma once
/// @file
/// The bulk-synchronous engine kind: bale's "simple" conveyor (Maley & DeVinney 2019, sec. 4.1),
/// one of the kinds of the one engine interface (termination/conveyor_engine.hpp), so that the C++
/// API and the C façade run over any (conveyor_api/README.md, API-18..20).
///
/// Items go into one buffer per destination (aggregation::bulk_exchange); advance() is
/// collective and synchronizing while WORKING or ENDGAME (the contract's "strange clause",
/// sec. 3.3): every call does one MPI_Allreduce of four flags, and all ranks take the same
/// decision from it — exchange every buffer with MPI_Alltoallv once every rank has pulled
/// everything and some rank has a full buffer (or is done, steady or flushing with items),
/// or finish once every rank is done and no rank holds an item. Afterwards advance is local.
/// Pulls take sources in increasing order, each buffer front to back: FIFO per pair.
#include <chrono>
#include <convoy/aggregation/bulk_exchange.hpp>
#include <convoy/router/forwarding.hpp>
#include <convoy/termination/conveyor_engine.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace convoy::termination {

struct bulk_engine_options {
  bool steady = false;   ///< exchange as soon as every rank has pulled, if any rank has items
  bool dynamic = false;  ///< buffers held only from begin() to reset() (bale's DYNAMIC)
};

class bulk_engine final : public termination::conveyor_engine {
 public:
  using options = bulk_engine_options;

  /// Over `exchange` (collective construction done by its owner). Takes the buffers now
  /// unless dynamic. Throws convoy::error if `exchange` is null, std::bad_alloc.
  explicit bulk_engine(std::unique_ptr<aggregation::bulk_exchange> exchange, options o = {});
  ~bulk_engine() override;
  bulk_engine(const bulk_engine&) = delete;
  bulk_engine& operator=(const bulk_engine&) = delete;

  /// DORMANT -> WORKING. Collective (takes the buffers when dynamic; plans the codec).
  /// Returns 1, error_state, error_size (0 or more than buffer_bytes()), error_alloc.
  int begin(std::size_t item_bytes) override;

  /// push() and pull() are conveyor_engine's, inline: lane d of hot() is the send buffer to
  /// rank d (no tag; the region keeps 8 bytes of room for the tag store), the delivery
  /// window the receive buffer from one source. A push returns 0 when the buffer to `dest`
  /// is full (advance, pull, retry).
  /// A full buffer: an exchange is due at the next advance.
  void lane_full(std::uint32_t lane) noexcept override;
  /// Bulk conveyors are rigid: error_elastic.
  [[nodiscard]] int epush(const void*, std::size_t, int) noexcept override {
    return termination::error_elastic;
  }
  /// Puts back the last pulled item (no advance since). Returns 1, error_unpull,
  /// error_state (DORMANT), 0 in COMPLETE.
  [[nodiscard]] int unpull() noexcept override;

  /// Collective while WORKING/ENDGAME (see the file comment); local in CLEANUP/COMPLETE.
  /// Returns ok, near, done, error_state (DORMANT; done=false after done=true),
  /// error_transport (MPI failure; last_message()).
  [[nodiscard]] int advance(bool done) noexcept override;
  /// Asks for an exchange at the next advance even if no buffer is full. WORKING or
  /// ENDGAME; returns 1 or error_state.
  int flush() noexcept override;
  /// COMPLETE -> DORMANT (DORMANT: no-op); gives the buffers back when dynamic. Returns 1
  /// or error_state.
  int reset() noexcept override;
  /// Items pushed and not yet exchanged.
  [[nodiscard]] bool sending() const noexcept override { return unsent() > 0; }

  /// Largest item: one per-destination buffer.
  [[nodiscard]] std::size_t max_item_bytes() const noexcept override {
    return exchange_->buffer_bytes();
  }
  [[nodiscard]] const options& kind_options() const noexcept { return options_; }

  /// Counters as termination::engine's (one stage): buffers_sent/bytes_sent count non-empty
  /// buffers to other ranks and their bytes as sent (after compression); collectives the
  /// agreements and exchanges.
  [[nodiscard]] termination::engine_stats stats(bool cumulative = false) const override;
  /// Collective MPI calls (agreements and exchanges) since begin or over the lifetime.
  [[nodiscard]] std::uint64_t collectives(bool cumulative = false) const noexcept;
  /// Bytes compression saved since begin or over the lifetime.
  [[nodiscard]] std::uint64_t saved_bytes(bool cumulative = false) const noexcept;
  /// Buffers held now (0 between cycles when dynamic) / at most: 2 x ranks x region.
  [[nodiscard]] std::size_t memory_bytes() const noexcept override {
    return exchange_->memory_bytes();
  }
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept override {
    return exchange_->max_memory_bytes();
  }
  [[nodiscard]] aggregation::bulk_exchange& exchange() noexcept { return *exchange_; }

 private:
  [[nodiscard]] int push_slow(const void* item, int dest) noexcept override;
  [[nodiscard]] int pull_slow(termination::item_view& out, bool rigid) noexcept override;
  [[nodiscard]] std::uint64_t unsent() const noexcept { return hot_.pushes - exchanged_; }
  [[nodiscard]] std::size_t pending() const noexcept;
  [[nodiscard]] int finish() noexcept;
  [[nodiscard]] int advance_step(bool done) noexcept;
  void run_exchange();
  void count_links() noexcept;
  void open_lanes() noexcept;
  void open_window(std::size_t src) noexcept;

  std::unique_ptr<aggregation::bulk_exchange> exchange_;
  options options_;
  std::vector<aggregation::send_lane> lanes_;  // lane d: the send buffer to rank d
  std::vector<router::first_hop> hops_;        // {d, 0}: no forwarding, no tag
  std::vector<int> out_counts_, in_counts_;
  std::uint64_t exchanged_ = 0;  // hot_.pushes at the last exchange
  std::size_t next_src_ = 0;     // the source after the window's
  bool any_full_ = false, done_ = false, finished_ = false, flush_ = false;
  termination::engine_stats life_;  // begins, unpulls, advances; pushes/pulls of past cycles
  termination::engine_stats now_;
  std::chrono::steady_clock::time_point cycle_start_{};  // the last begin
  // Per other rank, by rank (TERM-16): this cycle's and the lifetime's.
  std::vector<termination::link_stats> links_now_, links_life_;
  aggregation::bulk_exchange::statistics mark_;  // the exchange's counters at begin
};

}  // namespace convoy::termination
