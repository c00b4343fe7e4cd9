#pragma once
/// @file
/// `convoy::async::task<T>`: a lazily started C++20 coroutine that a runtime runs among
/// thousands of others (seed 004 sec. 4: many lightweight tasks per processor, switched
/// only where a task waits on a remote access, so the transfers of many tasks coalesce).
///
/// A task does nothing until it is awaited by another task (`T v = co_await child();`,
/// which runs the child and resumes the parent when the child is done) or handed to a
/// runtime (`runtime::run`, `run_each`, `spawn`). A task object owns its frame; a frame
/// comes from a per-thread pool of 64-byte size classes, so creating and finishing a task
/// costs no call to the general allocator once the pool is warm.
///
/// Exceptions leave a task through `co_await` (rethrown in the awaiting task) or, for a
/// task the runtime runs directly, end the phase on every rank (runtime.hpp).
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

namespace convoy::async {

class runtime;
template <class T = void>
class task;

namespace detail {

/// Frame memory: per-thread free lists of 64-byte size classes up to 1 KiB, the general
/// allocator beyond. Never returns nullptr (throws std::bad_alloc).
void* frame_alloc(std::size_t bytes);
void frame_free(void* p, std::size_t bytes) noexcept;

/// Counters of the frame pool of the calling thread (for benchmarks and tests).
struct frame_stats {
  std::uint64_t allocations = 0;  ///< frames created
  std::uint64_t live = 0;         ///< frames alive now
  std::uint64_t peak_live = 0;    ///< most frames alive at once
  std::size_t largest_frame = 0;  ///< bytes of the largest frame requested
  std::size_t pooled_bytes = 0;   ///< bytes held in the free lists
};

struct group_state;

/// What every task promise has: where to go when the task finishes.
struct promise_base {
  std::coroutine_handle<> continuation;  ///< the task awaiting this one, if any
  group_state* group = nullptr;          ///< the when_all this task is a child of, if any
  runtime* root_of = nullptr;            ///< the runtime running this task directly, if any
  std::exception_ptr error;

  static void* operator new(std::size_t bytes) { return frame_alloc(bytes); }
  static void operator delete(void* p, std::size_t bytes) noexcept { frame_free(p, bytes); }

  std::suspend_always initial_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }

  struct final_awaiter {
    bool await_ready() noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> self, promise_base& p) noexcept;
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      return await_suspend(h, h.promise());
    }
    void await_resume() noexcept {}
  };
  final_awaiter final_suspend() noexcept { return {}; }
};

template <class T>
struct promise : promise_base {
  std::optional<T> value;
  task<T> get_return_object() noexcept;
  template <class U>
  void return_value(U&& v) noexcept(std::is_nothrow_constructible_v<T, U&&>) {
    value.emplace(std::forward<U>(v));
  }
};

template <>
struct promise<void> : promise_base {
  task<void> get_return_object() noexcept;
  void return_void() noexcept {}
};

/// Common part of task<T>: owns the frame.
template <class T>
class task_base {
 public:
  using promise_type = promise<T>;
  using handle = std::coroutine_handle<promise_type>;

  task_base() noexcept = default;
  explicit task_base(handle h) noexcept : h_(h) {}
  task_base(task_base&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  task_base& operator=(task_base&& o) noexcept {
    if (this != &o) {
      destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  ~task_base() { destroy(); }

  [[nodiscard]] bool valid() const noexcept { return static_cast<bool>(h_); }
  [[nodiscard]] bool done() const noexcept { return h_ && h_.done(); }
  /// Gives up ownership of the frame (the runtime takes it over).
  [[nodiscard]] handle release() noexcept { return std::exchange(h_, {}); }
  [[nodiscard]] handle native() const noexcept { return h_; }

 protected:
  void destroy() noexcept {
    if (h_) std::exchange(h_, {}).destroy();
  }
  handle h_;
};

}  // namespace detail

/// Frame-pool counters of the calling thread.
[[nodiscard]] detail::frame_stats frame_statistics() noexcept;
/// Starts a new measurement of peak_live (= live now).
void reset_frame_peak() noexcept;

/// A coroutine returning T (or nothing). Awaitable once, from another task.
template <class T>
class task : public detail::task_base<T> {
 public:
  using detail::task_base<T>::task_base;

  /// `co_await child`: runs the child now (symmetric transfer), resumes the awaiting task
  /// when it finishes, and returns its value or rethrows its exception.
  auto operator co_await() && noexcept {
    struct awaiter {
      std::coroutine_handle<detail::promise<T>> child;
      bool await_ready() noexcept { return !child || child.done(); }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<> parent) noexcept {
        child.promise().continuation = parent;
        return child;
      }
      T await_resume() {
        auto& p = child.promise();
        if (p.error) std::rethrow_exception(p.error);
        if constexpr (!std::is_void_v<T>) return std::move(*p.value);
      }
    };
    return awaiter{this->h_};
  }

  /// The value of a finished task (rethrows its exception).
  T result() {
    auto& p = this->h_.promise();
    if (p.error) std::rethrow_exception(p.error);
    if constexpr (!std::is_void_v<T>) return std::move(*p.value);
  }
};

template <class T>
task<T> detail::promise<T>::get_return_object() noexcept {
  return task<T>(std::coroutine_handle<promise<T>>::from_promise(*this));
}
inline task<void> detail::promise<void>::get_return_object() noexcept {
  return task<void>(std::coroutine_handle<promise<void>>::from_promise(*this));
}

}  // namespace convoy::async
