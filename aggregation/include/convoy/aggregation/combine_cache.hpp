#pragma once
/// @file
/// A hold-back cache in front of a combining lane (aggregation/README.md, AGG-157..160).
/// One buffer's table (combine_table.hpp) folds only what meets within one buffer; under a
/// skewed key distribution most keys of a buffer are seen once in it, yet the hot ones come
/// back buffer after buffer. The cache keeps the lane's hottest records across buffers:
/// contributions to a held key fold into its entry, and a miss takes a free way of its set
/// or evicts the way that folded fewer contributions into the lane (where the open buffer's
/// table may still fold it), so a hot key is never displaced by a colder one.
///
/// Held entries are items that are in no buffer yet: whoever owns the cache must drain it
/// into the lane before the lane's last buffer of a cycle leaves (the engine does so on
/// flush, at each steady period and before the lane's stage closes). The lane's fold pass
/// at fill (fold_through_cache) offers its records here first; a drain appends entries
/// plainly, and a pass at that time must not take the cache.
///
/// 2-way set associative, `entries` rounded down to a power of two (2 at least); an entry
/// is [8-byte tag][item] plus a 4-byte count of the contributions folded into it (0: free).
#include <algorithm>
#include <bit>
#include <convoy/aggregation/combine_table.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace convoy::aggregation {

class combine_cache {
 public:
  /// What became of an offered item.
  enum class outcome {
    folded,  ///< its value went into the entry of its (tag, key)
    held,    ///< it took a free way
    evicted  ///< it took the place of the entry now in victim_tag / victim_item
  };

  /// Entries of a cache of at most `entries` (0: no cache).
  [[nodiscard]] static std::size_t entries_for(std::size_t entries) noexcept {
    return entries == 0 ? 0 : std::max<std::size_t>(2, std::bit_floor(entries));
  }
  /// Bytes of a cache of `entries` entries of items of `item_bytes`.
  [[nodiscard]] static std::size_t bytes_for(std::size_t entries, std::size_t item_bytes) noexcept {
    return entries_for(entries) * (8 + item_bytes + sizeof(std::uint32_t));
  }

  /// A cache of entries_for(entries) >= 2 entries for items of `item_bytes` under `spec`,
  /// in front of a lane whose tags are `tag_bytes` wide.
  combine_cache(std::size_t entries, std::size_t item_bytes, std::size_t tag_bytes,
                const combine_spec& spec)
      : item_bytes_(item_bytes),
        entry_bytes_(8 + item_bytes),
        tag_mask_(detail::tag_mask(static_cast<std::uint32_t>(tag_bytes))),
        spec_(spec) {
    const std::size_t n = entries_for(std::max<std::size_t>(entries, 2));
    const std::size_t sets = n / 2;
    shift_ = sets > 1 ? 64 - std::countr_zero(sets) : 0;
    data_.assign(n * entry_bytes_, std::byte{0});
    count_.assign(n, 0);
  }

  /// Offers an item with its lane tag (only the lane's tag_bytes count). Folds it into the
  /// entry of its (tag, key), or holds it in a free way of its set, or evicts that set's way
  /// with fewer contributions into `victim_tag` / `victim_item` (item_bytes; the caller
  /// offers it to the lane now) and holds the item there. O(1): two entries compared.
  [[nodiscard]] outcome offer(std::uint64_t tag, const std::byte* item, std::uint64_t& victim_tag,
                              std::byte* victim_item) noexcept {
    tag &= tag_mask_;
    const std::size_t kb = spec_.key_bytes;
    std::uint64_t key = 0;
    std::memcpy(&key, item + spec_.key_offset, std::min<std::size_t>(kb, 8));
    const std::uint64_t h = combine_hash(tag, key);
    const std::size_t first = 2 * (shift_ == 0 ? 0 : static_cast<std::size_t>(h >> shift_));
    std::size_t free_way = 2;
    for (std::size_t w = 0; w < 2; ++w) {
      const std::size_t e = first + w;
      if (count_[e] == 0) {
        free_way = std::min(free_way, w);
        continue;
      }
      std::byte* const rec = entry(e);
      if (same(rec, tag, key, item, kb)) {
        spec_.fn(rec + 8 + spec_.value_offset, item + spec_.value_offset);
        ++count_[e];
        return outcome::folded;
      }
    }
    if (free_way != 2) {
      install(first + free_way, tag, item);
      ++held_;
      return outcome::held;
    }
    const std::size_t victim = first + (count_[first] <= count_[first + 1] ? 0 : 1);
    std::memcpy(&victim_tag, entry(victim), 8);
    std::memcpy(victim_item, entry(victim) + 8, item_bytes_);
    install(victim, tag, item);
    return outcome::evicted;
  }

  /// Hands held entries to `sink(tag, item)`, each once, and frees them; `sink` returns
  /// false when it cannot take one now (its lane has no free buffer): that entry stays and
  /// the next drain starts there. True once the cache is empty.
  template <class Sink>
  bool drain(Sink sink) {
    const std::size_t n = count_.size();
    for (std::size_t seen = 0; held_ > 0 && seen < n; ++seen) {
      const std::size_t e = drain_at_;
      if (count_[e] != 0) {
        std::uint64_t tag = 0;
        std::memcpy(&tag, entry(e), 8);
        if (!sink(tag, static_cast<const std::byte*>(entry(e) + 8))) return false;
        count_[e] = 0;
        --held_;
      }
      drain_at_ = (e + 1) % n;
    }
    return held_ == 0;
  }

  [[nodiscard]] bool empty() const noexcept { return held_ == 0; }
  [[nodiscard]] std::size_t held() const noexcept { return held_; }
  [[nodiscard]] std::size_t entries() const noexcept { return count_.size(); }
  [[nodiscard]] std::size_t memory_bytes() const noexcept {
    return data_.size() + count_.size() * sizeof(std::uint32_t);
  }

 private:
  [[nodiscard]] std::byte* entry(std::size_t e) noexcept { return data_.data() + e * entry_bytes_; }
  [[nodiscard]] bool same(const std::byte* rec, std::uint64_t tag, std::uint64_t key,
                          const std::byte* item, std::size_t kb) const noexcept {
    std::uint64_t t = 0, k = 0;
    std::memcpy(&t, rec, 8);
    if (t != tag) return false;
    const std::byte* const rec_key = rec + 8 + spec_.key_offset;
    if (kb > 8) return std::memcmp(rec_key, item + spec_.key_offset, kb) == 0;
    std::memcpy(&k, rec_key, kb);
    return k == key;
  }
  void install(std::size_t e, std::uint64_t tag, const std::byte* item) noexcept {
    std::byte* const rec = entry(e);
    std::memcpy(rec, &tag, 8);
    std::memcpy(rec + 8, item, item_bytes_);
    count_[e] = 1;
  }

  std::size_t item_bytes_, entry_bytes_;
  std::uint64_t tag_mask_;
  combine_spec spec_;
  int shift_ = 0;
  std::vector<std::byte> data_;
  std::vector<std::uint32_t> count_;
  std::size_t held_ = 0, drain_at_ = 0;
};

/// The fold pass of a lane with a hold-back cache (fold_records, through `cache` first):
/// each record examined is offered to the cache and leaves the buffer (folded into a held
/// entry, or held); an entry the cache evicts for it is placed by the table like a record
/// of the buffer (folded into the kept record with its tag and key, or kept as the next
/// record). `victim` has room for an item. Updates l.used, l.items (records that left,
/// less the evicted entries kept), c.n_records and c.hits (folds into entries and records).
inline fold_result fold_through_cache(send_lane& l, combining_lane& c, const combine_spec& s,
                                      combine_cache& cache, std::byte* victim) noexcept {
  const detail::record_shape f = detail::shape_of(l, s);
  const std::uint32_t n = (l.used - static_cast<std::uint32_t>(header_bytes)) / f.rb;
  const std::uint32_t before = c.n_records;
  std::uint32_t w = before;
  std::uint32_t folded = 0;
  combine_table::probe table(c.table);
  for (std::uint32_t i = before; i < n; ++i) {
    const std::byte* const rec = f.first + static_cast<std::size_t>(i) * f.rb;
    std::uint64_t tag = 0;
    std::memcpy(&tag, rec, f.tb);
    std::uint64_t victim_tag = 0;
    const combine_cache::outcome o = cache.offer(tag, rec + f.tb, victim_tag, victim);
    if (o == combine_cache::outcome::folded) ++folded;
    if (o != combine_cache::outcome::evicted) continue;
    const std::int32_t r =
        detail::find_kept<0>(table, f, victim_tag, victim + s.key_offset, w * f.rb);
    if (r >= 0) {
      s.fn(f.first + r + f.value_at, victim + s.value_offset);
      ++folded;
      continue;
    }
    std::byte* const to = f.first + static_cast<std::size_t>(w) * f.rb;  // w <= i: at or below
    std::memcpy(to, &victim_tag, f.tb);
    std::memcpy(to + f.tb, victim, f.rb - f.tb);
    ++w;
  }
  table.done();
  c.n_records = w;
  c.hits += folded;
  l.used = static_cast<std::uint32_t>(header_bytes) + w * f.rb;
  l.items -= (n - before) - (w - before);
  return {n - before, folded};
}

}  // namespace convoy::aggregation
