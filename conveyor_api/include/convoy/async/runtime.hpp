#pragma once
/// @file
/// The per-rank runtime of coroutine tasks (seed 004, Fischler & Uchima, sec. 4): many
/// lightweight tasks per rank, each written as sequential code; a task that waits on a
/// remote access is switched out, and the accesses of all tasks travel aggregated through
/// two convoy conveyors (requests and replies), routed over the mesh like any conveyor
/// traffic. conveyor_api/README.md "Coroutine tasks" states the guarantees (API-70..79).
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
/// Coherence (seed 004 sec. 4.7): requests from one rank to another are handled in the
/// order they were issued (the request conveyor is FIFO per pair, and a rank handles the
/// requests it pulls in order), so a rank's posts to an owner are applied before any later
/// call or read of that rank to the same owner is answered.
#include <mpi.h>

#include <array>
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

/// A remote call whose handler threw; the message names the rank and the handler.
class remote_error : public convoy::error {
 public:
  using convoy::error::error;
};

struct runtime_options {
  /// Mesh or tensor plan, buffer size and buffers per link of the two conveyors
  /// (steady/elastic are ignored: the runtime flushes partly filled buffers whenever no
  /// task can run, seed 004's "transfers are done when no further work can be done").
  conveyor_options conveyor;
  /// Root tasks in flight at most on this rank (run_each starts a new one only below it),
  /// so memory stays bounded when a phase has 10^7 tasks. >= 1.
  std::size_t max_tasks = 1024;
  /// A task that posts many updates without waiting serves the requests that other ranks
  /// sent here once every this many posts (otherwise only when its own path is full, and
  /// ranks can settle into taking turns: one serves while the other waits). >= 1.
  std::uint32_t serve_every = 4096;
};

/// Counters of a runtime (this rank, since construction).
struct runtime_stats {
  std::uint64_t phases = 0, tasks = 0;
  std::uint64_t calls = 0;    ///< remote calls issued (local ones not counted)
  std::uint64_t posts = 0;    ///< remote fire-and-forget requests issued
  std::uint64_t handled = 0;  ///< requests from other ranks handled here
  std::uint64_t local = 0;    ///< calls and posts to this rank, run without a message
  std::uint64_t suspensions = 0;  ///< times a task waited on a reply
  std::uint64_t flushes = 0;      ///< partly filled buffers sent because no task could run
  std::uint64_t peak_tasks = 0;   ///< most root tasks in flight at once
  std::uint64_t blocked = 0;      ///< requests that found their path full at first
  std::uint64_t blocked_rounds = 0;  ///< progress rounds spent waiting for such paths
};

namespace detail {

template <class F>
struct fn_traits : fn_traits<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct fn_traits<R (C::*)(A...) const> {
  using result = R;
  using args = std::tuple<std::decay_t<A>...>;
};
template <class C, class R, class... A>
struct fn_traits<R (C::*)(A...)> : fn_traits<R (C::*)(A...) const> {};
template <class R, class... A>
struct fn_traits<R (*)(A...)> {
  using result = R;
  using args = std::tuple<std::decay_t<A>...>;
};

template <class... A>
inline constexpr std::size_t packed_bytes = (std::size_t{0} + ... + sizeof(A));

template <class... A>
void pack(std::byte* out, const A&... a) noexcept {
  std::size_t off = 0;
  ((std::memcpy(out + off, &a, sizeof(A)), off += sizeof(A)), ...);
}

template <class Tuple, std::size_t... I>
Tuple unpack(const std::byte* in, std::index_sequence<I...>) noexcept {
  Tuple t;
  std::size_t off = 0;
  ((std::memcpy(&std::get<I>(t), in + off, sizeof(std::tuple_element_t<I, Tuple>)),
    off += sizeof(std::tuple_element_t<I, Tuple>)),
   ...);
  return t;
}

/// A defined remote function, type-erased: invoke(fn, args, result).
struct handler_entry {
  std::size_t args_bytes = 0, result_bytes = 0;
  void (*invoke)(void* fn, const std::byte* args, std::byte* result) = nullptr;
  std::shared_ptr<void> fn;
  std::uint64_t signature = 0;  ///< sizes of arguments and result, for the cross-rank check
};

std::uint64_t mix_signature(std::uint64_t h, std::uint64_t v) noexcept;

inline constexpr std::uint32_t k_post = 0xFFFFFFFFu;  ///< request token: no reply
inline constexpr std::uint32_t k_error_bit = 0x80000000u;
inline constexpr std::size_t k_token_bytes = 4;

}  // namespace detail

/// Handle of a remote function defined on every rank: R fn(A...).
template <class R, class... A>
class remote_fn {
 public:
  remote_fn() = default;
  [[nodiscard]] std::uint32_t id() const noexcept { return id_; }

 private:
  friend class runtime;
  explicit remote_fn(std::uint32_t id) : id_(id) {}
  std::uint32_t id_ = ~0u;
};

class runtime;

/// `co_await rt.call(...)`: see runtime::call.
template <class R, std::size_t ArgBytes>
class call_awaiter {
 public:
  bool await_ready();
  void await_suspend(std::coroutine_handle<> h);
  R await_resume();

 private:
  friend class runtime;
  using stored = std::conditional_t<std::is_void_v<R>, char, R>;
  call_awaiter(runtime& rt, int rank, std::uint32_t id) : rt_(&rt), rank_(rank), id_(id) {}
  runtime* rt_;
  int rank_;
  std::uint32_t id_;
  bool failed_ = false;
  std::array<std::byte, ArgBytes == 0 ? 1 : ArgBytes> args_{};
  stored result_{};
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
  [[nodiscard]] runtime_stats stats() const noexcept { return stats_; }
  /// Buffer memory of the two conveyors at most (termination::engine::max_memory_bytes).
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
  /// (at once, without a message, if `rank` is this one). Throws convoy::error naming the
  /// problem if `rank` is out of range or no phase is running; rethrows remote_error if
  /// the handler threw on its rank.
  template <class R, class... A, class... Args>
  [[nodiscard]] auto call(int rank, const remote_fn<R, A...>& fn, Args&&... args) {
    static_assert(sizeof...(A) == sizeof...(Args), "call: wrong number of arguments");
    call_awaiter<R, detail::packed_bytes<A...>> aw(*this, rank, fn.id());
    detail::pack<A...>(aw.args_.data(), static_cast<A>(std::forward<Args>(args))...);
    return aw;
  }

  /// Fire-and-forget: fn(args...) runs on `rank`; its result is dropped. Applied before
  /// any later request of this rank to `rank` is handled (coherence, file comment).
  /// Throws convoy::error if `rank` is out of range or no phase is running.
  template <class R, class... A, class... Args>
  void post(int rank, const remote_fn<R, A...>& fn, Args&&... args) {
    static_assert(sizeof...(A) == sizeof...(Args), "post: wrong number of arguments");
    constexpr std::size_t n = detail::packed_bytes<A...>;
    // Hot path: the record built with compile-time sizes, one inline engine push.
    if (hot_.open && !hot_.calls_waiting && rank != rank_ && static_cast<unsigned>(rank) < static_cast<unsigned>(n_ranks_) &&
        hot_.request_bytes == detail::k_token_bytes + hot_.id_bytes + n) [[likely]] {
      alignas(8) std::byte rec[detail::k_token_bytes + 2 + n];
      std::memcpy(rec, &detail::k_post, detail::k_token_bytes);
      const std::uint32_t id = fn.id();
      int rc;
      if (hot_.id_bytes == 0) {
        detail::pack<A...>(rec + detail::k_token_bytes, static_cast<A>(std::forward<Args>(args))...);
        rc = hot_.requests->template push<detail::k_token_bytes + n>(rec, rank);
      } else if (hot_.id_bytes == 1) {
        rec[detail::k_token_bytes] = static_cast<std::byte>(id);
        detail::pack<A...>(rec + detail::k_token_bytes + 1, static_cast<A>(std::forward<Args>(args))...);
        rc = hot_.requests->template push<detail::k_token_bytes + 1 + n>(rec, rank);
      } else {
        std::memcpy(rec + detail::k_token_bytes, &id, 2);
        detail::pack<A...>(rec + detail::k_token_bytes + 2, static_cast<A>(std::forward<Args>(args))...);
        rc = hot_.requests->template push<detail::k_token_bytes + 2 + n>(rec, rank);
      }
      if (rc > 0) {
        ++stats_.posts;
        // A task that posts without ever waiting must still serve the requests of other
        // ranks now and then, or the ranks settle into taking turns (one serves, one waits).
        if (++hot_.since_serve >= hot_.serve_every) [[unlikely]]
          serve_now();
        return;
      }
      send_post(rank, id, rec + detail::k_token_bytes + hot_.id_bytes);  // full: the slow path waits
      return;
    }
    std::array<std::byte, n == 0 ? 1 : n> b{};
    detail::pack<A...>(b.data(), static_cast<A>(std::forward<Args>(args))...);
    send_post(rank, fn.id(), b.data());
  }

  /// Runs one phase (collective): `root()` on every rank, then until every task on every
  /// rank has finished and every request has been handled and answered (the conveyors'
  /// termination; no reduction per task). An exception in a task or a handler anywhere
  /// ends the phase on every rank with a convoy::error carrying its message (the lowest
  /// failing rank's), after the tasks in flight have finished.
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
    s.call = [](void* o, std::size_t i) -> task<void> { return (*static_cast<maker*>(o))(i); };
    s.n = n;
    run_phase(s);
  }

  /// Starts `t` as one more root task of the running phase (not bounded by max_tasks).
  /// Throws convoy::error outside a phase.
  void spawn(task<void> t);

  // ---- used by the awaiters and the task machinery ----
  /// Sends a call request; resumes `h` once the reply has been written to `result`.
  void send_call(int rank, std::uint32_t id, const std::byte* args, std::coroutine_handle<> h,
                 void* result, bool* failed);
  /// Runs handler `id` here (a call or post to this rank).
  void invoke_local(std::uint32_t id, const std::byte* args, void* result);
  /// A root task finished (from its final suspension point): frees it, records an error.
  void root_finished(std::coroutine_handle<> h, const std::exception_ptr& error) noexcept;
  [[nodiscard]] const detail::handler_entry& handler(std::uint32_t id) const;

 private:
  struct spawner {
    void* object = nullptr;
    task<void> (*call)(void*, std::size_t) = nullptr;
    std::size_t n = 0, next = 0;
  };
  struct impl;

  template <class F, class R, class... A>
  remote_fn<R, A...> define_impl(F f, R*, std::tuple<A...>*) {
    static_assert((std::is_trivially_copyable_v<A> && ...),
                  "remote function arguments must be trivially copyable");
    static_assert(std::is_void_v<R> || std::is_trivially_copyable_v<R>,
                  "remote function results must be trivially copyable");
    static_assert(detail::packed_bytes<A...> <= 1024, "remote function arguments above 1 KiB");
    detail::handler_entry e;
    e.args_bytes = detail::packed_bytes<A...>;
    if constexpr (!std::is_void_v<R>) e.result_bytes = sizeof(R);
    e.fn = std::make_shared<F>(std::move(f));
    e.invoke = [](void* fn, const std::byte* in, std::byte* out) {
      auto args =
          detail::unpack<std::tuple<A...>>(in, std::index_sequence_for<A...>{});
      if constexpr (std::is_void_v<R>) {
        std::apply(*static_cast<F*>(fn), args);
      } else {
        R r = std::apply(*static_cast<F*>(fn), args);
        std::memcpy(out, &r, sizeof(R));
      }
    };
    std::uint64_t sig = detail::mix_signature(0, e.result_bytes + 1);
    ((sig = detail::mix_signature(sig, sizeof(A))), ...);
    e.signature = detail::mix_signature(sig, sizeof...(A));
    return remote_fn<R, A...>(add_handler(std::move(e)));
  }
  std::uint32_t add_handler(detail::handler_entry e);
  void send_post(int rank, std::uint32_t id, const std::byte* args);
  void run_phase(spawner& s);
  void start_roots(spawner& s);

  // What the inline post needs, valid while `open` (a phase runs, no handler executes).
  struct hot_path {
    termination::engine* requests = nullptr;
    std::size_t request_bytes = 0;
    std::size_t id_bytes = 0;
    std::uint32_t since_serve = 0;
    std::uint32_t serve_every = 4096;
    bool open = false;
    bool calls_waiting = false;  ///< calls wait for a full path: later requests queue behind
  };
  /// Handles the requests that have arrived and moves the conveyors (no task resumes).
  void serve_now();
  hot_path hot_;
  int rank_ = 0, n_ranks_ = 1;
  runtime_options options_;
  runtime_stats stats_;
  std::unique_ptr<impl> impl_;
};

// ---- call_awaiter ---------------------------------------------------------------------

template <class R, std::size_t ArgBytes>
bool call_awaiter<R, ArgBytes>::await_ready() {
  if (rank_ != rt_->rank()) return false;
  rt_->invoke_local(id_, args_.data(), &result_);
  return true;
}

template <class R, std::size_t ArgBytes>
void call_awaiter<R, ArgBytes>::await_suspend(std::coroutine_handle<> h) {
  rt_->send_call(rank_, id_, args_.data(), h, &result_, &failed_);
}

template <class R, std::size_t ArgBytes>
R call_awaiter<R, ArgBytes>::await_resume() {
  if (failed_)
    throw remote_error("convoy::async: remote function #" + std::to_string(id_) +
                       " threw on rank " + std::to_string(rank_));
  if constexpr (!std::is_void_v<R>) return result_;
}

}  // namespace convoy::async
