#pragma once
/// @file
/// The buffer of a large-item channel end (large_channel.hpp): the two-sided channel's
/// outgoing and incoming buffers and the rendezvous channel's incoming one. Either its own
/// 64-byte aligned allocation, grown to the largest item it has held and never past the
/// channel's bound, or a block of the bound taken from a buffer_source, which never grows.
#include <convoy/aggregation/transport.hpp>
#include <cstddef>

namespace convoy::aggregation::detail {

/// Throws convoy::error naming both sizes when an item of `bytes` exceeds `bound`.
void check_large_item(std::size_t bytes, std::size_t bound);

class large_buffer {
 public:
  large_buffer() = default;
  ~large_buffer() { free(); }
  large_buffer(const large_buffer&) = delete;
  large_buffer& operator=(const large_buffer&) = delete;

  /// Takes `block` of `bytes` from `source` (its grab()), released to it by free(). The
  /// source must outlive the buffer. Frees what the buffer held first.
  void adopt(buffer_source& source, std::byte* block, std::size_t bytes) noexcept;
  /// Room for an item of `bytes`: checks it against `bound` (check_large_item), then grows
  /// an own allocation (its old bytes are not kept). Throws convoy::error when a source's
  /// block is smaller than `bytes`, std::bad_alloc when the allocation fails.
  void fit(std::size_t bytes, std::size_t bound);
  /// Gives the memory back (to the source or the allocator); holds nothing after.
  void free() noexcept;
  /// Forgets the memory without freeing it (MPI may still read it: an abandoned send).
  void leak() noexcept;

  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  /// True when the memory is a buffer source's block.
  [[nodiscard]] bool borrowed() const noexcept { return source_ != nullptr; }

 private:
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
  buffer_source* source_ = nullptr;  // set: data_ is its block
};

}  // namespace convoy::aggregation::detail
