// The engine's forwarding: the records of an arrived buffer go on to their next lane or
// become deliverable here (Wesolowski et al. 2014, sec. III.B, one hop at a time). Rigid records on
// links with a step table (ROUTE-24) move by runs: a table load and a fixed-size copy each
// (TERM-13); others take the per-record step (decode, next hop, encode, append).
#include <convoy/aggregation/packing.hpp>
#include <cstring>
#include <span>

#include "engine_impl.hpp"

namespace convoy::termination {

namespace agg = convoy::aggregation;

// Looks at the head of in-link `id`: forwards records until one is deliverable (then the
// link goes on the ready list), the queue is empty, or a forward does not fit (the buffer
// is kept, so the upstream link runs out of credit in turn: TERM-5). Links delivered in
// whole buffers go on the ready list with their front buffer. A link whose record was the
// last pull is left alone until settle(): an unpull may still put that record back as its
// head (TERM-11), so a buffer that arrives in between (a loopback post from push or flush)
// must not decode a new head or ready the link.
void engine::impl::examine(int id) {
  in_link& l = ins[static_cast<std::size_t>(id)];
  if (e.hot_.window.in_link == id) return;       // its front buffer is being pulled
  if (last.valid && last.in_link == id) return;  // its last pull may be unpulled
  while (!l.queue.empty()) {
    if (l.queue.offset >= l.queue.front_bytes()) {
      if (l.runs && l.kept > agg::header_bytes) {
        make_ready(id);  // what was kept for this rank is delivered as a window
        return;
      }
      release_buffer(l.queue.front());
      l.queue.pop_front();
      continue;
    }
    if (l.windowed()) {
      make_ready(id);
      return;
    }
    if (l.fanout) {
      if (!fan_out(id)) return;
      continue;
    }
    if (l.runs) {
      const run_end end = forward_run_any(id);
      if (end == run_end::stopped) return;
      if (end == run_end::buffer_done) continue;
    }
    if (!forward_record(id)) return;
  }
}

// The head record of in-link `id` by the per-record step. Returns true if it was forwarded
// (look at the next one), false if it is deliverable (the link is now ready) or its next
// lane has no free buffer.
bool engine::impl::forward_record(int id) {
  in_link& l = ins[static_cast<std::size_t>(id)];
  const agg::received& r = l.queue.front();
  const agg::record rec =
      agg::get_record(r.data + l.queue.offset, l.tag_bytes, elastic(), e.hot_.item_bytes);
  const router::step s =
      l.loopback ? router::step{-1, 0, e.rank_, e.rank_} : route.next(id, rec.tag);
  if (s.deliver()) {
    l.head = rec;
    l.head_src = s.src;
    make_ready(id);
    return false;
  }
  if (!append(s.out_link, s.tag, rec.payload, rec.bytes)) return false;
  l.queue.offset += rec.record_bytes;
  return true;
}

engine::impl::run_end engine::impl::forward_run_any(int id) {
  switch (e.hot_.item_bytes) {
    case 8:
      return forward_run<8>(id);
    case 16:
      return forward_run<16>(id);
    default:
      return forward_run<0>(id);
  }
}

// A run through the front buffer of in-link `id` (rigid records, tag_bytes <= 1): each
// record's step is a table load; a forwarded record is an 8-byte tag store and an N-byte
// copy into its lane, as an inline push (AGG-20); a record for this rank moves, tag and
// all, to the kept front of the buffer (never past the record being read), its source noted
// by tag. Records of one pair stay in order either way (TERM-2). Stops at an uncached step
// or when the next lane has no free buffer (TERM-5: the buffer is kept). The lane's own
// inline test picks the way, as for a push: a lane with an open buffer takes the plain
// copy (on a combining engine too: its fold pass runs when the lane fills, TERM-20), one
// without takes append, which opens one.
namespace {

// Moves a record (`stride` bytes: a tag of 0 or 1 byte, then N payload bytes if N is known)
// towards the front of its buffer; the two may overlap.
template <std::size_t N>
void move_record(std::byte* to, const std::byte* from, std::size_t stride) noexcept {
  if constexpr (N != 0) {
    if (stride == N + 1) {
      std::memmove(to, from, N + 1);
      return;
    }
    if (stride == N) {
      std::memmove(to, from, N);
      return;
    }
  }
  std::memmove(to, from, stride);
}

}  // namespace

template <std::size_t N>
engine::impl::run_end engine::impl::forward_run(int id) {
  in_link& l = ins[static_cast<std::size_t>(id)];
  const agg::received& r = l.queue.front();
  const std::size_t item = e.hot_.item_bytes;
  const auto tb = static_cast<std::size_t>(l.tag_bytes);
  const std::size_t stride = tb + item;
  std::byte* const base = r.data;
  const std::size_t end = l.queue.front_bytes();
  if (l.source_of_tag.empty()) l.source_of_tag.assign(256, -1);  // on the link's first run
  // Locals, not members: the stores into std::byte buffers may alias anything, so members
  // read in the loop would be loaded again for every record.
  std::int32_t* const source_of_tag = l.source_of_tag.data();
  agg::send_lane* const lane_of = lanes.data();
  std::span<const router::next_step> steps = route.step_entries(id);
  std::size_t off = l.queue.offset;
  std::size_t kept = l.kept;
  run_end result = run_end::buffer_done;
  while (off < end) {
    const std::size_t tag = tb == 0 ? 0 : std::to_integer<std::size_t>(base[off]);
    router::next_step n;
    if (tag < steps.size() && steps[tag].out_link != router::next_step::unknown) [[likely]] {
      n = steps[tag];
    } else {
      n = route.step_of(id, tag);
      steps = route.step_entries(id);
    }
    if (n.out_link >= 0) [[likely]] {
      agg::send_lane& lane = lane_of[n.out_link];
      if (lane.used <= lane.limit) {
        if (lane.put_rigid<N>(n.word, base + off + tb, item)) lane_filled(n.out_link);
      } else if (!append(n.out_link, n.word, base + off + tb, item)) {
        result = run_end::stopped;  // no free buffer: stop here
        break;
      }
    } else if (n.out_link == router::next_step::deliver) {
      source_of_tag[tag] = static_cast<std::int32_t>(n.word);
      if (kept != off) move_record<N>(base + kept, base + off, stride);
      kept += stride;
    } else {  // not cached: the per-record step forwards it
      result = run_end::per_record;
      break;
    }
    off += stride;
  }
  l.queue.offset = off;
  l.kept = kept;
  return result;
}

// Links blocked on a full out-buffer, and links with queued buffers not on the ready list,
// are retried.
void engine::impl::forward_all() {
  for (std::size_t id = 0; id < ins.size(); ++id) {
    const in_link& l = ins[id];
    if (!l.ready && e.hot_.window.in_link != static_cast<int>(id) && !l.queue.empty())
      examine(static_cast<int>(id));
  }
}

}  // namespace convoy::termination
