#pragma once
/// @file
/// The per-rank runtime of coroutine tasks (Fischler & Uchima 1993, sec. 4): many
/// lightweight tasks per rank, each written as sequential code; a task that waits on a
/// remote access is switched out, and the accesses of all tasks travel aggregated through
/// two convoy conveyors (requests and replies), routed over the mesh like any conveyor
/// traffic. docs/cpp-api.md, "Coroutine tasks", states the guarantees (API-70..81).
///
///   convoy::async::runtime rt(MPI_COMM_WORLD);                 // collective
///   convoy::async::dist_array<long> table(rt, n_global);        // collective
///   rt.run_each(n, [&](std::size_t i) -> convoy::async::task<> {
///     out[i] = co_await table.get(index[i]);                    // a remote read
///   });                                                         // collective: the phase
///
/// What a task can await: `co_await rt.call(rank, fn, args...)` (fn runs on `rank` inside
/// its progress loop, its result resumes the task), `co_await array.get(i)`, another task,
/// `co_await when_all(tasks)`. Fire-and-forget: `rt.post(rank, fn, args...)`,
/// `array.update(i, op, value)`. Remote functions are *defined* collectively, in the same
/// order on every rank (`rt.define(f)`), which gives every rank the same identifier for
/// them; their arguments and results are trivially copyable (checked at compile time).
///
/// Coherence (Fischler & Uchima 1993, sec. 4.7): requests from one rank to another are handled in
/// the order they were issued (the request conveyor is FIFO per pair, and a rank handles the
/// requests it pulls in order), so a rank's posts to an owner are applied before any later
/// call or read of that rank to the same owner is answered.
///
/// One header, a little over 400 lines: call_awaiter and runtime's inline templates refer
/// to each other (the awaiter's hot path is the runtime's, and call() makes awaiters), so
/// they are declared and defined together; the options, the function handles and the
/// combiner are in headers of their own.
#include <mpi.h>

#include <array>
#include <bit>
#include <convoy/async/detail/combiner.hpp>
#include <convoy/async/detail/handler_entry.hpp>
#include <convoy/async/detail/remote_fn.hpp>
#include <convoy/async/remote_fn.hpp>
#include <convoy/async/runtime_options.hpp>
#include <convoy/async/task.hpp>
#include <convoy/async/when_all.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace convoy::async {

class runtime;

/// `co_await rt.call(...)`: see runtime::call. `Local` (detail::local_call) runs the
/// function inline when the call is to this rank; void: through the function's entry.
template <class R, std::size_t ArgBytes, class Local = void>
class call_awaiter {
 public:
  // Both forced into the task's body: GCC otherwise may keep them out-of-line calls with
  // their own frame set-up on every call (index-gather `coro` 3.5 % faster with
  // await_suspend inlined, bench/README).
  [[gnu::always_inline]] bool await_ready();
  [[gnu::always_inline]] void await_suspend(std::coroutine_handle<> h);
  R await_resume();

 private:
  friend class runtime;
  using stored = std::conditional_t<std::is_void_v<R>, char, R>;
  call_awaiter(runtime& rt, int rank, std::uint32_t id) : rt_(&rt), rank_(rank), id_(id) {}
  runtime* rt_;
  int rank_;
  std::uint32_t id_;
  bool failed_ = false;
  // Written before they are read (call() packs the arguments, the reply or the function
  // fills the result), so not zeroed: a call makes no stores it does not need.
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init)
  std::array<std::byte, ArgBytes == 0 ? 1 : ArgBytes> args_;
  stored result_;  // NOLINT(cppcoreguidelines-pro-type-member-init)
};

class runtime {
 public:
  /// Collective over `comm`: builds the request and reply conveyors. Throws convoy::error
  /// on invalid options (max_tasks 0, a bad mesh) or a transport failure.
  explicit runtime(MPI_Comm comm, runtime_options options = {});
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int n_ranks() const noexcept { return n_ranks_; }
  [[nodiscard]] const runtime_options& options() const noexcept { return options_; }
  [[nodiscard]] runtime_stats stats() const noexcept {
    runtime_stats s = stats_;
    s.suspensions = s.calls;  // every call sent as a request waits for its reply
    return s;
  }
  /// Buffer memory of the two conveyors and of the combining engines built so far at most
  /// (termination::engine::max_memory_bytes).
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept;
  /// The request conveyor's engine (plan, options, statistics).
  [[nodiscard]] const termination::engine& request_engine() const noexcept;

  /// Defines a remote function on this rank. Collective in the sense that every rank must
  /// define the same functions (same argument and result types) in the same order before
  /// the next phase; the phase checks this and throws convoy::error on every rank if not.
  /// `f` is a callable with a fixed signature (not generic); it may capture rank-local
  /// state. Not legal during a phase (throws convoy::error).
  template <class F>
  auto define(F f) {
    using traits = detail::fn_traits<std::decay_t<F>>;
    return define_impl(std::move(f), static_cast<typename traits::result*>(nullptr),
                       static_cast<typename traits::args*>(nullptr));
  }

  /// Awaitable remote call: `R r = co_await rt.call(rank, fn, args...)`. fn runs on `rank`
  /// (at once, without a request, if `rank` is this one and none of this rank's posts to
  /// itself waits to be applied). Throws convoy::error naming the
  /// problem if `rank` is out of range or no phase is running; rethrows remote_error if
  /// the handler threw on its rank.
  template <class R, class... A, class... Args>
  [[nodiscard]] auto call(int rank, const remote_fn<R, A...>& fn, Args&&... args) {
    return make_call<void>(rank, fn, std::forward<Args>(args)...);
  }
  /// As above, with the handle define() returned: a call to this rank runs fn inline.
  template <class F, class R, class... A, class... Args>
  [[nodiscard]] auto call(int rank, const defined_fn<F, R, A...>& fn, Args&&... args) {
    return make_call<detail::local_call<F, R, A...>>(rank, fn, std::forward<Args>(args)...);
  }

  /// Fire-and-forget: fn(args...) runs on `rank`; its result is dropped. Applied before
  /// any later request of this rank to `rank` is handled (coherence, file comment).
  /// Throws convoy::error if `rank` is out of range or no phase is running.
  template <class R, class... A, class... Args>
  void post(int rank, const remote_fn<R, A...>& fn, Args&&... args) {
    static_assert(sizeof...(A) == sizeof...(Args), "post: wrong number of arguments");
    constexpr std::size_t n = detail::packed_bytes<A...>;
    std::array<std::byte, n == 0 ? 1 : n> b{};
    detail::pack<A...>(b.data(), static_cast<A>(std::forward<Args>(args))...);
    const std::uint32_t id = id_here(fn);
    // Hot path: one inline engine push of a record whose size is known at compile time, to
    // any rank. A post to this rank takes the engine's loopback lane like any other (no
    // branch on the destination, which is random in a histogram: half of them mispredict
    // at np 2); it is applied when this rank serves, in order with its other requests, and
    // `self_posted` sends this rank's next call to itself the same way (coherence).
    if (fast_request<n>(rank, id) && push_record<n>(rank, detail::k_post, id, b.data()) > 0)
        [[likely]] {
      hot_.self_posted |= rank == rank_;
      ++stats_.posts;
      // A task that posts without ever waiting must still serve the requests of other
      // ranks now and then, or the ranks settle into taking turns (one serves, one waits).
      if (++hot_.since_serve >= hot_.serve_every) [[unlikely]]
        serve_now();
      return;
    }
    send_post(rank, id, b.data());  // checks, or a full path: the slow path waits
  }

  /// Registers a combinable update (dist_array::define_update with async::combinable).
  /// Like define(): every rank registers the same ones (same value size) in the same order;
  /// the next phase checks this and builds their combining engines (collective). Not legal
  /// during a phase (throws convoy::error).
  std::uint32_t add_combiner(detail::combiner_entry e);
  /// Sends the record [u64 local index][value] (N bytes) of combinable update `c` to
  /// `rank`: one inline push into its combining engine, where it may be folded into an
  /// update of the same element on the way (API-82). A full path waits (serving other
  /// ranks meanwhile); outside a phase, from a remote function, or to a rank out of range
  /// it throws convoy::error.
  template <std::size_t N>
  void push_combinable(std::uint32_t c, const std::byte* record, int rank) {
    if (hot_.open && c < hot_.n_combiners &&
        static_cast<unsigned>(rank) < static_cast<unsigned>(n_ranks_)) [[likely]] {
      if (hot_.combiners[c]->template push<N>(record, rank) > 0) [[likely]] {
        ++stats_.combinable;
        return;
      }
    }
    send_combinable(c, record, rank);
  }

  /// Runs one phase (collective): `root()` on every rank, then until every task on every
  /// rank has finished and every request has been handled and answered (the conveyors'
  /// termination; no reduction per task). An exception in a task or a handler anywhere
  /// ends the phase on every rank with a convoy::error carrying its message (the lowest
  /// failing rank's, a cause before a task that failed only through a remote_error), after
  /// the tasks in flight have finished.
  template <class F>
  void run(F&& root) {
    run_each(1, [&](std::size_t) { return root(); });
  }

  /// As run, with n root tasks make(0) ... make(n-1) per rank, created only when fewer
  /// than max_tasks are in flight (frames are allocated as tasks start).
  template <class F>
  void run_each(std::size_t n, F&& make) {
    using maker = std::decay_t<F>;
    spawner s;
    s.object = const_cast<void*>(static_cast<const void*>(&make));
    // Creates and starts root tasks while the runtime's limit allows (it drops to 0 when a
    // call finds its path full or a task fails), here in the caller's code, where the
    // coroutine's ramp (frame from the pool, parameters) is inlined into the loop.
    s.start = [](void* o, spawner& sp, detail::root_link& root) {
      auto& mk = *static_cast<maker*>(o);
      while (sp.next < sp.n && root.in_flight < root.limit) {
        task<void> t = mk(sp.next++);
        const auto h = t.release();
        h.promise().root = &root;
        if (++root.in_flight > root.peak) root.peak = root.in_flight;
        h.resume();
      }
    };
    s.n = n;
    run_phase(s);
  }

  /// Starts `t` as one more root task of the running phase (not bounded by max_tasks).
  /// Throws convoy::error outside a phase.
  void spawn(task<void> t);

  // ---- used by the awaiters and the task machinery ----
  /// Sends a call request; resumes `call.waiting` once the reply is in `call.result`.
  template <std::size_t N>
  void suspend_call(int rank, std::uint32_t id, const std::byte* args,
                    const detail::call_state& call) {
    // Hot path: a free reply slot (its index is the token that the reply carries back) and
    // one inline engine push.
    if (fast_request<N>(rank, id) && hot_.free_slot != detail::k_no_slot) [[likely]] {
      const std::uint32_t s = hot_.free_slot;
      detail::reply_slot& slot = hot_.slots[s];
      hot_.free_slot = slot.next_free;
      slot.hold(call);
      ++hot_.busy_slots;
      ++stats_.calls;
      const int rc = push_record<N>(rank, s, id, args);
      if (rc <= 0) [[unlikely]]
        call_not_sent(rank, s, id, args, rc);
      return;
    }
    send_call(rank, id, args, call);
  }
  /// True if a call to this rank can run its function at once: no post of this rank to
  /// itself waits to be applied (else the call goes through the loopback lane behind them).
  [[nodiscard]] bool can_call_here() const noexcept { return !hot_.self_posted; }
  /// Runs handler `id` here (a call to this rank): writes its result to `result`. With
  /// Local = void, through the entry's invoke_here; else (a handle from define(), which
  /// knows the function's type) inline. As on its owner's serve loop, the function may not
  /// call or post: local_call closes the inline paths while it runs (restored if it
  /// throws), so those reach the slow paths' check.
  template <class Local>
  void call_here(std::uint32_t id, const std::byte* args, std::byte* result) {
    if (hot_.open && id < hot_.n_handlers) [[likely]] {
      const detail::handler_entry& e = hot_.handlers[id];
      if constexpr (std::is_void_v<Local>) {
        e.invoke_here(e.fn.get(), args, result, hot_.open);
      } else {
        // The entry's function is an F: define() made it from this handle's type (and
        // id_here() gave a foreign handle an id that fails the check above).
        Local::run(*static_cast<typename Local::fn_type*>(e.fn.get()), args, result, hot_.open);
      }
      ++stats_.local;
      return;
    }
    invoke_local(id, args, result);
  }
  void send_call(int rank, std::uint32_t id, const std::byte* args, const detail::call_state& call);
  void invoke_local(std::uint32_t id, const std::byte* args, std::byte* result);
  /// A root task ended by an exception (from its final suspension point): records the
  /// error, frees the frame.
  void root_failed(std::coroutine_handle<> h, const std::exception_ptr& error) noexcept;

 private:
  struct spawner {
    void* object = nullptr;
    void (*start)(void*, spawner&, detail::root_link&) = nullptr;
    std::size_t n = 0, next = 0;
  };
  struct impl;

  template <class F, class R, class... A>
  defined_fn<F, R, A...> define_impl(F f, R*, std::tuple<A...>*) {
    static_assert((std::is_trivially_copyable_v<A> && ...),
                  "remote function arguments must be trivially copyable");
    static_assert(std::is_void_v<R> || std::is_trivially_copyable_v<R>,
                  "remote function results must be trivially copyable");
    static_assert(detail::packed_bytes<A...> <= 1024, "remote function arguments above 1 KiB");
    return defined_fn<F, R, A...>(add_handler(detail::make_handler_entry<F, R, A...>(std::move(f))),
                                  this);
  }
  std::uint32_t add_handler(detail::handler_entry e);
  /// The awaiter of call(): arguments packed, `Local` as in call_awaiter.
  template <class Local, class R, class... A, class... Args>
  auto make_call(int rank, const remote_fn<R, A...>& fn, Args&&... args) {
    static_assert(sizeof...(A) == sizeof...(Args), "call: wrong number of arguments");
    call_awaiter<R, detail::packed_bytes<A...>, Local> aw(*this, rank, id_here(fn));
    detail::pack<A...>(aw.args_.data(), static_cast<A>(std::forward<Args>(args))...);
    return aw;
  }
  /// fn's identifier if this runtime defined it, else k_foreign_fn (k_undefined_fn for a
  /// default-constructed one). Two compares that always go the same way in a correct
  /// program; a foreign id then fails the inline paths' range check, so the slow paths
  /// alone need to name the problem.
  template <class R, class... A>
  [[nodiscard]] std::uint32_t id_here(const remote_fn<R, A...>& fn) const noexcept {
    return fn.owner_ == this || fn.owner_ == nullptr ? fn.id_ : detail::k_foreign_fn;
  }
  void send_post(int rank, std::uint32_t id, const std::byte* args);
  void send_combinable(std::uint32_t c, const std::byte* record, int rank);
  /// A call whose inline push failed (rc 0: path full, it waits in order; < 0: throws).
  void call_not_sent(int rank, std::uint32_t token, std::uint32_t id, const std::byte* args,
                     int rc);
  void run_phase(spawner& s);
  void start_roots(spawner& s);

  // What the inline post and call need, valid while `open` (a phase runs, no handler
  // executes).
  struct hot_path {
    termination::engine* requests = nullptr;
    const detail::handler_entry* handlers = nullptr;
    std::uint32_t n_handlers = 0;
    std::size_t request_bytes = 0;
    std::size_t id_bytes = 0;
    std::uint32_t since_serve = 0;
    std::uint32_t serve_every = 4096;
    bool open = false;           ///< a phase runs and no remote function does (else closed)
    bool calls_waiting = false;  ///< calls wait for a full path: later requests queue behind
    detail::root_link root;      ///< root tasks in flight (their final_suspend counts down)
    std::vector<detail::reply_slot> slots;  ///< kept from phase to phase
    std::uint32_t free_slot = detail::k_no_slot;
    std::size_t busy_slots = 0;
    std::uint64_t pushes = 0;  ///< request pushes tried (flush_idle compares)
    /// This rank posted to itself since it last served every request that had arrived
    /// (runtime::impl::serve clears it): such posts may still wait in the loopback lane.
    bool self_posted = false;
    /// The combining engines of the combinable updates, during a phase (else none).
    termination::engine* const* combiners = nullptr;
    std::uint32_t n_combiners = 0;
  };
  /// True if a request of N argument bytes to `rank` can take the inline push.
  template <std::size_t N>
  [[nodiscard]] bool fast_request(int rank, std::uint32_t id) const noexcept {
    return hot_.open && !hot_.calls_waiting &&
           static_cast<unsigned>(rank) < static_cast<unsigned>(n_ranks_) && id < hot_.n_handlers &&
           hot_.request_bytes == detail::k_token_bytes + hot_.id_bytes + N;
  }
  /// Pushes the record [token][id][args] (fast_request was true). Returns the engine's code.
  /// A record of at most 8 bytes is assembled in a register: the engine copies it with one
  /// load, which a record written in pieces on the stack makes wait until those stores
  /// reach the cache (a store-to-load forwarding stall; bench/README, histogram `coro`).
  template <std::size_t N>
  int push_record(int rank, std::uint32_t token, std::uint32_t id, const std::byte* args) {
    constexpr std::size_t t = detail::k_token_bytes;
    ++hot_.pushes;
    if constexpr (N <= 4 && std::endian::native == std::endian::little) {
      std::uint64_t a = 0;
      std::memcpy(&a, args, N);
      if (hot_.id_bytes == 0) {
        const std::uint64_t w = token | a << 32;
        return hot_.requests->template push<t + N>(&w, rank);
      }
      if (N <= 3 && hot_.id_bytes == 1) {
        const std::uint64_t w = token | std::uint64_t{id & 0xFFu} << 32 | a << 40;
        return hot_.requests->template push<t + 1 + N>(&w, rank);
      }
      if (N <= 2) {
        const std::uint64_t w = token | std::uint64_t{id & 0xFFFFu} << 32 | a << 48;
        return hot_.requests->template push<t + 2 + N>(&w, rank);
      }
    }
    alignas(8) std::byte rec[t + 2 + N];
    std::memcpy(rec, &token, t);
    if (hot_.id_bytes == 0) {
      std::memcpy(rec + t, args, N);
      return hot_.requests->template push<t + N>(rec, rank);
    }
    if (hot_.id_bytes == 1) {
      rec[t] = static_cast<std::byte>(id);
      std::memcpy(rec + t + 1, args, N);
      return hot_.requests->template push<t + 1 + N>(rec, rank);
    }
    std::memcpy(rec + t, &id, 2);
    std::memcpy(rec + t + 2, args, N);
    return hot_.requests->template push<t + 2 + N>(rec, rank);
  }
  /// Handles the requests that have arrived and moves the conveyors (no task resumes).
  void serve_now();
  hot_path hot_;
  int rank_ = 0, n_ranks_ = 1;
  runtime_options options_;
  runtime_stats stats_;
  std::unique_ptr<impl> impl_;
};

// ---- call_awaiter ---------------------------------------------------------------------

template <class R, std::size_t ArgBytes, class Local>
inline bool call_awaiter<R, ArgBytes, Local>::await_ready() {
  if (rank_ != rt_->rank() || !rt_->can_call_here()) return false;
  rt_->template call_here<Local>(id_, args_.data(), reinterpret_cast<std::byte*>(&result_));
  return true;
}

template <class R, std::size_t ArgBytes, class Local>
inline void call_awaiter<R, ArgBytes, Local>::await_suspend(std::coroutine_handle<> h) {
  detail::call_state c;
  c.waiting = h;
  c.result = reinterpret_cast<std::byte*>(&result_);
  if constexpr (!std::is_void_v<R>) c.result_bytes = sizeof(R);
  c.failed = &failed_;
  rt_->suspend_call<ArgBytes>(rank_, id_, args_.data(), c);
}

template <class R, std::size_t ArgBytes, class Local>
R call_awaiter<R, ArgBytes, Local>::await_resume() {
  if (failed_) [[unlikely]]
    detail::throw_remote_error(id_, rank_);
  if constexpr (!std::is_void_v<R>) return result_;
}

}  // namespace convoy::async
