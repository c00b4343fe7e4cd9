// The engine's trace event sites (TERM-17): what a sent or received buffer tells the
// recorder. Called only when the recorder exists.
#include <convoy/aggregation/packing.hpp>
#include <memory>

#include "engine_impl.hpp"

namespace convoy::termination {

namespace agg = convoy::aggregation;

void engine::impl::start_trace() {
  std::vector<trace_link> outs, in_links;
  for (const auto& l : route.out_links()) outs.push_back({l.stage, l.peer});
  for (const auto& l : route.in_links()) in_links.push_back({l.stage, l.peer});
  trace = std::make_unique<trace_recorder>(e.options_.trace, e.rank_, e.plan_->n_ranks(),
                                           route.n_stages(), std::move(outs), std::move(in_links));
}

// Before the lane is sealed; `full` is post's: the next record did not fit.
void engine::impl::trace_post(int lane, std::uint32_t flags, bool full) noexcept {
  if (lane == loopback_lane()) return;
  const agg::send_lane& l = lanes[lane];
  const bool rigid = !elastic() && l.record_bytes > 0;
  const std::size_t items = rigid ? (l.used - agg::header_bytes) / l.record_bytes : 0;
  std::uint8_t f = rigid ? trace_items : 0;
  if (full) f |= trace_full;
  if (flags & agg::flag_last) f |= trace_last;
  trace->send(lane, l.used, items, f);
}

void engine::impl::trace_receive(int id, const agg::buffer_header& h, std::int64_t items) noexcept {
  std::uint8_t f = items >= 0 ? trace_items : 0;
  if (h.flags & agg::flag_last) f |= trace_last;
  trace->receive(id, h.bytes, items >= 0 ? static_cast<std::size_t>(items) : 0, f);
}

}  // namespace convoy::termination
