// The engine's side of the watchdog (TERM-15): its status record, read from what the
// engine keeps anyway (the delivery window, receive queues, lanes, counting), and the step
// after each advance that publishes it and diagnoses a stall.
#include <algorithm>
#include <convoy/aggregation/packing.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "engine_impl.hpp"

namespace convoy::termination {

namespace agg = convoy::aggregation;

namespace {

std::uint32_t records_in(std::size_t bytes, std::size_t record_bytes) noexcept {
  return record_bytes ? static_cast<std::uint32_t>(bytes / record_bytes) : 0;
}

}  // namespace

rank_status engine::impl::status() const {
  rank_status s;
  s.rank = e.rank_;
  s.state = static_cast<std::int32_t>(e.state_.current());
  s.epoch = counting.epoch();
  s.said_done = counting.done_pushing() ? 1 : 0;
  // Posted buffers that have not left (waiting for credit, or in flight); records still in
  // a lane show among the links.
  s.sending = transport->idle() ? 0 : 1;
  s.elastic = elastic() ? 1 : 0;
  s.advances = now.advances;
  status_links(s);
  status_termination(s);
  if (watch) {
    s.last_advance_ms = watch->last_advance;
    s.last_progress_ms = watch->last_progress;
    s.last_pull_ms = watch->last_pull;
    s.diagnosed_ms = watch->diagnosed_at;
  }
  return s;
}

// Unpulled items, credits owed and the most loaded links: what the delivery window, the
// receive queues and the send lanes hold.
void engine::impl::status_links(rank_status& s) const {
  const agg::delivery_window& w = e.hot_.window;
  if (w.cur < w.end && w.stride)
    s.unpulled += records_in(static_cast<std::size_t>(w.end - w.cur), w.stride);
  std::vector<link_status> waiting;
  const int last_stage = route.n_stages() - 1;
  const std::size_t item = elastic() ? 0 : e.hot_.item_bytes;
  for (int id = 0; id <= loopback_in; ++id) {
    const in_link& l = ins[static_cast<std::size_t>(id)];
    if (l.queue.size() == 0) continue;
    const std::size_t rec = item ? item + static_cast<std::size_t>(l.tag_bytes) : 0;
    std::uint64_t items = 0;  // of this cycle's buffers; those of the next wait for begin
    for (int i = 0; i < l.queue.now(); ++i) {
      const std::size_t bytes = agg::receive_queue::header_of(l.queue.at(i)).bytes;
      if (i > 0) {
        items += records_in(bytes - agg::header_bytes, rec);
      } else if (w.in_link != id) {  // the window's buffer is counted above
        items += records_in(bytes - std::min(bytes, l.queue.offset), rec);
        if (l.runs) items += records_in(l.kept - agg::header_bytes, rec);
      }
    }
    // On the last stage and the loopback every record is this rank's.
    if (l.loopback || l.stage == last_stage) s.unpulled += items;
    if (l.loopback) continue;
    const auto held = static_cast<std::uint32_t>(l.queue.size());  // each holds a credit
    s.credits_owed += held;
    waiting.push_back({route.in_links()[static_cast<std::size_t>(id)].peer,
                       static_cast<std::int16_t>(l.stage), 0, static_cast<std::uint32_t>(items),
                       held});
  }
  const auto& outs = route.out_links();
  for (int k = 0; k <= lanes.loopback(); ++k) {
    const agg::send_lane& lane = lanes[k];
    const bool open = lane.buf != nullptr && lane.used > agg::header_bytes;
    const std::uint32_t items =
        open ? records_in(lane.used - agg::header_bytes, lane.record_bytes) : 0;
    if (k == lanes.loopback()) {
      s.unpulled += items;  // pushed to itself, delivered at the next pull
      continue;
    }
    const std::uint32_t no_buffer = out_stalled[static_cast<std::size_t>(k)];
    if (items == 0 && no_buffer == 0) continue;
    const auto& end = outs[static_cast<std::size_t>(k)];
    waiting.push_back({end.peer, static_cast<std::int16_t>(end.stage), 1, items, no_buffer});
  }
  std::stable_sort(waiting.begin(), waiting.end(), [](const link_status& a, const link_status& b) {
    return std::uint64_t{a.buffers} * 1000000 + a.items >
           std::uint64_t{b.buffers} * 1000000 + b.items;
  });
  s.n_links =
      static_cast<std::uint32_t>(std::min<std::size_t>(waiting.size(), rank_status::max_links));
  std::copy_n(waiting.begin(), s.n_links, s.links.begin());
}

// Termination (TERM-4): the first stage not closed, and the in-link of the lowest stage
// whose count is not complete.
void engine::impl::status_termination(rank_status& s) const {
  if (counting.closed_stages() < counting.n_stages()) s.closing_stage = counting.closed_stages();
  for (int id = 0; id < loopback_in; ++id) {
    if (counting.finished(id)) continue;
    ++s.unfinished;
    const in_link& l = ins[static_cast<std::size_t>(id)];
    if (s.wait_peer >= 0 && s.wait_stage <= l.stage) continue;
    s.wait_peer = route.in_links()[static_cast<std::size_t>(id)].peer;
    s.wait_stage = l.stage;
    s.wait_received = counting.received(id);
    s.wait_expected = counting.expected(id);
  }
}

void engine::impl::watch_sample(std::int64_t t, bool advanced) noexcept {
  watch_state& w = *watch;
  if (advanced) w.last_advance = t;
  if (counting.epoch() != w.epoch) {  // a new cycle: begin counts as a call and progress
    w.epoch = counting.epoch();
    w.last_advance = w.last_progress = w.last_pull = t;
  }
  const std::uint64_t a = activity();
  if (a != w.activity) {
    w.activity = a;
    w.last_progress = t;
  }
  if (e.hot_.pulls != w.pulls) {
    w.pulls = e.hot_.pulls;
    w.last_pull = t;
  }
}

void engine::impl::watch_enter() noexcept {
  const std::int64_t t = wall_clock_ms();
  if (t - watch->last_publish < watch->publish_period_ms) return;
  watch_sample(t, true);
  try {
    e.options_.watchdog.board->publish(status());
  } catch (...) {  // status() may throw bad_alloc (its waiting links); the watchdog never fails
  }
}

void engine::impl::watch_step(bool advanced) noexcept {
  watch_state& w = *watch;
  const watchdog_options& o = e.options_.watchdog;
  try {
    const std::int64_t t = wall_clock_ms();
    watch_sample(t, advanced);
    const auto st = static_cast<std::int32_t>(e.state_.current());
    const bool changed = st != w.published_state || counting.done_pushing() != w.published_done;
    const bool working = in_cycle(e.state_.current());
    // A stalled rank reads the board at most once per timeout: P stalled ranks read P
    // records each, so more often would cost the network P^2 records per period.
    const bool stalled = working && t - w.last_progress >= w.timeout_ms &&
                         w.last_progress > w.diagnosed_stall && t >= w.next_read;
    if (!changed && !stalled && t - w.last_publish < w.publish_period_ms) return;
    w.last_publish = t;
    w.published_state = st;
    w.published_done = counting.done_pushing();
    if (!stalled) {
      o.board->publish(status());
      return;
    }
    // No progress here for the timeout: read every rank's record. A rank that made
    // progress within the timeout (a slow one still pushing and advancing) means no stall:
    // look again when its progress is a timeout old. Else print, unless another rank did
    // during this stall or a lower one will (is_printer), and look again a timeout later.
    // This rank's record is published once, after the decision, so that the others see
    // whether it printed.
    std::vector<rank_status> all = o.board->read_all();
    rank_status& mine = all[static_cast<std::size_t>(e.rank_)];
    mine = status();
    const std::int64_t elsewhere = last_progress_anywhere(all);
    const bool stall = t - elsewhere >= w.timeout_ms;
    w.next_read =
        stall ? t + w.timeout_ms : std::max(elsewhere + w.timeout_ms, t + w.timeout_ms / 2);
    const bool printer = stall && is_printer(all, e.rank_, w.last_progress, t, o.seconds);
    if (printer) {
      w.diagnosed_stall = w.last_progress;
      w.diagnosed_at = mine.diagnosed_ms = t;
    }
    o.board->publish(mine);
    // The job may end now (the printer's abort): every rank that sees the stall leaves
    // its timeline so far, not the empty file reserved at set-up; once per stall (a stall
    // it does not print is read again every timeout).
    if (stall && o.abort && trace && w.saved_stall != w.last_progress) {
      w.saved_stall = w.last_progress;
      (void)trace->checkpoint();
    }
    if (!printer) return;
    o.board->print(diagnose(all, e.rank_, t, o.seconds));
    if (o.abort) {
      o.board->print("convoy watchdog: CONVOY_WATCHDOG_ABORT=1: aborting the job\n");
      o.board->abort();
    }
  } catch (const std::exception& ex) {
    // A watchdog that cannot read the board must not break the conveyor it watches.
    std::fprintf(stderr, "convoy watchdog: rank %d: %s\n", e.rank_, ex.what());
    watch.reset();
  }
}

}  // namespace convoy::termination
