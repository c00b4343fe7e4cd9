// The object behind convey_t (facade.hpp): its construction, and its view, which is the
// engine's hot state read through the C declarations of convoy/convey_view.h (CAPI-3):
// every field checked here against the C++ type it stands for.
#include <convoy/convey_view.h>

#include <algorithm>
#include <convoy/aggregation/delivery_window.hpp>
#include <convoy/aggregation/send_lanes.hpp>
#include <convoy/router/forwarding.hpp>
#include <convoy/termination/conveyor_engine.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "facade.hpp"

// ---- The view's layout is the engine's hot state (convoy/convey_view.h) ----
namespace {
namespace agg = convoy::aggregation;
namespace term = convoy::termination;
static_assert(std::is_standard_layout_v<agg::send_lane> &&
              sizeof(convey_lane_t) == sizeof(agg::send_lane));
CONVOY_SAME_FIELD(convey_lane_t, agg::send_lane, buf, buf);
CONVOY_SAME_FIELD(convey_lane_t, agg::send_lane, used, used);
CONVOY_SAME_FIELD(convey_lane_t, agg::send_lane, limit, limit);
CONVOY_SAME_FIELD(convey_lane_t, agg::send_lane, record_bytes, record_bytes);
CONVOY_SAME_FIELD(convey_lane_t, agg::send_lane, tag_bytes, tag_bytes);
CONVOY_SAME_FIELD(convey_lane_t, agg::send_lane, items, items);
static_assert(sizeof(convey_hop_t) == sizeof(convoy::router::first_hop));
CONVOY_SAME_FIELD(convey_hop_t, convoy::router::first_hop, lane, out_link);
CONVOY_SAME_FIELD(convey_hop_t, convoy::router::first_hop, tag, tag);
static_assert(std::is_standard_layout_v<agg::delivery_window> &&
              sizeof(convey_window_t) == sizeof(agg::delivery_window));
CONVOY_SAME_FIELD(convey_window_t, agg::delivery_window, cur, cur);
CONVOY_SAME_FIELD(convey_window_t, agg::delivery_window, end, end);
CONVOY_SAME_FIELD(convey_window_t, agg::delivery_window, stride, stride);
CONVOY_SAME_FIELD(convey_window_t, agg::delivery_window, source_of_tag, source_of_tag);
CONVOY_SAME_FIELD(convey_window_t, agg::delivery_window, from, from);
CONVOY_SAME_FIELD(convey_window_t, agg::delivery_window, in_link, in_link);
CONVOY_SAME_FIELD(convey_window_t, agg::delivery_window, pulled, pulled);
static_assert(std::is_standard_layout_v<term::hot_state> &&
              sizeof(convey_view_t) == sizeof(term::hot_state));
CONVOY_SAME_FIELD(convey_view_t, term::hot_state, push_ok, push_ok);
CONVOY_SAME_FIELD(convey_view_t, term::hot_state, n_pes, n_ranks);
CONVOY_SAME_FIELD(convey_view_t, term::hot_state, item_bytes, item_bytes);
CONVOY_SAME_FIELD(convey_view_t, term::hot_state, lanes, lanes);
CONVOY_SAME_FIELD(convey_view_t, term::hot_state, hops, first_hops);
CONVOY_SAME_FIELD(convey_view_t, term::hot_state, window, window);
CONVOY_SAME_FIELD(convey_view_t, term::hot_state, pushes, pushes);
CONVOY_SAME_FIELD(convey_view_t, term::hot_state, pulls, pulls);
}  // namespace
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
static_assert(offsetof(conveyor, head) == 0,
              "convey.h reads a convey_head_t at a convey_t's start");
#pragma GCC diagnostic pop

convey_view_t conveyor::closed_view{};

conveyor::conveyor(const char* kind_name, std::uint64_t opts, convoy::untyped_conveyor&& c)
    : core(std::move(c)), kind(kind_name), options(opts) {
  head.view = &closed_view;
}

conveyor::~conveyor() = default;

void conveyor::refresh_view() noexcept {
  // The engine's hot state is the view (the static_asserts above); the C code reads it
  // through convey_view_t, never through the C++ types. A kind without an inline path
  // (elastic) never opens it: every call reaches the library.
  term::conveyor_engine* e = core.engine();
  head.view = e ? reinterpret_cast<convey_view_t*>(&e->hot()) : &closed_view;
}

// ---- Construction: every kind through the core (untyped_conveyor) ----

namespace convoy::facade {

conveyor_options core_options(const conveyor_request& r, const convey_alc8r_t* alloc,
                              std::uint64_t options) {
  conveyor_options o = r.layout.options();
  if (r.elastic) {
    o.kind = conveyor_kind::elastic;
    o.item_bound = r.item_bound;
  }
  o.steady = (options & convey_opt_PROGRESS) != 0;
  if (r.broadcast) o.kind = conveyor_kind::broadcast;
  o.dynamic = (options & convey_opt_DYNAMIC) != 0;
  o.buffers = make_buffer_source(alloc);
  return o;
}

::conveyor* make_conveyor(const conveyor_request& r, const convey_alc8r_t* alloc,
                          std::uint64_t options) {
  const layout_plan& t = r.layout;
  const char* name = r.elastic                     ? "etensor"
                     : t.kind == layout_kind::bulk ? "simple"
                     : t.kind == layout_kind::mesh ? "mesh"
                                                   : "tensor";
  conveyor_options o = core_options(r, alloc, options);
  // THRIFTY (sec. 3.6): off-node buffers through a c_codec, on tensor and bulk layouts.
  const bool compress = (options & convey_opt_COMPRESS) != 0;
  const bool thrifty = compress && !r.elastic && t.kind != layout_kind::mesh;
  std::shared_ptr<c_codec> codec;
  if (thrifty) {
    codec = std::make_shared<c_codec>();
    o.codec = codec;
  }
  auto c = std::make_unique<::conveyor>(name, options, untyped_conveyor(MPI_COMM_WORLD, o));
  c->codec = std::move(codec);
  if (thrifty) c->features |= convey_THRIFTY;
  if (r.elastic) c->features |= convey_ELASTIC;
  if (c->core.engine_options().steady) c->features |= convey_STEADY;
  c->order = t.kind == layout_kind::mesh   ? c->core.plan()->max_hops()
             : t.kind == layout_kind::bulk ? 1
                                           : t.order;
  c->n_local = t.kind == layout_kind::tensor && t.order >= 2 ? t.n_local : 1;
  c->payload_bytes = t.payload_bytes != 0
                         ? t.payload_bytes
                         : c->core.engine_options().buffer_bytes - term::buffer_header_bytes;
  c->scratch = make_aligned(std::max<std::size_t>(c->core.max_buffered_item_bytes(), 64));
  if (compress && !thrifty && !r.elastic && (options & convey_opt_ALERT) && c->core.rank() == 0)
    print_once(std::string("warning: ") + name + " conveyors do not compress; buffers are sent" +
               " uncompressed");
  c->core.set_report_label("convey", name);  // CONVOY_STATS (API-30)
  c->refresh_view();
  return c.release();
}

}  // namespace convoy::facade
