// Coroutine frames from per-thread free lists (seed 004 sec. 4.3: "new stack pages are
// selected from among a set which were allocated at the start of processing"): a task
// that starts and finishes costs two list operations once the pool is warm.
//
// The lists are intrusive (a free frame holds the next one's address) and live in a
// constant-initialised thread_local, so the hot path has no guard and no vector; the
// frames are given back to the general allocator when the thread ends (pool_owner).
#include <array>
#include <convoy/async/task.hpp>

namespace convoy::async {

namespace {

constexpr std::size_t k_class_bytes = 64;  // >= sizeof(void*): room for the list link
constexpr std::size_t k_classes = 16;      // frames up to 1 KiB are pooled

struct pool {
  std::array<void*, k_classes + 1> head{};  // head[c]: free frames of c * 64 bytes
  detail::frame_stats stats;
};

constinit thread_local pool t_pool{};

// Returns the pooled frames of the thread at its end (registered on the first frame that
// the general allocator gives).
struct pool_owner {
  pool_owner() = default;
  pool_owner(const pool_owner&) = delete;
  pool_owner& operator=(const pool_owner&) = delete;
  ~pool_owner() {
    for (std::size_t c = 1; c <= k_classes; ++c)
      while (void* f = t_pool.head[c]) {
        t_pool.head[c] = *static_cast<void**>(f);
        ::operator delete(f);  // unsized: clang-tidy's clang has no sized deallocation
      }
    t_pool.stats.pooled_bytes = 0;
  }
};

void own_pool() {
  thread_local pool_owner owner;
  (void)owner;
}

}  // namespace

void* detail::frame_alloc(std::size_t bytes) {
  pool& p = t_pool;
  ++p.stats.allocations;
  if (++p.stats.live > p.stats.peak_live) p.stats.peak_live = p.stats.live;
  if (bytes > p.stats.largest_frame) p.stats.largest_frame = bytes;
  const std::size_t c = (bytes + k_class_bytes - 1) / k_class_bytes;
  if (c > k_classes) [[unlikely]]
    return ::operator new(bytes);
  if (void* f = p.head[c]) [[likely]] {
    p.head[c] = *static_cast<void**>(f);
    p.stats.pooled_bytes -= c * k_class_bytes;
    return f;
  }
  own_pool();
  return ::operator new(c* k_class_bytes);
}

void detail::frame_free(void* f, std::size_t bytes) noexcept {
  pool& p = t_pool;
  --p.stats.live;
  const std::size_t c = (bytes + k_class_bytes - 1) / k_class_bytes;
  if (c > k_classes) [[unlikely]] {
    ::operator delete(f);
    return;
  }
  *static_cast<void**>(f) = p.head[c];
  p.head[c] = f;
  p.stats.pooled_bytes += c * k_class_bytes;
}

detail::frame_stats frame_statistics() noexcept { return t_pool.stats; }

void reset_frame_peak() noexcept { t_pool.stats.peak_live = t_pool.stats.live; }

}  // namespace convoy::async
