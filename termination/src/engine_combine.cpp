// Combining (termination/README.md TERM-20..24): records with equal destination and key
// are folded while they wait in a send lane, at the source and at every forwarding rank.
// Each lane carries a combining table and a pays-off gate (aggregation/combine_table.hpp);
// the router encodes every forwarded hop with this rank as the source (ROUTE-25), so the
// tag bytes alone tell the destination apart and the key is (tag, key bytes). A lane that
// combines has limit 0: the inline push falls through to push_slow, which offers here.
// Forwarded records are offered too, from the per-record step and from runs (TERM-13).
#include <convoy/aggregation/combine_table.hpp>
#include <convoy/aggregation/packing.hpp>
#include <cstddef>

#include "engine_impl.hpp"

namespace convoy::termination {

namespace agg = convoy::aggregation;

// At construction: canonical tags; the tables come at begin, once the item size is known.
void engine::impl::setup_combining() {
  if (e.options_.combine.fn == nullptr) return;
  comb = std::make_unique<combining>();
  comb->spec = e.options_.combine;
  route.set_canonical_source(true);
}

int engine::set_combine(const agg::combine_spec& spec) noexcept {
  if (state_.current() != state::dormant) return error_state;
  if (spec.fn != nullptr && options_.elastic) return error_elastic;
  impl_->take_combine_counters(impl_->life);
  options_.combine = spec;
  impl_->comb.reset();
  impl_->route.set_canonical_source(false);  // forgets the learned steps either way
  impl_->setup_combining();                  // tables at the next begin
  return 1;
}

// At the start of a cycle (after the counters were folded): tables sized for the records a
// buffer of each lane holds, kept from one cycle to the next of the same item size.
void engine::impl::start_combining(std::size_t item_bytes) {
  comb->offer = agg::pick_combine_offer(item_bytes, comb->spec);
  if (comb->item_bytes == item_bytes && !comb->lanes.empty()) return;
  comb->item_bytes = item_bytes;
  comb->lanes.clear();
  const std::size_t room = e.options_.capacity_bytes - agg::header_bytes;
  for (int k = 0; k <= lanes.loopback(); ++k) {
    const std::size_t tb = lanes[k].tag_bytes;
    comb->lanes.emplace_back(room / (tb + item_bytes), e.options_.combine_max_slots,
                             e.options_.combine_gate);
  }
}

bool engine::impl::append_combining(int lane, std::uint64_t tag, const void* payload) {
  agg::send_lane& l = lanes[lane];
  if (l.buf == nullptr && !open_lane(lane)) return false;  // nothing written (TERM-23)
  agg::combining_lane& c = comb->lanes[static_cast<std::size_t>(lane)];
  if (comb->offer(l, c, comb->spec, tag, static_cast<const std::byte*>(payload), e.hot_.item_bytes))
    lane_filled(lane);
  return true;
}

// A lane opened a buffer: its table starts empty, and while it combines its limit is 0.
void engine::impl::combine_opened(int lane) noexcept {
  if (comb->lanes.empty()) return;  // before the first begin: send_last of nothing
  comb->lanes[static_cast<std::size_t>(lane)].opened(lanes[lane]);
}

// A lane's buffer is sealed: the gate judges it; nothing is folded into it any more.
void engine::impl::combine_sealing(int lane) noexcept {
  if (comb->lanes.empty()) return;
  comb->lanes[static_cast<std::size_t>(lane)].sealing();
}

void engine::impl::add_combine_counters(engine_stats& into) const noexcept {
  if (!comb) return;
  for (const agg::combining_lane& c : comb->lanes) {
    into.combined += c.hits;
    into.combine_stops += c.gate.failures();
  }
}

void engine::impl::take_combine_counters(engine_stats& into) noexcept {
  if (!comb) return;
  for (agg::combining_lane& c : comb->lanes) {
    into.combined += c.hits;
    into.combine_stops += c.gate.take_failures();
    c.hits = 0;
  }
}

// The tables that exist now, or at most one per lane of the largest size (AGG-151).
std::size_t engine::impl::combine_bytes(bool at_most) const noexcept {
  if (!comb) return 0;
  std::size_t n = 0;
  if (!at_most) {
    for (const agg::combining_lane& c : comb->lanes) n += c.table.memory_bytes();
    return n;
  }
  return e.combine_max_bytes();
}

std::size_t engine::combine_max_bytes() const noexcept {
  const std::size_t room = options_.capacity_bytes - agg::header_bytes;
  const std::size_t slots = agg::combine_table::slots_for(room, options_.combine_max_slots);
  return static_cast<std::size_t>(impl_->lanes.loopback() + 1) * slots * sizeof(std::uint32_t);
}

}  // namespace convoy::termination
