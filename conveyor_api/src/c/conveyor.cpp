// The object behind convey_t (facade.hpp): its construction, and its view, which is the
// engine's hot state read through the C declarations of convoy/convey_view.h (CAPI-3):
// every field checked here against the C++ type it stands for.
#include <convoy/convey_view.h>

#include <convoy/aggregation/delivery_window.hpp>
#include <convoy/aggregation/send_lanes.hpp>
#include <convoy/router/forwarding.hpp>
#include <convoy/termination/conveyor_engine.hpp>
#include <cstddef>
#include <cstdint>
#include <type_traits>

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

conveyor::conveyor(const char* kind_name, std::uint64_t opts) : options(opts), kind(kind_name) {
  head.view = &closed_view;
  my_pe = convoy::facade::world_rank();
  n_pes = convoy::facade::world_size();
}

conveyor::~conveyor() = default;

void conveyor::refresh_view() noexcept {
  engine = ops ? ops->engine_() : nullptr;
  // The engine's hot state is the view (the static_asserts above); the C code reads it
  // through convey_view_t, never through the C++ types. A kind without an inline path
  // (elastic) keeps it closed: every call reaches the library.
  head.view = engine ? reinterpret_cast<convey_view_t*>(&engine->hot()) : &closed_view;
}
