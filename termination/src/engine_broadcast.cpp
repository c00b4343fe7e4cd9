// Broadcast (termination/README.md BCAST-1..8): every item of a broadcast engine's cycle goes
// to every rank along the tree of ROUTE-26. The root appends one copy to each of its
// out-links (every stage) and one to its loopback lane; a copy that arrived on stage s is
// copied onto every out-link of every stage after s and then delivered here. The hop y -> q
// carries encode(s', y, q, root, q), a genuine pair of route(root -> q), so the tag decodes
// to (root, q) and the receiver learns the root from it as from any source.
#include <algorithm>
#include <convoy/aggregation/packing.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>

#include "engine_impl.hpp"

namespace convoy::termination {

namespace agg = convoy::aggregation;

// At construction: the root's tags, and which in-links fan out. Links of the last stage
// only deliver (the usual windows: whole buffers from one root, or one-byte tags naming
// it); every other link fans out, its records kept for a window when a tag of at most one
// byte names their root (TERM-13's kept records), else delivered one by one. Where the
// tags of the link and of every later out-link have at most one byte, the link fans out
// whole buffers.
void engine::impl::setup_broadcast() {
  const auto& outs = route.out_links();
  root_tags.reserve(outs.size());
  for (const router::link_end& o : outs)
    root_tags.push_back(route.plan().encode(o.stage, e.rank_, o.peer, e.rank_, o.peer));
  const std::size_t entries =
      static_cast<std::size_t>(e.plan_->n_ranks()) * static_cast<std::size_t>(lanes.n_out());
  if (entries <= fan_tag_entries_max) {
    fan_tags.assign(entries, 0);
    fan_known.assign(entries, 0);
  }
  const int last_stage = route.n_stages() - 1;
  for (int id = 0; id < loopback_in; ++id) {
    in_link& l = ins[static_cast<std::size_t>(id)];
    if (l.stage == last_stage) {
      l.tagged_window = l.whole_from < 0 && l.tag_bytes == 1;
      continue;
    }
    l.whole_from = -1;
    l.fanout = true;
    l.runs = l.tag_bytes <= 1;
    l.fan_whole = l.runs;
    for (int k = route.first_out_link(l.stage + 1); k < lanes.n_out(); ++k)
      if (lanes[k].tag_bytes > 1) l.fan_whole = false;
  }
}

std::size_t engine::impl::later_out_links(const in_link& l) const noexcept {
  return static_cast<std::size_t>(lanes.n_out() - route.first_out_link(l.stage + 1));
}

namespace {

// Copies `n` rigid records of `size` payload bytes (N if known at compile time) from an
// in-link's buffer (tags of `tb_in` bytes, 0 or 1) into a lane (tags of `tb_out` bytes, 0
// or 1), each new tag the table's entry for the old one (for entry 0 when the records
// come without one). Where the two tags are as wide, one block copy, then the tags.
template <std::size_t N>
void copy_fanned(std::byte* to, const std::byte* from, std::size_t n, std::size_t size,
                 std::size_t tb_in, std::size_t tb_out, const std::uint8_t* xlat) noexcept {
  if constexpr (N != 0) size = N;
  if (tb_in == tb_out) {
    const std::size_t stride = tb_in + size;
    std::memcpy(to, from, n * stride);
    if (tb_in == 1)
      for (std::size_t i = 0, at = 0; i < n; ++i, at += stride)
        to[at] = std::byte{xlat[std::to_integer<unsigned>(from[at])]};
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (tb_out == 1) *to = std::byte{xlat[tb_in == 1 ? std::to_integer<unsigned>(*from) : 0U]};
    if constexpr (N != 0)
      std::memcpy(to + tb_out, from + tb_in, N);
    else
      std::memcpy(to + tb_out, from + tb_in, size);
    to += tb_out + size;
    from += tb_in + size;
  }
}

// copy_fanned for the item sizes worth a copy of their own.
void copy_records(std::byte* to, const std::byte* from, std::size_t n, std::size_t size,
                  std::size_t tb_in, std::size_t tb_out, const std::uint8_t* xlat) noexcept {
  switch (size) {
    case 8:
      copy_fanned<8>(to, from, n, size, tb_in, tb_out, xlat);
      break;
    case 16:
      copy_fanned<16>(to, from, n, size, tb_in, tb_out, xlat);
      break;
    default:
      copy_fanned<0>(to, from, n, size, tb_in, tb_out, xlat);
  }
}

// Records a rigid lane with a buffer (used <= limit) still takes.
std::size_t room_of(const agg::send_lane& lane) noexcept {
  return (lane.limit - lane.used) / lane.record_bytes + 1;
}

// The root's copies of `n` items of `size` bytes stored one after another onto a lane with
// room for them, each with `tag`: one block copy where the lane's tags have at most one
// byte, else record by record.
void append_copies(agg::send_lane& lane, std::uint64_t tag, const std::byte* items, std::size_t n,
                   std::size_t size) noexcept {
  if (lane.tag_bytes > 1) {
    for (std::size_t i = 0; i < n; ++i) (void)lane.put_rigid(tag, items + i * size, size);
    return;
  }
  const auto tag8 = static_cast<std::uint8_t>(tag);
  copy_records(lane.buf + lane.used, items, n, size, 0, lane.tag_bytes, &tag8);
  lane.used += static_cast<std::uint32_t>(n * lane.record_bytes);
  lane.items += n;
}

// The root's copies of a rigid item of N bytes (0: not known at compile time) onto every
// lane from `lanes` (the out-links, then the loopback lane `self`): each lane gets a buffer
// first, so that the copies go out together or not at all (an opened lane left empty is
// harmless: nothing is posted for it until it holds items). A rigid lane with a buffer has
// room for one more record (used <= limit); a lane without one has used > limit. Returns
// false if some lane has no free buffer.
template <std::size_t N, class Open, class Filled>
bool put_copies(agg::send_lane* lanes, int self, const std::uint64_t* tags, const void* item,
                std::size_t n, Open open, Filled filled) {
  for (int k = 0; k <= self; ++k)
    if (lanes[k].used > lanes[k].limit && !open(k)) return false;
  for (int k = 0; k <= self; ++k)
    if (lanes[k].put_rigid<N>(k == self ? 0 : tags[k], item, n)) filled(k);
  return true;
}

}  // namespace

int engine::impl::broadcast_item(const void* item) noexcept {
  const std::size_t n = e.hot_.item_bytes;
  const auto open = [this](int k) { return open_lane(k); };
  const auto filled = [this](int k) { lane_filled(k); };
  bool sent = false;
  try {
    if (n == 8)
      sent = put_copies<8>(lanes.data(), loopback_lane(), root_tags.data(), item, n, open, filled);
    else
      sent = put_copies<0>(lanes.data(), loopback_lane(), root_tags.data(), item, n, open, filled);
  } catch (const std::exception& ex) {
    e.last_message_ = ex.what();
    return error_transport;
  }
  if (!sent) return 0;
  ++e.hot_.pushes;
  return 1;
}

// As many broadcast_item calls, a block of items at a time: each round opens every lane
// (one without a free buffer: stop, the items sent so far counted), takes as many items as
// the lane with the least room still holds, copies them onto every lane and posts the
// lanes it filled.
std::int64_t engine::impl::broadcast_items(const std::byte* items, std::size_t n) noexcept {
  const std::size_t size = e.hot_.item_bytes;
  agg::send_lane* const ls = lanes.data();
  const int self = loopback_lane();
  std::size_t sent = 0;
  try {
    while (sent < n) {
      std::size_t take = n - sent;
      bool open = true;
      for (int k = 0; k <= self && open; ++k) {
        open = ls[k].used <= ls[k].limit || open_lane(k);
        if (open) take = std::min(take, room_of(ls[k]));
      }
      if (!open) break;
      for (int k = 0; k <= self; ++k) {
        append_copies(ls[k], k == self ? 0 : root_tags[static_cast<std::size_t>(k)],
                      items + sent * size, take, size);
        if (ls[k].used > ls[k].limit) lane_filled(k);
      }
      sent += take;
    }
  } catch (const std::exception& ex) {
    e.last_message_ = ex.what();
    e.hot_.pushes += sent;
    return error_transport;
  }
  e.hot_.pushes += sent;
  return static_cast<std::int64_t>(sent);
}

// The tag of `root`'s copy on `out_link` (a genuine pair of route(root -> peer): ROUTE-26).
std::uint64_t engine::impl::fan_tag(int root, int out_link) {
  const router::link_end& to = route.out_links()[static_cast<std::size_t>(out_link)];
  if (fan_tags.empty()) return route.plan().encode(to.stage, e.rank_, to.peer, root, to.peer);
  const std::size_t at = static_cast<std::size_t>(root) * static_cast<std::size_t>(lanes.n_out()) +
                         static_cast<std::size_t>(out_link);
  if (!fan_known[at]) {
    fan_tags[at] = route.plan().encode(to.stage, e.rank_, to.peer, root, to.peer);
    fan_known[at] = 1;
  }
  return fan_tags[at];
}

bool engine::impl::fan_out(int id) {
  in_link& l = ins[static_cast<std::size_t>(id)];
  if (l.fan_whole) return fan_buffer(id);
  const agg::received& r = l.queue.front();
  const std::size_t off = l.queue.offset;
  const agg::record rec = agg::get_record(r.data + off, l.tag_bytes, false, e.hot_.item_bytes);
  int root = -1;
  if (l.tag_bytes <= 1) {
    if (l.source_of_tag.empty()) l.source_of_tag.assign(256, -1);
    std::int32_t& known = l.source_of_tag[static_cast<std::size_t>(rec.tag)];
    if (known < 0) known = static_cast<std::int32_t>(route.next(id, rec.tag).src);
    root = known;
  } else {
    root = route.next(id, rec.tag).src;
  }
  if (l.fanout_next < 0) l.fanout_next = route.first_out_link(l.stage + 1);
  for (; l.fanout_next < lanes.n_out(); ++l.fanout_next) {
    agg::send_lane& lane = lanes[l.fanout_next];
    // A rigid lane without a buffer has used > limit; none free: resume here (BCAST-3).
    if (lane.used > lane.limit && !open_lane(l.fanout_next)) return false;
    if (lane.put_rigid(fan_tag(root, l.fanout_next), rec.payload, rec.bytes))
      lane_filled(l.fanout_next);
  }
  if (!l.runs) {  // delivered as the head; the next record's fan-out starts after its pull
    l.head = rec;
    l.head_src = root;
    make_ready(id);
    return false;
  }
  // Kept at the buffer's front, tag and all, for the window (never past the record read).
  if (l.kept != off) std::memmove(r.data + l.kept, r.data + off, rec.record_bytes);
  l.kept += rec.record_bytes;
  l.queue.offset += rec.record_bytes;
  l.fanout_next = -1;
  return true;
}

void engine::impl::learn_fan_tags(int id) {
  in_link& l = ins[static_cast<std::size_t>(id)];
  const int first = route.first_out_link(l.stage + 1);
  if (l.source_of_tag.empty()) l.source_of_tag.assign(256, -1);
  if (l.fan_xlat.empty()) l.fan_xlat.assign(later_out_links(l) * 256, 0);
  const auto learn = [&](unsigned tag) {
    const int root = route.next(id, tag).src;
    l.source_of_tag[tag] = static_cast<std::int32_t>(root);
    for (int k = first; k < lanes.n_out(); ++k)
      l.fan_xlat[static_cast<std::size_t>(k - first) * 256 + tag] =
          static_cast<std::uint8_t>(fan_tag(root, k));
  };
  if (l.tag_bytes == 0) {  // the link carries one root: tag 0
    if (l.source_of_tag[0] < 0) learn(0);
    return;
  }
  const agg::received& r = l.queue.front();
  const std::size_t stride = 1 + e.hot_.item_bytes;
  const std::byte* const end = r.data + l.queue.front_bytes();
  for (const std::byte* p = r.data + l.queue.offset; p < end; p += stride) {
    const unsigned tag = std::to_integer<unsigned>(*p);
    if (l.source_of_tag[tag] < 0) learn(tag);
  }
}

// Out-link by out-link, as many records as the lane's open buffer takes per copy: a lane
// is filled (and posted) by the block copies of one buffer before the next out-link gets
// any, so the records of a root reach every out-link in their order (TERM-2).
bool engine::impl::fan_buffer(int id) {
  in_link& l = ins[static_cast<std::size_t>(id)];
  const int first = route.first_out_link(l.stage + 1);
  if (l.fanout_next < 0) {
    learn_fan_tags(id);
    l.fanout_next = first;
    l.fan_at = l.queue.offset;
  }
  const std::size_t size = e.hot_.item_bytes;
  const auto tb_in = static_cast<std::size_t>(l.tag_bytes);
  const std::size_t in_stride = tb_in + size;
  for (; l.fanout_next < lanes.n_out(); ++l.fanout_next) {
    const int k = l.fanout_next;
    const std::uint8_t* xlat = l.fan_xlat.data() + static_cast<std::size_t>(k - first) * 256;
    while (l.fan_at < l.queue.front_bytes()) {
      agg::send_lane& lane = lanes[k];
      // A rigid lane without a buffer has used > limit; none free: resume here (BCAST-3).
      if (lane.used > lane.limit && !open_lane(k)) return false;
      const std::size_t n = std::min(room_of(lane), (l.queue.front_bytes() - l.fan_at) / in_stride);
      const std::byte* from = l.queue.front().data + l.fan_at;
      std::byte* to = lane.buf + lane.used;
      copy_records(to, from, n, size, tb_in, lane.tag_bytes, xlat);
      lane.used += static_cast<std::uint32_t>(n * lane.record_bytes);
      lane.items += n;
      l.fan_at += n * in_stride;
      if (lane.used > lane.limit) lane_filled(k);
    }
    l.fan_at = l.queue.offset;
  }
  // Every copy made: all the buffer's records are this rank's (TERM-13's kept records).
  l.kept = l.queue.front_bytes();
  l.queue.offset = l.kept;
  l.fanout_next = -1;
  return true;
}

}  // namespace convoy::termination
