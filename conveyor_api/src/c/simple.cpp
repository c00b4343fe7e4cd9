// Simple conveyors (Maley & DeVinney 2019, sec. 4.1): bale's arguments and codes translated to the
// C++ core's bulk kind (a bulk layout_plan's conveyor_options, API-18..21), built by
// make_bulk_engine as for a C++ conveyor. Its pushes and pulls are inline (convey.h) over
// the bulk engine's hot state, as the streaming kinds'. THRIFTY: the core's codec is a c_codec over
// the convey_codec_t, run by the exchange on the buffers whose destination is on another node.
#include <algorithm>
#include <convoy/base/error.hpp>
#include <memory>

#include "facade.hpp"

namespace convoy::facade {
namespace {

namespace term = convoy::termination;

class simple_conveyor final : public kind {
 public:
  simple_conveyor(::conveyor& conv, std::size_t capacity, const convey_alc8r_t* alloc,
                  std::uint64_t opts)
      : kind(conv) {
    if (capacity == 0) throw error("capacity must be positive");
    engine_request r;
    r.layout.kind = layout_kind::bulk;
    r.layout.payload_bytes = capacity;
    r.steady = (opts & convey_opt_PROGRESS) != 0;
    conveyor_options o = engine_options_for(r, alloc, opts);  // + DYNAMIC, the allocator
    if (opts & convey_opt_COMPRESS) {
      c.features |= convey_THRIFTY;
      o.codec = codec_;
    }
    if (o.steady) c.features |= convey_STEADY;
    c.core = untyped_conveyor(MPI_COMM_WORLD, std::move(o));
    c.order = 1;
    c.n_local = 1;
    c.payload_bytes = capacity;
    c.scratch = make_aligned(std::max<std::size_t>(capacity, 64));
  }

  int begin_(std::size_t bytes, std::size_t) override { return to_convey(c.core.begin(bytes)); }

  int reset_() override { return to_convey(c.core.reset()); }

  int set_codec_(const convey_codec_t* codec, void* arg) override {
    codec_->set(codec, arg);  // the exchange plans it at the next begin
    return convey_OK;
  }

  std::int64_t comm_statistic_(int which, bool cumulative) const noexcept override {
    try {
      const term::engine_stats s = c.core.stats(cumulative);
      if (which == convey_SYNCS) return static_cast<std::int64_t>(s.collectives);
      return static_cast<std::int64_t>(which == convey_COMMS ? s.buffers_sent : s.bytes_sent);
    } catch (...) {
      return -1;
    }
  }

 private:
  std::shared_ptr<c_codec> codec_ = std::make_shared<c_codec>();
};

}  // namespace

::conveyor* make_simple(std::size_t capacity, const convey_alc8r_t* alloc, std::uint64_t options) {
  return make_kind<simple_conveyor>("simple", options, capacity, alloc, options);
}

}  // namespace convoy::facade
