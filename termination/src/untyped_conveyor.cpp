// untyped_conveyor: the engine of its kind plus DYNAMIC buffers and lifetime statistics.
#include <algorithm>
#include <convoy/aggregation/large_channel.hpp>
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/termination/untyped_conveyor.hpp>
#include <memory>
#include <string>
#include <utility>

#include "engine_build.hpp"
#include "stats_report.hpp"

namespace convoy::termination {

struct untyped_conveyor::report {
  detail::stats_entry entry;
};

namespace {
void add(termination::engine_stats& into, const termination::engine_stats& s) {
  termination::accumulate(into, s);
}
}  // namespace

untyped_conveyor::untyped_conveyor(MPI_Comm comm, conveyor_options options,
                                   std::shared_ptr<const router::route_plan> plan)
    : comm_(comm), options_(std::move(options)) {
  if (options_.kind == conveyor_kind::elastic)
    options_.steady = true;  // tickets must leave
                             // (sec. 4.4.1)
  // API-1: the settings are resolved once per construction (unless the caller did), and
  // kept for the engines a dynamic conveyor builds at begin.
  if (!options_.settings)
    options_.settings = std::make_shared<const base::settings>(base::settings::from_env(comm_));
  const base::settings& s = *options_.settings;
  if (s.stats_path) {  // API-30: collective, checks the path once for every rank
    report_ = std::make_unique<report>();
    report_->entry.created_seconds = detail::open_stats_report(comm_, s);
    report_->entry.api = "cpp";
    report_->entry.kind = options_.kind == conveyor_kind::bulk      ? "bulk"
                          : options_.kind == conveyor_kind::elastic ? "elastic"
                          : options_.tensor_order != 0              ? "tensor"
                                                                    : "mesh";
  }
  if (options_.kind == conveyor_kind::bulk) {
    auto bulk = make_bulk_engine(comm_, options_, s);
    bulk_ = bulk.get();
    engine_ = std::move(bulk);
    rank_ = engine_->rank();
    n_ranks_ = engine_->n_ranks();
    engine_options_.steady = options_.steady;
    engine_options_.buffer_bytes = engine_->max_item_bytes();
    max_item_bytes_ = engine_->max_item_bytes();
    max_buffered_ = max_item_bytes_;
    max_memory_bytes_ = engine_->max_memory_bytes();
    return;
  }
  plan_ = plan ? std::move(plan) : make_plan(comm_, options_, s);
  // Built once even when dynamic: construction validates everything (plan, options,
  // transport, channel) and learns the engine's shape; a dynamic conveyor then drops it
  // until begin. The buffers are agreed once here (one collective); a dynamic conveyor's
  // later engines are built over the same agreement (engine_options_), with no further one.
  build(true);
  learn_shape();
  rebuilds_ = options_.dynamic;
  if (rebuilds_) drop();
}

// The streaming engine, and for the elastic kind the elastic engine over it with a
// large-item channel when items can exceed a buffer (its two buffers from options.buffers,
// taken after the engine's link buffers and given back before them: LIFO).
void untyped_conveyor::build(bool first) {
  const base::settings& s = *options_.settings;
  std::unique_ptr<termination::engine> e =
      first ? make_mpi_engine(comm_, plan_, options_, s)
            : detail::build_mpi_engine(comm_, plan_, options_, s, engine_options_);
  streaming_ = e.get();
  if (options_.kind != conveyor_kind::elastic) {
    engine_ = std::move(e);
    return;
  }
  base_ = std::move(e);
  try {
    const std::size_t small = base_->max_item_bytes();
    if (small < elastic_engine::min_buffered_bytes)
      throw error("buffers of " + std::to_string(base_->options().buffer_bytes) +
                  " bytes (items up to " + std::to_string(small) +
                  " bytes) are too small for elastic items (a buffer must hold a 25-byte ticket)");
    const std::size_t bound = options_.item_bound ? options_.item_bound : small - 1;
    std::unique_ptr<aggregation::large_channel> channel;
    if (bound > small - 1) {
      aggregation::mpi_large_channel::options o;
      o.max_item_bytes = bound;
      o.memory = options_.buffers;
      // The setting (checked on every rank alike): automatic falls back to two-sided
      // where MPI makes no window.
      channel = aggregation::make_large_channel(comm_, s.large_or_auto(), o);
    }
    auto ee = std::make_unique<elastic_engine>(streaming_, std::move(channel), bound);
    elastic_ = ee.get();
    engine_ = std::move(ee);
  } catch (...) {
    drop();
    throw;
  }
}

// The engine goes, the elastic engine (and its channel) before the one below it (LIFO).
void untyped_conveyor::drop() noexcept {
  engine_.reset();
  base_.reset();
  streaming_ = nullptr;
  elastic_ = nullptr;
}

untyped_conveyor::untyped_conveyor(std::unique_ptr<termination::engine> engine) {
  if (!engine) throw error("untyped_conveyor: null engine");
  // The kind that builds such an engine: its item mode, combining or not.
  switch (engine->options().mode) {
    case termination::item_mode::elastic:
      options_.kind = conveyor_kind::elastic;
      break;
    case termination::item_mode::broadcast:
      options_.kind = conveyor_kind::broadcast;
      break;
    case termination::item_mode::rigid:
      options_.kind = engine->options().combine.fn != nullptr ? conveyor_kind::combining
                                                              : conveyor_kind::streaming;
      break;
  }
  options_.steady = engine->options().steady;
  streaming_ = engine.get();
  engine_ = std::move(engine);
  learn_shape();
}

// With CONVOY_STATS, destruction is collective over the conveyor's communicator (as
// convey_free is): the counters go to the job's document (API-30).
untyped_conveyor::untyped_conveyor() noexcept = default;
untyped_conveyor::~untyped_conveyor() {
  record_report();
  drop();
}
untyped_conveyor::untyped_conveyor(untyped_conveyor&& o) noexcept : untyped_conveyor() {
  *this = std::move(o);
}
// The conveyor replaced is destroyed: collective with CONVOY_STATS, as the destructor.
untyped_conveyor& untyped_conveyor::operator=(untyped_conveyor&& o) noexcept {
  if (this == &o) return *this;
  record_report();
  drop();
  engine_ = std::move(o.engine_);
  base_ = std::move(o.base_);
  streaming_ = std::exchange(o.streaming_, nullptr);
  bulk_ = std::exchange(o.bulk_, nullptr);
  rebuilds_ = o.rebuilds_;
  elastic_ = std::exchange(o.elastic_, nullptr);
  retaken_ = o.retaken_;
  retake_mark_ = o.retake_mark_;
  retakes_now_ = o.retakes_now_;
  retakes_life_ = o.retakes_life_;
  message_ = std::move(o.message_);
  max_buffered_ = o.max_buffered_;
  comm_ = o.comm_;
  options_ = std::move(o.options_);
  plan_ = std::move(o.plan_);
  engine_options_ = o.engine_options_;
  rank_ = o.rank_;
  n_ranks_ = o.n_ranks_;
  max_item_bytes_ = o.max_item_bytes_;
  max_memory_bytes_ = o.max_memory_bytes_;
  combine_max_bytes_ = o.combine_max_bytes_;
  retired_ = std::move(o.retired_);
  last_ = std::move(o.last_);
  report_ = std::move(o.report_);
  return *this;
}

void untyped_conveyor::set_report_label(std::string api, std::string kind) {
  if (!report_) return;
  report_->entry.api = std::move(api);
  report_->entry.kind = std::move(kind);
}

// A conveyor that never began has nothing to report (nor do the candidates a layout
// choice builds and drops); begins are collective, so every rank agrees.
void untyped_conveyor::record_report() noexcept {
  if (!report_ || !options_.settings) return;
  try {
    detail::stats_entry& e = report_->entry;
    e.life = stats(true);
    if (e.life.begins > 0) {
      if (plan_) {
        e.mesh = plan_->mesh_sizes();
        e.stage_dimension.clear();
        for (int k = 0; k < plan_->n_stages(); ++k)
          e.stage_dimension.push_back(plan_->stage_dimension(k));
      } else {
        e.stage_dimension.assign(e.life.stages.size(), -1);
      }
      e.buffer_bytes = engine_options_.buffer_bytes;
      e.n_buffers = options_.kind == conveyor_kind::bulk ? 1 : engine_options_.n_buffers;
      // A caller that drove the engine itself (bench, async) began it there.
      if (e.item_bytes == 0 && engine_) e.item_bytes = engine_->item_bytes();
      if (termination::rules_of(engine_options_.mode).carries_size) e.item_bytes = 0;
      detail::record_stats(comm_, *options_.settings, e);
    }
  } catch (...) {  // the counters are lost, nothing else
  }
  report_.reset();
}

void untyped_conveyor::learn_shape() {
  const termination::engine& e = *streaming();
  // Over an engine built elsewhere: the plan is the engine's, which lives as long as this
  // conveyor (never dynamic), so a non-owning pointer is enough.
  if (!plan_) plan_ = std::shared_ptr<const router::route_plan>(std::shared_ptr<void>(), &e.plan());
  rank_ = engine_->rank();
  n_ranks_ = engine_->n_ranks();
  engine_options_ = e.options();
  max_item_bytes_ = engine_->max_item_bytes();
  max_buffered_ = elastic_ ? elastic_->max_small_bytes() : max_item_bytes_;
  max_memory_bytes_ = engine_->max_memory_bytes();
  combine_max_bytes_ = e.combine_max_bytes();
}

int untyped_conveyor::begin(std::size_t item_bytes) {
  // A DYNAMIC conveyor builds its engine here, unless no engine takes the size.
  if (rebuilds_ && engine_ == nullptr) {
    if (item_bytes > max_item_bytes_) return termination::error_size;
    attach();
  }
  if (!engine_) return termination::error_state;  // a placeholder
  const int rc = engine_->begin(item_bytes);
  if (rc < 0) detach();
  if (rc > 0) {
    retaken_ = false;
    retakes_now_ = 0;
    if (report_) report_->entry.item_bytes = item_bytes;
    // A combining cycle's item size sizes the hold-back caches, which count from now on.
    max_memory_bytes_ = engine_->max_memory_bytes();
    if (const termination::engine* e = streaming()) combine_max_bytes_ = e->combine_max_bytes();
  }
  return rc;
}

int untyped_conveyor::advance_keeping_pull(bool done) noexcept {
  if (!engine_) return advance(done);
  const aggregation::delivery_window& w = engine_->hot().window;
  const bool put_back = engine_->unpull() > 0;
  // Where the item is, when the window shows it (inline pulls); elsewhere unchecked.
  const std::byte* const expect = put_back && w.cur < w.end ? w.cur : nullptr;
  const int rc = engine_->advance(done);
  if (put_back) {
    termination::item_view v;
    if (engine_->pull(v, false) <= 0 || (expect && v.data != expect)) {
      message_ = "untyped_conveyor: the item kept across advance moved";
      return termination::error_transport;
    }
    retaken_ = true;
    retake_mark_ = engine_->hot().pulls;
    ++retakes_now_;
    ++retakes_life_;
  }
  return rc;
}

int untyped_conveyor::set_combine(const aggregation::combine_spec& spec) {
  if (options_.kind == conveyor_kind::bulk) return termination::error_mode;  // never combines
  if (termination::engine* e = streaming()) {
    const int rc = e->set_combine(spec);
    if (rc < 0) return rc;
  } else if (engine_ || !rebuilds_) {
    return termination::error_state;  // a placeholder
  } else if (const auto rc =
                 termination::combine_refusal(engine_options_.mode, spec.fn != nullptr)) {
    return *rc;  // what the engine would say
  }
  // The combining tables count in max_memory_bytes from now on (or no longer); a dynamic
  // conveyor's next engine will hold them as its dropped one would have.
  if (const termination::engine* e = streaming()) {
    max_memory_bytes_ = e->max_memory_bytes();
  } else {
    if (options_.combine.fn != nullptr) max_memory_bytes_ -= combine_max_bytes_;
    if (spec.fn != nullptr) max_memory_bytes_ += combine_max_bytes_;
  }
  options_.combine = spec;
  engine_options_.combine = spec;
  return 1;
}

void untyped_conveyor::attach() {
  if (!engine_ && rebuilds_) build(false);
}

void untyped_conveyor::detach() noexcept {
  // Between cycles only: what `configure` may do (TERM-9).
  if (!engine_ || !rebuilds_ ||
      termination::refusal(engine_->current_state(), termination::call::configure))
    return;
  try {
    termination::engine_stats life = engine_->stats(true);
    if (life.begins > 0) {  // a cycle ran: its counters stay visible
      add(retired_, life);
      last_ = engine_->stats(false);
    }
  } catch (...) {  // statistics are lost, the buffers are not
  }
  drop();
}

int untyped_conveyor::reset() {
  if (!engine_) return rebuilds_ ? 1 : termination::error_state;  // DORMANT, or a placeholder
  const int rc = engine_->reset();
  if (rc > 0) {
    retaken_ = false;
    detach();
  }
  return rc;
}

termination::engine_stats untyped_conveyor::stats(bool cumulative) const {
  termination::engine_stats s;
  if (!cumulative) {
    s = engine_ ? engine_->stats(false) : last_;
  } else {
    s = retired_;
    if (engine_) add(s, engine_->stats(true));
  }
  // The items advance_keeping_pull took back and again are not the user's.
  const std::uint64_t retakes = cumulative ? retakes_life_ : retakes_now_;
  s.pulls -= std::min(s.pulls, retakes);
  s.unpulls -= std::min(s.unpulls, retakes);
  return s;
}

std::size_t untyped_conveyor::memory_bytes() const noexcept {
  return engine_ ? engine_->memory_bytes() : 0;
}

std::string untyped_conveyor::last_message() const {
  if (!message_.empty()) return message_;
  return engine_ ? engine_->last_message() : std::string();
}

}  // namespace convoy::termination
