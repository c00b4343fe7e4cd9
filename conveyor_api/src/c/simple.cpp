// Simple conveyors (seed 000 sec. 4.1): bale's arguments and codes translated to the C++
// core's bulk_engine, which keeps one buffer per PE in an aggregation::bulk_exchange and
// moves them all at once with MPI_Alltoallv; advance is collective while WORKING or
// ENDGAME (the "strange clause"). THRIFTY: the exchange runs the codec (a c_codec over the
// convey_codec_t) on the buffers whose destination is on another node.
#include <convoy/aggregation/bulk_exchange.hpp>
#include <convoy/aggregation/node_map.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/conveyor_api/bulk_engine.hpp>
#include <memory>

#include "facade.hpp"

namespace convoy::facade {
namespace {

namespace agg = convoy::aggregation;
namespace term = convoy::termination;

class simple_conveyor final : public ::conveyor {
 public:
  simple_conveyor(std::size_t capacity, const convey_alc8r_t* alloc, std::uint64_t opts)
      : ::conveyor("simple", opts) {
    if (capacity == 0) throw error("capacity must be positive");
    agg::bulk_exchange::options x;
    x.capacity_bytes = capacity;
    x.memory = make_buffer_source(alloc);
    if (opts & convey_opt_COMPRESS) {
      features |= convey_THRIFTY;
      x.codec = codec_;
      x.compress_link =
          agg::off_node_links(MPI_COMM_WORLD, base::settings::from_env(MPI_COMM_WORLD));
    }
    bulk_engine::options b;
    b.steady = (opts & convey_opt_PROGRESS) != 0;
    b.dynamic = (opts & convey_opt_DYNAMIC) != 0;
    if (b.steady) features |= convey_STEADY;
    be_ = std::make_unique<bulk_engine>(
        std::make_unique<agg::bulk_exchange>(MPI_COMM_WORLD, std::move(x)), b);
    order = 1;
    n_local = 1;
    buffer_bytes = capacity;
  }

  int begin_(std::size_t bytes, std::size_t) override { return to_convey(be_->begin(bytes)); }

  int push_(const void* item, std::int64_t pe) noexcept override {
    return to_convey(be_->push(item, static_cast<int>(pe)));
  }

  // Items are packed at item_bytes in 64-byte aligned buffers, and begin's alignment
  // divides item_bytes: the pointer is aligned as asked (CAPI-7).
  const void* pull_(std::int64_t* from, int* rc, bool) noexcept override {
    term::item_view v;
    const int got = be_->pull(v);
    if (got <= 0) {
      *rc = to_convey(got);
      return nullptr;
    }
    *from = v.from;
    return v.data;
  }

  int unpull_() noexcept override { return to_convey(be_->unpull()); }

  int advance_(bool done) override { return advance_code(be_->advance(done), *be_); }

  int reset_() override { return to_convey(be_->reset()); }

  int set_codec_(const convey_codec_t* codec, void* arg) override {
    codec_->set(codec, arg);  // the exchange plans it at the next begin
    return convey_OK;
  }

  std::int64_t comm_statistic_(int which, bool cumulative) const noexcept override {
    try {
      if (which == convey_SYNCS) return static_cast<std::int64_t>(be_->collectives(cumulative));
      const term::engine_stats s = be_->stats(cumulative);
      return static_cast<std::int64_t>(which == convey_COMMS ? s.buffers_sent : s.bytes_sent);
    } catch (...) {
      return -1;
    }
  }
  std::size_t memory_bytes_() const noexcept override { return be_->memory_bytes(); }
  std::size_t max_memory_bytes_() const noexcept override { return be_->max_memory_bytes(); }

 private:
  std::shared_ptr<c_codec> codec_ = std::make_shared<c_codec>();
  std::unique_ptr<bulk_engine> be_;
};

}  // namespace

::conveyor* make_simple(std::size_t capacity, const convey_alc8r_t* alloc, std::uint64_t options) {
  return new simple_conveyor(capacity, alloc, options);
}

}  // namespace convoy::facade
