// The engine's set-up, its begin/reset cycle and its statistics.
#include <algorithm>
#include <convoy/aggregation/packing.hpp>

#include "engine_impl.hpp"

namespace convoy::termination {

namespace agg = convoy::aggregation;

namespace {

std::vector<int> tag_bytes_per_out_link(const router::forwarder& f) {
  std::vector<int> t;
  t.reserve(f.out_links().size());
  for (const auto& l : f.out_links()) t.push_back(f.tag_bytes(l.stage));
  return t;
}

std::vector<int> stages_of(const std::vector<router::link_end>& links) {
  std::vector<int> s;
  s.reserve(links.size());
  for (const auto& l : links) s.push_back(l.stage);
  return s;
}

}  // namespace

engine::impl::impl(engine& owner, std::unique_ptr<agg::transport> t)
    : e(owner),
      transport(std::move(t)),
      route(owner.plan_, owner.rank_),
      lanes(tag_bytes_per_out_link(route), owner.options_.buffer_bytes, owner.options_.n_buffers,
            owner.rules().carries_size),
      counting(route.n_stages(), stages_of(route.out_links()), stages_of(route.in_links())) {
  agg::link_layout layout;
  layout.rank = e.rank_;
  layout.n_ranks = e.plan_->n_ranks();
  layout.buffer_bytes = e.options_.buffer_bytes;
  layout.n_buffers = e.options_.n_buffers;
  layout.growable = !elastic();
  for (const auto& l : route.out_links()) layout.out_links.push_back({l.stage, l.peer});
  const auto& in_ends = route.in_links();
  ins.resize(in_ends.size() + 1);
  for (std::size_t i = 0; i < in_ends.size(); ++i) {
    layout.in_links.push_back({in_ends[i].stage, in_ends[i].peer});
    ins[i].stage = in_ends[i].stage;
    ins[i].tag_bytes = route.tag_bytes(in_ends[i].stage);
    // Whole-buffer delivery where every record is this rank's and of one source (ROUTE-23),
    // e.g. the last stage of a 1-D mesh, tensor order 1, or tensor order 2's local stage
    // when there is one group.
    if (!elastic()) ins[i].whole_from = route.single_source(static_cast<int>(i));
  }
  loopback_in = static_cast<int>(in_ends.size());
  in_link& self = ins.back();
  self.stage = route.n_stages() - 1;
  self.loopback = true;
  self.whole_from = elastic() ? -1 : e.rank_;
  const int cap = e.options_.n_buffers;
  ring_slots.resize(ins.size() * static_cast<std::size_t>(cap));
  for (std::size_t i = 0; i < ins.size(); ++i)
    ins[i].queue.bind(ring_slots.data() + i * static_cast<std::size_t>(cap), cap);
  transport->open(layout);
  max_item_bytes = e.options_.buffer_bytes - agg::header_bytes -
                   static_cast<std::size_t>(route.max_tag_bytes()) -
                   (elastic() ? agg::size_field_bytes : 0);
  first_hops = route.first_hop_table(e.options_.route_table_max_ranks);
  setup_combining();
  if (e.rules().fans_out)
    setup_broadcast();
  else if (!first_hops.empty() && e.rules().direct_push)
    use_step_tables();
  init_counters();
  e.hot_.lanes = lanes.data();
  e.hot_.first_hops = first_hops.empty() ? nullptr : first_hops.data();
  e.hot_.n_ranks = static_cast<unsigned>(layout.n_ranks);
  const watchdog_options& w = e.options_.watchdog;
  if (w.seconds > 0 && w.board) {
    watch = std::make_unique<watch_state>();
    watch->timeout_ms = std::max<std::int64_t>(1, static_cast<std::int64_t>(w.seconds * 1000.0));
    // An advancing rank's record is never older than this, so that its last advance time
    // tells the others it still advances.
    watch->publish_period_ms = std::clamp<std::int64_t>(watch->timeout_ms / 10, 1, 100);
    watch_step(false);
  }
  if (!e.options_.trace.dir.empty()) start_trace();
}

// Plans small enough for a first-hop table also get the per-link tables of ROUTE-24: rigid
// records of tagged last stages are delivered in whole-buffer windows (their source from a
// one-byte tag), those of earlier stages forwarded by runs (TERM-13).
void engine::impl::use_step_tables() {
  const int last_stage = route.n_stages() - 1;
  for (int id = 0; id < loopback_in; ++id) {
    in_link& l = ins[static_cast<std::size_t>(id)];
    if (l.whole_from >= 0) continue;
    if (l.stage == last_stage)
      l.tagged_window = l.tag_bytes == 1;
    else
      l.runs = route.enable_step_table(id);
  }
}

void engine::impl::start_cycle(std::size_t item_bytes) {
  fold_counters();
  counting.begin_cycle();
  tick = 0;
  last = {};
  now = blank_counters(life);
  saved_mark = transport->saved_bytes();
  cycle_start = std::chrono::steady_clock::now();
  ready.clear();
  e.hot_.window = {};
  lanes.start_cycle(item_bytes);
  if (comb) start_combining(item_bytes);
  for (auto& l : ins) {
    l.ready = false;
    l.queue.offset = agg::header_bytes;
    l.kept = agg::header_bytes;
  }
  // Buffers that arrived early for this cycle are accepted now, in arrival order (TERM-8).
  for (int id = 0; id < loopback_in; ++id) {
    in_link& l = ins[static_cast<std::size_t>(id)];
    int n = 0;
    while (n < l.queue.size() &&
           counting.admit_held(id, agg::receive_queue::header_of(l.queue.at(n))))
      ++n;
    l.queue.set_now(n);
    for (int k = 0; k < n; ++k) count_received(id, l.queue.at(k));
    if (n > 0) examine(id);
  }
}

// Memory of this engine's own: the loopback pool, the first-hop table and the per-link
// tables (TERM-5): those that exist now, or at most.
std::size_t engine::impl::fixed_bytes(bool at_most) const noexcept {
  std::size_t n = lanes.memory_bytes() + first_hops.size() * sizeof(router::first_hop);
  n += at_most ? route.step_table_max_bytes() : route.step_table_bytes();
  n += combine_bytes(at_most);
  n += fan_tags.capacity() * sizeof(std::uint64_t) + fan_known.capacity();  // broadcast
  for (const in_link& l : ins) {
    if (l.tagged_window || l.runs)
      n += (at_most ? std::size_t{256} : l.source_of_tag.capacity()) * sizeof(std::int32_t);
    if (l.fan_whole) n += at_most ? later_out_links(l) * 256 : l.fan_xlat.capacity();
  }
  return n;
}

// Everything that shows progress, summed (only compared for change).
std::uint64_t engine::impl::activity() const noexcept {
  return e.hot_.pushes + e.hot_.pulls + life.buffers_sent + life.buffers_received + life.unpulls;
}

}  // namespace convoy::termination
