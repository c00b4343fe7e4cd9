#pragma once
/// @file
/// Combining in a send lane (aggregation/README.md, AGG-150..156): a small open-addressing
/// table per lane maps a record's combining key — its routing tag and the item's key bytes —
/// to the place of the record kept for it in the lane's open buffer, so that a later record
/// with that key is folded into the kept record's value in place, in the buffer that will
/// leave, and dropped. The table is cleared in O(1) (a generation counter) when the lane
/// opens its next buffer; it never names a record of a sealed buffer.
///
/// Bounded memory: 4 bytes per slot (an 8-bit generation, an 8-bit fingerprint of the hash,
/// the record's 16-bit byte offset from the buffer's first record), 2^k slots with 2^k >= 2
/// x the records a buffer holds, at most `max_slots`; at most half the slots are used, and
/// a key that finds the table at that load, or a record kept 64 KiB or more past the first,
/// is kept without a name (the hot keys come early and are in already).
///
/// Pays-off check (`combine_gate`): a lane judges each combining buffer by the share of
/// its records that folded, once it has examined `sample` of them; a buffer that folds too
/// few stops combining, and the lane then appends plainly for `skip` buffers, the skip
/// doubling up to a bound each time the check fails again, so uniform keys pay for one
/// examined buffer in max_skip + 1.
///
/// Fold on fill: a combining lane keeps its true limit, so pushes and forwarded records are
/// plain appends (the inline push of the engine and of convey.h included). When the lane
/// fills, a fold pass runs over the records appended since the last pass: each whose (tag,
/// key) the table names folds into that record and leaves the buffer, the others move down
/// behind the kept records. If the pass freed room the lane goes on filling, else it is
/// posted; a buffer about to leave gets a last pass over its tail. The pass is one tight
/// loop per (item size, key size, operation) over records still in cache.
#include <algorithm>
#include <bit>
#include <chrono>
#include <convoy/aggregation/combine_spec.hpp>
#include <convoy/aggregation/packing.hpp>
#include <convoy/aggregation/send_lanes.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace convoy::aggregation {

/// A table for one lane: where the record of each combining key is in the open buffer, in
/// bytes from its first record.
class combine_table {
 public:
  /// Offsets a slot can name (16 bits); a record kept at a larger one is not named.
  static constexpr std::uint32_t max_at = 0xFFFF;
  static constexpr std::int32_t added = -1;  ///< find_or_add: the candidate is now known
  static constexpr std::int32_t full = -2;   ///< find_or_add: at its load limit, not added

  /// Slots of a table for buffers of `records` records and at most `max_slots` slots.
  [[nodiscard]] static std::size_t slots_for(std::size_t records, std::size_t max_slots) noexcept {
    const std::size_t want =
        std::max<std::size_t>(16, std::bit_ceil(2 * std::min<std::size_t>(records, max_at)));
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

  /// The table's state in locals for the probes of one fold pass: the stores a pass makes
  /// into its buffer may alias anything, so members would be loaded again at every probe.
  /// done() writes the count of keys back.
  class probe {
   public:
    explicit probe(combine_table& t) noexcept
        : t_(t),
          slots_(t.slots_.data()),
          mask_(t.mask_),
          shift_(t.shift_),
          gen_(t.gen_ << 24),
          n_(t.n_),
          load_limit_(t.load_limit_) {}
    /// The offset of the record with the candidate's key, or `added` after registering the
    /// candidate as the record at offset `at`, or `full`. `same(o)` compares the
    /// candidate's key with that of the record at offset o; it is called only where the
    /// slot's generation and 8-bit fingerprint (bits 16..23 of the hash) match, so a miss
    /// rarely reads the buffer. Linear probing at load <= 1/2. Checked false: the caller
    /// knows that fits() holds for this key (the load limit and `at` are not tested, and
    /// the key is counted by added_unchecked()).
    template <bool Checked = true, class Same>
    [[nodiscard, gnu::always_inline]] std::int32_t find_or_add(std::uint64_t hash, std::uint32_t at,
                                                               Same same) noexcept {
      // A slot is generation (8 bits), fingerprint (8), offset (16): the slot xor `want` is
      // the offset where generation and fingerprint match, > 0xFFFFFF in a slot of another
      // generation (free), else another key's.
      const std::uint32_t want = gen_ | (static_cast<std::uint32_t>(hash) & 0xFF0000u);
      std::size_t i = static_cast<std::size_t>(hash >> shift_);
      for (;;) {
        const std::uint32_t x = slots_[i] ^ want;
        if (x <= 0xFFFFu) {
          if (same(x)) return static_cast<std::int32_t>(x);
        } else if (x > 0xFFFFFFu) {
          if constexpr (Checked) {
            if (n_ >= load_limit_ || at >= max_at) return full;
            ++n_;
          }
          slots_[i] = want | at;
          return added;
        }
        i = (i + 1) & mask_;
      }
    }
    /// Whether `keys` more keys, the last at offset `last_at`, can be added without a test
    /// (find_or_add<false>).
    [[nodiscard]] bool fits(std::uint32_t keys, std::uint32_t last_at) const noexcept {
      return n_ + std::uint64_t{keys} <= load_limit_ && last_at < max_at;
    }
    /// `n` keys were added by find_or_add<false>.
    void added_unchecked(std::uint32_t n) noexcept { n_ += n; }
    void done() noexcept { t_.n_ = n_; }

   private:
    combine_table& t_;
    std::uint32_t* slots_;
    std::size_t mask_;
    int shift_;
    std::uint32_t gen_;  // the generation, in a slot's top byte
    std::uint32_t n_, load_limit_;
  };

  /// probe::find_or_add on its own (one probe, the count written back).
  template <class Same>
  [[nodiscard]] std::int32_t find_or_add(std::uint64_t hash, std::uint32_t at, Same same) noexcept {
    probe p(*this);
    const std::int32_t r = p.find_or_add(hash, at, same);
    p.done();
    return r;
  }

  [[nodiscard]] std::size_t slots() const noexcept { return slots_.size(); }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] std::size_t memory_bytes() const noexcept {
    return slots_.size() * sizeof(std::uint32_t);
  }

 private:
  std::vector<std::uint32_t> slots_;  // generation (8 bits), fingerprint (8), offset (16)
  std::size_t mask_ = 0;
  int shift_ = 60;
  std::uint32_t gen_ = 1;
  std::uint32_t n_ = 0;
  std::uint32_t load_limit_ = 0;
};

/// Whether combining pays on a lane (AGG-155, AGG-162). A combining buffer's fold passes
/// report the records they examined and folded and the time they took; once `sample`
/// records are examined, the buffer keeps combining only if both
/// - its records folded at least min_hit_per_1024 / 1024 of the time, and
/// - the records it saved are worth what examining its records cost, with the policy's
///   margin: folded x saved_record_ns() >= examined x ns_per_record() x cost_margin
///   (judged only once saved_record_ns() is known, > 0). ns_per_record() is the lane's running mean
///   over the records its passes examined: a pass of n records moves it n / (n + cost_records) of
///   the way to its own figure, so that the short passes (a buffer's tail as it leaves, a pass
///   whose few records each wait for memory) weigh what their records do. Each pass's figure is
///   capped at 4 x the mean, so that a pass the OS preempted does not turn combining off.
/// A buffer that fails stops combining, and the lane appends plainly for `skip` buffers,
/// the skip doubling up to max_skip each time the check fails again. min_hit_per_1024 0:
/// every buffer combines.
class combine_gate {
 public:
  using policy = combine_gate_policy;
  /// Records over which ns_per_record() averages (about 8 full passes of a 16 KiB buffer).
  static constexpr double cost_records = 8192;
  combine_gate() = default;
  explicit combine_gate(policy p) : p_(p), saved_ns_(p.saved_record_ns) {}

  /// A new buffer opens: true if it combines.
  [[nodiscard]] bool start_buffer() noexcept {
    offers_ = hits_ = 0;
    if (skip_ > 0) {
      --skip_;
      return false;
    }
    return true;
  }
  /// A fold pass over a combining buffer examined `offers` records, folded `hits` and took
  /// `pass_ns` nanoseconds; false if combining stops for the rest of the buffer.
  [[nodiscard]] bool note(std::uint32_t offers, std::uint32_t hits,
                          std::uint64_t pass_ns = 0) noexcept {
    offers_ += offers;
    hits_ += hits;
    if (offers > 0 && pass_ns > 0) {
      double per = static_cast<double>(pass_ns) / offers;
      if (cost_ > 0.0) per = std::min(per, 4 * cost_);
      cost_ = cost_ > 0.0 ? cost_ + (per - cost_) * offers / (offers + cost_records) : per;
    }
    if (offers_ < p_.sample || p_.min_hit_per_1024 == 0) return true;  // too few to judge
    if (pays()) {
      backoff_ = 1;
      return true;
    }
    ++failures_;
    skip_ = backoff_;
    backoff_ = std::min(2 * backoff_, p_.max_skip);
    return false;
  }
  /// What a saved record is worth on this lane now, ns (the engine's measure; ignored when
  /// the policy fixes it). 0: not known, the buffers are judged by their folds alone.
  void measured_saved_record_ns(double ns) noexcept {
    if (p_.saved_record_ns <= 0.0) saved_ns_ = ns;
  }
  [[nodiscard]] double saved_record_ns() const noexcept { return saved_ns_; }
  /// What examining a record costs on this lane, ns (0 until a pass was timed).
  [[nodiscard]] double ns_per_record() const noexcept { return cost_; }
  [[nodiscard]] std::uint32_t skip() const noexcept { return skip_; }
  /// Buffers whose check failed.
  [[nodiscard]] std::uint64_t failures() const noexcept { return failures_; }
  /// failures(), then zeroed (statistics per cycle).
  std::uint64_t take_failures() noexcept {
    const std::uint64_t n = failures_;
    failures_ = 0;
    return n;
  }

 private:
  [[nodiscard]] bool pays() const noexcept {
    if (static_cast<std::uint64_t>(hits_) * 1024 <
        static_cast<std::uint64_t>(offers_) * p_.min_hit_per_1024)
      return false;
    return saved_ns_ <= 0.0 || static_cast<double>(hits_) * saved_ns_ >=
                                   static_cast<double>(offers_) * cost_ * p_.cost_margin;
  }

  policy p_;
  double saved_ns_ = 0.0;
  double cost_ = 0.0;  // ns per examined record, running mean over records
  std::uint32_t offers_ = 0, hits_ = 0;
  std::uint32_t skip_ = 0, backoff_ = 1;
  std::uint64_t failures_ = 0;
};

/// What a byte posted on an out-link costs in wire time, ns, from window to window: a
/// window's stall time per byte posted, but never below 7/8 of the figure before it. A
/// link that stalls stops stalling once its folds shrink what it posts; a worth that fell to
/// 0 in that window would turn the folds off and the stall back on. A window that posted
/// nothing keeps the figure.
class wire_worth {
 public:
  /// A window closed after `stall_ns` of stalls and `bytes` posted: the new figure.
  double window(std::uint64_t stall_ns, std::uint64_t bytes) noexcept {
    if (bytes == 0) return ns_;
    const double measured = static_cast<double>(stall_ns) / static_cast<double>(bytes);
    ns_ = std::max(measured, ns_ * keep);
    return ns_;
  }
  [[nodiscard]] double ns_per_byte() const noexcept { return ns_; }

 private:
  static constexpr double keep = 0.875;
  double ns_ = 0.0;
};

/// The hash of a combining key: the tag (on a combining engine every record of a lane with
/// the same destination carries the same tag) and up to 8 key bytes. Fibonacci hashing:
/// the table takes the top bits, where a one-byte tag, rotated to the key's top byte, moves
/// the slot; a key and a tag of up to 56 and 8 bits hash without collisions. One multiply.
[[nodiscard]] inline std::uint64_t combine_hash(std::uint64_t tag, std::uint64_t key) noexcept {
  return (key ^ std::rotr(tag, 8)) * 0xD6E8FEB86659FD93ull;
}

/// Folds the value at `from` into the value at `into` by operation `Op`: inline for the
/// operations combine_op names, else a call of `fn` (the spec's).
template <combine_op Op>
void fold_value(std::byte* into, const std::byte* from, combine_fn fn) noexcept {
  if constexpr (Op == combine_op::add_u32)
    combine_add<std::uint32_t>(into, from);
  else if constexpr (Op == combine_op::add_u64)
    combine_add<std::uint64_t>(into, from);
  else if constexpr (Op == combine_op::add_f64)
    combine_add<double>(into, from);
  else
    fn(into, from);
}

struct combining_lane;

/// What a fold pass did: records of the open buffer it examined, and folded into another.
struct fold_result {
  std::uint32_t examined = 0;
  std::uint32_t folded = 0;
};

/// fold_records' TagBytes when the lane's tag size is read at run time.
inline constexpr std::uint32_t any_tag_bytes = 0xFF;

/// A fold pass over a lane's open buffer (fold_records).
using fold_pass_fn = fold_result (*)(send_lane&, combining_lane&, const combine_spec&) noexcept;

/// One combining lane's state beside its send_lane.
struct combining_lane {
  combine_table table;
  combine_gate gate;
  fold_pass_fn pass = nullptr;  ///< this lane's fold_records (pick_fold_pass)
  std::uint32_t n_records = 0;  ///< records at the open buffer's front that a pass examined
  bool on = false;              ///< the open buffer combines
  std::uint64_t hits = 0;       ///< records folded into another (statistics)
  std::uint64_t fold_ns = 0;    ///< time in fold passes (the engine's measure of a record)

  combining_lane() = default;
  combining_lane(std::size_t records, std::size_t max_slots, combine_gate::policy p = {})
      : table(records, max_slots), gate(p) {}

  /// The lane has just opened a buffer; `judged`: the gate decides whether it combines
  /// (else it does not, and the gate does not count it).
  void opened(bool judged = true) noexcept {
    n_records = 0;
    on = judged && gate.start_buffer();
    if (on) table.clear();
  }
  /// Runs `run()` (a fold pass over the records appended since the last one, returning
  /// its fold_result) if the open buffer combines, and lets the gate judge it.
  template <class Pass>
  void fold(Pass run) noexcept {
    if (!on) return;
    const auto t0 = std::chrono::steady_clock::now();
    const fold_result r = run();
    const auto ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count());
    fold_ns += ns;
    if (!gate.note(r.examined, r.folded, ns)) on = false;
  }
  /// Lane `l` filled past its limit: folds; true if that freed room enough to go on filling
  /// the buffer (a 32nd of it: fewer records leave, at one more pass per buffer), false if
  /// it must grow or be posted.
  template <class Pass>
  [[nodiscard]] bool refill(const send_lane& l, Pass run) noexcept {
    fold(run);
    if (l.used > l.limit) return false;
    return std::uint64_t{l.limit - l.used} * 32 >= l.limit - header_bytes;
  }
  /// The open buffer combines no more (what its passes folded stays folded).
  void stop() noexcept { on = false; }
  /// The open buffer is about to leave: a last pass over its tail, then nothing is folded
  /// into it any more.
  template <class Pass>
  void sealing(Pass run) noexcept {
    fold(run);
    on = false;
  }
};

namespace detail {

/// The mask of a tag of `tag_bytes` bytes in the 8 bytes read from a record's start.
[[nodiscard]] inline std::uint64_t tag_mask(std::uint32_t tag_bytes) noexcept {
  return tag_bytes >= 8 ? ~0ull : (1ull << (8 * tag_bytes)) - 1;
}

/// Where a pass finds a record's fields: records of `rb` bytes from `first`, tags of
/// `tb` bytes (`mask` over the 8 bytes read from a record's start), the key `kb` bytes at
/// `key_at` and the value at `value_at` (from a record's start). Locals of the pass, so
/// that the stores into the buffer do not make them be loaded again.
struct record_shape {
  std::byte* first;
  std::uint32_t rb, tb;
  std::uint64_t mask;
  std::size_t key_at, kb, value_at;
};

[[nodiscard]] inline record_shape shape_of(const send_lane& l, const combine_spec& s) noexcept {
  return {l.buf + header_bytes,
          l.record_bytes,
          l.tag_bytes,
          tag_mask(l.tag_bytes),
          l.tag_bytes + s.key_offset,
          s.key_bytes,
          l.tag_bytes + s.value_offset};
}

/// The key a pass hashes (the combining table's and the cache's): the `KeyBytes` bytes at
/// `key`, or (0) the first of its `kb` bytes, at most 8.
template <std::size_t KeyBytes>
[[nodiscard, gnu::always_inline]] inline std::uint64_t key_word(const std::byte* key,
                                                                std::size_t kb) noexcept {
  std::uint64_t word = 0;
  std::memcpy(&word, key, KeyBytes != 0 ? KeyBytes : std::min<std::size_t>(kb, 8));
  return word;
}

/// Whether the kept record at `kept` has a candidate's tag and key: its first 8 bytes
/// equal `word` under `mask` (the tag's bytes, or with `KeyInWord` the key's too), and its
/// key equals `key` (`KeyBytes` 1..8) or the f.kb bytes at `key_of` (0).
template <std::size_t KeyBytes, bool KeyInWord = false>
[[nodiscard, gnu::always_inline]] inline bool same_key(const std::byte* kept, const record_shape& f,
                                                       std::uint64_t word, std::uint64_t mask,
                                                       std::uint64_t key,
                                                       const std::byte* key_of) noexcept {
  std::uint64_t t = 0;
  std::memcpy(&t, kept, 8);  // the 8 bytes from a record's start are in the buffer
  if (((t ^ word) & mask) != 0) return false;
  if constexpr (KeyInWord) {
    return true;
  } else if constexpr (KeyBytes != 0) {
    std::uint64_t k = 0;
    std::memcpy(&k, kept + f.key_at, KeyBytes);
    return k == key;
  } else {
    return std::memcmp(kept + f.key_at, key_of, f.kb) == 0;
  }
}

/// The offset of the kept record with `tag` and the key at `key_of` (`KeyBytes` bytes, or
/// f.kb if 0), or combine_table::added after naming the record at offset `at` for them, or
/// combine_table::full. Inlined into the hold-back cache's pass.
template <std::size_t KeyBytes>
[[nodiscard, gnu::always_inline]] inline std::int32_t find_kept(combine_table::probe& table,
                                                                const record_shape& f,
                                                                std::uint64_t tag,
                                                                const std::byte* key_of,
                                                                std::uint32_t at) noexcept {
  const std::uint64_t key = key_word<KeyBytes>(key_of, f.kb);
  tag &= f.mask;
  return table.find_or_add(combine_hash(tag, key), at, [&](std::uint32_t o) {
    return same_key<KeyBytes>(f.first + o, f, tag, f.mask, key, key_of);
  });
}

/// The loop of a fold pass over the records at offsets [at, end) from f.first, where the
/// kept records end at `at`; returns where they end after it. Up to the first fold the
/// kept records stay where they are; from then on each moves down to the next kept place.
/// `Packed`: the key is at the item's start and the value right after it, so that the 8
/// bytes read from a record's start (its tag and the key's first bytes) are compared as
/// one word. The other template arguments as fold_records'; `Checked` as
/// combine_table::probe's.
template <bool Checked, std::size_t Item, std::size_t KeyBytes, combine_op Op,
          std::uint32_t TagBytes, bool Packed>
[[nodiscard, gnu::always_inline]] inline std::uint32_t fold_span(const record_shape& f,
                                                                 combine_table::probe& table,
                                                                 combine_fn fn, std::uint32_t at,
                                                                 std::uint32_t end) noexcept {
  std::byte* const first = f.first;
  // The bytes of a record's first 8 that two records of one (tag, key) share; the key
  // compared apart only if it reaches past them.
  const std::uint64_t same_mask =
      Packed ? tag_mask(std::min<std::uint32_t>(TagBytes + KeyBytes, 8)) : f.mask;
  constexpr bool key_in_word = Packed && TagBytes + KeyBytes <= 8;
  // Whether a kept record has the key of the record at `r` (then `kept` is it); if not,
  // the record is named as kept at offset `to`.
  std::byte* kept = nullptr;
  const auto find = [&](const std::byte* r, std::uint64_t& word, std::uint32_t to) {
    std::memcpy(&word, r, 8);  // as send_lane::reserve: a record's first 8 bytes are its own
    const std::uint64_t key = key_word<KeyBytes>(r + f.key_at, f.kb);
    const std::uint64_t w0 = word;
    return table.template find_or_add<Checked>(
               combine_hash(w0 & f.mask, key), to, [&](std::uint32_t k) {
                 kept = first + k;
                 return same_key<KeyBytes, key_in_word>(kept, f, w0, same_mask, key, r + f.key_at);
               }) >= 0;
  };
  const std::byte* rec = first + at;
  const std::byte* const stop = first + end;
  for (; rec < stop; rec += f.rb) {
    std::uint64_t word = 0;
    if (find(rec, word, static_cast<std::uint32_t>(rec - first))) {
      fold_value<Op>(kept + f.value_at, rec + f.value_at, fn);
      break;
    }
  }
  if (rec >= stop) return end;
  auto to = static_cast<std::uint32_t>(rec - first);  // the first free place
  for (rec += f.rb; rec < stop; rec += f.rb) {
    std::uint64_t word = 0;
    if (find(rec, word, to)) {
      fold_value<Op>(kept + f.value_at, rec + f.value_at, fn);
      continue;
    }
    if constexpr (Item != 0) {            // to < rec: the two records do not overlap
      std::memcpy(first + to, &word, 8);  // as send_lane::reserve: 8 bytes, then the item
      std::memcpy(first + to + f.tb, rec + f.tb, Item);
    } else {
      std::memcpy(first + to, rec, f.rb);
    }
    to += f.rb;
  }
  return to;
}

}  // namespace detail

/// The fold pass (see "Fold on fill" above) over the records of `l`'s open buffer from
/// record c.n_records on: each whose (tag, key) a kept record has folds its value into that
/// record and leaves; each other is kept, moved down behind the kept records and named in
/// the table (records past the table's load limit are kept unnamed). Updates l.used,
/// l.items (records that leave), c.n_records and c.hits. `Item` is item_bytes when known
/// at compile time, else 0; `KeyBytes` 1..8 compares the key as one word, 0 takes
/// s.key_bytes (any size: the hash reads the first 8 bytes, the compare all of them); `Op`
/// inlines the fold (combine_op::call calls s.fn); `TagBytes` is the lane's tag size when
/// known at compile time, else any_tag_bytes; `Packed` (with `KeyBytes` and `TagBytes`
/// known): the key is at the item's start and the value right after it; a packed pass
/// whose records all fit the table runs the loop without the table's limit tests.
template <std::size_t Item, std::size_t KeyBytes, combine_op Op, std::uint32_t TagBytes,
          bool Packed = false>
fold_result fold_records(send_lane& l, combining_lane& c, const combine_spec& s) noexcept {
  static_assert(KeyBytes <= 8);
  static_assert(!Packed || (KeyBytes != 0 && TagBytes != any_tag_bytes));
  detail::record_shape f = detail::shape_of(l, s);
  if constexpr (TagBytes != any_tag_bytes) {  // constants the compiler folds into the loop
    f.tb = TagBytes;
    f.mask = detail::tag_mask(TagBytes);
    if constexpr (Item != 0) f.rb = TagBytes + Item;
  }
  if constexpr (Packed) {
    f.key_at = TagBytes;
    f.value_at = TagBytes + KeyBytes;
  }
  const std::uint32_t start = c.n_records;
  const std::uint32_t records = (l.used - static_cast<std::uint32_t>(header_bytes)) / f.rb;
  const std::uint32_t examined = records - start;
  const std::uint32_t at = start * f.rb, end = records * f.rb;
  combine_table::probe table(c.table);
  using detail::fold_span;
  std::uint32_t to = end;  // where the kept records end
  bool checked = true;     // the packed layouts only: half the instantiations to compile
  if constexpr (Packed) {
    if (examined == 0 || table.fits(examined, end - f.rb)) {
      to = fold_span<false, Item, KeyBytes, Op, TagBytes, Packed>(f, table, s.fn, at, end);
      table.added_unchecked((to - at) / f.rb);
      checked = false;
    }
  }
  if (checked) to = fold_span<true, Item, KeyBytes, Op, TagBytes, Packed>(f, table, s.fn, at, end);
  const std::uint32_t kept = (to - at) / f.rb;
  table.done();
  const std::uint32_t folded = examined - kept;
  c.n_records = start + kept;
  c.hits += folded;
  l.used = static_cast<std::uint32_t>(header_bytes) + to;
  l.items -= folded;
  return {examined, folded};
}

/// The fold_records instantiation for items of `item_bytes`, `s`'s key size and operation
/// and lanes of `tag_bytes`: items of 8, 16 or 24 bytes, keys of 4 or 8 bytes and the
/// operations of combine_op get fixed-size copies, compares and folds; with tags of 0 or 1
/// and the key first, the value right after it (combining_conveyor's items), fixed offsets
/// and the one-word compare of tag and key.
[[nodiscard]] fold_pass_fn pick_fold_pass(std::size_t item_bytes, const combine_spec& s,
                                          std::uint32_t tag_bytes) noexcept;

}  // namespace convoy::aggregation
