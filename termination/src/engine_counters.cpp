// The engine's counters (termination/README.md, "Counters", TERM-16): per stage and per link,
// counted per buffer as it is posted or admitted, never per push or pull (those are the hot
// state's two counts); time in advance from two clock reads per call.
#include <algorithm>
#include <convoy/aggregation/packing.hpp>

#include "engine_impl.hpp"

namespace convoy::termination {

namespace agg = convoy::aggregation;

namespace {

// The link of `peer` in `links` (sorted by peer), added if absent.
int link_of(std::vector<link_stats>& links, int peer) {
  auto it = std::lower_bound(links.begin(), links.end(), peer,
                             [](const link_stats& l, int p) { return l.peer < p; });
  if (it == links.end() || it->peer != peer) {
    link_stats l;
    l.peer = peer;
    it = links.insert(it, l);
  }
  return static_cast<int>(it - links.begin());
}

// Records in the elastic buffer `r` (tag_bytes per record), walking their size fields.
std::uint64_t elastic_records(const agg::received& r, int tag_bytes) {
  std::uint64_t n = 0;
  for (std::size_t off = agg::header_bytes; off < r.bytes; ++n)
    off += agg::get_record(r.data + off, tag_bytes, true, 0).record_bytes;
  return n;
}

}  // namespace

void engine::impl::init_counters() {
  life = {};
  life.stages.resize(static_cast<std::size_t>(route.n_stages()));
  const bool per_link = e.options_.link_counters;
  auto links_of = [&](int stage) -> std::vector<link_stats>& {
    return life.stages[static_cast<std::size_t>(stage)].links;
  };
  if (per_link) {
    for (const auto& l : route.out_links()) (void)link_of(links_of(l.stage), l.peer);
    for (const auto& l : route.in_links()) (void)link_of(links_of(l.stage), l.peer);
    // The inserts left up to half of each vector spare: at 2^17 simulated ranks, GiBs.
    for (auto& st : life.stages) st.links.shrink_to_fit();
  }
  // Positions are final only now that every link is in; -1: no per-link counters.
  out_slots.reserve(route.out_links().size());
  in_slots.reserve(route.in_links().size());
  for (const auto& l : route.out_links())
    out_slots.push_back({l.stage, per_link ? link_of(links_of(l.stage), l.peer) : -1});
  for (const auto& l : route.in_links())
    in_slots.push_back({l.stage, per_link ? link_of(links_of(l.stage), l.peer) : -1});
  out_stalled.assign(route.out_links().size(), 0);
  now = blank_counters(life);
}

engine_stats engine::impl::blank_counters(const engine_stats& shape) {
  engine_stats s;
  s.stages.resize(shape.stages.size());
  for (std::size_t k = 0; k < shape.stages.size(); ++k) {
    s.stages[k].links.reserve(shape.stages[k].links.size());
    for (const link_stats& l : shape.stages[k].links) {
      link_stats b;
      b.peer = l.peer;
      s.stages[k].links.push_back(b);
    }
  }
  return s;
}

void engine::impl::count_post(int lane, std::size_t bytes, bool full) noexcept {
  const link_slot k = out_slots[static_cast<std::size_t>(lane)];
  for (auto* st : {&now, &life}) {
    auto& ss = st->stages[static_cast<std::size_t>(k.stage)];
    ++ss.buffers;
    ss.bytes += bytes;
    if (k.link >= 0) {
      auto& l = ss.links[static_cast<std::size_t>(k.link)];
      l.bytes_sent += bytes;
      ++(full ? l.buffers_full : l.buffers_partial);
    }
    ++st->buffers_sent;
    st->bytes_sent += bytes;
  }
}

void engine::impl::count_stall(int lane) noexcept {
  const link_slot k = out_slots[static_cast<std::size_t>(lane)];
  for (auto* s : {&now, &life}) {
    if (k.link >= 0)
      ++s->stages[static_cast<std::size_t>(k.stage)]
            .links[static_cast<std::size_t>(k.link)]
            .credit_stalls;
    ++s->credit_stalls;
  }
}

std::uint64_t engine::impl::count_received(int id, const agg::received& r) noexcept {
  const link_slot k = in_slots[static_cast<std::size_t>(id)];
  const int tb = ins[static_cast<std::size_t>(id)].tag_bytes;
  const std::size_t payload = r.bytes > agg::header_bytes ? r.bytes - agg::header_bytes : 0;
  const std::uint64_t items = elastic() ? elastic_records(r, tb)
                                        : payload / agg::record_bytes(tb, false, e.hot_.item_bytes);
  if (k.link < 0) return items;
  for (auto* st : {&now, &life}) {
    auto& l = st->stages[static_cast<std::size_t>(k.stage)].links[static_cast<std::size_t>(k.link)];
    ++l.buffers_received;
    l.bytes_received += r.bytes;
    l.items_received += items;
  }
  return items;
}

std::uint64_t engine::impl::count_advance(std::chrono::steady_clock::time_point entered,
                                          bool completed) noexcept {
  const auto left = std::chrono::steady_clock::now();
  const auto in_advance = std::chrono::duration_cast<std::chrono::nanoseconds>(left - entered);
  const double seconds = std::chrono::duration<double>(in_advance).count();
  now.advance_seconds += seconds;
  life.advance_seconds += seconds;
  const auto ns = static_cast<std::uint64_t>(in_advance.count());
  if (!completed) return ns;
  const double cycle = std::chrono::duration<double>(left - cycle_start).count();
  now.cycle_seconds += cycle;
  life.cycle_seconds += cycle;
  const auto m = static_cast<std::uint64_t>(e.memory_bytes());
  now.memory_high_water = std::max(now.memory_high_water, m);
  life.memory_high_water = std::max(life.memory_high_water, m);
  return ns;
}

// Adds `items_of(k)`, the records of out-link k's lane, to its stage's items and its link's
// items_sent in `s`.
template <class Items>
void engine::impl::add_items_sent(engine_stats& s, Items items_of) const {
  for (std::size_t k = 0; k < out_slots.size(); ++k) {
    const std::uint64_t n = items_of(static_cast<int>(k));
    auto& ss = s.stages[static_cast<std::size_t>(out_slots[k].stage)];
    ss.items += n;
    if (out_slots[k].link >= 0)
      ss.links[static_cast<std::size_t>(out_slots[k].link)].items_sent += n;
  }
}

// Folds this cycle's per-record counters (the hot state's pushes and pulls, the lanes'
// records) into the lifetime statistics.
void engine::impl::fold_counters() noexcept {
  life.pushes += e.hot_.pushes;
  life.pulls += e.hot_.pulls;
  e.hot_.pushes = e.hot_.pulls = 0;
  add_items_sent(life, [this](int k) { return lanes.take_items(k); });
  self_items += lanes.take_items(loopback_lane());
  take_combine_counters(life);
}

engine_stats engine::impl::stats(bool cumulative) const {
  engine_stats s = cumulative ? life : now;
  s.pushes += e.hot_.pushes;
  s.pulls += e.hot_.pulls;
  std::uint64_t sent = 0;
  add_items_sent(s, [this](int k) { return lanes[k].items; });
  for (const auto& ss : s.stages) sent += ss.items;
  // Items put toward other ranks, less this rank's own pushes toward them.
  const std::uint64_t to_self = lanes[loopback_lane()].items + (cumulative ? self_items : 0);
  const std::uint64_t own = s.pushes > to_self ? s.pushes - to_self : 0;
  s.items_forwarded = sent > own ? sent - own : 0;
  s.memory_high_water = std::max(s.memory_high_water, static_cast<std::uint64_t>(e.memory_bytes()));
  // Bytes as they went on the wire: less what a compressing transport kept off it.
  const std::uint64_t saved = transport->saved_bytes() - (cumulative ? 0 : saved_mark);
  s.bytes_sent = s.bytes_sent > saved ? s.bytes_sent - saved : 0;
  add_combine_counters(s);
  return s;
}

void accumulate(engine_stats& into, const engine_stats& s) {
  into.begins += s.begins;
  into.pushes += s.pushes;
  into.pulls += s.pulls;
  into.unpulls += s.unpulls;
  into.advances += s.advances;
  into.buffers_sent += s.buffers_sent;
  into.bytes_sent += s.bytes_sent;
  into.buffers_received += s.buffers_received;
  into.collectives += s.collectives;
  into.items_forwarded += s.items_forwarded;
  into.credit_stalls += s.credit_stalls;
  into.combined += s.combined;
  into.combine_stops += s.combine_stops;
  if (s.combine_record_ns > 0) into.combine_record_ns = s.combine_record_ns;
  if (s.combine_use_ns > 0) into.combine_use_ns = s.combine_use_ns;
  into.advance_seconds += s.advance_seconds;
  into.cycle_seconds += s.cycle_seconds;
  into.memory_high_water = std::max(into.memory_high_water, s.memory_high_water);
  if (into.stages.size() < s.stages.size()) into.stages.resize(s.stages.size());
  for (std::size_t i = 0; i < s.stages.size(); ++i) {
    stage_stats& a = into.stages[i];
    const stage_stats& b = s.stages[i];
    a.items += b.items;
    a.buffers += b.buffers;
    a.bytes += b.bytes;
    if (a.links.size() < b.links.size()) a.links.resize(b.links.size());
    for (std::size_t k = 0; k < b.links.size(); ++k) {
      link_stats& x = a.links[k];
      const link_stats& y = b.links[k];
      x.peer = y.peer;
      x.items_sent += y.items_sent;
      x.bytes_sent += y.bytes_sent;
      x.buffers_full += y.buffers_full;
      x.buffers_partial += y.buffers_partial;
      x.credit_stalls += y.credit_stalls;
      x.items_received += y.items_received;
      x.bytes_received += y.bytes_received;
      x.buffers_received += y.buffers_received;
      x.combined += y.combined;
      x.combine_stops += y.combine_stops;
      if (y.combine_ns_per_record > 0) x.combine_ns_per_record = y.combine_ns_per_record;
      if (y.combine_saved_ns > 0) x.combine_saved_ns = y.combine_saved_ns;
    }
  }
}

}  // namespace convoy::termination
