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
/// 2-way set associative, `entries` rounded down to a power of two (2 at least). An entry
/// is [8-byte tag][item][4-byte count of the contributions folded into it (0: free)],
/// rounded up to 8 bytes; the two ways of a set are adjacent and the entries start on a
/// cache line, so that a set of 16-byte items is one line.
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
  /// Bytes of an entry for items of `item_bytes`.
  [[nodiscard]] static constexpr std::size_t entry_bytes_for(std::size_t item_bytes) noexcept {
    return (8 + item_bytes + sizeof(std::uint32_t) + 7) & ~std::size_t{7};
  }
  /// Bytes of a cache of `entries` entries of items of `item_bytes` (with a cache line to
  /// align them).
  [[nodiscard]] static std::size_t bytes_for(std::size_t entries, std::size_t item_bytes) noexcept {
    return entries == 0 ? 0 : entries_for(entries) * entry_bytes_for(item_bytes) + line;
  }

  /// The largest power of two of entries, at most `max_entries`, whose cache of items of
  /// `item_bytes` takes at most `bytes` (bytes_for); 0 when fewer than `min_entries` fit.
  [[nodiscard]] static std::size_t entries_within(std::size_t bytes, std::size_t item_bytes,
                                                  std::size_t max_entries,
                                                  std::size_t min_entries = 2) noexcept {
    if (bytes <= line || max_entries < 2) return 0;
    const std::size_t fit = (bytes - line) / entry_bytes_for(item_bytes);
    const std::size_t n = std::bit_floor(std::min(fit, max_entries));
    return n < std::max<std::size_t>(min_entries, 2) ? 0 : n;
  }

  /// A cache of entries_for(entries) >= 2 entries for items of `item_bytes` under `spec`,
  /// in front of a lane whose tags are `tag_bytes` wide.
  combine_cache(std::size_t entries, std::size_t item_bytes, std::size_t tag_bytes,
                const combine_spec& spec)
      : item_bytes_(item_bytes),
        entry_bytes_(entry_bytes_for(item_bytes)),
        n_(entries_for(std::max<std::size_t>(entries, 2))),
        tag_mask_(detail::tag_mask(static_cast<std::uint32_t>(tag_bytes))),
        spec_(spec) {
    // h >> shift_ >> 1 is the set of hash h: its top log2(sets) bits, none for one set
    shift_ = 63 - std::countr_zero(n_ / 2);
    data_.assign(bytes_for(n_, item_bytes), std::byte{0});
    const auto misalign = reinterpret_cast<std::uintptr_t>(data_.data()) % line;
    first_ = misalign == 0 ? 0 : line - misalign;
  }

  /// The cache's state in locals for the offers of one pass (as combine_table::probe: the
  /// pass's stores into its buffer may alias anything). `Item` (bytes, 0: the cache's),
  /// `KeyBytes` (1..8 compared as a word, 0: the spec's, any size) and `Op` (the fold;
  /// combine_op::call calls the spec's fn) fix what a pass knows at compile time. done()
  /// writes the count of held entries back.
  template <std::size_t Item = 0, std::size_t KeyBytes = 0, combine_op Op = combine_op::call>
  class offers {
   public:
    explicit offers(combine_cache& c) noexcept
        : c_(c),
          base_(c.data_.data() + c.first_),
          item_(Item != 0 ? Item : c.item_bytes_),
          stride_(Item != 0 ? entry_bytes_for(Item) : c.entry_bytes_),
          shift_(c.shift_),
          tag_mask_(c.tag_mask_),
          key_at_(c.spec_.key_offset),
          kb_(KeyBytes != 0 ? KeyBytes : c.spec_.key_bytes),
          value_at_(c.spec_.value_offset),
          fn_(c.spec_.fn),
          held_(c.held_) {}

    /// The set of `tag` (the lane's tag bytes) and `item`'s key, to be loaded ahead.
    [[nodiscard, gnu::always_inline]] const std::byte* set_of(
        std::uint64_t tag, const std::byte* item) const noexcept {
      return base_ + ((combine_hash(tag & tag_mask_, key_of(item)) >> shift_ >> 1) * 2 * stride_);
    }

    /// Offers an item with its lane tag (only the lane's tag bytes count). Folds it into
    /// the entry of its (tag, key), or holds it in a free way of its set, or evicts that
    /// set's way with fewer contributions into `victim_tag` / `victim_item` (item bytes; the
    /// caller offers it to the lane now) and holds the item there. O(1): two entries.
    [[nodiscard, gnu::always_inline]] outcome offer(std::uint64_t tag, const std::byte* item,
                                                    std::uint64_t& victim_tag,
                                                    std::byte* victim_item) noexcept {
      tag &= tag_mask_;
      const std::uint64_t key = key_of(item);
      std::byte* const e0 = base_ + ((combine_hash(tag, key) >> shift_ >> 1) * 2 * stride_);
      std::byte* const e1 = e0 + stride_;
      const std::uint32_t n0 = count(e0), n1 = count(e1);
      // Both ways are compared without a branch between them (a way's count 0: free);
      // whether the item folds is the one branch that a skewed stream cannot predict.
      const bool hit0 = (n0 != 0) & same(e0, tag, key, item);
      const bool hit1 = (n1 != 0) & same(e1, tag, key, item);
      if (hit0 | hit1) {
        std::byte* const e = hit0 ? e0 : e1;
        fold_value<Op>(e + 8 + value_at_, item + value_at_, fn_);
        set_count(e, (hit0 ? n0 : n1) + 1);
        return outcome::folded;
      }
      // A free way (count 0) or the one with fewer contributions.
      const bool first = n0 <= n1;
      std::byte* const e = first ? e0 : e1;
      outcome r = outcome::held;
      if ((first ? n0 : n1) != 0) {
        std::memcpy(&victim_tag, e, 8);
        copy_item(victim_item, e + 8);
        r = outcome::evicted;
      } else {
        ++held_;
      }
      install(e, tag, item);
      return r;
    }

    void done() noexcept { c_.held_ = held_; }

   private:
    [[nodiscard, gnu::always_inline]] std::uint64_t key_of(const std::byte* item) const noexcept {
      return detail::key_word<KeyBytes>(item + key_at_, kb_);
    }
    [[nodiscard, gnu::always_inline]] std::uint32_t count(const std::byte* e) const noexcept {
      return count_at(e, item_);
    }
    [[gnu::always_inline]] void set_count(std::byte* e, std::uint32_t n) const noexcept {
      set_count_at(e, item_, n);
    }
    [[gnu::always_inline]] void copy_item(std::byte* to, const std::byte* from) const noexcept {
      std::memcpy(to, from, item_);
    }
    [[nodiscard, gnu::always_inline]] bool same(const std::byte* e, std::uint64_t tag,
                                                std::uint64_t key,
                                                const std::byte* item) const noexcept {
      std::uint64_t t = 0;
      std::memcpy(&t, e, 8);
      const std::byte* const held_key = e + 8 + key_at_;
      if constexpr (KeyBytes == 0) {
        if (kb_ > 8) return t == tag && std::memcmp(held_key, item + key_at_, kb_) == 0;
      }
      const std::uint64_t k = detail::key_word<KeyBytes>(held_key, kb_);
      return ((t ^ tag) | (k ^ key)) == 0;
    }
    [[gnu::always_inline]] void install(std::byte* e, std::uint64_t tag,
                                        const std::byte* item) const noexcept {
      std::memcpy(e, &tag, 8);
      copy_item(e + 8, item);
      set_count(e, 1);
    }

    combine_cache& c_;
    std::byte* base_;
    std::size_t item_, stride_;
    int shift_;
    std::uint64_t tag_mask_;
    std::size_t key_at_, kb_, value_at_;
    combine_fn fn_;
    std::size_t held_;
  };

  /// offers<>::offer on its own (one offer, the count written back).
  [[nodiscard]] outcome offer(std::uint64_t tag, const std::byte* item, std::uint64_t& victim_tag,
                              std::byte* victim_item) noexcept {
    offers<> o(*this);
    const outcome r = o.offer(tag, item, victim_tag, victim_item);
    o.done();
    return r;
  }

  /// Hands held entries to `sink(tag, item)`, each once, and frees them; `sink` returns
  /// false when it cannot take one now (its lane has no free buffer): that entry stays and
  /// the next drain starts there. True once the cache is empty.
  template <class Sink>
  bool drain(Sink sink) {
    for (std::size_t seen = 0; held_ > 0 && seen < n_; ++seen) {
      std::byte* const e = entry(drain_at_);
      if (count_at(e, item_bytes_) != 0) {
        std::uint64_t tag = 0;
        std::memcpy(&tag, e, 8);
        if (!sink(tag, static_cast<const std::byte*>(e + 8))) return false;
        set_count_at(e, item_bytes_, 0);
        --held_;
      }
      drain_at_ = (drain_at_ + 1) % n_;
    }
    return held_ == 0;
  }

  [[nodiscard]] bool empty() const noexcept { return held_ == 0; }
  [[nodiscard]] std::size_t held() const noexcept { return held_; }
  [[nodiscard]] std::size_t entries() const noexcept { return n_; }
  [[nodiscard]] std::size_t memory_bytes() const noexcept { return data_.size(); }

 private:
  static constexpr std::size_t line = 64;
  // The count of the entry at `e` whose items are `item` bytes (0: free).
  [[nodiscard, gnu::always_inline]] static std::uint32_t count_at(const std::byte* e,
                                                                  std::size_t item) noexcept {
    std::uint32_t n = 0;
    std::memcpy(&n, e + 8 + item, sizeof n);
    return n;
  }
  [[gnu::always_inline]] static void set_count_at(std::byte* e, std::size_t item,
                                                  std::uint32_t n) noexcept {
    std::memcpy(e + 8 + item, &n, sizeof n);
  }
  [[nodiscard]] std::byte* entry(std::size_t e) noexcept {
    return data_.data() + first_ + e * entry_bytes_;
  }

  std::size_t item_bytes_, entry_bytes_, n_;
  std::uint64_t tag_mask_;
  combine_spec spec_;
  int shift_ = 63;
  std::vector<std::byte> data_;
  std::size_t first_ = 0;  // bytes before the first entry, which starts a cache line
  std::size_t held_ = 0, drain_at_ = 0;
};

/// A fold pass through a hold-back cache (fold_through_cache_as).
using cache_pass_fn = fold_result (*)(send_lane&, combining_lane&, const combine_spec&,
                                      combine_cache&, std::byte*) noexcept;

/// The fold pass of a lane with a hold-back cache (fold_records, through `cache` first):
/// each record examined is offered to the cache and leaves the buffer (folded into a held
/// entry, or held); an entry the cache evicts for it is placed by the table like a record
/// of the buffer (folded into the kept record with its tag and key, or kept as the next
/// record). `victim` has room for an item. Updates l.used, l.items (records that left,
/// less the evicted entries kept), c.n_records and c.hits (folds into entries and records).
/// `Item`, `KeyBytes` and `Op` as combine_cache::offers'; the set of a record a few ahead
/// is loaded while this one is offered.
template <std::size_t Item, std::size_t KeyBytes, combine_op Op>
fold_result fold_through_cache_as(send_lane& l, combining_lane& c, const combine_spec& s,
                                  combine_cache& cache, std::byte* victim) noexcept {
  constexpr std::uint32_t ahead = 8;  // records between a set's load and its offer
  const detail::record_shape f = detail::shape_of(l, s);
  const std::uint32_t n = (l.used - static_cast<std::uint32_t>(header_bytes)) / f.rb;
  const std::uint32_t before = c.n_records;
  std::uint32_t w = before;
  std::uint32_t folded = 0;
  combine_table::probe table(c.table);
  combine_cache::offers<Item, KeyBytes, Op> offers(cache);
  const std::size_t item = Item != 0 ? Item : f.rb - f.tb;
  for (std::uint32_t i = before; i < n; ++i) {
    const std::byte* const rec = f.first + static_cast<std::size_t>(i) * f.rb;
    if (i + ahead < n) {
      const std::byte* const next = rec + std::size_t{ahead} * f.rb;
      std::uint64_t next_tag = 0;
      std::memcpy(&next_tag, next, 8);  // a record's first 8 bytes are in the buffer
      __builtin_prefetch(offers.set_of(next_tag, next + f.tb), 1);
    }
    std::uint64_t tag = 0;
    std::memcpy(&tag, rec, 8);  // the offer keeps the lane's tag bytes
    std::uint64_t victim_tag = 0;
    const combine_cache::outcome o = offers.offer(tag, rec + f.tb, victim_tag, victim);
    folded += o == combine_cache::outcome::folded ? 1 : 0;
    if (o != combine_cache::outcome::evicted) continue;
    const std::int32_t r =
        detail::find_kept<KeyBytes>(table, f, victim_tag, victim + s.key_offset, w * f.rb);
    if (r >= 0) {
      fold_value<Op>(f.first + r + f.value_at, victim + s.value_offset, s.fn);
      ++folded;
      continue;
    }
    std::byte* const to = f.first + static_cast<std::size_t>(w) * f.rb;  // w <= i: at or below
    if constexpr (Item >= 8) {
      std::memcpy(to, &victim_tag, 8);  // as send_lane::reserve: 8 bytes, then the item
    } else {
      std::memcpy(to, &victim_tag, f.tb);
    }
    std::memcpy(to + f.tb, victim, item);
    ++w;
  }
  offers.done();
  table.done();
  c.n_records = w;
  c.hits += folded;
  l.used = static_cast<std::uint32_t>(header_bytes) + w * f.rb;
  l.items -= (n - before) - (w - before);
  return {n - before, folded};
}

/// fold_through_cache_as for any layout and operation (the spec's, read at run time).
inline fold_result fold_through_cache(send_lane& l, combining_lane& c, const combine_spec& s,
                                      combine_cache& cache, std::byte* victim) noexcept {
  return fold_through_cache_as<0, 0, combine_op::call>(l, c, s, cache, victim);
}

/// The fold_through_cache_as instantiation for items of `item_bytes` under `s`: items of
/// 8, 16 or 24 bytes, keys of 4 or 8 bytes and the operations of combine_op get fixed-size
/// copies, compares and folds.
[[nodiscard]] cache_pass_fn pick_cache_pass(std::size_t item_bytes, const combine_spec& s) noexcept;

}  // namespace convoy::aggregation
