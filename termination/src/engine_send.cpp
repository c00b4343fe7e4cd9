// The engine's send side: items into lanes, full lanes to the transport (or, for the
// loopback lane, straight to this rank's own receive side), last buffers for termination.
#include <convoy/aggregation/packing.hpp>
#include <cstring>
#include <exception>

#include "engine_impl.hpp"

namespace convoy::termination {

namespace agg = convoy::aggregation;

// A fresh buffer for `lane`; false if none is free (backpressure, TERM-5): a credit stall
// (TERM-16), which the watchdog's record shows (TERM-15).
bool engine::impl::open_lane(int lane) {
  const bool ok = lanes.open(lane, *transport, tick);
  if (comb && ok) [[unlikely]]
    combine_opened(lane);
  if (lane != loopback_lane()) {
    // A credit stall is one episode, from the first failed open after a successful one to
    // the next successful one: counted at its start, traced as one span.
    auto& st = out_stalled[static_cast<std::size_t>(lane)];
    if (ok == (st != 0)) {
      if (!ok) count_stall(lane);
      st = ok ? 0 : 1;
      if (comb) [[unlikely]]
        combine_stall_edge(lane, ok);
      if (trace) [[unlikely]]
        trace->stall_edge(lane, ok);
    }
  }
  return ok;
}

// Seals the lane's buffer with its header and sends it: `seq` and `flags` are termination's
// (counting.hpp); the loopback lane's buffers are not counted.
void engine::impl::post(int lane, std::uint32_t seq, std::uint32_t flags, bool full) {
  if (comb) [[unlikely]]
    combine_sealing(lane);
  if (trace) [[unlikely]]
    trace_post(lane, flags, full);
  const agg::sealed_buffer b = lanes.seal(lane);
  agg::buffer_header h{};
  h.bytes = static_cast<std::uint32_t>(b.bytes);
  h.epoch = counting.epoch();
  h.seq = seq;
  h.flags = flags;
  std::memcpy(b.data, &h, sizeof h);
  if (lane == loopback_lane()) {
    deliver_loopback(b);
    return;
  }
  count_post(lane, b.bytes, full);
  transport->post(lane, b.data, b.bytes);
}

void engine::impl::lane_filled(int lane) {
  if (comb && fold_filled(lane)) [[unlikely]]
    return;
  if (!lanes.grow(lane, *transport)) post_data(lane, true);
}

void engine::impl::post_data(int lane, bool full) {
  post(lane, lane == loopback_lane() ? 0 : counting.next_seq(lane), 0, full);
}

// link_layer: the last buffer of a closing stage's out-link (Wesolowski et al. 2014, sec. III.D).
bool engine::impl::send_last(int out_link, std::uint32_t count) {
  if (!lanes.has_buffer(out_link) && !open_lane(out_link)) return false;
  post(out_link, count, agg::flag_last, false);
  return true;
}

// A checked push: to the loopback lane or onto its first hop. Returns 1, 0 (full) or
// error_transport.
int engine::impl::push_item(const void* item, std::size_t n, int dest) noexcept {
  bool appended = false;
  try {
    if (dest == e.rank_) {
      appended = append(loopback_lane(), 0, item, n);
    } else if (!first_hops.empty()) {
      const router::first_hop h = first_hops[static_cast<std::size_t>(dest)];
      appended = append(static_cast<int>(h.out_link), h.tag, item, n);
    } else {
      const router::step s = route.route(e.rank_, dest, 0);
      appended = append(s.out_link, s.tag, item, n);
    }
  } catch (const std::exception& ex) {
    e.last_message_ = ex.what();
    return error_transport;
  }
  if (!appended) return 0;
  ++e.hot_.pushes;
  return 1;
}

// Posts every partly filled out-link buffer that has waited at least `period` advance
// calls (steady dispatch, TERM-6; Wesolowski et al. 2014, sec. III.D periodic dispatch).
void engine::impl::flush_older_than(std::uint64_t period) {
  if (comb && !comb->caches.empty()) [[unlikely]]
    drain_caches_older_than(period);
  for (int lane = 0; lane < lanes.n_out(); ++lane)
    if (lanes.has_items(lane) && lanes.waited(lane, tick) >= period) post_data(lane);
}

// Items pushed to this rank become pullable: the loopback lane's buffer is handed over.
bool engine::impl::flush_loopback() {
  if (!lanes.has_items(loopback_lane())) return false;
  post_data(loopback_lane());
  return true;
}

}  // namespace convoy::termination
