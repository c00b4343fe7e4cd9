// Send lanes and the loopback pool (docs/aggregation-reference.md, "Per-peer buffers").
#include <algorithm>
#include <convoy/aggregation/send_lanes.hpp>
#include <convoy/base/error.hpp>
#include <new>

namespace convoy::aggregation {

void loopback_pool::aligned_delete::operator()(std::byte* p) const noexcept {
  ::operator delete (p, std::align_val_t{64});
}

loopback_pool::loopback_pool(std::size_t buffer_bytes, int n_buffers)
    : buffer_bytes_(buffer_bytes), buffers_(static_cast<std::size_t>(n_buffers)) {
  for (int k = 0; k < n_buffers; ++k) free_.push_back(n_buffers - 1 - k);
}

std::byte* loopback_pool::take(int& slot) noexcept {
  if (free_.empty()) {
    slot = -1;
    return nullptr;
  }
  auto& b = buffers_[static_cast<std::size_t>(free_.back())];
  // On first use: a rank that never sends to itself holds no loopback buffer.
  if (!b) {
    b.reset(static_cast<std::byte*>(
        ::operator new (buffer_bytes_, std::align_val_t{64}, std::nothrow)));
    if (!b) {
      slot = -1;
      return nullptr;
    }
  }
  slot = free_.back();
  free_.pop_back();
  return b.get();
}

send_lanes::send_lanes(const std::vector<int>& tag_bytes, std::size_t buffer_bytes, int n_buffers,
                       bool elastic)
    : n_out_(static_cast<int>(tag_bytes.size())),
      buffer_bytes_(buffer_bytes),
      elastic_(elastic),
      lanes_(tag_bytes.size() + 1),
      opened_at_(tag_bytes.size() + 1, 0),
      pool_(buffer_bytes, n_buffers) {
  for (std::size_t k = 0; k < tag_bytes.size(); ++k)
    lanes_[k].tag_bytes = static_cast<std::uint32_t>(tag_bytes[k]);
}

void send_lanes::start_cycle(std::size_t item_bytes) noexcept {
  for (auto& l : lanes_) l.record_bytes = l.tag_bytes + static_cast<std::uint32_t>(item_bytes);
}

bool send_lanes::open(int lane, transport& t, std::uint64_t tick) noexcept {
  send_lane& l = (*this)[lane];
  std::byte* b = nullptr;
  if (lane == n_out_) {
    b = pool_.take(loopback_slot_);
  } else {
    b = t.acquire(lane);
    opened_at_[static_cast<std::size_t>(lane)] = tick;
  }
  if (!b) return false;
  // Room for one more rigid record and the inline push's 8-byte tag store (AGG-20).
  const std::size_t record = std::max<std::size_t>(l.record_bytes, 8);
  l.used = static_cast<std::uint32_t>(header_bytes);
  if (elastic_) {
    l.buf = b;
    l.limit = 0;
    return true;
  }
  std::size_t room = lane == n_out_ ? 0 : t.room(lane, b);
  // A growing buffer (AGG-144) starts with room for at least one record.
  if (room != 0 && room < header_bytes + record) {
    b = t.grow(lane, b, header_bytes, header_bytes + record, room);
    if (!b || room < header_bytes + record) return false;
  }
  l.buf = b;
  l.limit = static_cast<std::uint32_t>((room == 0 ? buffer_bytes_ : room) - record);
  return true;
}

bool send_lanes::grow(int lane, transport& t) noexcept {
  if (lane == n_out_ || elastic_) return false;
  send_lane& l = (*this)[lane];
  const std::size_t record = std::max<std::size_t>(l.record_bytes, 8);
  if (l.used + record > buffer_bytes_) return false;  // full at capacity: post it
  std::size_t room = 0;
  std::byte* b = t.grow(lane, l.buf, l.used, l.used + record, room);
  if (!b || room < l.used + record) return false;
  l.buf = b;
  l.limit = static_cast<std::uint32_t>(room - record);
  return true;
}

sealed_buffer send_lanes::seal(int lane) noexcept {
  send_lane& l = (*this)[lane];
  sealed_buffer b{l.buf, l.used, lane == n_out_ ? loopback_slot_ : -1};
  l.buf = nullptr;
  l.used = 1;
  l.limit = 0;
  return b;
}

std::uint64_t send_lanes::take_items(int lane) noexcept {
  send_lane& l = (*this)[lane];
  const std::uint64_t n = l.items;
  l.items = 0;
  return n;
}

}  // namespace convoy::aggregation
