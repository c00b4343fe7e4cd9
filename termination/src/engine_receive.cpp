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
  const int id = e.window_.in_link;
  e.window_ = {};
  in_link& l = ins[static_cast<std::size_t>(id)];
  release_buffer(l.queue.front());
  l.queue.pop_front();
  examine(id);
}

// Makes the last pull final (no unpull can follow any more): frees its space and looks at
// the next record of the link it came from (TERM-11).
void engine::impl::settle() {
  e.window_.pulled = false;
  if (e.window_.in_link >= 0 && e.window_.cur >= e.window_.end) close_window();
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
      l.queue.push_back(r, false);  // the sender began the next cycle before us (TERM-8)
      continue;
    }
    accept(r.in_link, r);
  }
}

void engine::impl::accept(int id, const agg::received& r) {
  in_link& l = ins[static_cast<std::size_t>(id)];
  const bool was_empty = l.queue.empty();
  l.queue.push_back(r, true);
  if (was_empty) {
    l.queue.offset = agg::header_bytes;
    examine(id);
  }
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

// Looks at the head of in-link `id`: forwards records until one is deliverable (then the
// link goes on the ready list), the queue is empty, or a forward does not fit (the buffer
// is kept, so the upstream link runs out of credit in turn: TERM-5). Links delivered in
// whole buffers go on the ready list with their front buffer.
void engine::impl::examine(int id) {
  in_link& l = ins[static_cast<std::size_t>(id)];
  if (e.window_.in_link == id) return;  // its front buffer is being pulled
  const int tb = l.loopback ? 0 : route.tag_bytes(l.stage);
  while (!l.queue.empty()) {
    const agg::received& r = l.queue.front();
    if (l.queue.offset >= l.queue.front_bytes()) {
      release_buffer(r);
      l.queue.pop_front();
      continue;
    }
    if (l.whole_from >= 0) {
      make_ready(id);
      return;
    }
    const agg::record rec = agg::get_record(r.data + l.queue.offset, tb, elastic(), e.item_bytes_);
    const router::step s =
        l.loopback ? router::step{-1, 0, e.rank_, e.rank_} : route.next(id, rec.tag);
    if (s.deliver()) {
      l.head = rec;
      l.head_src = s.src;
      make_ready(id);
      return;
    }
    if (!append(s.out_link, s.tag, rec.payload, rec.bytes)) return;
    l.queue.offset += rec.record_bytes;
  }
}

// Links blocked on a full out-buffer, and links with queued buffers not on the ready list,
// are retried.
void engine::impl::forward_all() {
  for (std::size_t id = 0; id < ins.size(); ++id) {
    const in_link& l = ins[id];
    if (!l.ready && e.window_.in_link != static_cast<int>(id) && !l.queue.empty())
      examine(static_cast<int>(id));
  }
}

// A whole buffer of in-link `id` becomes the delivery window.
void engine::impl::open_window(int id) {
  in_link& l = ins[static_cast<std::size_t>(id)];
  const agg::received& r = l.queue.front();
  agg::delivery_window& w = e.window_;
  w.cur = r.data + l.queue.offset;
  w.end = r.data + l.queue.front_bytes();
  w.stride = e.item_bytes_;
  w.from = l.whole_from;
  w.in_link = id;
}

// The next delivered item off the ready list (precondition: not empty).
int engine::impl::take_ready(item_view& out, bool rigid) {
  const int id = ready.front();
  in_link& l = ins[static_cast<std::size_t>(id)];
  if (l.whole_from >= 0) {
    ready.pop_front();
    l.ready = false;
    open_window(id);
    agg::delivery_window& w = e.window_;
    out = {w.cur, e.item_bytes_, w.from};
    w.cur += w.stride;
    w.pulled = true;
    return 1;
  }
  if (rigid && elastic() && l.head.bytes != e.item_bytes_) return error_elastic;
  ready.pop_front();
  l.ready = false;
  out = {l.head.payload, l.head.bytes, l.head_src};
  // Field by field: a braced temporary made GCC copy it through the stack and stall.
  last.valid = true;
  last.in_link = id;
  last.offset = l.queue.offset;
  last.buffer_popped = false;
  last.record = l.head;
  last.src = l.head_src;
  l.queue.offset += l.head.record_bytes;
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

// Puts the last per-record pull back in place (TERM-11). Between the pull and this call a
// push may have posted the loopback lane, and that buffer may already have been examined
// (its first record decoded into `head`, the link put on the ready list): the pulled record
// is restored as the head and its link moves to the front of the ready list.
void engine::impl::unpull_record() {
  const int id = last.in_link;
  in_link& l = ins[static_cast<std::size_t>(id)];
  if (last.buffer_popped) {
    l.queue.push_front(pending_release);
    has_pending_release = false;
  }
  l.queue.offset = last.offset;
  l.head = last.record;
  l.head_src = last.src;
  if (l.ready) ready.erase(std::find(ready.begin(), ready.end(), id));
  l.ready = true;
  ready.push_front(id);
  last = {};
}

bool engine::impl::nothing_to_pull() const noexcept {
  if (lanes.has_items(loopback_lane())) return false;
  return std::all_of(ins.begin(), ins.end(), [](const in_link& l) { return l.queue.empty(); });
}

}  // namespace convoy::termination
