#pragma once
/// @file
/// The receive side of one in-link: the buffers it delivered, in arrival order, and the
/// read position in the front one (docs/aggregation-reference.md, "Per-peer buffers", AGG-24).
#include <convoy/aggregation/packing.hpp>
#include <convoy/aggregation/transport.hpp>
#include <cstddef>
#include <cstring>

namespace convoy::aggregation {

/// Received buffers of one in-link: this cycle's first (`now()` of them), then any that
/// belong to the next cycle (held until the engine's next begin). A sender never has more
/// than n_buffers unreleased buffers on a link (AGG-4), so a fixed ring of n_buffers slots
/// — a slice of one array shared by every in-link of the engine — always has room.
class receive_queue {
 public:
  void bind(received* slots, int capacity) noexcept {
    slots_ = slots;
    capacity_ = capacity;
  }
  /// No buffer of this cycle.
  [[nodiscard]] bool empty() const noexcept { return now_ == 0; }
  [[nodiscard]] int now() const noexcept { return now_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  /// Some buffer is held for a later cycle.
  [[nodiscard]] bool holding() const noexcept { return size_ > now_; }
  [[nodiscard]] received& front() noexcept { return slots_[head_]; }
  [[nodiscard]] const received& front() const noexcept { return slots_[head_]; }
  [[nodiscard]] const received& at(int i) const noexcept { return slots_[(head_ + i) % capacity_]; }
  /// Appends a buffer; `current`: it belongs to this cycle. Throws convoy::error if the
  /// link delivered more buffers than its credits allow (a transport bug).
  void push_back(const received& r, bool current);
  void pop_front() noexcept {
    head_ = (head_ + 1) % capacity_;
    --size_;
    --now_;
    offset = header_bytes;
  }
  /// Puts back a buffer popped by the last pull (unpull).
  void push_front(const received& r) noexcept {
    head_ = (head_ + capacity_ - 1) % capacity_;
    slots_[head_] = r;
    ++size_;
    ++now_;
  }
  /// A new cycle: the first `n` buffers (those stamped with it) become current.
  void set_now(int n) noexcept { now_ = n; }
  /// Bytes used in the front buffer, from its header.
  [[nodiscard]] std::size_t front_bytes() const noexcept { return header_of(front()).bytes; }

  [[nodiscard]] static buffer_header header_of(const received& r) noexcept {
    buffer_header h{};
    std::memcpy(&h, r.data, sizeof h);
    return h;
  }

  /// Read position in the front buffer (header_bytes at a fresh buffer).
  std::size_t offset = header_bytes;

 private:
  received* slots_ = nullptr;
  int capacity_ = 0, head_ = 0, size_ = 0, now_ = 0;
};

}  // namespace convoy::aggregation
