#pragma once
/// @file
/// Combining in a send lane (aggregation/README.md, AGG-150..156): a small open-addressing
/// table per lane maps a record's combining key — its routing tag and the item's key bytes —
/// to the record's index in the lane's open buffer, so that an item whose key is already
/// there is folded into that record's value in place, in the buffer that will leave,
/// instead of being appended. The table is cleared in O(1) (a generation counter) when the
/// lane opens its next buffer; it never names a record of a sealed buffer.
///
/// Bounded memory: 4 bytes per slot (an 8-bit generation, an 8-bit fingerprint of the hash,
/// a 16-bit record index), 2^k slots with 2^k >= 2 x the records a buffer holds, at most
/// `max_slots`; at most half the slots are used, and a key that finds the table at that
/// load is appended without combining (the hot keys come early and are in already).
///
/// Pays-off check (`combine_gate`): a lane combines a buffer, counts hits, and at the end of
/// the buffer (or early, after a sample with almost no hits) stops combining when too few
/// offers hit; it then appends plainly for `skip` buffers, the skip doubling up to a bound
/// each time the check fails again, so uniform keys pay for one combined buffer in
/// max_skip + 1.
///
/// Inline push: while a lane combines, its `send_lane::limit` is 0, so the inline test
/// `used <= limit` of the engine's inline push and of convey.h fails and every push to the
/// lane takes the slow path, which combines; `real_limit` keeps the lane's true limit. A
/// lane that does not combine has its true limit and takes inline pushes as in any
/// conveyor.
#include <algorithm>
#include <bit>
#include <convoy/aggregation/packing.hpp>
#include <convoy/aggregation/send_lanes.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace convoy::aggregation {

/// Folds the value at `from` into the value at `into` (value_bytes each, either unaligned).
/// Must be associative and commutative and must not throw. C-compatible.
using combine_fn = void (*)(void* into, const void* from);

/// The combine_fn that adds values of type `T` (an unsigned type wraps modulo 2^bits), read
/// and written unaligned: `combine_add<std::uint64_t>`.
template <class T>
void combine_add(void* into, const void* from) noexcept {
  T a{}, b{};
  std::memcpy(&a, into, sizeof a);
  std::memcpy(&b, from, sizeof b);
  a += b;
  std::memcpy(into, &a, sizeof a);
}

/// Where an item's key and value lie, in bytes from the start of the item (the payload).
/// `fn == nullptr`: no combining.
struct combine_spec {
  std::uint32_t key_offset = 0;
  std::uint32_t key_bytes = 8;  ///< 1..8 take the one-word compare; more compare bytewise
  std::uint32_t value_offset = 8;
  std::uint32_t value_bytes = 8;
  combine_fn fn = nullptr;
};

/// Why `s` cannot combine items of `item_bytes`, or nullptr if it can: the key and the value
/// must be non-empty, lie inside the item and not overlap, and fn must be set.
[[nodiscard]] inline const char* combine_spec_problem(const combine_spec& s,
                                                      std::size_t item_bytes) noexcept {
  if (s.fn == nullptr) return "combine: no combine function";
  if (s.key_bytes == 0 || s.value_bytes == 0) return "combine: empty key or value";
  const std::size_t key_end = std::size_t{s.key_offset} + s.key_bytes;
  const std::size_t value_end = std::size_t{s.value_offset} + s.value_bytes;
  if (key_end > item_bytes || value_end > item_bytes)
    return "combine: key or value beyond the item";
  if (s.key_offset < value_end && s.value_offset < key_end) return "combine: key and value overlap";
  return nullptr;
}

/// A table for one lane: record index of each combining key in the open buffer.
class combine_table {
 public:
  /// Records a buffer can name (16-bit indices); a buffer's later records are not combined.
  static constexpr std::uint32_t max_records = 0xFFFF;
  static constexpr std::int32_t added = -1;  ///< find_or_add: the candidate is now known
  static constexpr std::int32_t full = -2;   ///< find_or_add: at its load limit, not added

  /// Slots of a table for buffers of `records` records and at most `max_slots` slots.
  [[nodiscard]] static std::size_t slots_for(std::size_t records, std::size_t max_slots) noexcept {
    const std::size_t want =
        std::max<std::size_t>(16, std::bit_ceil(2 * std::min<std::size_t>(records, max_records)));
    return std::min(want, std::max<std::size_t>(16, std::bit_floor(max_slots)));
  }

  combine_table() : combine_table(0, 16) {}
  /// A table for buffers of `records` records, at most `max_slots` slots (a power of two).
  combine_table(std::size_t records, std::size_t max_slots) {
    const std::size_t n = slots_for(records, max_slots);
    slots_.assign(n, 0);
    mask_ = n - 1;
    shift_ = 64 - std::countr_zero(n);
    load_limit_ = static_cast<std::uint32_t>(n / 2);
  }

  /// Forgets every key (O(1); a full pass once in 255 clears).
  void clear() noexcept {
    n_ = 0;
    if (++gen_ > 0xFF) [[unlikely]] {
      std::fill(slots_.begin(), slots_.end(), 0u);
      gen_ = 1;
    }
  }

  /// The record with the candidate's key, or `added` after registering the candidate as
  /// record `index`, or `full`. `same(i)` compares the candidate's key with record i's; it
  /// is called only where the slot's 8-bit fingerprint (the hash's low byte) matches, so a
  /// miss rarely reads the buffer. Linear probing at load <= 1/2.
  template <class Same>
  [[nodiscard]] std::int32_t find_or_add(std::uint64_t hash, std::uint32_t index,
                                         Same same) noexcept {
    std::uint32_t* const slots = slots_.data();  // locals: buffer stores alias members
    const std::size_t mask = mask_;
    const std::uint32_t gen = gen_;
    const std::uint32_t tag = gen << 8 | static_cast<std::uint32_t>(hash & 0xFF);
    std::size_t i = static_cast<std::size_t>(hash >> shift_);
    for (;;) {
      const std::uint32_t e = slots[i];
      if ((e >> 24) != gen) {
        if (n_ >= load_limit_ || index >= max_records) return full;
        slots[i] = tag << 16 | index;
        ++n_;
        return added;
      }
      if ((e >> 16) == tag) {
        const std::uint32_t r = e & 0xFFFFu;
        if (same(r)) return static_cast<std::int32_t>(r);
      }
      i = (i + 1) & mask;
    }
  }

  [[nodiscard]] std::size_t slots() const noexcept { return slots_.size(); }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] std::size_t memory_bytes() const noexcept {
    return slots_.size() * sizeof(std::uint32_t);
  }

 private:
  std::vector<std::uint32_t> slots_;  // generation (8 bits), fingerprint (8), record index (16)
  std::size_t mask_ = 0;
  int shift_ = 60;
  std::uint32_t gen_ = 1;
  std::uint32_t n_ = 0;
  std::uint32_t load_limit_ = 0;
};

/// Whether combining pays on a lane. Hits are counted per combined buffer; a buffer whose
/// offers hit less than min_hit_per_1024 / 1024 of the time ends combining, and the lane
/// appends plainly for `skip` buffers. An early check after `sample` offers stops a buffer
/// at once when fewer than `sample_min_hits` hit: a buffer's first offers hit less often
/// than its later ones (the table is still empty), so the early bar is lower, set to
/// catch keys that never repeat.
class combine_gate {
 public:
  struct policy {
    std::uint32_t sample = 256;           ///< offers before the early check
    std::uint32_t sample_min_hits = 4;    ///< hits the sample needs (1/64)
    std::uint32_t min_hit_per_1024 = 64;  ///< of a whole buffer's offers (1/16)
    std::uint32_t max_skip = 64;          ///< buffers appended plainly at most in a row
  };
  combine_gate() = default;
  explicit combine_gate(policy p) : p_(p) {}

  /// A new buffer opens: true if it combines.
  [[nodiscard]] bool start_buffer() noexcept {
    offers_ = hits_ = 0;
    if (skip_ > 0) {
      --skip_;
      return false;
    }
    return true;
  }
  /// One offer to a combining buffer; false if combining stops for the rest of the buffer
  /// (the early check failed).
  [[nodiscard]] bool note(bool hit) noexcept {
    ++offers_;
    hits_ += hit ? 1u : 0u;
    if (offers_ != p_.sample) [[likely]]
      return true;
    if (hits_ >= p_.sample_min_hits) return true;
    fail();
    return false;
  }
  /// The combining buffer is sealed (if the early check did not already stop it).
  void end_buffer() noexcept {
    if (offers_ == 0 || offers_ < p_.sample) return;  // too few offers to judge
    if (pays())
      backoff_ = 1;
    else if (skip_ == 0)
      fail();
  }
  [[nodiscard]] std::uint32_t skip() const noexcept { return skip_; }
  /// Buffers whose check failed (the early one or the end-of-buffer one).
  [[nodiscard]] std::uint64_t failures() const noexcept { return failures_; }
  /// failures(), then zeroed (statistics per cycle).
  std::uint64_t take_failures() noexcept {
    const std::uint64_t n = failures_;
    failures_ = 0;
    return n;
  }

 private:
  [[nodiscard]] bool pays() const noexcept {
    return static_cast<std::uint64_t>(hits_) * 1024 >=
           static_cast<std::uint64_t>(offers_) * p_.min_hit_per_1024;
  }
  void fail() noexcept {
    ++failures_;
    skip_ = backoff_;
    backoff_ = std::min(2 * backoff_, p_.max_skip);
  }
  policy p_;
  std::uint32_t offers_ = 0, hits_ = 0;
  std::uint32_t skip_ = 0, backoff_ = 1;
  std::uint64_t failures_ = 0;
};

/// One combining lane's state beside its send_lane.
struct combining_lane {
  combine_table table;
  combine_gate gate;
  std::uint32_t real_limit = 0;  ///< the lane's limit while send_lane::limit is 0
  std::uint32_t n_records = 0;   ///< records in the open buffer
  bool on = false;               ///< the open buffer combines
  std::uint64_t hits = 0;        ///< items folded into a record (statistics)

  combining_lane() = default;
  combining_lane(std::size_t records, std::size_t max_slots, combine_gate::policy p = {})
      : table(records, max_slots), gate(p) {}

  /// `l` has just opened a buffer (send_lanes::open set its true limit).
  void opened(send_lane& l) noexcept {
    n_records = 0;
    on = gate.start_buffer();
    real_limit = l.limit;
    if (on) {
      table.clear();
      l.limit = 0;  // every push to this lane takes the slow path, which combines
    }
  }
  /// `l`'s open buffer has grown (send_lanes::grow set its new true limit).
  void grown(send_lane& l) noexcept {
    real_limit = l.limit;
    if (on) l.limit = 0;
  }
  /// `l` is about to be sealed.
  void sealing() noexcept {
    if (on) gate.end_buffer();
    on = false;
  }
  /// Stops combining for the rest of the open buffer: inline pushes may take the lane.
  void stop(send_lane& l) noexcept {
    on = false;
    l.limit = real_limit;
  }
};

/// The hash of a combining key: the tag (on a combining engine every record of a lane with
/// the same destination carries the same tag) and up to 8 key bytes. Fibonacci hashing:
/// the table takes the top bits.
[[nodiscard]] inline std::uint64_t combine_hash(std::uint64_t tag, std::uint64_t key) noexcept {
  return (key ^ (tag * 0x9E3779B97F4A7C15ull)) * 0xD6E8FEB86659FD93ull;
}

/// Offers a rigid record (tag + `item_bytes` of `item`) to lane `l`, which has an open
/// buffer with room for it (`used <= real_limit` while it combines, `used <= limit`
/// otherwise). Folds the item's value into the record with the same tag and key if the
/// open buffer has one, else appends it. Returns true if the lane cannot take another
/// record (grow or post it). `Item` is item_bytes when known at compile time, else 0;
/// `KeyBytes` 1..8 compares the key as one word, 0 takes s.key_bytes (any size: the hash
/// reads the first 8 bytes, the compare all of them).
template <std::size_t Item, std::size_t KeyBytes>
bool offer_record(send_lane& l, combining_lane& c, const combine_spec& s, std::uint64_t tag,
                  const std::byte* item, std::size_t item_bytes) noexcept {
  static_assert(KeyBytes <= 8);
  if (c.on) {
    const std::size_t kb = KeyBytes != 0 ? KeyBytes : s.key_bytes;
    std::uint64_t key = 0;
    std::memcpy(&key, item + s.key_offset, KeyBytes != 0 ? KeyBytes : std::min<std::size_t>(kb, 8));
    const std::uint32_t rb = l.record_bytes;
    const std::uint32_t tb = l.tag_bytes;
    const std::uint64_t tag_mask = tb >= 8 ? ~0ull : (1ull << (8 * tb)) - 1;
    std::byte* const first = l.buf + header_bytes;
    const std::int32_t r =
        c.table.find_or_add(combine_hash(tag, key), c.n_records, [&](std::uint32_t i) {
          const std::byte* rec = first + static_cast<std::size_t>(i) * rb;
          std::uint64_t t = 0;
          std::memcpy(&t, rec, 8);  // the 8 bytes from the record's start are in the buffer
          if (((t ^ tag) & tag_mask) != 0) return false;
          if constexpr (KeyBytes != 0) {
            std::uint64_t k = 0;
            std::memcpy(&k, rec + tb + s.key_offset, KeyBytes);
            return k == key;
          } else {
            return std::memcmp(rec + tb + s.key_offset, item + s.key_offset, kb) == 0;
          }
        });
    if (r >= 0) {
      s.fn(first + static_cast<std::size_t>(r) * rb + tb + s.value_offset, item + s.value_offset);
      ++c.hits;
      if (!c.gate.note(true)) c.stop(l);
      return false;
    }
    if (!c.gate.note(false)) c.stop(l);
  }
  // Append, as send_lane::reserve does, against the true limit.
  std::byte* p = l.buf + l.used;
  l.used += l.record_bytes;
  ++l.items;
  ++c.n_records;
  std::memcpy(p, &tag, sizeof tag);
  if constexpr (Item != 0)
    std::memcpy(p + l.tag_bytes, item, Item);
  else
    copy_item(p + l.tag_bytes, item, item_bytes);
  return l.used > c.real_limit;
}

/// An instantiation of offer_record.
using combine_offer_fn = bool (*)(send_lane&, combining_lane&, const combine_spec&, std::uint64_t,
                                  const std::byte*, std::size_t) noexcept;

/// The offer_record instantiation for items of `item_bytes` and `s`'s key size: items of
/// 8, 16 or 24 bytes and keys of 4 or 8 bytes get fixed-size copies and compares.
[[nodiscard]] inline combine_offer_fn pick_combine_offer(std::size_t item_bytes,
                                                         const combine_spec& s) noexcept {
  const auto by_key = [&]<std::size_t Item>() -> combine_offer_fn {
    if (s.key_bytes == 8) return &offer_record<Item, 8>;
    if (s.key_bytes == 4) return &offer_record<Item, 4>;
    return &offer_record<Item, 0>;
  };
  switch (item_bytes) {
    case 8:
      return by_key.template operator()<8>();
    case 16:
      return by_key.template operator()<16>();
    case 24:
      return by_key.template operator()<24>();
    default:
      return by_key.template operator()<0>();
  }
}

}  // namespace convoy::aggregation
