#pragma once
// Internals of convoy::async::runtime shared by runtime.cpp and phase.cpp (not installed).
// Record layouts, per phase:
//   request  [u32 token][handler id: 0, 1 or 2 bytes][arguments, max over handlers]
//   reply    [u32 token | error bit][result, max over handlers]
// A token is the index of the waiting task's reply slot, or k_post for fire-and-forget.
#include <convoy/async/runtime.hpp>
#include <convoy/termination/untyped_conveyor.hpp>
#include <deque>
#include <string>
#include <vector>

namespace convoy::async {

using detail::k_error_bit;
using detail::k_post;
using detail::k_token_bytes;

struct runtime::impl {
  struct held_reply {  // a reply that found its path full; pushed before anything else
    bool has = false;
    int dest = -1;
  };

  MPI_Comm comm = MPI_COMM_NULL;  // our duplicate, for the per-phase agreements
  // The two conveyors own their engines (and, with CONVOY_STATS, report them when they
  // go); `requests` and `replies` are their streaming engines, driven directly.
  termination::untyped_conveyor request_conveyor, reply_conveyor;
  termination::engine* requests = nullptr;
  termination::engine* replies = nullptr;
  // The plan and options of the two conveyors, for the combining engines built later.
  std::shared_ptr<const router::route_plan> plan;
  conveyor_options conveyor;
  // A combinable update (combine.cpp): its conveyor is built by the first phase after its
  // definition (and, with CONVOY_STATS, reported as api "async", kind "combine"); `engine`
  // is its streaming engine, driven directly; `complete` once the engine said done in the
  // running phase.
  struct combiner {
    detail::combiner_entry entry;
    termination::untyped_conveyor conveyor;
    termination::engine* engine = nullptr;
    bool complete = false;
  };
  std::vector<combiner> combiners;
  std::vector<termination::engine*> combiner_engines;  // hot_.combiners points here
  void open_phase();                                   // phase.cpp
  void start_combiners();
  // Applies what arrived and advances every combining engine not yet complete; true once
  // all are complete (every combined update applied).
  bool advance_combiners(bool done);
  void drain_combiner(combiner& c);
  void finish_combiners(runtime_stats& st);
  std::vector<detail::handler_entry> handlers;
  std::deque<std::coroutine_handle<>> ready, new_roots;
  std::size_t id_bytes = 0, request_bytes = 0, reply_bytes = 0;
  std::vector<std::byte> request_record, reply_record, held_record;
  held_reply held;
  // Calls whose path was full, in issue order: their tasks stay suspended, no new task
  // starts, and every later request of this rank waits behind them (issue order holds).
  struct pending_call {
    int rank;
    std::uint32_t token, id;
    const std::byte* args;  // in the waiting task's awaiter, alive while it waits
  };
  std::deque<pending_call> pending;
  bool running = false;
  // A remote function runs: during a phase the inline paths are closed only then.
  [[nodiscard]] bool in_function() const noexcept { return running && !owner->hot_.open; }
  // Advances of the reply conveyor still owed after the last reply traffic. A conveyor
  // that carries nothing must not be advanced in a tight loop: the engine yields the core
  // after a few idle advances (histograms have no replies at all). Only on one-hop plans:
  // on longer routes this rank forwards other ranks' replies, which it cannot foresee.
  int reply_countdown = 0;
  bool forwards = true;  // the plan has routes of more than one hop
  static constexpr int k_reply_advances = 32;

  // A reply engine that still holds or sends replies must be advanced whatever the
  // countdown says: a buffer that waits for room or credits at the receiver (the rma
  // transport's ring, MPI credits) moves only in advance(), and its requester waits for it
  // (the rma hang of async_test at np 3: every rank advancing only its requests).
  [[nodiscard]] bool replies_in_play() const noexcept {
    return forwards || owner->hot_.busy_slots != 0 || held.has || reply_countdown > 0 ||
           replies->sending();
  }
  void advance_replies(bool done) {
    if (reply_countdown > 0) --reply_countdown;
    check(replies->advance(done), "advance", *replies);
  }
  std::string first_error;
  bool first_error_secondary = false;
  detail::serve_context serve_ctx;  // set up per phase (run_phase)

  void check(int rc, const char* what, const termination::engine& e) const {
    if (rc >= 0) return;
    std::string m = std::string("convoy::async: ") + what + ": " + termination::error_string(rc);
    if (!e.last_message().empty()) m += ": " + e.last_message();
    throw convoy::error(m);
  }

  // The phase's error on this rank: the first one, except that a task failing only because
  // a call it made failed (`secondary`: its remote_error names no cause) gives way to a
  // cause noted later here; agree_on_error prefers causes across ranks the same way.
  void note_error(std::string what, bool secondary = false) {
    if (first_error.empty() || (first_error_secondary && !secondary)) {
      first_error = std::move(what);
      first_error_secondary = secondary;
    }
    owner->hot_.root.limit = 0;  // no new task starts (start_roots)
  }

  // The slow path's reply slot (the list grows when every slot is taken).
  std::uint32_t take_slot(const detail::call_state& call) {
    auto& hot = owner->hot_;
    if (hot.free_slot == detail::k_no_slot) {
      if (hot.slots.size() >= k_error_bit)
        throw convoy::error("convoy::async: more than 2^31 calls waiting");
      hot.slots.emplace_back();
      hot.free_slot = static_cast<std::uint32_t>(hot.slots.size() - 1);
    }
    const std::uint32_t s = hot.free_slot;
    hot.free_slot = hot.slots[s].next_free;
    hot.slots[s].hold(call);
    ++hot.busy_slots;
    return s;
  }

  // Called from a catch block: handler `id` threw; the phase's error names it, this rank
  // and, for a std::exception, its message.
  void note_handler_threw(std::uint32_t id) {
    std::string what = "remote function #" + std::to_string(id) + " threw on rank " +
                       std::to_string(owner->rank());
    try {
      throw;
    } catch (const std::exception& e) {
      what += ": ";
      what += e.what();
    } catch (...) {  // NOLINT(bugprone-empty-catch): no message to add
    }
    note_error(what);
  }

  // Handles the requests that have arrived, this rank's posts to itself among them; a
  // reply whose path is full is held (the handler never runs twice) and no further request
  // is taken until it has gone. Once a pull finds nothing (the engine hands over its
  // loopback lane before it says so), every post of this rank to itself has been applied.
  void serve() {
    if (held.has) {
      const int rc = replies->push(held_record.data(), held.dest);
      ++reply_pushes;
      check(rc, "reply", *replies);
      if (rc == 0) return;
      held.has = false;
    }
    // While a remote function runs, it may not call or post (the slow paths check
    // in_function(), the inline paths hot_.open).
    const detail::inline_paths_closed closed(owner->hot_.open);
    detail::serve_context& ctx = serve_ctx;
    // Counted once per batch: the loops stay short, so that the handlers' memory accesses
    // overlap as in a hand-written pull loop.
    struct count_back {
      impl& m;
      ~count_back() {
        m.owner->stats_.handled += m.serve_ctx.handled;
        m.serve_ctx.handled = 0;
        m.reply_pushes += m.serve_ctx.replies_pushed;
        m.serve_ctx.replies_pushed = 0;
      }
    } counted{*this};
    termination::item_view v;
    bool pulled = false;  // v already holds a request that is not handled yet
    for (;;) {
      if (!pulled) {
        const int rc = requests->pull(v);
        check(rc, "pull request", *requests);
        if (rc == 0) return drained();
      }
      pulled = false;
      std::uint32_t token;
      std::memcpy(&token, v.data, k_token_bytes);
      const std::uint32_t id = detail::id_of(v.data, id_bytes);
      const auto& h = handlers[id];
      int rc = 0;
      // This request and the run of requests of the same kind (posts or calls of one
      // function) after it, in a loop compiled with the function.
      try {
        rc = token == k_post ? h.post_run(h.fn.get(), *requests, v, id_bytes, id, ctx.handled)
                             : h.call_run(h.fn.get(), ctx, v, id);
      } catch (...) {  // v is the request that threw, consumed; the phase ends with its error
        note_handler_threw(id);
        if (token == k_post) continue;
        std::memcpy(&token, v.data, k_token_bytes);
        token |= k_error_bit;  // its caller gets remote_error
        std::memcpy(reply_record.data(), &token, k_token_bytes);
        if (!push_reply(v.from)) return;
        continue;
      }
      if (token != k_post) reply_countdown = k_reply_advances;
      if (rc < 0 && token != k_post && ctx.reply_failed) check(rc, "reply", *replies);
      check(rc, "pull request", *requests);
      if (rc == detail::k_run_drained) return drained();
      if (rc == detail::k_run_held) return hold_reply(v.from);
      pulled = true;  // v holds the next request
    }
  }

  // Pushes reply_record to `dest`; false (and the reply held) if its path is full.
  bool push_reply(int dest) {
    reply_countdown = k_reply_advances;
    const int rc = replies->push(reply_record.data(), dest);
    ++reply_pushes;
    check(rc, "reply", *replies);
    if (rc > 0) return true;
    hold_reply(dest);
    return false;
  }

  // reply_record found its path full: it is held and pushed before anything else (serve).
  void hold_reply(int dest) {
    std::memcpy(held_record.data(), reply_record.data(), reply_bytes);
    held = {true, dest};
  }

  void drained() { owner->hot_.self_posted = false; }

  // Takes the replies that have arrived; their tasks are resumed now or queued. In batches
  // of up to k_resume_batch: each reply's result goes into its task's frame from what its
  // slot holds (stores only), the frame is prefetched, and the tasks are resumed after the
  // batch, so that the frames' cache misses overlap instead of stalling each resumption in
  // turn (a hand-written loop's replies carry their state and have none).
  static constexpr int k_resume_batch = 32;
  void collect(bool resume_now) {
    auto& hot = owner->hot_;
    termination::item_view v;
    void* batch[k_resume_batch];
    for (;;) {
      int n = 0;
      for (; n < k_resume_batch; ++n) {
        const int rc = replies->pull(v);
        check(rc, "pull reply", *replies);
        if (rc == 0) break;
        std::uint32_t token;
        std::memcpy(&token, v.data, k_token_bytes);
        const std::uint32_t s = token & ~k_error_bit;
        detail::reply_slot& slot = hot.slots[s];
        if (token & k_error_bit) [[unlikely]]
          *slot.failed = true;
        else if (slot.result_bytes == 8)
          std::memcpy(slot.result, v.data + k_token_bytes, 8);
        else
          std::memcpy(slot.result, v.data + k_token_bytes, slot.result_bytes);
        batch[n] = slot.frame;
        for (int line = 0; line < 3; ++line)
          __builtin_prefetch(static_cast<const char*>(slot.frame) + 64 * line);
        slot.next_free = hot.free_slot;
        hot.free_slot = s;
      }
      if (n == 0) return;
      hot.busy_slots -= static_cast<std::size_t>(n);
      reply_countdown = k_reply_advances;
      for (int k = 0; k < n; ++k) {
        const auto h = std::coroutine_handle<>::from_address(batch[k]);
        if (resume_now)
          h.resume();
        else
          ready.push_back(h);
      }
      if (n < k_resume_batch) return;
    }
  }

  // Pushes a request record; while its path is full, keeps both conveyors moving (and
  // serves other ranks' requests) without resuming any task.
  void write_request(std::uint32_t token, std::uint32_t id, const std::byte* args) {
    std::memcpy(request_record.data(), &token, k_token_bytes);
    std::memcpy(request_record.data() + k_token_bytes, &id, id_bytes);
    std::memcpy(request_record.data() + k_token_bytes + id_bytes, args, handlers[id].args_bytes);
  }

  // Sends the pending calls in order; true if none is left.
  bool send_pending() {
    while (!pending.empty()) {
      const pending_call& c = pending.front();
      write_request(c.token, c.id, c.args);
      const int rc = requests->push(request_record.data(), c.rank);
      ++owner->hot_.pushes;
      check(rc, "request", *requests);
      if (rc == 0) return false;
      pending.pop_front();
    }
    owner->hot_.calls_waiting = false;
    return true;
  }

  // A call: sent now, or queued behind the pending ones (its task is suspended anyway).
  void push_call(int rank, std::uint32_t token, std::uint32_t id, const std::byte* args) {
    if (pending.empty()) {
      write_request(token, id, args);
      const int rc = requests->push(request_record.data(), rank);
      ++owner->hot_.pushes;
      check(rc, "request", *requests);
      if (rc > 0) return;
      ++owner->stats_.blocked;
    }
    queue_call(rank, token, id, args);
  }

  // A call that cannot go now waits in `pending` (send_pending sends it), and every later
  // request of this rank goes behind it; no new task starts meanwhile (start_roots).
  void queue_call(int rank, std::uint32_t token, std::uint32_t id, const std::byte* args) {
    pending.push_back({rank, token, id, args});
    owner->hot_.calls_waiting = true;
    owner->hot_.root.limit = 0;
  }

  void push_request(int rank) {
    std::vector<std::byte> own;  // the post's record, if pending calls go first
    if (!pending.empty()) own.assign(request_record.begin(), request_record.end());
    for (bool first = true;; first = false) {
      if (!own.empty()) {
        if (!send_pending()) {
          ++(first ? owner->stats_.blocked : owner->stats_.blocked_rounds);
          serve_and_advance();
          continue;
        }
        std::memcpy(request_record.data(), own.data(), own.size());
        own.clear();
      }
      const int rc = requests->push(request_record.data(), rank);
      ++owner->hot_.pushes;
      check(rc, "request", *requests);
      if (rc > 0) return;
      ++(first ? owner->stats_.blocked : owner->stats_.blocked_rounds);
      serve_and_advance();
    }
  }

  void serve_and_advance() {
    serve();
    collect(false);
    check(requests->advance(false), "advance", *requests);
    if (replies_in_play()) advance_replies(false);
    if (!combiners.empty()) advance_combiners(false);
  }

  // Sends the partly filled buffers of both conveyors. On one-hop plans only an engine
  // that took a push since its last flush can hold one (a flush sends every lane that has
  // items); on longer routes this rank also forwards, so it always flushes.
  void flush_idle(runtime_stats& st) {
    flush_if(*requests, owner->hot_.pushes, request_flush_mark, st);
    flush_if(*replies, reply_pushes, reply_flush_mark, st);
  }
  void flush_if(termination::engine& e, std::uint64_t pushes, std::uint64_t& mark,
                runtime_stats& st) {
    if (!forwards && pushes == mark) return;
    if (termination::refusal(e.current_state(), termination::call::flush)) return;
    mark = pushes;
    check(e.flush(), "flush", e);
    ++st.flushes;
  }
  std::uint64_t reply_pushes = 0, request_flush_mark = 0, reply_flush_mark = 0;

  runtime* owner = nullptr;
};

}  // namespace convoy::async
