// untyped_conveyor: the engine of its kind plus DYNAMIC buffers and lifetime statistics.
#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/conveyor_api/untyped_conveyor.hpp>
#include <memory>
#include <utility>

namespace convoy {

namespace {
void add(termination::engine_stats& into, const termination::engine_stats& s) {
  into.begins += s.begins;
  into.pushes += s.pushes;
  into.pulls += s.pulls;
  into.unpulls += s.unpulls;
  into.advances += s.advances;
  into.buffers_sent += s.buffers_sent;
  into.bytes_sent += s.bytes_sent;
  into.buffers_received += s.buffers_received;
  into.collectives += s.collectives;
  into.combined += s.combined;
  into.combine_stops += s.combine_stops;
  if (into.stages.size() < s.stages.size()) into.stages.resize(s.stages.size());
  for (std::size_t i = 0; i < s.stages.size(); ++i) {
    into.stages[i].items += s.stages[i].items;
    into.stages[i].buffers += s.stages[i].buffers;
    into.stages[i].bytes += s.stages[i].bytes;
  }
}
}  // namespace

untyped_conveyor::untyped_conveyor(MPI_Comm comm, conveyor_options options)
    : comm_(comm), options_(std::move(options)) {
  // API-1: the settings are resolved once per construction (unless the caller did), and
  // kept for the engines a dynamic conveyor builds at begin.
  if (!options_.settings)
    options_.settings = std::make_shared<const base::settings>(base::settings::from_env(comm_));
  const base::settings& s = *options_.settings;
  if (options_.kind == conveyor_kind::bulk) {
    engine_ = make_bulk_engine(comm_, options_, s);
    rank_ = engine_->rank();
    n_ranks_ = engine_->n_ranks();
    engine_options_.steady = options_.steady;
    engine_options_.capacity_bytes = engine_->max_item_bytes();
    max_item_bytes_ = engine_->max_item_bytes();
    max_memory_bytes_ = engine_->max_memory_bytes();
    return;
  }
  plan_ = make_plan(comm_, options_, s);
  // Built once even when dynamic: construction validates everything (plan, options,
  // transport) and learns the engine's shape; a dynamic conveyor then drops it until begin.
  engine_ = make_mpi_engine(comm_, plan_, options_, s);
  learn_shape();
  if (options_.dynamic) engine_.reset();
}

untyped_conveyor::untyped_conveyor(std::unique_ptr<termination::engine> engine) {
  if (!engine) throw error("untyped_conveyor: null engine");
  options_.elastic = engine->options().elastic;
  options_.steady = engine->options().steady;
  engine_ = std::move(engine);
  learn_shape();
}

untyped_conveyor::~untyped_conveyor() = default;
untyped_conveyor::untyped_conveyor(untyped_conveyor&&) noexcept = default;
untyped_conveyor& untyped_conveyor::operator=(untyped_conveyor&&) noexcept = default;

void untyped_conveyor::learn_shape() {
  const termination::engine& e = *streaming();
  // Over an engine built elsewhere: the plan is the engine's, which lives as long as this
  // conveyor (never dynamic), so a non-owning pointer is enough.
  if (!plan_) plan_ = std::shared_ptr<const router::route_plan>(std::shared_ptr<void>(), &e.plan());
  rank_ = engine_->rank();
  n_ranks_ = engine_->n_ranks();
  engine_options_ = e.options();
  max_item_bytes_ = engine_->max_item_bytes();
  max_memory_bytes_ = engine_->max_memory_bytes();
}

int untyped_conveyor::begin(std::size_t item_bytes) {
  if (bulk()) return engine_->begin(item_bytes);  // takes its buffers itself when dynamic
  attach();
  if (!engine_) return termination::error_state;
  const int rc = engine_->begin(item_bytes);
  if (rc < 0) detach();
  return rc;
}

void untyped_conveyor::attach() {
  if (!engine_ && options_.dynamic && plan_)
    engine_ = make_mpi_engine(comm_, plan_, options_, *options_.settings);
}

void untyped_conveyor::detach() noexcept {
  if (!engine_ || bulk() || !options_.dynamic ||
      engine_->current_state() != termination::state::dormant)
    return;
  try {
    termination::engine_stats life = engine_->stats(true);
    if (life.begins > 0) {  // a cycle ran: its counters stay visible
      add(retired_, life);
      last_ = engine_->stats(false);
    }
  } catch (...) {  // statistics are lost, the buffers are not
  }
  engine_.reset();
}

int untyped_conveyor::reset() {
  if (bulk()) return engine_->reset();
  if (!engine_) return options_.dynamic && plan_ ? 1 : termination::error_state;
  const int rc = engine_->reset();
  if (rc > 0) detach();
  return rc;
}

termination::engine_stats untyped_conveyor::stats(bool cumulative) const {
  if (!cumulative) return engine_ ? engine_->stats(false) : last_;
  termination::engine_stats s = retired_;
  if (engine_) add(s, engine_->stats(true));
  return s;
}

std::size_t untyped_conveyor::memory_bytes() const noexcept {
  return engine_ ? engine_->memory_bytes() : 0;
}

std::string untyped_conveyor::last_message() const {
  return engine_ ? engine_->last_message() : std::string();
}

}  // namespace convoy
