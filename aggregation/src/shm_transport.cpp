// shm_transport's rings at work: a sender acquires and posts slots, a receiver polls and
// releases them, every hand-over one release-store and one acquire-load (M1). Set-up and
// the window's life are in shm_transport_setup.cpp.
#include <algorithm>
#include <convoy/aggregation/shm_transport.hpp>
#include <convoy/base/error.hpp>
#include <cstring>
#include <new>
#include <string>

#include "shm_ring_layout.hpp"

namespace convoy::aggregation {

namespace {

namespace shm = detail::shm;

constexpr std::size_t staging_alignment = 4096;

}  // namespace

std::size_t shm_transport::ring_bytes(std::size_t buffer_bytes, int n_buffers) noexcept {
  return shm::offsets(buffer_bytes, n_buffers).total;
}

int shm_transport::node_rank(int peer) const noexcept {
  const auto it =
      std::lower_bound(comm_to_node_.begin(), comm_to_node_.end(), std::pair<int, int>{peer, -1});
  return it != comm_to_node_.end() && it->first == peer ? it->second : -1;
}

bool shm_transport::on_node(int peer) const noexcept { return node_rank(peer) >= 0; }

std::byte* shm_transport::slot_ptr(std::byte* ring, int slot) const noexcept {
  return ring + shm::offsets(layout_.buffer_bytes, n_).slots +
         static_cast<std::size_t>(slot) * slot_bytes_;
}

std::byte* shm_transport::acquire(int out_link) noexcept {
  if (!opened_ || out_link < 0 || static_cast<std::size_t>(out_link) >= out_.size() ||
      !serve_out_[static_cast<std::size_t>(out_link)])
    return nullptr;
  const auto l = static_cast<std::size_t>(out_link);
  out_ring& o = out_[l];
  const auto n = static_cast<std::size_t>(n_);
  // Staged: one buffer per link, handed out again only once posted.
  if (filling_ == shm_filling::staged && o.staged_slot >= 0) return nullptr;
  if (o.n_free == 0) {
    // Take back what the receiver freed (acquire pairs with its release-store, M1).
    const shm::ring_offsets off = shm::offsets(layout_.buffer_bytes, n_);
    const std::uint64_t tail =
        shm::counter(o.base + off.freed_tail).load(std::memory_order_acquire);
    const std::uint64_t* entries = shm::words(o.base + off.freed_entries);
    for (; o.freed_seen < tail; ++o.freed_seen) {
      const std::uint64_t slot = entries[o.freed_seen % n];
      if (slot < n && out_state_[l * n + slot] == slot_state::posted) {
        out_state_[l * n + slot] = slot_state::free;
        free_[l * n + static_cast<std::size_t>(o.n_free++)] = static_cast<int>(slot);
      }
    }
    if (o.n_free == 0) return nullptr;
  }
  const int slot = free_[l * n + static_cast<std::size_t>(--o.n_free)];
  out_state_[l * n + static_cast<std::size_t>(slot)] = slot_state::filling;
  if (filling_ == shm_filling::zero_copy) return slot_ptr(o.base, slot);
  if (!stage_[l]) {
    // Page-aligned: the copy into the slot runs at full speed only when the two page
    // offsets do not alias (see the README's note on staging buffers).
    auto* b = static_cast<std::byte*>(
        ::operator new (slot_bytes_, std::align_val_t{staging_alignment}, std::nothrow));
    if (!b) {
      out_state_[l * n + static_cast<std::size_t>(slot)] = slot_state::free;
      ++o.n_free;
      return nullptr;
    }
    stage_[l].reset(b);
    staged_bytes_ += slot_bytes_;
  }
  o.staged_slot = slot;
  return stage_[l].get();
}

std::size_t shm_transport::max_memory_bytes() const noexcept {
  if (filling_ == shm_filling::zero_copy) return hosted_bytes_;
  std::size_t served = 0;
  for (bool s : serve_out_) served += s ? 1 : 0;
  return hosted_bytes_ + served * slot_bytes_;
}

void shm_transport::post(int out_link, std::byte* buffer, std::size_t bytes) {
  if (!opened_) throw convoy::error("shm_transport: post() before open()");
  if (out_link < 0 || static_cast<std::size_t>(out_link) >= out_.size() ||
      !serve_out_[static_cast<std::size_t>(out_link)])
    throw convoy::error("shm_transport: post on out-link " + std::to_string(out_link) +
                        ", which this transport does not serve");
  const auto l = static_cast<std::size_t>(out_link);
  const auto n = static_cast<std::size_t>(n_);
  out_ring& o = out_[l];
  std::byte* const first = slot_ptr(o.base, 0);
  std::byte* const staging = buffer;
  if (filling_ == shm_filling::staged) {
    if (!stage_[l] || buffer != stage_[l].get() || o.staged_slot < 0)
      throw convoy::error(
          "shm_transport: post of a buffer that is not an acquired, unposted staging buffer of "
          "out-link " +
          std::to_string(out_link));
    buffer = slot_ptr(o.base, o.staged_slot);
  }
  const std::ptrdiff_t d = buffer - first;
  const bool inside = buffer != nullptr && d >= 0 &&
                      static_cast<std::size_t>(d) < n * slot_bytes_ &&
                      static_cast<std::size_t>(d) % slot_bytes_ == 0;
  const std::size_t slot = inside ? static_cast<std::size_t>(d) / slot_bytes_ : 0;
  if (!inside || out_state_[l * n + slot] != slot_state::filling)
    throw convoy::error(
        "shm_transport: post of a buffer that is not an acquired, unposted buffer of out-link " +
        std::to_string(out_link));
  if (bytes < sizeof(buffer_header) || bytes > layout_.buffer_bytes)
    throw convoy::error("shm_transport: post of " + std::to_string(bytes) + " bytes on out-link " +
                        std::to_string(out_link) + "; must be in [" +
                        std::to_string(sizeof(buffer_header)) + ", " +
                        std::to_string(layout_.buffer_bytes) + "]");
  if (buffer != staging) {
    std::memcpy(buffer, staging, bytes);
    o.staged_slot = -1;
  }
  out_state_[l * n + slot] = slot_state::posted;
  const shm::ring_offsets off = shm::offsets(layout_.buffer_bytes, n_);
  std::uint64_t* entry = shm::words(o.base + off.posted_entries) + 2 * (o.posted % n);
  entry[0] = slot;
  entry[1] = bytes;
  ++o.posted;
  // Publishes the slot's bytes and the entry together (M1).
  shm::counter(o.base).store(o.posted, std::memory_order_release);
}

bool shm_transport::poll(received& out) {
  if (!opened_ || served_in_.empty()) return false;
  const auto n = static_cast<std::size_t>(n_);
  const shm::ring_offsets off = shm::offsets(layout_.buffer_bytes, n_);
  const std::size_t m = served_in_.size();
  for (std::size_t k = 0; k < m; ++k) {
    const std::size_t pos = (cursor_ + k) % m;
    const int link = served_in_[pos];
    in_ring& i = in_[static_cast<std::size_t>(link)];
    if (i.taken == i.tail_seen) {
      i.tail_seen = shm::counter(i.base).load(std::memory_order_acquire);
      if (i.taken == i.tail_seen) continue;
    }
    const std::uint64_t* entry = shm::words(i.base + off.posted_entries) + 2 * (i.taken % n);
    const std::uint64_t slot = entry[0], bytes = entry[1];
    if (slot >= n || bytes < sizeof(buffer_header) || bytes > layout_.buffer_bytes ||
        held_[static_cast<std::size_t>(link) * n + slot])
      throw convoy::error("shm_transport: corrupt ring of in-link " + std::to_string(link) +
                          ": entry " + std::to_string(i.taken) + " names slot " +
                          std::to_string(slot) + " with " + std::to_string(bytes) + " bytes");
    ++i.taken;
    held_[static_cast<std::size_t>(link) * n + slot] = true;
    out.in_link = link;
    out.slot = static_cast<int>(slot);
    out.data = slot_ptr(i.base, static_cast<int>(slot));
    out.bytes = static_cast<std::size_t>(bytes);
    cursor_ = (pos + 1) % m;  // the next poll starts after this link (AGG-9)
    return true;
  }
  return false;
}

void shm_transport::release(const received& r) {
  if (!opened_) throw convoy::error("shm_transport: release() before open()");
  const auto n = static_cast<std::size_t>(n_);
  const bool ok =
      r.in_link >= 0 && static_cast<std::size_t>(r.in_link) < in_.size() &&
      serve_in_[static_cast<std::size_t>(r.in_link)] && r.slot >= 0 && r.slot < n_ &&
      held_[static_cast<std::size_t>(r.in_link) * n + static_cast<std::size_t>(r.slot)] &&
      slot_ptr(in_[static_cast<std::size_t>(r.in_link)].base, r.slot) == r.data;
  if (!ok)
    throw convoy::error(
        "shm_transport: release of a buffer that poll() did not hand out or that was already "
        "released (in_link " +
        std::to_string(r.in_link) + ", slot " + std::to_string(r.slot) + ")");
  const auto l = static_cast<std::size_t>(r.in_link);
  held_[l * n + static_cast<std::size_t>(r.slot)] = false;
  in_ring& i = in_[l];
  const shm::ring_offsets off = shm::offsets(layout_.buffer_bytes, n_);
  shm::words(i.base + off.freed_entries)[i.freed % n] = static_cast<std::uint64_t>(r.slot);
  ++i.freed;
  // Our reads of the slot happen before the sender's next write to it (M1).
  shm::counter(i.base + off.freed_tail).store(i.freed, std::memory_order_release);
}

}  // namespace convoy::aggregation
