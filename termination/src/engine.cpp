// The engine's public calls: each checks the state machine (state_machine.hpp), then lets
// the composition (engine_impl.hpp) do the work. termination/README.md states the
// guarantees (TERM-n) cited here.
#include <algorithm>
#include <chrono>
#include <convoy/aggregation/packing.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/termination/engine.hpp>
#include <exception>
#include <string>
#include <thread>
#include <utility>

#include "engine_impl.hpp"

namespace convoy::termination {

namespace {

void check_options(const router::route_plan& plan, int rank, const engine_options& o) {
  if (rank < 0 || rank >= plan.n_ranks())
    throw convoy::error("engine: rank " + std::to_string(rank) + " is outside the plan's " +
                        std::to_string(plan.n_ranks()) + " ranks");
  if (o.n_buffers < 1)
    throw convoy::error("engine: n_buffers must be >= 1, got " + std::to_string(o.n_buffers));
  int max_tag = 0;
  for (int s = 0; s < plan.n_stages(); ++s) max_tag = std::max(max_tag, plan.tag_bytes(s));
  const std::size_t min_capacity = aggregation::header_bytes + static_cast<std::size_t>(max_tag) +
                                   aggregation::size_field_bytes + 8;
  if (o.buffer_bytes < min_capacity)
    throw convoy::error("engine: buffer_bytes " + std::to_string(o.buffer_bytes) +
                        " is too small: a buffer needs at least " + std::to_string(min_capacity) +
                        " bytes");
  if (o.buffer_bytes > base::max_buffer_bytes)
    throw convoy::error("engine: buffer_bytes " + std::to_string(o.buffer_bytes) +
                        " is above the 1 GiB limit");
  if (o.steady_period < 1) throw convoy::error("engine: steady_period must be >= 1");
  const item_rules& rules = rules_of(o.mode);
  if (combine_refusal(o.mode, o.combine.fn != nullptr))
    throw convoy::error(std::string("engine: combining needs rigid items, not ") + rules.name +
                        " ones");
  if (rules.fans_out && !plan.broadcast_tree())
    throw convoy::error("engine: broadcast along '" + plan.name() +
                        "' would deliver duplicates (it moves along one dimension on two "
                        "stages); use a mesh or tensor order 1 or 2");
  if (o.combine_cache_entries > (std::size_t{1} << 24))
    throw convoy::error("engine: combine_cache_entries " + std::to_string(o.combine_cache_entries) +
                        " is above the limit of 2^24 per lane");
}

}  // namespace

engine::engine(std::shared_ptr<const router::route_plan> plan, int rank,
               std::unique_ptr<aggregation::transport> transport, engine_options options)
    : conveyor_engine(rank, plan ? plan->n_ranks() : 0),
      plan_(std::move(plan)),
      options_(std::move(options)) {
  if (!plan_) throw convoy::error("engine: null route plan");
  if (!transport) throw convoy::error("engine: null transport");
  check_options(*plan_, rank_, options_);
  impl_ = std::make_unique<impl>(*this, std::move(transport));
}

engine::~engine() = default;

conveyor_engine::~conveyor_engine() = default;

std::size_t engine::max_item_bytes() const noexcept { return impl_->max_item_bytes; }

int engine::begin(std::size_t item_bytes) {
  if (const auto rc = state_.refuse(call::begin)) return *rc;
  if (item_bytes == 0 && !rules().carries_size) return error_size;
  if (item_bytes > max_item_bytes()) return error_size;
  if (options_.combine.fn != nullptr) {
    if (const char* why = aggregation::combine_spec_problem(options_.combine, item_bytes)) {
      last_message_ = std::string(why) + " of " + std::to_string(item_bytes) + " bytes";
      return error_size;
    }
  }
  hot_.item_bytes = item_bytes;
  impl_->start_cycle(item_bytes);
  state_.begin();
  hot_.push_ok = rules().direct_push && hot_.first_hops != nullptr;
  ++impl_->now.begins;
  ++impl_->life.begins;
  if (impl_->watch) impl_->watch_step(false);
  return 1;
}

int engine::push_slow(const void* item, int dest) noexcept {
  if (const auto rc = state_.refuse(call::push)) [[unlikely]]
    return *rc;
  if (const int code = rules().push_refusal) return code;
  if (rules().carries_size) return epush(item, hot_.item_bytes, dest);
  if (static_cast<unsigned>(dest) >= static_cast<unsigned>(n_ranks())) [[unlikely]]
    return error_rank;
  if (!item) [[unlikely]]
    return error_argument;
  return impl_->push_item(item, hot_.item_bytes, dest);
}

int engine::broadcast(const void* item) noexcept {
  if (const int code = rules().broadcast_refusal) return code;
  if (const auto rc = state_.refuse(call::push)) return *rc;
  if (!item) return error_argument;
  return impl_->broadcast_item(item);
}

std::int64_t engine::broadcast_batch(const void* items, std::size_t n) noexcept {
  if (const int code = rules().broadcast_refusal) return code;
  if (const auto rc = state_.refuse(call::push)) return *rc;
  if (!items && n > 0) return error_argument;
  return impl_->broadcast_items(static_cast<const std::byte*>(items), n);
}

void engine::lane_full(std::uint32_t lane) noexcept {
  const std::int64_t since = impl_->comb ? trace_recorder::now() : 0;  // TERM-28
  try {
    impl_->lane_filled(static_cast<int>(lane));
  } catch (const std::exception& ex) {
    // The failure shows on the next advance().
    last_message_ = ex.what();
    impl_->post_failed = true;
  }
  if (impl_->comb) impl_->combine_inside(since);
}

int engine::epush(const void* item, std::size_t bytes, int dest) noexcept {
  if (const int code = rules().epush_refusal) return code;
  if (const auto rc = state_.refuse(call::push)) return *rc;
  if (static_cast<unsigned>(dest) >= static_cast<unsigned>(n_ranks())) return error_rank;
  if (!item && bytes) return error_argument;
  if (bytes > impl_->max_item_bytes) return error_size;
  return impl_->push_item(item, bytes, dest);
}

int engine::pull_slow(item_view& out, bool rigid) noexcept {
  const auto refused = state_.refuse(call::pull);
  if (refused && *refused < 0) return *refused;
  auto& m = *impl_;
  const std::int64_t since = m.comb ? trace_recorder::now() : 0;  // TERM-28
  if (m.comb) m.combine_used_up(since);
  try {
    m.settle();  // COMPLETE too: what finished arriving is taken in
    if (refused) return *refused;
    // Items to self wait in the loopback lane until nothing else is ready or it fills.
    if (m.ready.empty() && !m.flush_loopback()) return 0;
    if (m.ready.empty()) return 0;
    const int rc = m.take_ready(out, rigid);
    if (rc > 0) {
      if (m.comb) m.combine_took(since, hot_.pulls);
      ++hot_.pulls;
    }
    return rc;
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return error_transport;
  }
}

int engine::unpull() noexcept {
  if (const auto rc = state_.refuse(call::unpull)) return *rc;
  auto& m = *impl_;
  if (hot_.window.pulled) {
    hot_.window.cur -= hot_.window.stride;
    hot_.window.pulled = false;
  } else if (m.last.valid) {
    m.unpull_record();
  } else {
    return error_unpull;
  }
  ++m.now.unpulls;
  ++m.life.unpulls;
  return 1;
}

int engine::advance(bool done) noexcept {
  auto& m = *impl_;
  const auto refused = state_.refuse(advance_call(done));
  if (!refused || *refused >= 0) {  // COMPLETE's done counts as a call like any other
    ++m.now.advances;
    ++m.life.advances;
  }
  if (refused) return *refused;
  if (m.post_failed) return error_transport;  // a send from push() failed (last_message)
  if (m.trace) [[unlikely]]
    m.trace->advance_enter();
  const auto entered = std::chrono::steady_clock::now();  // one of the two reads (TERM-16)
  // The record says this call began before any MPI call of it runs: a board read that waits
  // for this rank's MPI progress (status_window) is answered by the first of them.
  if (m.watch) [[unlikely]]
    m.watch_enter();
  bool worked = false;  // anything happened since the last advance
  try {
    m.settle();
    ++m.tick;
    m.transport->progress();
    m.drain_transport();
    m.forward_all();
    if (done) m.counting.stop_pushing();
    if (options_.steady || m.counting.done_pushing())
      m.flush_older_than(static_cast<std::uint64_t>(options_.steady_period));
    m.counting.close_stages(m);  // Wesolowski et al. 2014, sec. III.D (TERM-4)
    if (m.trace) [[unlikely]]
      m.trace->stages_closed(m.counting.epoch(), m.counting.closed_stages());
    m.transport->progress();
    // A caller spinning on a blocked push or an empty pull waits for another rank; after
    // a few idle rounds give the core away, so oversubscribed ranks make progress.
    const std::uint64_t a = m.activity();
    worked = a != m.activity_mark;
    if (worked) {
      m.activity_mark = a;
      m.idle_advances = 0;
    } else if (++m.idle_advances >= impl::idle_rounds_before_yield) {
      std::this_thread::yield();
    }
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return error_transport;
  }
  if (m.counting.done_pushing()) hot_.push_ok = false;
  const bool delivered =
      m.counting.done_pushing() && m.counting.everything_received() && m.transport->idle();
  const int rc =
      state_.after_advance(m.counting.done_pushing(), delivered, delivered && m.nothing_to_pull());
  const std::uint64_t inside = m.count_advance(entered, rc == termination::done);
  if (m.comb) m.combine_advanced(inside, worked);  // TERM-28
  if (m.watch) [[unlikely]]
    m.watch_step(true);
  if (m.trace) [[unlikely]]
    m.trace->advance_leave();
  return rc;
}

bool engine::sending() const noexcept {
  const auto& m = *impl_;
  if (!m.transport->idle()) return true;
  for (int lane = 0; lane <= m.lanes.loopback(); ++lane)
    if (m.lanes.has_items(lane)) return true;
  return m.caches_hold();  // held items are in no buffer yet (TERM-27)
}

int engine::flush() noexcept {
  if (const auto rc = state_.refuse(call::flush)) return *rc;
  if (impl_->trace) [[unlikely]]
    impl_->trace->flush();
  const std::int64_t since = impl_->comb ? trace_recorder::now() : 0;  // TERM-28
  try {
    impl_->flush_older_than(0);
    impl_->flush_loopback();
    impl_->transport->progress();
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return error_transport;
  }
  if (impl_->comb) impl_->combine_inside(since);
  return 1;
}

int engine::reset() noexcept {
  if (const auto rc = state_.refuse(call::reset)) return *rc;
  try {
    impl_->settle();
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return error_transport;
  }
  state_.reset();
  hot_.push_ok = false;
  if (impl_->watch) impl_->watch_step(false);
  return 1;
}

engine_stats engine::stats(bool cumulative) const { return impl_->stats(cumulative); }

rank_status engine::status() const { return impl_->status(); }

std::size_t engine::memory_bytes() const noexcept {
  return impl_->transport->memory_bytes() + impl_->fixed_bytes(false);
}

std::size_t engine::max_memory_bytes() const noexcept {
  return impl_->transport->max_memory_bytes() + impl_->fixed_bytes(true);
}

}  // namespace convoy::termination
