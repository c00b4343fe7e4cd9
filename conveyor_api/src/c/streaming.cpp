// The rigid engine conveyors: tensor (Maley & DeVinney 2019, sec. 4.3), twohop and mesh. Their
// calls go to the core's engine (convey.cpp, convey.h inline); this file only translates
// construction, begin and reset, the statistics and THRIFTY's codec (conveyor_options::codec, the
// compressing transport of aggregation/) to the C++ core.
#include <algorithm>
#include <convoy/aggregation/compressing_transport.hpp>
#include <convoy/base/error.hpp>
#include <string>

#include "facade.hpp"

namespace convoy::facade {
namespace {

class streaming_conveyor final : public kind {
 public:
  streaming_conveyor(::conveyor& conv, const engine_request& r, const convey_alc8r_t* alloc,
                     std::uint64_t opts)
      : kind(conv),
        // THRIFTY: the compressing transport squeezes buffers on off-node links.
        thrifty_mode_((opts & convey_opt_COMPRESS) && r.layout.kind == layout_kind::tensor) {
    conveyor_options o = engine_options_for(r, alloc, opts);
    if (thrifty_mode_) {
      o.codec = codec_;
      o.on_compressing = [this](aggregation::compressing_transport& t) { thrifty_ = &t; };
      c.features |= convey_THRIFTY;
    }
    c.core = untyped_conveyor(MPI_COMM_WORLD, std::move(o));
    if (!c.core.engine()) thrifty_ = nullptr;  // DYNAMIC: the validating engine is gone
    c.order = r.layout.kind == layout_kind::mesh ? c.core.plan()->max_hops() : r.layout.order;
    c.n_local = r.layout.kind == layout_kind::tensor && r.layout.order >= 2 ? r.layout.n_local : 1;
    c.payload_bytes = r.layout.payload_bytes;
    if (c.core.engine_options().steady) c.features |= convey_STEADY;
    if ((opts & convey_opt_COMPRESS) && !thrifty_mode_ && (opts & convey_opt_ALERT) && c.my_pe == 0)
      print_once(std::string("warning: ") + c.kind +
                 " conveyors do not compress; buffers are sent" + " uncompressed");
    c.scratch = make_aligned(std::max<std::size_t>(c.core.max_item_bytes(), 64));
  }

  int begin_(std::size_t bytes, std::size_t) override {
    saved_mark_ = saved_total();
    return to_convey(c.core.begin(bytes));  // DYNAMIC: builds the engine (T11 grab)
  }

  int reset_() override {
    const std::uint64_t saved = saved_total();
    const int rc = to_convey(c.core.reset());
    if (rc >= 0 && thrifty_ && !c.core.engine()) {  // DYNAMIC: the transport went with the engine
      saved_cum_ = saved;
      thrifty_ = nullptr;
    }
    return rc;
  }

  int set_codec_(const convey_codec_t* codec, void* arg) override {
    if (!thrifty_mode_) return convey_FAIL;
    codec_->set(codec, arg);  // the transports plan it at the next begin
    return convey_OK;
  }

  std::int64_t comm_statistic_(int which, bool cumulative) const noexcept override {
    if (which == convey_SYNCS) return 0;  // asynchronous: no collective synchronization
    try {
      const termination::engine_stats s = c.core.stats(cumulative);
      if (which == convey_COMMS) return static_cast<std::int64_t>(s.buffers_sent);
      // Compression: BYTES counts what was actually sent.
      const std::uint64_t saved = saved_total() - (cumulative ? 0 : saved_mark_);
      return static_cast<std::int64_t>(s.bytes_sent - saved);
    } catch (...) {
      return -1;
    }
  }

 private:
  [[nodiscard]] std::uint64_t saved_total() const noexcept {
    return saved_cum_ + (thrifty_ ? thrifty_->stats().saved_bytes : 0);
  }

  bool thrifty_mode_;
  std::shared_ptr<c_codec> codec_ = std::make_shared<c_codec>();
  // The engine's compressing transport, when THRIFTY (set each time an engine is built).
  aggregation::compressing_transport* thrifty_ = nullptr;
  std::uint64_t saved_mark_ = 0;
  std::uint64_t saved_cum_ = 0;  // compression savings of dropped engines (DYNAMIC)
};

}  // namespace

::conveyor* make_streaming(const engine_request& r, const convey_alc8r_t* alloc,
                           std::uint64_t options) {
  return make_kind<streaming_conveyor>(r.layout.kind == layout_kind::mesh ? "mesh" : "tensor",
                                       options, r, alloc, options);
}

conveyor_options engine_options_for(const engine_request& r, const convey_alc8r_t* alloc,
                                    std::uint64_t options) {
  conveyor_options o = r.layout.options();
  o.steady = r.steady || r.elastic;
  o.elastic = r.elastic;
  o.broadcast = r.broadcast;
  o.dynamic = (options & convey_opt_DYNAMIC) != 0;
  o.buffers = make_buffer_source(alloc);
  return o;
}

}  // namespace convoy::facade
