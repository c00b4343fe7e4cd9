// Elastic conveyors (etensor, convey_new_elastic; Maley & DeVinney 2019, sec. 4.4, 4.4.1): bale's
// arguments and codes translated to the C++ core's elastic_engine (the engine every call
// of this kind goes to, convey.cpp), which carries small
// items in the engine and large ones through an aggregation::large_channel (two-sided or
// rendezvous: CONVOY_LARGE, aggregation::make_large_channel), never blocking (a pull that meets a
// large item still on its way returns "nothing yet" and the item stays first in line; CAPI-5).
//
// Memory (Maley & DeVinney 2019, sec. 4.6): with a client allocator the engine's link buffers come
// from it (the core, T11) and so do the channel's two buffers, grabbed after the engine's and given
// back before them (LIFO); with convey_opt_DYNAMIC both exist from begin to reset.
#include <convoy/aggregation/large_channel.hpp>
#include <convoy/aggregation/rma_large_channel.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/conveyor_api/elastic_engine.hpp>
#include <memory>
#include <new>

#include "facade.hpp"

namespace convoy::facade {
namespace {

namespace term = convoy::termination;
namespace agg = convoy::aggregation;

class elastic_conveyor final : public kind {
 public:
  elastic_conveyor(::conveyor& conv, const engine_request& r, const convey_alc8r_t* alloc,
                   std::uint64_t opts)
      : kind(conv), memory_(make_buffer_source(alloc)), dynamic_((opts & convey_opt_DYNAMIC) != 0) {
    c.core = untyped_conveyor(MPI_COMM_WORLD, engine_options_for(r, alloc, opts));
    c.order = r.layout.kind == layout_kind::mesh ? c.core.plan()->max_hops() : r.layout.order;
    c.n_local = r.layout.kind == layout_kind::tensor && r.layout.order >= 2 ? r.layout.n_local : 1;
    c.payload_bytes = r.layout.payload_bytes;
    c.features |= convey_ELASTIC | convey_STEADY;
    const std::size_t max_item = c.core.max_item_bytes();
    if (max_item < 26)
      throw error("buffer_bytes " + std::to_string(r.layout.payload_bytes) +
                  " is too small for elastic items (a buffer must hold a 25-byte ticket)");
    small_max_ = max_item - 1;
    c.small_max = small_max_;
    c.engine_counts = false;
    // etensor: items up to monster_bytes (bale's elastic_epush: max_size);
    // convey_new_elastic: exactly its item_bound (CAPI-6).
    bound_ = r.item_bound ? r.item_bound : r.monster_bytes;
    // The settings the core resolved for this construction (CONVOY_LARGE checked there, on
    // every PE alike). With a client allocator, auto keeps every channel buffer in it
    // (two-sided).
    requested_ = c.core.options().settings->large_or_auto();
    large_ = agg::resolve_large_kind(MPI_COMM_WORLD, requested_, memory_ != nullptr);
    c.scratch = make_aligned(std::max<std::size_t>(max_item, 64));
    if (!dynamic_) build();  // after the engine's link buffers (LIFO)
  }

  int begin_(std::size_t bytes, std::size_t) override {
    if (bytes > bound_) return convey_error_OFLO;
    if (dynamic_) {
      c.core.attach();  // the engine's link buffers first (one grab, T11), then the channel's
      try {
        build();
      } catch (const std::bad_alloc&) {
        c.core.detach();
        return convey_error_ALLOC;
      }
    }
    mark_ = channel_stats();
    const int rc = to_convey(ee_->begin(bytes));
    if (rc < 0 && dynamic_) drop();
    return rc;
  }

  int reset_() override {
    const int rc = to_convey(ee_->reset());
    // Collective like reset; every PE's engine has terminated, so every large item was
    // received: the channel first, then the engine (LIFO).
    if (rc >= 0 && dynamic_) drop();
    return rc;
  }

  term::conveyor_engine* engine_() noexcept override { return ee_.get(); }

  std::int64_t comm_statistic_(int which, bool cumulative) const noexcept override {
    if (which == convey_SYNCS) return 0;  // asynchronous: no collective synchronization
    try {
      const term::engine_stats s = c.core.stats(cumulative);
      const agg::large_channel::statistics ch = channel_stats();
      const bool comms = which == convey_COMMS;
      std::uint64_t large = comms ? ch.sent : ch.sent_bytes;
      if (!cumulative) large -= comms ? mark_.sent : mark_.sent_bytes;
      return static_cast<std::int64_t>((comms ? s.buffers_sent : s.bytes_sent) + large);
    } catch (...) {
      return -1;
    }
  }
  std::size_t memory_bytes_() const noexcept override {
    return ee_ ? ee_->memory_bytes() : c.core.memory_bytes();
  }
  std::size_t max_memory_bytes_() const noexcept override {
    const std::size_t control =
        large_ == base::large_kind::rendezvous ? agg::rma_large_channel::control_bytes : 0;
    return c.core.max_memory_bytes() + (bound_ > small_max_ ? 2 * bound_ + control : 0);
  }

 private:
  // The elastic engine over the core's engine, with a channel when items can exceed a
  // buffer (its buffers from the client allocator, collectively). Throws std::bad_alloc.
  void build() {
    std::unique_ptr<agg::large_channel> channel;
    if (bound_ > small_max_) {
      agg::mpi_large_channel::options o;
      o.max_item_bytes = bound_;
      o.memory = memory_;
      // The setting, not large_: auto falls back to two-sided where MPI makes no window.
      channel = agg::make_large_channel(MPI_COMM_WORLD, requested_, o);
    }
    ee_ = std::make_unique<elastic_engine>(c.core.streaming(), std::move(channel), bound_);
  }
  // DYNAMIC: the channel's statistics stay, its buffers and the engine's go (LIFO).
  void drop() noexcept {
    retired_ = channel_stats();
    ee_.reset();
    c.core.detach();
  }
  [[nodiscard]] agg::large_channel::statistics channel_stats() const noexcept {
    agg::large_channel::statistics s = retired_;
    if (ee_ && ee_->channel()) {
      const auto& ch = ee_->channel()->stats();
      s.sent += ch.sent;
      s.sent_bytes += ch.sent_bytes;
    }
    return s;
  }
  std::shared_ptr<agg::buffer_source> memory_;
  bool dynamic_;
  std::size_t small_max_ = 0;
  std::size_t bound_ = 0;
  base::large_kind requested_ = base::large_kind::automatic;  // CONVOY_LARGE
  base::large_kind large_ = base::large_kind::two_sided;      // ... resolved
  std::unique_ptr<elastic_engine> ee_;                    // destroyed before the core's engine
  agg::large_channel::statistics retired_, mark_;
};

}  // namespace

::conveyor* make_elastic(const engine_request& r, const convey_alc8r_t* alloc,
                         std::uint64_t options) {
  return make_kind<elastic_conveyor>("etensor", options, r, alloc, options);
}

}  // namespace convoy::facade
