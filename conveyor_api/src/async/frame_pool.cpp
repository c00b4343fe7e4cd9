// Coroutine frames from per-thread free lists (seed 004 sec. 4.3: "new stack pages are
// selected from among a set which were allocated at the start of processing"): a task
// that starts and finishes costs two list operations once the pool is warm.
#include <array>
#include <convoy/async/task.hpp>
#include <vector>

namespace convoy::async {

namespace {

constexpr std::size_t k_class_bytes = 64;
constexpr std::size_t k_classes = 16;  // frames up to 1 KiB are pooled

struct pool {
  std::array<std::vector<void*>, k_classes + 1> free;
  detail::frame_stats stats;
  ~pool() {
    for (std::size_t c = 1; c <= k_classes; ++c)
      for (void* p : free[c]) ::operator delete(p);
  }
};

pool& local_pool() {
  thread_local pool p;
  return p;
}

}  // namespace

void* detail::frame_alloc(std::size_t bytes) {
  pool& p = local_pool();
  ++p.stats.allocations;
  if (++p.stats.live > p.stats.peak_live) p.stats.peak_live = p.stats.live;
  if (bytes > p.stats.largest_frame) p.stats.largest_frame = bytes;
  const std::size_t c = (bytes + k_class_bytes - 1) / k_class_bytes;
  if (c > k_classes) return ::operator new(bytes);
  auto& list = p.free[c];
  if (list.empty()) return ::operator new(c* k_class_bytes);
  void* f = list.back();
  list.pop_back();
  p.stats.pooled_bytes -= c * k_class_bytes;
  return f;
}

void detail::frame_free(void* f, std::size_t bytes) noexcept {
  pool& p = local_pool();
  --p.stats.live;
  const std::size_t c = (bytes + k_class_bytes - 1) / k_class_bytes;
  if (c > k_classes) {
    ::operator delete(f);
    return;
  }
  try {
    p.free[c].push_back(f);
    p.stats.pooled_bytes += c * k_class_bytes;
  } catch (...) {
    ::operator delete(f);
  }
}

detail::frame_stats frame_statistics() noexcept { return local_pool().stats; }

void reset_frame_peak() noexcept {
  auto& s = local_pool().stats;
  s.peak_live = s.live;
}

}  // namespace convoy::async
