// Request/reply over two steady conveyors (Maley & DeVinney 2019, sec. 6.1, Figure 4): the query
// slot, the pending reply and the reorder window (conveyor_api/README.md, API-23..25).
#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/biconveyor.hpp>
#include <new>

namespace convoy {

namespace {

constexpr std::size_t k_slot = sizeof(std::uint32_t);

conveyor_options steady(conveyor_options o) {
  o.steady = true;  // a reply must not wait for its answerer to be done
  return o;
}

}  // namespace

untyped_biconveyor::untyped_biconveyor(MPI_Comm comm, const conveyor_options& options)
    : queries_(comm, steady(options)), replies_(comm, steady(options)) {
  label_reports();
  refresh_hot();
}

untyped_biconveyor::untyped_biconveyor(untyped_conveyor queries, untyped_conveyor replies)
    : queries_(std::move(queries)), replies_(std::move(replies)) {
  label_reports();
  if (!queries_.engine_options().steady || !replies_.engine_options().steady)
    throw error("biconveyor: both conveyors must be steady (a reply may not wait for done)");
  if (queries_.n_ranks() != replies_.n_ranks() || queries_.n_ranks() == 0)
    throw error("biconveyor: the query and reply conveyors span different ranks");
  for (const untyped_conveyor* c : {&queries_, &replies_})
    if (termination::refusal(c->current_state(), termination::call::configure))
      throw error("biconveyor: the conveyors must be DORMANT");
  refresh_hot();
}

// CONVOY_STATS names both conveyors "biconvey" (queries first: created first, API-30).
void untyped_biconveyor::label_reports() {
  for (untyped_conveyor* c : {&queries_, &replies_})
    c->set_report_label("biconvey", c->kind() == conveyor_kind::bulk ? "bulk"
                                    : c->options().tensor_order != 0 ? "tensor"
                                                                     : "mesh");
}

// The inline paths see the query engine (a dynamic conveyor's exists from begin to reset)
// and the window's current storage; begin sets the sizes.
void untyped_biconveyor::refresh_hot() noexcept {
  termination::conveyor_engine* const e = queries_.engine();
  hot_.queries = e ? &e->hot() : nullptr;
  hot_.mask = window - 1;
  hot_.ring = ring_.data();
  hot_.filled = filled_.data();
}

void untyped_biconveyor::lane_full(std::uint32_t lane) noexcept {
  queries_.engine()->lane_full(lane);  // only the engine's hot state lets the inline push run
}

int untyped_biconveyor::begin(std::size_t query_bytes, std::size_t reply_bytes,
                              answer_function answer) {
  if (const auto rc = state_.refuse(termination::call::begin)) return *rc;
  if (!answer) return termination::error_argument;
  if (query_bytes == 0 || reply_bytes == 0) return termination::error_size;
  // Before the window is allocated: a reply above a buffer would make it huge.
  const auto fits = [](std::size_t bytes, const untyped_conveyor& c) {
    return c.max_item_bytes() >= k_slot && bytes <= c.max_item_bytes() - k_slot;
  };
  if (!fits(query_bytes, queries_) || !fits(reply_bytes, replies_)) return termination::error_size;
  try {
    query_item_.assign(k_slot + query_bytes, std::byte{0});
    reply_item_.assign(k_slot + reply_bytes, std::byte{0});
    ring_.assign(window * reply_bytes, std::byte{0});
    filled_.assign(window, 0);
  } catch (const std::bad_alloc&) {
    return termination::error_alloc;
  }
  int rc = queries_.begin(k_slot + query_bytes);
  refresh_hot();  // the window's new storage; a dynamic conveyor's engine
  if (rc < 0) return rc;
  rc = replies_.begin(k_slot + reply_bytes);
  if (rc < 0) {
    // Every rank fails alike (sizes are collective arguments): take the empty query
    // conveyor back to DORMANT together, so that nothing changed.
    while (queries_.advance(true) > 0) {
    }
    queries_.reset();
    refresh_hot();
    return rc;
  }
  hot_.query_bytes = query_bytes_ = query_bytes;
  hot_.reply_bytes = reply_bytes_ = reply_bytes;
  answer_ = std::move(answer);
  hot_.head = hot_.tail = 0;
  pending_ = false;
  state_.begin();
  return 1;
}

int untyped_biconveyor::push_slow(const void* query, int dest) noexcept {
  if (const auto rc = state_.refuse(termination::call::push)) return *rc;
  if (dest < 0 || dest >= n_ranks()) return termination::error_rank;
  if (!query) return termination::error_argument;
  if (hot_.tail - hot_.head == window) return 0;
  const auto slot = static_cast<std::uint32_t>(hot_.tail & (window - 1));
  std::memcpy(query_item_.data(), &slot, k_slot);
  std::memcpy(query_item_.data() + k_slot, query, query_bytes_);
  const int rc = queries_.push(query_item_.data(), dest);
  if (rc > 0) {
    filled_[slot] = 0;
    ++hot_.tail;
  }
  return rc;
}

int untyped_biconveyor::pull_slow(void* reply) noexcept {
  // COMPLETE too: what "nothing" returns below is the table's fail.
  if (const auto rc = state_.refuse(termination::call::pull); rc && *rc < 0) return *rc;
  if (!reply) return termination::error_argument;
  if (hot_.head == hot_.tail) return 0;
  const std::uint64_t slot = hot_.head & (window - 1);
  if (!filled_[slot]) {
    const int rc = collect();
    if (rc < 0) return rc;
    if (!filled_[slot]) return 0;
  }
  return pull(reply);  // the slot is filled: the inline take
}

// Answers incoming queries (Maley & DeVinney 2019, Figure 4), never answering one twice: a reply
// whose push failed waits, answered, until the next call.
int untyped_biconveyor::serve() {
  for (;;) {
    if (pending_) {
      const int rc = replies_.push(reply_item_.data(), pending_to_);
      if (rc <= 0) return rc;
      pending_ = false;
    }
    termination::item_view q;
    const int rc = queries_.pull(q);
    if (rc <= 0) return rc;
    std::memcpy(reply_item_.data(), q.data, k_slot);
    answer_(static_cast<const std::byte*>(q.data) + k_slot, reply_item_.data() + k_slot, q.from);
    pending_ = true;
    pending_to_ = q.from;
  }
}

// Puts every arrived reply in its slot of the window.
int untyped_biconveyor::collect() noexcept {
  for (;;) {
    termination::item_view r;
    const int rc = replies_.pull(r);
    if (rc <= 0) return rc;
    std::uint32_t slot = 0;
    std::memcpy(&slot, r.data, k_slot);
    std::memcpy(ring_.data() + slot * reply_bytes_, static_cast<const std::byte*>(r.data) + k_slot,
                reply_bytes_);
    filled_[slot] = 1;
  }
}

int untyped_biconveyor::advance(bool done) {
  done = state_.done_pushing(done);
  if (const auto rc = state_.refuse(termination::advance_call(done))) return *rc;
  int rc = serve();
  if (rc < 0) return rc;
  const int rq = queries_.advance(done);
  if (rq < 0) return rq;
  rc = serve();
  if (rc < 0) return rc;
  // No more replies from this rank once every query to it has been pulled and answered.
  const int rr = replies_.advance(rq == termination::done && !pending_);
  if (rr < 0) return rr;
  rc = collect();
  if (rc < 0) return rc;
  if (rr == termination::done || rr == termination::near) {
    // Never done while replies remain to be pulled.
    const bool drained = rr == termination::done && hot_.head == hot_.tail;
    return state_.after_advance(true, true, drained);  // CLEANUP or COMPLETE
  }
  return state_.after_advance(done, false, false);  // WORKING or ENDGAME
}

int untyped_biconveyor::reset() {
  if (const auto rc = state_.refuse(termination::call::reset)) return *rc;
  // Replies before queries: with dynamic buffers, the replies' were taken last (LIFO).
  int rc = replies_.reset();
  if (rc < 0) return rc;
  rc = queries_.reset();
  refresh_hot();  // a dynamic query conveyor's engine goes at reset
  if (rc < 0) return rc;
  state_.reset();
  return 1;
}

std::string untyped_biconveyor::last_message() const {
  std::string m = queries_.last_message();
  return m.empty() ? replies_.last_message() : m;
}

}  // namespace convoy
