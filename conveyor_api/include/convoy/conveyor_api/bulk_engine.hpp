#pragma once
/// @file
/// The bulk-synchronous engine kind: bale's "simple" conveyor (seed 000 sec. 4.1) with the
/// streaming engine's interface (termination/engine.hpp), so that the C
/// façade run over either (conveyor_api/README.md, API-18..20).
///
/// Items go into one buffer per destination (aggregation::bulk_exchange); advance() is
/// collective and synchronizing while WORKING or ENDGAME (the contract's "strange clause",
/// sec. 3.3): every call does one MPI_Allreduce of four flags, and all ranks take the same
/// decision from it — exchange every buffer with MPI_Alltoallv once every rank has pulled
/// everything and some rank has a full buffer (or is done, steady or flushing with items),
/// or finish once every rank is done and no rank holds an item. Afterwards advance is local.
/// Pulls take sources in increasing order, each buffer front to back: FIFO per pair.
#include <convoy/aggregation/bulk_exchange.hpp>
#include <convoy/aggregation/packing.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy/termination/engine.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace convoy {

struct bulk_engine_options {
  bool steady = false;   ///< exchange as soon as every rank has pulled, if any rank has items
  bool dynamic = false;  ///< buffers held only from begin() to reset() (bale's DYNAMIC)
};

class bulk_engine {
 public:
  using options = bulk_engine_options;

  /// Over `exchange` (collective construction done by its owner). Takes the buffers now
  /// unless dynamic. Throws convoy::error if `exchange` is null, std::bad_alloc.
  explicit bulk_engine(std::unique_ptr<aggregation::bulk_exchange> exchange, options o = {});
  ~bulk_engine();
  bulk_engine(const bulk_engine&) = delete;
  bulk_engine& operator=(const bulk_engine&) = delete;

  /// DORMANT -> WORKING. Collective (takes the buffers when dynamic; plans the codec).
  /// Returns 1, error_state, error_size (0 or more than capacity_bytes()), error_alloc.
  int begin(std::size_t item_bytes);

  /// As termination::engine::push: 1, 0 when the buffer to `dest` is full (advance, pull,
  /// retry), error_state, error_rank, error_argument. Inline: a bounds check and a copy.
  template <std::size_t N = 0>
  [[nodiscard]] int push(const void* item, int dest) noexcept {
    if (accepting_ && static_cast<unsigned>(dest) < n_ranks_u_ && item &&
        (N == 0 || N == item_bytes_)) [[likely]] {
      int& n = out_count_[static_cast<std::size_t>(dest)];
      if (static_cast<std::size_t>(n) == cap_items_) return 0;
      std::byte* p = send_base_ + static_cast<std::size_t>(dest) * region_ +
                     static_cast<std::size_t>(n) * item_bytes_;
      if constexpr (N != 0)
        std::memcpy(p, item, N);
      else
        aggregation::copy_item(p, item, item_bytes_);
      ++out_total_;
      ++pushes_;
      if (static_cast<std::size_t>(++n) == cap_items_) any_full_ = true;
      return 1;
    }
    return push_slow(item, dest);
  }
  /// Bulk conveyors are rigid: error_elastic.
  [[nodiscard]] int epush(const void*, std::size_t, int) noexcept {
    return termination::error_elastic;
  }

  /// As termination::engine::pull (`rigid` is ignored: every item has the cycle's size).
  [[nodiscard]] int pull(termination::item_view& out, bool rigid = true) noexcept {
    (void)rigid;
    if (cur_ < end_) [[likely]] {
      out.data = cur_;
      out.bytes = item_bytes_;
      out.from = from_;
      cur_ += item_bytes_;
      pulled_ = true;
      ++pulls_;
      return 1;
    }
    return pull_slow(out);
  }
  /// Puts back the last pulled item (no advance since). Returns 1, error_unpull,
  /// error_state (DORMANT), 0 in COMPLETE.
  [[nodiscard]] int unpull() noexcept;

  /// Collective while WORKING/ENDGAME (see the file comment); local in CLEANUP/COMPLETE.
  /// Returns ok, near, done, error_state (DORMANT; done=false after done=true),
  /// error_transport (MPI failure; last_message()).
  [[nodiscard]] int advance(bool done) noexcept;
  /// Asks for an exchange at the next advance even if no buffer is full. WORKING or
  /// ENDGAME; returns 1 or error_state.
  int flush() noexcept;
  /// COMPLETE -> DORMANT (DORMANT: no-op); gives the buffers back when dynamic. Returns 1
  /// or error_state.
  int reset() noexcept;

  [[nodiscard]] termination::state current_state() const noexcept { return state_.current(); }
  [[nodiscard]] int rank() const noexcept { return exchange_->rank(); }
  [[nodiscard]] int n_ranks() const noexcept { return exchange_->n_ranks(); }
  [[nodiscard]] std::size_t item_bytes() const noexcept { return item_bytes_; }
  /// Largest item: one per-destination buffer.
  [[nodiscard]] std::size_t max_item_bytes() const noexcept { return exchange_->capacity_bytes(); }
  [[nodiscard]] const options& kind_options() const noexcept { return options_; }

  /// Counters as termination::engine's (one stage): buffers_sent/bytes_sent count non-empty
  /// buffers to other ranks and their bytes as sent (after compression).
  [[nodiscard]] termination::engine_stats stats(bool cumulative = false) const;
  /// Collective MPI calls (agreements and exchanges) since begin or over the lifetime.
  [[nodiscard]] std::uint64_t collectives(bool cumulative = false) const noexcept;
  /// Bytes compression saved since begin or over the lifetime.
  [[nodiscard]] std::uint64_t saved_bytes(bool cumulative = false) const noexcept;
  /// Buffers held now (0 between cycles when dynamic) / at most: 2 x ranks x region.
  [[nodiscard]] std::size_t memory_bytes() const noexcept { return exchange_->memory_bytes(); }
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept {
    return exchange_->max_memory_bytes();
  }
  [[nodiscard]] const std::string& last_message() const noexcept { return last_message_; }
  [[nodiscard]] aggregation::bulk_exchange& exchange() noexcept { return *exchange_; }

 private:
  [[nodiscard]] int push_slow(const void* item, int dest) noexcept;
  [[nodiscard]] int pull_slow(termination::item_view& out) noexcept;
  [[nodiscard]] std::size_t pending() const noexcept;
  [[nodiscard]] int finish() noexcept;
  void run_exchange();
  void open_window(std::size_t src) noexcept;

  // Hot-path state first.
  bool accepting_ = false;  // WORKING
  unsigned n_ranks_u_ = 0;
  std::size_t item_bytes_ = 0, cap_items_ = 0, region_ = 0;
  std::byte* send_base_ = nullptr;
  int* out_count_ = nullptr;  // out_counts_.data()
  std::size_t out_total_ = 0;
  bool any_full_ = false;
  const std::byte* cur_ = nullptr;  // the receive buffer being pulled
  const std::byte* end_ = nullptr;
  int from_ = -1;
  bool pulled_ = false;  // the last pull came from the window (unpull may step back)
  std::uint64_t pushes_ = 0, pulls_ = 0;

  std::unique_ptr<aggregation::bulk_exchange> exchange_;
  options options_;
  termination::conveyor_state state_;
  std::vector<int> out_counts_, in_counts_;
  std::size_t next_src_ = 0;  // the source after the window's
  bool done_ = false, finished_ = false, flush_ = false;
  termination::engine_stats life_;  // begins, unpulls, advances; pushes/pulls of past cycles
  termination::engine_stats now_;
  aggregation::bulk_exchange::statistics mark_;  // the exchange's counters at begin
  std::string last_message_;
};

/// The bulk kind of `options` (conveyor_kind::bulk) on `comm`, collective: an exchange of
/// capacity_bytes per rank (else the settings' buffer bytes; rank 0's value), its buffers
/// from options.buffers, options.codec on the buffers to other nodes; steady and dynamic
/// as options says. The one construction path of untyped_conveyor's bulk kind and the C
/// façade's simple conveyors. Throws convoy::error (elastic or make_transport set, MPI).
std::unique_ptr<bulk_engine> make_bulk_engine(MPI_Comm comm, const conveyor_options& options,
                                              const base::settings& s);
/// As above, resolving the settings first (collective).
std::unique_ptr<bulk_engine> make_bulk_engine(MPI_Comm comm, const conveyor_options& options);

}  // namespace convoy
