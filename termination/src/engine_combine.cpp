// Combining (termination/README.md TERM-20..27): records with equal destination and key
// are folded while they wait in a send lane, at the source and at every forwarding rank.
// Each lane carries a combining table and a pays-off gate (aggregation/combine_table.hpp);
// the router encodes every forwarded hop with this rank as the source (ROUTE-25), so the
// tag bytes alone tell the destination apart and the key is (tag, key bytes). Records go
// into a combining lane as into any other (the inline push, forwarding runs); when the
// lane fills, a fold pass folds the records it has not seen into the kept ones, and the
// lane goes on filling if that freed room (fold on fill). With combine_cache_entries, a
// hold-back cache in front of each out-link lane that combine_cache_link names (over MPI,
// those that leave the node) keeps hot records across buffers (TERM-27): the pass at fill
// offers the records to it first.
#include <convoy/aggregation/combine_table.hpp>
#include <convoy/aggregation/packing.hpp>
#include <cstddef>

#include "engine_impl.hpp"

namespace convoy::termination {

namespace agg = convoy::aggregation;

namespace {

// The steady clock in nanoseconds, as the trace records it.
std::uint64_t now_ns() noexcept { return static_cast<std::uint64_t>(trace_recorder::now()); }

// The value window closes once it is this long and has seen this many records (TERM-28).
constexpr std::uint64_t value_window_ns = 4'000'000;
constexpr std::uint64_t value_window_records = 4096;

}  // namespace

// At construction: canonical tags; the tables come at begin, once the item size is known.
void engine::impl::setup_combining() {
  if (e.options_.combine.fn == nullptr) return;
  comb = std::make_unique<combining>();
  comb->spec = e.options_.combine;
  route.set_canonical_source(true);
}

int engine::set_combine(const agg::combine_spec& spec) noexcept {
  if (const auto rc = state_.refuse(call::configure)) return *rc;
  if (const auto rc = combine_refusal(options_.mode, spec.fn != nullptr)) return *rc;
  impl_->take_combine_counters(impl_->life);
  options_.combine = spec;
  impl_->comb.reset();
  impl_->route.set_canonical_source(false);  // forgets the learned steps either way
  impl_->setup_combining();                  // tables at the next begin
  return 1;
}

// At the start of a cycle (after the counters were folded): tables sized for the records a
// buffer of each lane holds, kept from one cycle to the next of the same item size.
// The gates keep their state from one cycle to the next (TERM-26): a lane that stepped
// aside keeps skipping; only set_combine (a new spec) or another item size starts afresh.
// The caches are empty at begin (drained before the last cycle's stages closed).
void engine::impl::start_combining(std::size_t item_bytes) {
  start_value_window();
  if (comb->item_bytes == item_bytes && !comb->lanes.empty()) return;
  comb->item_bytes = item_bytes;
  comb->lanes.clear();
  comb->caches.clear();
  const std::size_t room = e.options_.buffer_bytes - agg::header_bytes;
  const auto& pick = e.options_.combine_cache_link;  // TERM-27: the links with a cache
  std::vector<bool> cached(static_cast<std::size_t>(lanes.loopback()), false);
  std::size_t n_cached = 0;
  if (e.options_.has_combine_caches())
    for (int k = 0; k < lanes.loopback(); ++k) {
      const int peer = route.out_links()[static_cast<std::size_t>(k)].peer;
      cached[static_cast<std::size_t>(k)] = !pick || pick(route.rank(), peer);
      n_cached += cached[static_cast<std::size_t>(k)] ? 1 : 0;
    }
  std::size_t entries = e.options_.combine_cache_entries;
  if (entries == 0 && n_cached > 0)  // the budget, shared alike
    entries = agg::combine_cache::entries_within(e.options_.combine_cache_budget / n_cached,
                                                 item_bytes, base::default_combine_cache_entries,
                                                 combine_cache_least_entries);
  bool any_cache = false;
  for (int k = 0; k <= lanes.loopback(); ++k) {
    const std::size_t tb = lanes[k].tag_bytes;
    comb->lanes.emplace_back(room / (tb + item_bytes), e.options_.combine_max_slots,
                             e.options_.combine_gate);
    comb->lanes.back().pass = agg::pick_fold_pass(item_bytes, comb->spec, tb);
    if (entries == 0 || k == lanes.loopback()) continue;
    comb->caches.emplace_back();
    if (!cached[static_cast<std::size_t>(k)]) continue;
    comb->caches.back().emplace(entries, item_bytes, tb, comb->spec);
    any_cache = true;
  }
  if (!any_cache) comb->caches.clear();
  comb->cache_pass = any_cache ? agg::pick_cache_pass(item_bytes, comb->spec) : nullptr;
  comb->held_since.assign(comb->caches.size(), 0);
  comb->victim.assign(item_bytes, std::byte{0});
}

// A full lane's fold pass (TERM-20): through its cache when it has one (TERM-27). A lane
// whose cache is being drained into it does not combine (drain_cache).
bool engine::impl::fold_filled(int lane) {
  return comb->lanes[static_cast<std::size_t>(lane)].refill(
      lanes[lane], [&] { return fold_pass(lane, cache_of(lane) != nullptr); });
}

agg::fold_result engine::impl::fold_pass(int lane, bool cached) {
  agg::combining_lane& c = comb->lanes[static_cast<std::size_t>(lane)];
  if (!cached) return c.pass(lanes[lane], c, comb->spec);
  agg::combine_cache& cache = *cache_of(lane);
  if (cache.empty()) comb->held_since[static_cast<std::size_t>(lane)] = tick;
  return comb->cache_pass(lanes[lane], c, comb->spec, cache, comb->victim.data());
}

agg::combine_cache* engine::impl::cache_of(int lane) noexcept {
  const auto k = static_cast<std::size_t>(lane);
  return k < comb->caches.size() && comb->caches[k] ? &*comb->caches[k] : nullptr;
}

// The drained entries (one record per key) go into plain buffers: no pass examines them
// and the gate judges none of those buffers, since folds among them are rare and a pass
// over them would teach the gate what a lane's records are not (TERM-27).
bool engine::impl::drain_cache(int lane) {
  agg::combine_cache& cache = *cache_of(lane);
  comb->lanes[static_cast<std::size_t>(lane)].stop();
  comb->draining = true;  // the buffers the entries open do not combine either
  const bool empty = cache.drain([&](std::uint64_t tag, const std::byte* item) {
    return append(lane, tag, item, comb->item_bytes);  // false: no free buffer (TERM-5)
  });
  comb->draining = false;
  return empty;
}

// Steady dispatch and flush (period 0): a cache that has held items for `period` ticks is
// drained, and its lane posted, so that a held item waits at most about two periods.
void engine::impl::drain_caches_older_than(std::uint64_t period) {
  for (std::size_t k = 0; k < comb->caches.size(); ++k) {
    if (!comb->caches[k] || comb->caches[k]->empty() || tick - comb->held_since[k] < period)
      continue;
    const int lane = static_cast<int>(k);
    (void)drain_cache(lane);
    if (period > 0 && lanes.has_items(lane)) post_data(lane);
  }
}

bool engine::impl::caches_hold() const noexcept {
  if (!comb) return false;
  for (const auto& c : comb->caches)
    if (c && !c->empty()) return true;
  return false;
}

// link_layer: nothing may reach the lane once its stage closes (TERM-4), so its cache is
// drained for the last time now; the last buffer then follows the drained records.
bool engine::impl::prepare_last(int out_link) {
  if (!comb || cache_of(out_link) == nullptr) return true;
  return drain_cache(out_link);
}

// A lane opened a buffer: its table starts empty; the value window closes if it is due.
void engine::impl::combine_opened(int lane) noexcept {
  if (comb->lanes.empty()) return;  // before the first begin: send_last of nothing
  comb->lanes[static_cast<std::size_t>(lane)].opened(!comb->draining);
  const std::uint64_t t = now_ns();
  if (t - comb->window.t0 >= value_window_ns) close_value_window(t);
}

// A lane's buffer is about to leave: a last pass over its tail (never through the cache:
// what it would hold could miss the lane's last buffer), and the gate judges it.
void engine::impl::combine_sealing(int lane) noexcept {
  if (comb->lanes.empty()) return;
  comb->lanes[static_cast<std::size_t>(lane)].sealing([&] { return fold_pass(lane, false); });
  const agg::send_lane& l = lanes[lane];
  if (l.record_bytes == 0) return;
  const std::uint32_t bytes = l.used - agg::header_bytes;
  comb->window.records += bytes / l.record_bytes;
  if (static_cast<std::size_t>(lane) < comb->window.bytes.size())
    comb->window.bytes[static_cast<std::size_t>(lane)] += bytes;
}

// TERM-28: what a record saved on a lane is worth. Over a window (value_window_ns at least,
// from each begin), the time inside this engine's calls that did work (advance when
// anything happened since the last, a push that filled a lane, a pull that took a new
// buffer, flush), less the fold passes, per record it sealed into a buffer or pulled is
// what handling one record costs here, `h`. The program's own time on what it pulls, per
// record pulled, is `u` (combine_used_up); its time on what it pushes is in neither: a
// folded record saves the conveyor's work and the owner's use of it, not the work that
// produced it. A record folded away on an out-link of stage s is not sent, not handled at
// the ranks of the later stages (at most one each), not pulled and not used:
// h x (n_stages - s + 1) + u; on the loopback lane it is not sealed nor pulled: 2h + u. An
// out-link that stalls for credit adds its stall time per byte it posted (wire_worth: a
// window without stalls lowers it by at most 1/8), times the record's bytes: there the
// wire, not the CPU, decides.
void engine::impl::start_value_window() noexcept {
  auto& w = comb->window;
  const std::size_t outs = static_cast<std::size_t>(lanes.n_out());
  w.stall_ns.assign(outs, 0);
  w.stall_since.assign(outs, 0);
  w.bytes.assign(outs, 0);
  if (comb->wire.size() != outs) comb->wire.assign(outs, agg::wire_worth{});
  w.records = 0;
  w.inside_ns = 0;
  w.use_ns = 0;
  w.use_records = 0;
  w.span_at = 0;
  w.t0 = now_ns();
  w.pulls0 = e.hot_.pulls;
  w.fold0 = fold_ns();
}

void engine::impl::close_value_window(std::uint64_t t) noexcept {
  auto& w = comb->window;
  const std::uint64_t pulls = e.hot_.pulls - w.pulls0;
  const std::uint64_t records = w.records + pulls;
  if (records < value_window_records) return;  // too few to judge: the window goes on
  const std::uint64_t folding = fold_ns() - w.fold0;
  const double h = w.inside_ns > folding
                       ? static_cast<double>(w.inside_ns - folding) / static_cast<double>(records)
                       : 0.0;
  const double use =
      w.use_records > 0 ? static_cast<double>(w.use_ns) / static_cast<double>(w.use_records) : 0.0;
  comb->record_ns = h;
  comb->use_ns = use;
  const int stages = route.n_stages();
  for (int k = 0; k <= lanes.loopback(); ++k) {
    double value = 2 * h + use;
    if (k < lanes.n_out()) {
      const auto at = static_cast<std::size_t>(k);
      value = h * (stages - route.out_links()[at].stage + 1) + use;
      value += comb->wire[at].window(w.stall_ns[at], w.bytes[at]) * lanes[k].record_bytes;
      w.stall_ns[at] = 0;
      w.bytes[at] = 0;
    }
    comb->lanes[static_cast<std::size_t>(k)].gate.measured_saved_record_ns(value);
  }
  w.t0 = t;
  w.records = 0;
  w.inside_ns = 0;
  w.use_ns = 0;
  w.use_records = 0;
  w.pulls0 = e.hot_.pulls;
  w.fold0 += folding;
}

std::int64_t engine::impl::combine_inside(std::int64_t since) noexcept {
  const std::int64_t t = trace_recorder::now();
  const auto ns = static_cast<std::uint64_t>(t - since);
  comb->window.inside_ns += ns;
  comb->inside_total += ns;
  return t;
}

void engine::impl::combine_used_up(std::int64_t since) noexcept {
  auto& w = comb->window;
  if (w.span_at == 0) return;
  const std::uint64_t engine_ns = comb->inside_total - w.span_inside;
  const auto span = static_cast<std::uint64_t>(since - w.span_at);
  w.use_ns += span > engine_ns ? span - engine_ns : 0;
  w.use_records += e.hot_.pulls - w.span_pulls;
  w.span_at = 0;
}

void engine::impl::combine_took(std::int64_t since, std::uint64_t pulls_before) noexcept {
  auto& w = comb->window;
  w.span_at = combine_inside(since);
  w.span_inside = comb->inside_total;
  w.span_pulls = pulls_before;
}

// An out-link's credit stall began (ended false) or ended: its time goes to the link.
void engine::impl::combine_stall_edge(int lane, bool ended) noexcept {
  auto& w = comb->window;
  const auto at = static_cast<std::size_t>(lane);
  if (at >= w.stall_since.size()) return;  // before the first begin
  const std::uint64_t t = now_ns();
  if (!ended) {
    w.stall_since[at] = t;
    return;
  }
  if (w.stall_since[at] == 0) return;  // began before this cycle's window
  w.stall_ns[at] += t - w.stall_since[at];
  w.stall_since[at] = 0;
}

std::uint64_t engine::impl::fold_ns() const noexcept {
  std::uint64_t n = 0;
  for (const agg::combining_lane& c : comb->lanes) n += c.fold_ns;
  return n;
}

// Each lane's folds and failed buffers into `into`'s totals and, for an out-link lane
// counted per link, into its link with the lane's gate measures (TERM-24, 28).
void engine::impl::add_combine_counters(engine_stats& into) const noexcept {
  if (!comb) return;
  for (std::size_t k = 0; k < comb->lanes.size(); ++k)
    count_lane(into, k, comb->lanes[k].gate.failures());
  report_measures(into);
}

void engine::impl::take_combine_counters(engine_stats& into) noexcept {
  if (!comb) return;
  for (std::size_t k = 0; k < comb->lanes.size(); ++k) {
    agg::combining_lane& c = comb->lanes[k];
    count_lane(into, k, c.gate.take_failures());
    c.hits = 0;
  }
  report_measures(into);
}

void engine::impl::count_lane(engine_stats& into, std::size_t lane,
                              std::uint64_t stops) const noexcept {
  const agg::combining_lane& c = comb->lanes[lane];
  into.combined += c.hits;
  into.combine_stops += stops;
  if (lane >= out_slots.size() || out_slots[lane].link < 0) return;  // the loopback lane
  const link_slot at = out_slots[lane];
  link_stats& l =
      into.stages[static_cast<std::size_t>(at.stage)].links[static_cast<std::size_t>(at.link)];
  l.combined += c.hits;
  l.combine_stops += stops;
  if (c.gate.ns_per_record() > 0) l.combine_ns_per_record = c.gate.ns_per_record();
  if (c.gate.saved_record_ns() > 0) l.combine_saved_ns = c.gate.saved_record_ns();
}

// The gate's last measures (TERM-28), where a window has closed.
void engine::impl::report_measures(engine_stats& into) const noexcept {
  if (comb->record_ns > 0) into.combine_record_ns = comb->record_ns;
  if (comb->use_ns > 0) into.combine_use_ns = comb->use_ns;
}

// The tables and caches that exist now, or at most one table per lane of the largest size
// (AGG-151) and one cache per out-link lane for this cycle's item size (AGG-160).
std::size_t engine::impl::combine_bytes(bool at_most) const noexcept {
  if (!comb) return 0;
  std::size_t n = 0;
  if (!at_most) {
    for (const agg::combining_lane& c : comb->lanes) n += c.table.memory_bytes();
    return n + cache_bytes();
  }
  return e.combine_max_bytes();
}

// The hold-back caches of this cycle's item size (none before the first combining begin).
std::size_t engine::impl::cache_bytes() const noexcept {
  std::size_t n = 0;
  for (const auto& c : comb->caches) n += c ? c->memory_bytes() : 0;
  return n;
}

std::size_t engine::combine_max_bytes() const noexcept {
  const std::size_t room = options_.buffer_bytes - agg::header_bytes;
  const std::size_t slots = agg::combine_table::slots_for(room, options_.combine_max_slots);
  std::size_t n =
      static_cast<std::size_t>(impl_->lanes.loopback() + 1) * slots * sizeof(std::uint32_t);
  if (impl_->comb) n += impl_->cache_bytes();  // once a combining begin sized them
  return n;
}

}  // namespace convoy::termination
