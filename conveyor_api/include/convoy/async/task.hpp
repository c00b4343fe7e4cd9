#pragma once
/// @file
/// `convoy::async::task<T>`: a lazily started C++20 coroutine that a runtime runs among
/// thousands of others (Fischler & Uchima 1993, sec. 4: many lightweight tasks per processor,
/// switched only where a task waits on a remote access, so the transfers of many tasks coalesce).
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

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
// A pooled frame is poisoned but for its list link, so that AddressSanitizer reports a
// use of a finished task's frame even though the pool (not the allocator) keeps it.
#define CONVOY_FRAME_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define CONVOY_FRAME_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define CONVOY_FRAME_POISON(p, n) ((void)(p), (void)(n))
#define CONVOY_FRAME_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace convoy::async {

class runtime;
template <class T = void>
class task;

namespace detail {

/// Counters of the frame pool of the calling thread (for benchmarks and tests).
struct frame_stats {
  std::uint64_t allocations = 0;  ///< frames created
  std::uint64_t fresh = 0;        ///< of which taken from the general allocator (not reused)
  std::uint64_t live = 0;         ///< frames alive now
  std::uint64_t peak_live = 0;    ///< most frames alive at once
  std::size_t largest_frame = 0;  ///< bytes of the largest frame requested
  std::size_t pooled_bytes = 0;   ///< bytes held in the free lists
};

/// Frame memory (Fischler & Uchima 1993, sec. 4.3: "new stack pages are selected from among a set
/// which were allocated at the start of processing"): per-thread intrusive free lists of 64-byte
/// size classes up to 1 KiB, the general allocator beyond. The common case (a class whose
/// list is not empty) is inline in the coroutine's own code: a frame that starts and
/// finishes costs two list operations and no call.
inline constexpr std::size_t k_frame_class_bytes = 64;  // >= sizeof(void*): the list link
inline constexpr std::size_t k_frame_classes = 16;      // frames up to 1 KiB are pooled

/// The size class of a frame of `bytes`: how many 64-byte units it takes.
constexpr std::size_t frame_class(std::size_t bytes) noexcept {
  return (bytes + k_frame_class_bytes - 1) / k_frame_class_bytes;
}

struct frame_pool {
  void* head[k_frame_classes + 1] = {};  ///< head[c]: free frames of c * 64 bytes
  frame_stats stats;                     ///< pooled_bytes: filled in by frame_statistics()
};
inline constinit thread_local frame_pool t_frame_pool{};

/// A frame from the general allocator (the class list is empty, or above 1 KiB); the pool
/// gives its frames back to the general allocator when the thread ends. Throws bad_alloc.
void* frame_alloc_slow(std::size_t bytes);
void frame_free_large(void* p) noexcept;

inline void* frame_alloc(std::size_t bytes) {
  frame_pool& p = t_frame_pool;
  ++p.stats.allocations;
  if (++p.stats.live > p.stats.peak_live) p.stats.peak_live = p.stats.live;
  if (bytes > p.stats.largest_frame) p.stats.largest_frame = bytes;
  const std::size_t c = frame_class(bytes);
  if (c <= k_frame_classes) [[likely]] {
    if (void* f = p.head[c]) [[likely]] {
      p.head[c] = *static_cast<void**>(f);
      CONVOY_FRAME_UNPOISON(f, c * k_frame_class_bytes);
      return f;
    }
  }
  return frame_alloc_slow(bytes);
}

inline void frame_free(void* f, std::size_t bytes) noexcept {
  frame_pool& p = t_frame_pool;
  --p.stats.live;
  const std::size_t c = frame_class(bytes);
  if (c > k_frame_classes) [[unlikely]] {
    frame_free_large(f);
    return;
  }
  *static_cast<void**>(f) = p.head[c];
  p.head[c] = f;
  CONVOY_FRAME_POISON(static_cast<char*>(f) + sizeof(void*),
                      c * k_frame_class_bytes - sizeof(void*));
}

struct group_state;

/// What a root task (one the runtime runs directly) tells its runtime when it ends.
struct root_link {
  std::size_t in_flight = 0;  ///< root tasks started and not finished
  std::size_t limit = 0;      ///< start root tasks only while in_flight < limit (0: none now)
  std::size_t peak = 0;       ///< most root tasks in flight at once
  runtime* rt = nullptr;
};

/// What every task promise has: where to go when the task finishes.
struct promise_base {
  std::coroutine_handle<> continuation;  ///< the task awaiting this one, if any
  group_state* group = nullptr;          ///< the when_all this task is a child of, if any
  root_link* root = nullptr;             ///< the runtime running this task directly, if any
  std::exception_ptr error;

  static void* operator new(std::size_t bytes) { return frame_alloc(bytes); }
  static void operator delete(void* p, std::size_t bytes) noexcept { frame_free(p, bytes); }

  std::suspend_always initial_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }

  /// A root task that ends without an exception does not suspend: the frame is destroyed
  /// as the coroutine flows off its end, inline, without a call back into the runtime.
  /// Otherwise it suspends and hands on to its awaiter, its when_all, or its runtime.
  struct final_awaiter {
    bool ends_here;
    bool await_ready() const noexcept { return ends_here; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> self, promise_base& p) noexcept;
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      return await_suspend(h, h.promise());
    }
    void await_resume() noexcept {}
  };
  final_awaiter final_suspend() noexcept {
    if (root != nullptr && !error) [[likely]] {
      --root->in_flight;
      return {true};
    }
    return {false};
  }
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
