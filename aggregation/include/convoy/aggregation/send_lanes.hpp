#pragma once
/// @file
/// Send lanes: the buffer being filled toward each out-link of a rank, plus one lane whose
/// buffers come from a loopback pool for the items the rank sends to itself
/// (aggregation/README.md, "Per-peer buffers", AGG-20..23). Wesolowski et al. 2014, sec. III.C: one
/// buffer per peer, filled by the items submitted locally and by those forwarded, sent when full.
///
/// A lane knows buffers and records, not what the header's counts mean: the engine writes
/// the header (termination/) and hands the sealed buffer to a transport or to itself.
#include <convoy/aggregation/packing.hpp>
#include <convoy/aggregation/transport.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace convoy::aggregation {

/// The buffer being filled toward one out-link (or, for the loopback lane, toward this rank
/// itself). Rigid records may be written while `used <= limit`: the limit leaves room for
/// one more record and for an 8-byte tag store (AGG-20). Without a buffer, `used` is 1 and
/// `limit` 0, so that the inline test `used <= limit` fails and the slow path opens one.
struct send_lane {
  std::byte* buf = nullptr;
  std::uint32_t used = 1;
  std::uint32_t limit = 0;
  std::uint32_t record_bytes = 0;  ///< tag + payload of this cycle's rigid items
  std::uint32_t tag_bytes = 0;     ///< of the lane's stage
  std::uint64_t items = 0;         ///< records appended this cycle

  /// Takes the next rigid record (precondition: used <= limit): bookkeeping first, since
  /// the caller's copies may alias anything, then an 8-byte store of `tag` (its upper
  /// bytes are overwritten by the payload). Returns where the payload goes; `full` says
  /// the lane cannot take another record: post it. The C++ twin of convey.h's
  /// `convoy_reserve_`.
  std::byte* reserve(std::uint64_t tag, bool& full) noexcept {
    std::byte* p = buf + used;
    used += record_bytes;
    ++items;
    full = used > limit;
    std::memcpy(p, &tag, sizeof tag);
    return p + tag_bytes;
  }
  /// Appends a rigid record (precondition: used <= limit) of `n` payload bytes (`N` if
  /// known at compile time). Returns true if the lane cannot take another record: post it.
  template <std::size_t N = 0>
  bool put_rigid(std::uint64_t tag, const void* payload, std::size_t n) noexcept {
    bool full = false;
    std::byte* p = reserve(tag, full);
    if constexpr (N != 0)
      std::memcpy(p, payload, N);
    else
      copy_item(p, payload, n);
    return full;
  }
};

/// A sealed buffer, ready to be posted (or, from the loopback lane, delivered locally).
struct sealed_buffer {
  std::byte* data = nullptr;
  std::size_t bytes = 0;  ///< used bytes, header included
  int slot = -1;          ///< loopback pool slot (loopback lane only)
};

/// `n_buffers` buffers of `buffer_bytes` (64-byte aligned) for the items a rank sends to
/// itself, each allocated on its first use; they never meet the transport (AGG-22).
class loopback_pool {
 public:
  loopback_pool(std::size_t buffer_bytes, int n_buffers);
  /// A free buffer and its slot, or {nullptr, -1} when all are in use (backpressure) or
  /// the first allocation of the slot's buffer failed.
  [[nodiscard]] std::byte* take(int& slot) noexcept;
  void give_back(int slot) noexcept { free_.push_back(slot); }
  [[nodiscard]] std::size_t memory_bytes() const noexcept {
    return buffers_.size() * buffer_bytes_;
  }

 private:
  struct aligned_delete {
    void operator()(std::byte* p) const noexcept;
  };
  std::size_t buffer_bytes_;
  std::vector<std::unique_ptr<std::byte, aligned_delete>> buffers_;
  std::vector<int> free_;
};

/// The lanes of one rank: lane k < n_out fills toward out-link k (its buffers come from the
/// transport), lane n_out is the loopback lane (AGG-20..23).
class send_lanes {
 public:
  /// `tag_bytes[k]`: tag width of out-link k's stage. Rigid or elastic records.
  send_lanes(const std::vector<int>& tag_bytes, std::size_t buffer_bytes, int n_buffers,
             bool elastic);

  [[nodiscard]] int n_out() const noexcept { return n_out_; }
  [[nodiscard]] int loopback() const noexcept { return n_out_; }
  [[nodiscard]] send_lane* data() noexcept { return lanes_.data(); }
  [[nodiscard]] send_lane& operator[](int lane) noexcept {
    return lanes_[static_cast<std::size_t>(lane)];
  }
  [[nodiscard]] const send_lane& operator[](int lane) const noexcept {
    return lanes_[static_cast<std::size_t>(lane)];
  }
  /// A new begin/reset cycle with rigid items of `item_bytes` (or the elastic default).
  void start_cycle(std::size_t item_bytes) noexcept;

  /// Gives `lane` a fresh buffer: from `t` for an out-link, from the loopback pool for the
  /// loopback lane. `tick` is remembered as the time the buffer started waiting (steady
  /// dispatch, AGG-23). False if none is free: backpressure (AGG-21).
  [[nodiscard]] bool open(int lane, transport& t, std::uint64_t tick) noexcept;
  [[nodiscard]] bool has_buffer(int lane) const noexcept { return (*this)[lane].buf != nullptr; }
  [[nodiscard]] bool has_items(int lane) const noexcept {
    const send_lane& l = (*this)[lane];
    return l.buf && l.used > header_bytes;
  }
  /// Whether a record of `payload` bytes fits in the lane's open buffer.
  [[nodiscard]] bool fits(int lane, std::size_t payload) const noexcept {
    const send_lane& l = (*this)[lane];
    return l.used + record_bytes(static_cast<int>(l.tag_bytes), elastic_, payload) <= buffer_bytes_;
  }
  /// Appends a record (precondition: the lane has a buffer and it fits). Returns true if a
  /// rigid lane cannot take another record (post it now).
  bool put(int lane, std::uint64_t tag, const void* payload, std::size_t n) noexcept {
    send_lane& l = (*this)[lane];
    const int tb = static_cast<int>(l.tag_bytes);
    put_record(l.buf + l.used, tag, tb, elastic_, payload, n);
    l.used += static_cast<std::uint32_t>(record_bytes(tb, elastic_, n));
    ++l.items;
    // A rigid buffer that cannot take another item goes at once (overlaps the send with
    // further pushes).
    return !elastic_ && l.used > l.limit;
  }
  /// A rigid out-lane filled past its limit that still has room for another record below
  /// buffer_bytes: asks the transport for a larger buffer (AGG-144). True if the lane
  /// may take more records; false if it is full (post it) or the transport's buffers do
  /// not grow. Costs nothing when buffers have their full capacity from the start.
  [[nodiscard]] bool grow(int lane, transport& t) noexcept;
  /// Closes the lane and returns its buffer (the engine writes the header, then posts it).
  [[nodiscard]] sealed_buffer seal(int lane) noexcept;
  /// Advance calls the lane's open buffer has waited (steady dispatch).
  [[nodiscard]] std::uint64_t waited(int lane, std::uint64_t tick) const noexcept {
    return tick - opened_at_[static_cast<std::size_t>(lane)];
  }
  void give_back_loopback(int slot) noexcept { pool_.give_back(slot); }
  /// The loopback pool's bytes (n_buffers x buffer_bytes); out-link buffers are the
  /// transport's.
  [[nodiscard]] std::size_t memory_bytes() const noexcept { return pool_.memory_bytes(); }
  /// Records appended this cycle on lane k, then zeroed (statistics).
  std::uint64_t take_items(int lane) noexcept;

 private:
  int n_out_;
  std::size_t buffer_bytes_;
  bool elastic_;
  std::vector<send_lane> lanes_;  // n_out + 1
  std::vector<std::uint64_t> opened_at_;
  int loopback_slot_ = -1;  // pool slot of the loopback lane's open buffer
  loopback_pool pool_;
};

}  // namespace convoy::aggregation
