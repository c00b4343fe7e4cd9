// The engine's receive side: buffers from the transport (counted by termination), records
// forwarded through the router's next step or made deliverable, the delivery window.
#include <algorithm>
#include <convoy/aggregation/packing.hpp>

#include "engine_impl.hpp"

namespace convoy::termination {

namespace agg = convoy::aggregation;

// Gives a delivered buffer back: to the transport, or to the loopback pool.
void engine::impl::release_buffer(const agg::received& r) {
  if (r.in_link == loopback_in)
    lanes.give_back_loopback(r.slot);
  else
    transport->release(r);
}

void engine::impl::release_pending() {
  if (!has_pending_release) return;
  has_pending_release = false;
  release_buffer(pending_release);
}

// The window's buffer is fully pulled: give it back and look at the link's next one.
void engine::impl::close_window() {
  const int id = e.hot_.window.in_link;
  e.hot_.window = {};
  in_link& l = ins[static_cast<std::size_t>(id)];
  release_buffer(l.queue.front());
  l.queue.pop_front();
  l.kept = agg::header_bytes;
  examine(id);
}

// Makes the last pull final (no unpull can follow any more): frees its space and looks at
// the next record of the link it came from (TERM-11).
void engine::impl::settle() {
  e.hot_.window.pulled = false;
  if (e.hot_.window.in_link >= 0 && e.hot_.window.cur >= e.hot_.window.end) close_window();
  const bool valid = last.valid;
  const int id = last.in_link;
  last = {};
  release_pending();
  if (valid) examine(id);
}

void engine::impl::drain_transport() {
  agg::received r;
  while (transport->poll(r)) {
    const agg::buffer_header h = agg::receive_queue::header_of(r);
    for (auto* st : {&now, &life}) ++st->buffers_received;
    const state s = e.state_.current();
    const bool active = s != state::dormant && s != state::complete;
    in_link& l = ins[static_cast<std::size_t>(r.in_link)];
    if (!counting.arrive(r.in_link, h, active, l.queue.holding())) {
      // The sender began the next cycle before us (TERM-8): its records are counted when
      // that cycle admits the buffer.
      if (trace) [[unlikely]]
        trace_receive(r.in_link, h, -1);
      l.queue.push_back(r, false);
      continue;
    }
    const std::uint64_t items = count_received(r.in_link, r);
    if (trace) [[unlikely]]
      trace_receive(r.in_link, h, static_cast<std::int64_t>(items));
    accept(r.in_link, r);
  }
}

void engine::impl::accept(int id, const agg::received& r) {
  in_link& l = ins[static_cast<std::size_t>(id)];
  const bool was_empty = l.queue.empty();
  l.queue.push_back(r, true);
  if (was_empty) examine(id);  // an empty queue reads from header_bytes (pop_front)
}

// The loopback lane's buffer goes straight onto this rank's own in-link (never counted,
// never through the transport).
void engine::impl::deliver_loopback(const agg::sealed_buffer& b) {
  agg::received r;
  r.in_link = loopback_in;
  r.data = b.data;
  r.bytes = b.bytes;
  r.slot = b.slot;
  accept(loopback_in, r);
}

// A whole buffer of in-link `id` becomes the delivery window (AGG-25): all its records, or on
// a runs link the ones kept at its front for this rank (TERM-13). `cur` points at payloads;
// a one-byte tag is the byte before.
void engine::impl::open_window(int id) {
  in_link& l = ins[static_cast<std::size_t>(id)];
  const agg::received& r = l.queue.front();
  const auto tb = static_cast<std::size_t>(l.tag_bytes);
  const std::byte* first = r.data + l.queue.offset;
  const std::byte* stop = r.data + l.queue.front_bytes();
  if (l.runs) {
    first = r.data + agg::header_bytes;
    stop = r.data + l.kept;
  }
  agg::delivery_window& w = e.hot_.window;
  w.stride = tb + e.hot_.item_bytes;
  w.cur = first + tb;
  w.end = stop + tb;
  w.from = l.whole_from;
  w.in_link = id;
  w.source_of_tag = nullptr;
  if (l.tagged_window) {
    // Every tag of the buffer gets its source before the inline pull reads them: a load
    // per record, next() only for a tag this link has not carried before.
    if (l.source_of_tag.empty()) l.source_of_tag.assign(256, -1);
    for (const std::byte* p = first; p < stop; p += w.stride) {
      const unsigned tag = std::to_integer<unsigned>(*p);
      if (l.source_of_tag[tag] < 0)
        l.source_of_tag[tag] = static_cast<std::int32_t>(route.next(id, tag).src);
    }
  }
  if (tb == 1) {
    w.source_of_tag = l.source_of_tag.data();
    w.from = -1;
  } else if (l.runs) {
    w.from = l.source_of_tag[0];  // no tag: every record kept here has one source
  }
}

// The next delivered item off the ready list (precondition: not empty).
int engine::impl::take_ready(item_view& out, bool rigid) {
  const int id = ready.front();
  in_link& l = ins[static_cast<std::size_t>(id)];
  if (l.window_ready()) {
    ready.pop_front();
    l.ready = false;
    open_window(id);
    agg::delivery_window& w = e.hot_.window;
    out = {w.cur, e.hot_.item_bytes, w.source()};
    w.cur += w.stride;
    w.pulled = true;
    return 1;
  }
  if (rigid && elastic() && l.head.bytes != e.hot_.item_bytes) return error_elastic;
  ready.pop_front();
  l.ready = false;
  out = {l.head.payload, l.head.bytes, l.head_src};
  // Field by field: a braced temporary made GCC copy it through the stack and stall.
  last.valid = true;
  last.in_link = id;
  last.offset = l.queue.offset;
  last.buffer_popped = false;
  l.queue.offset += l.head.record_bytes;
  l.fanout_next = -1;  // the next record's fan-out has not started
  // The buffer stays alive until settle() so that the item stays valid and unpull can
  // restore it (TERM-11).
  if (l.queue.offset >= l.queue.front_bytes()) {
    pending_release = l.queue.front();
    has_pending_release = true;
    last.buffer_popped = true;
    l.queue.pop_front();
  }
  return 1;
}

// Puts the last per-record pull back in place (TERM-11). The link's head is still the pulled
// record and the link is off the ready list: examine() leaves the link of the last pull alone
// until settle(), even when a push posts the loopback lane in between.
void engine::impl::unpull_record() {
  const int id = last.in_link;
  in_link& l = ins[static_cast<std::size_t>(id)];
  if (last.buffer_popped) {
    l.queue.push_front(pending_release);
    has_pending_release = false;
  }
  l.queue.offset = last.offset;
  if (l.fanout) l.fanout_next = lanes.n_out();  // its copies were all sent (BCAST-3)
  l.ready = true;
  ready.push_front(id);
  last = {};
}

bool engine::impl::nothing_to_pull() const noexcept {
  if (lanes.has_items(loopback_lane())) return false;
  return std::all_of(ins.begin(), ins.end(), [](const in_link& l) { return l.queue.empty(); });
}

}  // namespace convoy::termination
