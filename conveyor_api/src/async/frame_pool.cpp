// The frame pool's slow paths (task.hpp has the inline common case): a frame from the
// general allocator when a class list is empty or the frame is above 1 KiB, the lists
// given back to the general allocator when the thread ends, and the statistics.
#include <convoy/async/task.hpp>
#include <new>

namespace convoy::async {

namespace {

// Returns the pooled frames of the thread at its end (registered on the first frame that
// the general allocator gives).
struct pool_owner {
  pool_owner() = default;
  pool_owner(const pool_owner&) = delete;
  pool_owner& operator=(const pool_owner&) = delete;
  ~pool_owner() {
    for (std::size_t c = 1; c <= detail::k_frame_classes; ++c)
      while (void* f = detail::t_frame_pool.head[c]) {
        detail::t_frame_pool.head[c] = *static_cast<void**>(f);
        CONVOY_FRAME_UNPOISON(f, c * detail::k_frame_class_bytes);
        // Unsized: clang-tidy's clang has no sized deallocation.
        ::operator delete (f, std::align_val_t{detail::k_frame_class_bytes});
      }
  }
};

void own_pool() {
  thread_local pool_owner owner;
  (void)owner;
}

}  // namespace

void* detail::frame_alloc_slow(std::size_t bytes) {
  ++t_frame_pool.stats.fresh;
  const std::size_t c = frame_class(bytes);
  if (c > k_frame_classes) return ::operator new(bytes);
  own_pool();
  // Cache-line aligned, so that a frame of c classes spans c lines, no more: the frames
  // of the tasks waiting for replies are what a rank touches besides its data.
  return ::operator new (c* k_frame_class_bytes, std::align_val_t{k_frame_class_bytes});
}

void detail::frame_free_large(void* p) noexcept { ::operator delete(p); }

detail::frame_stats frame_statistics() noexcept {
  detail::frame_stats s = detail::t_frame_pool.stats;
  s.pooled_bytes = 0;
  for (std::size_t c = 1; c <= detail::k_frame_classes; ++c)
    for (void* f = detail::t_frame_pool.head[c]; f != nullptr; f = *static_cast<void**>(f))
      s.pooled_bytes += c * detail::k_frame_class_bytes;
  return s;
}

void reset_frame_peak() noexcept {
  detail::t_frame_pool.stats.peak_live = detail::t_frame_pool.stats.live;
}

}  // namespace convoy::async
