// The bulk-synchronous engine kind (seed 000 sec. 4.1): its calls checked against the
// state machine (termination::conveyor_state) and the collective decision of advance(); the buffers and the exchange are aggregation's
// bulk_exchange. Behaviour reference: the C façade's simple conveyor.
#include <algorithm>
#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/bulk_engine.hpp>
#include <exception>
#include <new>

namespace convoy {

namespace term = convoy::termination;

bulk_engine::bulk_engine(std::unique_ptr<aggregation::bulk_exchange> exchange, options o)
    : exchange_(std::move(exchange)), options_(o) {
  if (!exchange_) throw error("bulk_engine: null exchange");
  const auto P = static_cast<std::size_t>(exchange_->n_ranks());
  n_ranks_u_ = static_cast<unsigned>(P);
  region_ = exchange_->region_bytes();
  out_counts_.assign(P, 0);
  in_counts_.assign(P, 0);
  out_count_ = out_counts_.data();
  if (!options_.dynamic) exchange_->acquire_buffers();
}

bulk_engine::~bulk_engine() = default;

int bulk_engine::begin(std::size_t item_bytes) {
  if (state_.check(term::call::begin) != term::verdict::proceed) return term::error_state;
  if (item_bytes == 0 || item_bytes > exchange_->capacity_bytes()) return term::error_size;
  try {
    exchange_->acquire_buffers();
    exchange_->begin_cycle(item_bytes);
  } catch (const std::bad_alloc&) {
    return term::error_alloc;
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return term::error_transport;
  }
  item_bytes_ = item_bytes;
  cap_items_ = exchange_->capacity_bytes() / item_bytes;
  send_base_ = exchange_->send_buffer(0);
  std::fill(out_counts_.begin(), out_counts_.end(), 0);
  std::fill(in_counts_.begin(), in_counts_.end(), 0);
  out_total_ = 0;
  any_full_ = done_ = finished_ = flush_ = pulled_ = false;
  cur_ = end_ = nullptr;
  next_src_ = in_counts_.size();
  life_.pushes += pushes_;
  life_.pulls += pulls_;
  pushes_ = pulls_ = 0;
  now_ = term::engine_stats{};
  mark_ = exchange_->stats();
  ++now_.begins;
  ++life_.begins;
  state_.begin();
  accepting_ = true;
  return 1;
}

int bulk_engine::push_slow(const void* item, int dest) noexcept {
  if (state_.check(term::call::push) != term::verdict::proceed) return term::error_state;
  if (static_cast<unsigned>(dest) >= n_ranks_u_) return term::error_rank;
  if (!item) return term::error_argument;
  return term::error_size;  // push<N> with N != item_bytes()
}

void bulk_engine::open_window(std::size_t src) noexcept {
  const std::byte* base = exchange_->receive_buffer(static_cast<int>(src));
  cur_ = base;
  end_ = base + static_cast<std::size_t>(in_counts_[src]) * item_bytes_;
  from_ = static_cast<int>(src);
  next_src_ = src + 1;
}

int bulk_engine::pull_slow(term::item_view& out) noexcept {
  if (state_.check(term::call::pull) == term::verdict::illegal) return term::error_state;
  pulled_ = false;  // a pull that finds nothing makes the last one final (as the engine)
  while (next_src_ < in_counts_.size() && in_counts_[next_src_] == 0) ++next_src_;
  if (next_src_ == in_counts_.size()) return 0;
  open_window(next_src_);
  return pull(out);
}

int bulk_engine::unpull() noexcept {
  const term::verdict v = state_.check(term::call::unpull);
  if (v == term::verdict::illegal) return term::error_state;
  if (v == term::verdict::fail) return 0;  // COMPLETE
  if (!pulled_) return term::error_unpull;
  cur_ -= item_bytes_;
  pulled_ = false;
  ++now_.unpulls;
  ++life_.unpulls;
  return 1;
}

std::size_t bulk_engine::pending() const noexcept {
  std::size_t n = item_bytes_ ? static_cast<std::size_t>(end_ - cur_) / item_bytes_ : 0;
  for (std::size_t s = next_src_; s < in_counts_.size(); ++s)
    n += static_cast<std::size_t>(in_counts_[s]);
  return n;
}

int bulk_engine::finish() noexcept {
  finished_ = true;
  accepting_ = false;
  return state_.after_advance(true, true, pending() == 0);  // CLEANUP or COMPLETE
}

void bulk_engine::run_exchange() {
  exchange_->exchange(out_counts_.data(), in_counts_.data());
  std::fill(out_counts_.begin(), out_counts_.end(), 0);
  out_total_ = 0;
  any_full_ = flush_ = false;
  cur_ = end_ = nullptr;
  next_src_ = 0;
}

int bulk_engine::advance(bool done) noexcept {
  const term::verdict v = state_.check(done ? term::call::advance_done : term::call::advance);
  if (v == term::verdict::illegal) return term::error_state;
  if (v == term::verdict::fail) return term::done;  // COMPLETE
  ++now_.advances;
  ++life_.advances;
  pulled_ = false;
  if (finished_) return finish();
  done_ = done_ || done;
  try {
    const bool need_send = any_full_ || (out_total_ > 0 && (done_ || options_.steady || flush_));
    int flags[4] = {pending() > 0, !done_, need_send, out_total_ > 0};
    exchange_->agree_max(flags, 4);
    const bool all_drained = flags[0] == 0, all_done = flags[1] == 0;
    if (all_done && flags[3] == 0) return finish();
    if (all_drained && flags[2]) {
      run_exchange();
      if (all_done) return finish();  // every item was just sent: nothing more can come
    }
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return term::error_transport;
  }
  if (done_) accepting_ = false;
  return state_.after_advance(done_, false, false);  // WORKING or ENDGAME
}

int bulk_engine::flush() noexcept {
  if (state_.check(term::call::flush) != term::verdict::proceed) return term::error_state;
  flush_ = true;
  return 1;
}

int bulk_engine::reset() noexcept {
  const term::verdict v = state_.check(term::call::reset);
  if (v == term::verdict::no_op) return 1;  // DORMANT
  if (v == term::verdict::illegal) return term::error_state;
  exchange_->end_cycle();
  if (options_.dynamic) exchange_->release_buffers();
  state_.reset();
  accepting_ = false;
  return 1;
}

term::engine_stats bulk_engine::stats(bool cumulative) const {
  term::engine_stats s = cumulative ? life_ : now_;
  s.pushes += pushes_;
  s.pulls += pulls_;
  const auto& x = exchange_->stats();
  const auto since = [&](std::uint64_t now, std::uint64_t then) {
    return cumulative ? now : now - then;
  };
  s.buffers_sent = since(x.messages, mark_.messages);
  s.bytes_sent = since(x.bytes, mark_.bytes);
  s.buffers_received = since(x.received, mark_.received);
  term::stage_stats st;
  st.items = s.pushes;
  st.buffers = s.buffers_sent;
  st.bytes = s.bytes_sent;
  s.stages.assign(1, st);
  return s;
}

std::uint64_t bulk_engine::collectives(bool cumulative) const noexcept {
  const auto n = exchange_->stats().collectives;
  return cumulative ? n : n - mark_.collectives;
}

std::uint64_t bulk_engine::saved_bytes(bool cumulative) const noexcept {
  const auto n = exchange_->stats().saved_bytes;
  return cumulative ? n : n - mark_.saved_bytes;
}

}  // namespace convoy
