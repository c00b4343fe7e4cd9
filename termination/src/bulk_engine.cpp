// The bulk-synchronous engine kind (Maley & DeVinney 2019, sec. 4.1): its calls checked against the
// state machine (termination::conveyor_state), its lanes and delivery window published in
// the interface's hot state, and the collective decision of advance(); the buffers and the
// exchange are aggregation's bulk_exchange.
#include <algorithm>
#include <chrono>
#include <convoy/base/error.hpp>
#include <convoy/termination/bulk_engine.hpp>
#include <exception>
#include <new>

namespace convoy::termination {

namespace {
int rank_of(const aggregation::bulk_exchange* x) {
  if (!x) throw error("bulk_engine: null exchange");
  return x->rank();
}
}  // namespace

bulk_engine::bulk_engine(std::unique_ptr<aggregation::bulk_exchange> exchange, options o)
    : conveyor_engine(rank_of(exchange.get()), exchange->n_ranks()),
      exchange_(std::move(exchange)),
      options_(o) {
  const auto P = static_cast<std::size_t>(n_ranks_);
  lanes_.resize(P);
  hops_.resize(P);
  for (std::size_t d = 0; d < P; ++d) hops_[d] = {static_cast<std::uint32_t>(d), 0};
  out_counts_.assign(P, 0);
  in_counts_.assign(P, 0);
  for (int d = 0; d < n_ranks_; ++d)
    if (d != rank_) links_now_.push_back(link_stats{d});
  links_life_ = links_now_;
  hot_.n_ranks = static_cast<unsigned>(P);
  hot_.lanes = lanes_.data();
  hot_.first_hops = hops_.data();
  if (!options_.dynamic) exchange_->acquire_buffers();
}

bulk_engine::~bulk_engine() = default;

// Every lane at the start of its send buffer. A lane takes records while used <= limit, so
// the limit is the offset of the last record that fits; the region's 8 bytes after it take
// the inline push's tag store (bulk_exchange::region_bytes).
void bulk_engine::open_lanes() noexcept {
  const std::size_t item = hot_.item_bytes;
  const auto limit = static_cast<std::uint32_t>((exchange_->buffer_bytes() / item - 1) * item);
  for (std::size_t d = 0; d < lanes_.size(); ++d) {
    aggregation::send_lane& l = lanes_[d];
    l.buf = exchange_->send_buffer(static_cast<int>(d));
    l.used = 0;
    l.limit = limit;
    l.record_bytes = static_cast<std::uint32_t>(item);
    l.tag_bytes = 0;
    l.items = 0;
  }
  exchanged_ = hot_.pushes;
  any_full_ = false;
}

int bulk_engine::begin(std::size_t item_bytes) {
  if (const auto rc = state_.refuse(call::begin)) return *rc;
  if (item_bytes == 0 || item_bytes > exchange_->buffer_bytes()) return error_size;
  try {
    exchange_->acquire_buffers();
    exchange_->begin_cycle(item_bytes);
  } catch (const std::bad_alloc&) {
    return error_alloc;
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return error_transport;
  }
  life_.pushes += hot_.pushes;
  life_.pulls += hot_.pulls;
  hot_.pushes = hot_.pulls = 0;
  hot_.item_bytes = item_bytes;
  hot_.window = {};
  open_lanes();
  std::fill(in_counts_.begin(), in_counts_.end(), 0);
  done_ = finished_ = flush_ = false;
  next_src_ = in_counts_.size();
  now_ = engine_stats{};
  cycle_start_ = std::chrono::steady_clock::now();
  for (link_stats& l : links_now_) l = link_stats{l.peer};
  mark_ = exchange_->stats();
  ++now_.begins;
  ++life_.begins;
  state_.begin();
  hot_.push_ok = true;
  return 1;
}

void bulk_engine::lane_full(std::uint32_t) noexcept { any_full_ = true; }

int bulk_engine::push_slow(const void* item, int dest) noexcept {
  if (const auto rc = state_.refuse(call::push)) return *rc;
  if (static_cast<unsigned>(dest) >= hot_.n_ranks) return error_rank;
  if (!item) return error_argument;
  if (lanes_[static_cast<std::size_t>(dest)].used > lanes_[static_cast<std::size_t>(dest)].limit)
    return 0;         // full until the next exchange
  return error_size;  // push<N> with N != item_bytes()
}

void bulk_engine::open_window(std::size_t src) noexcept {
  const std::byte* base = exchange_->receive_buffer(static_cast<int>(src));
  aggregation::delivery_window& w = hot_.window;
  w.cur = base;
  w.end = base + static_cast<std::size_t>(in_counts_[src]) * hot_.item_bytes;
  w.stride = hot_.item_bytes;
  w.source_of_tag = nullptr;
  w.from = static_cast<int>(src);
  w.in_link = static_cast<int>(src);
  next_src_ = src + 1;
}

int bulk_engine::pull_slow(item_view& out, bool) noexcept {
  // COMPLETE too: the last exchange's items may still be there to pull (the table's fail
  // is what "none left" returns below).
  if (const auto rc = state_.refuse(call::pull); rc && *rc < 0) return *rc;
  hot_.window.pulled = false;  // a pull that finds nothing makes the last one final
  while (next_src_ < in_counts_.size() && in_counts_[next_src_] == 0) ++next_src_;
  if (next_src_ == in_counts_.size()) return 0;
  open_window(next_src_);
  return pull(out);
}

int bulk_engine::unpull() noexcept {
  if (const auto rc = state_.refuse(call::unpull)) return *rc;
  if (!hot_.window.pulled) return error_unpull;
  hot_.window.cur -= hot_.window.stride;
  hot_.window.pulled = false;
  ++now_.unpulls;
  ++life_.unpulls;
  return 1;
}

std::size_t bulk_engine::pending() const noexcept {
  const aggregation::delivery_window& w = hot_.window;
  std::size_t n = hot_.item_bytes && w.cur < w.end
                      ? static_cast<std::size_t>(w.end - w.cur) / hot_.item_bytes
                      : 0;
  for (std::size_t s = next_src_; s < in_counts_.size(); ++s)
    n += static_cast<std::size_t>(in_counts_[s]);
  return n;
}

int bulk_engine::finish() noexcept {
  finished_ = true;
  hot_.push_ok = false;
  return state_.after_advance(true, true, pending() == 0);  // CLEANUP or COMPLETE
}

void bulk_engine::run_exchange() {
  for (std::size_t d = 0; d < lanes_.size(); ++d)
    out_counts_[d] = static_cast<int>(lanes_[d].items);
  exchange_->exchange(out_counts_.data(), in_counts_.data());
  count_links();
  open_lanes();
  flush_ = false;
  hot_.window = {};
  next_src_ = 0;
}

// One exchange per link (TERM-16): to every other rank at most one buffer each way; full
// when its lane was past the limit, bytes as items times their size (no header; before
// compression).
void bulk_engine::count_links() noexcept {
  const auto item = static_cast<std::uint64_t>(hot_.item_bytes);
  for (auto* links : {&links_now_, &links_life_})
    for (link_stats& l : *links) {
      const auto d = static_cast<std::size_t>(l.peer);
      const auto out = static_cast<std::uint64_t>(out_counts_[d]);
      const auto in = static_cast<std::uint64_t>(in_counts_[d]);
      if (out > 0) {
        l.items_sent += out;
        l.bytes_sent += out * item;
        ++(lanes_[d].used > lanes_[d].limit ? l.buffers_full : l.buffers_partial);
      }
      if (in > 0) {
        l.items_received += in;
        l.bytes_received += in * item;
        ++l.buffers_received;
      }
    }
}

// Times the step (TERM-16: two clock reads per call) and each cycle from begin to its end.
int bulk_engine::advance(bool done) noexcept {
  const auto refused = state_.refuse(advance_call(done));
  if (!refused || *refused >= 0) {  // COMPLETE's done counts as a call like any other
    ++now_.advances;
    ++life_.advances;
  }
  if (refused) return *refused;
  const auto entered = std::chrono::steady_clock::now();
  const int rc = advance_step(done);
  const auto left = std::chrono::steady_clock::now();
  const double in_advance = std::chrono::duration<double>(left - entered).count();
  const double cycle = std::chrono::duration<double>(left - cycle_start_).count();
  const auto memory = static_cast<std::uint64_t>(memory_bytes());
  for (auto* s : {&now_, &life_}) {
    s->advance_seconds += in_advance;
    if (rc == termination::done) {
      s->cycle_seconds += cycle;
      s->memory_high_water = std::max(s->memory_high_water, memory);
    }
  }
  return rc;
}

int bulk_engine::advance_step(bool done) noexcept {
  hot_.window.pulled = false;
  if (finished_) return finish();
  done_ = done_ || done;
  try {
    const std::uint64_t unsent_items = unsent();
    const bool need_send = any_full_ || (unsent_items > 0 && (done_ || options_.steady || flush_));
    int flags[4] = {pending() > 0, !done_, need_send, unsent_items > 0};
    exchange_->agree_max(flags, 4);
    const bool all_drained = flags[0] == 0, all_done = flags[1] == 0;
    if (all_done && flags[3] == 0) return finish();
    if (all_drained && flags[2]) {
      run_exchange();
      if (all_done) return finish();  // every item was just sent: nothing more can come
    }
  } catch (const std::exception& ex) {
    last_message_ = ex.what();
    return error_transport;
  }
  if (done_) hot_.push_ok = false;
  return state_.after_advance(done_, false, false);  // WORKING or ENDGAME
}

int bulk_engine::flush() noexcept {
  if (const auto rc = state_.refuse(call::flush)) return *rc;
  flush_ = true;
  return 1;
}

int bulk_engine::reset() noexcept {
  if (const auto rc = state_.refuse(call::reset)) return *rc;
  exchange_->end_cycle();
  if (options_.dynamic) exchange_->release_buffers();
  state_.reset();
  hot_.push_ok = false;
  hot_.window = {};
  return 1;
}

engine_stats bulk_engine::stats(bool cumulative) const {
  engine_stats s = cumulative ? life_ : now_;
  s.pushes += hot_.pushes;
  s.pulls += hot_.pulls;
  const auto& x = exchange_->stats();
  const auto since = [&](std::uint64_t now, std::uint64_t then) {
    return cumulative ? now : now - then;
  };
  s.buffers_sent = since(x.messages, mark_.messages);
  s.bytes_sent = since(x.bytes, mark_.bytes);
  s.buffers_received = since(x.received, mark_.received);
  s.collectives = since(x.collectives, mark_.collectives);
  // The stage's items are those put into its links' buffers, as on a streaming engine:
  // items to this rank itself never cross a link, so they are in pushes but not here.
  stage_stats st;
  st.links = cumulative ? links_life_ : links_now_;
  for (const link_stats& l : st.links) st.items += l.items_sent;
  st.buffers = s.buffers_sent;
  st.bytes = s.bytes_sent;
  s.stages.assign(1, st);
  s.memory_high_water = std::max(s.memory_high_water, static_cast<std::uint64_t>(memory_bytes()));
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

}  // namespace convoy::termination
