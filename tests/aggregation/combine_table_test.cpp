// Combining in a send lane (aggregation/README.md AGG-150..163) against an oracle: every
// appended value leaves exactly once through the fold passes, a buffer that combined holds
// each (tag, key) once, the table's memory is bounded, clears are O(1) and survive the
// generation's wrap, the pays-off check turns combining off where keys do not repeat, the
// hold-back cache's passes keep every contribution once in every layout, and an out-link's
// wire worth outlives a window without stalls.
#include <gtest/gtest.h>

#include <algorithm>
#include <convoy/aggregation/combine_cache.hpp>
#include <convoy/aggregation/combine_table.hpp>
#include <convoy/aggregation/packing.hpp>
#include <convoy/aggregation/send_lanes.hpp>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace agg = convoy::aggregation;
constexpr agg::combine_fn add_u64 = agg::combine_add<std::uint64_t>;
constexpr agg::combine_fn add_u32 = agg::combine_add<std::uint32_t>;

// Where a test item keeps its key and its value (4 or 8 bytes, summed).
struct layout {
  std::uint32_t item_bytes = 16;
  std::uint32_t key_offset = 0;
  std::uint32_t key_bytes = 8;
  std::uint32_t value_offset = 8;
  std::uint32_t value_bytes = 8;
};

// An item's key bytes for key number `k`. Keys above 8 bytes share their first 8 bytes
// among 16 keys (the hash sees only those) and differ in the rest.
std::string key_bytes_of(const layout& lay, std::uint64_t k) {
  std::string b(lay.key_bytes, '\0');
  if (lay.key_bytes <= 8) {
    std::memcpy(b.data(), &k, lay.key_bytes);
  } else {
    const std::uint64_t head = k % 16;
    std::memcpy(b.data(), &head, 8);
    for (std::uint32_t i = 8; i < lay.key_bytes; ++i)
      b[i] = static_cast<char>((k >> (8 * ((i - 8) % 8))) & 0xFF);
  }
  return b;
}

using totals_t = std::map<std::pair<std::uint64_t, std::string>, std::uint64_t>;

// A lane over a private buffer: what the engine does with open/put/seal, without a
// transport. An offer is a plain append; a full lane runs pick_fold_pass's instantiation
// and is sealed into `sent` unless that freed room. `inline_op`: the spec names its
// operation (combine_op), else the pass calls fn.
class lane_rig {
 public:
  lane_rig(std::size_t capacity, std::uint32_t tag_bytes, std::size_t max_slots,
           agg::combine_gate::policy p = {}, layout lay = {}, bool inline_op = false)
      : lay_(lay),
        buf_(capacity + 8),
        capacity_(capacity),
        comb_((capacity - agg::header_bytes) / (tag_bytes + lay.item_bytes), max_slots, p) {
    lane_.tag_bytes = tag_bytes;
    lane_.record_bytes = tag_bytes + lay.item_bytes;
    spec_ = {lay.key_offset, lay.key_bytes, lay.value_offset, lay.value_bytes,
             lay.value_bytes == 4 ? add_u32 : add_u64};
    if (inline_op)
      spec_.op = lay.value_bytes == 4 ? agg::combine_op::add_u32 : agg::combine_op::add_u64;
    pass_ = agg::pick_fold_pass(lay.item_bytes, spec_, tag_bytes);
    open();
  }
  void offer(std::uint64_t tag, std::uint64_t key, std::uint64_t value) {
    if (put(tag, key, value) && !refill()) seal();
  }
  // The append alone: true if the lane is now full.
  bool put(std::uint64_t tag, std::uint64_t key, std::uint64_t value) {
    std::vector<std::byte> item(lay_.item_bytes, std::byte{0x5A});
    const std::string kb = key_bytes_of(lay_, key);
    std::memcpy(item.data() + lay_.key_offset, kb.data(), kb.size());
    std::memcpy(item.data() + lay_.value_offset, &value, lay_.value_bytes);
    return lane_.put_rigid(tag, item.data(), item.size());
  }
  // From now on the fill passes go through a hold-back cache of `entries` entries, by
  // pick_cache_pass's pass or (`any_layout`) fold_through_cache.
  void use_cache(std::size_t entries, bool any_layout) {
    cache_ = std::make_unique<agg::combine_cache>(entries, lay_.item_bytes, lane_.tag_bytes, spec_);
    cache_pass_ =
        any_layout ? &agg::fold_through_cache : agg::pick_cache_pass(lay_.item_bytes, spec_);
    victim_.resize(lay_.item_bytes);
  }
  // Appends the cache's entries plainly (as the engine's drain: its passes skip the cache).
  void drain() {
    draining_ = true;
    EXPECT_TRUE(cache_->drain([&](std::uint64_t tag, const std::byte* item) {
      if (lane_.put_rigid(tag, item, lay_.item_bytes) && !refill()) seal();
      return true;
    }));
    draining_ = false;
  }
  // The lane is full: true if the fold pass freed room enough to go on filling it.
  bool refill() {
    return comb_.refill(lane_, [&] {
      if (cache_ && !draining_) return cache_pass_(lane_, comb_, spec_, *cache_, victim_.data());
      return pass_(lane_, comb_, spec_);
    });
  }
  void seal() {
    const bool combined_throughout = on_at_open_ && comb_.on;  // every record is examined
    comb_.sealing([&] { return pass_(lane_, comb_, spec_); });
    if (lane_.used > agg::header_bytes) {
      sent_.emplace_back(buf_.begin() + agg::header_bytes, buf_.begin() + lane_.used);
      combined_.push_back(combined_throughout);
    }
    open();
  }
  // Every record sent: (tag, key) -> summed value.
  [[nodiscard]] totals_t totals() const {
    totals_t t;
    for_each_record([&](std::size_t, std::uint64_t tag, const std::byte* item) {
      std::uint64_t value = 0;
      std::memcpy(&value, item + lay_.value_offset, lay_.value_bytes);
      t[{tag, key_at(item)}] += value;
    });
    return t;
  }
  // True if every buffer that combined from its start holds each (tag, key) once.
  [[nodiscard]] bool combined_buffers_distinct() const {
    std::vector<std::set<std::pair<std::uint64_t, std::string>>> seen(sent_.size());
    bool distinct = true;
    for_each_record([&](std::size_t b, std::uint64_t tag, const std::byte* item) {
      if (combined_[b] && !seen[b].insert({tag, key_at(item)}).second) distinct = false;
    });
    return distinct;
  }
  [[nodiscard]] std::size_t records_sent() const {
    std::size_t n = 0;
    for (const auto& b : sent_) n += b.size() / lane_.record_bytes;
    return n;
  }
  // The bytes of every item sent outside its key and value, which offers never touch.
  [[nodiscard]] bool padding_intact() const {
    bool ok = true;
    for_each_record([&](std::size_t, std::uint64_t, const std::byte* item) {
      for (std::uint32_t i = 0; i < lay_.item_bytes; ++i) {
        const bool key = i >= lay_.key_offset && i < lay_.key_offset + lay_.key_bytes;
        const bool value = i >= lay_.value_offset && i < lay_.value_offset + lay_.value_bytes;
        if (!key && !value && item[i] != std::byte{0x5A}) ok = false;
      }
    });
    return ok;
  }
  agg::send_lane& lane() { return lane_; }
  agg::combining_lane& comb() { return comb_; }
  [[nodiscard]] std::size_t buffers_sent() const { return sent_.size(); }

 private:
  template <class F>
  void for_each_record(F f) const {
    for (std::size_t b = 0; b < sent_.size(); ++b)
      for (std::size_t off = 0; off < sent_[b].size(); off += lane_.record_bytes) {
        std::uint64_t tag = 0;
        std::memcpy(&tag, sent_[b].data() + off, lane_.tag_bytes);
        f(b, tag, sent_[b].data() + off + lane_.tag_bytes);
      }
  }
  [[nodiscard]] std::string key_at(const std::byte* item) const {
    return {reinterpret_cast<const char*>(item + lay_.key_offset), lay_.key_bytes};
  }
  void open() {
    lane_.buf = buf_.data();
    lane_.used = agg::header_bytes;
    const std::size_t record = std::max<std::size_t>(lane_.record_bytes, 8);
    lane_.limit = static_cast<std::uint32_t>(capacity_ - record);  // as send_lanes::open
    comb_.opened();
    on_at_open_ = comb_.on;
  }
  layout lay_;
  std::vector<std::byte> buf_;
  std::size_t capacity_;
  agg::send_lane lane_;
  agg::combining_lane comb_;
  agg::combine_spec spec_;
  agg::fold_pass_fn pass_ = nullptr;
  std::unique_ptr<agg::combine_cache> cache_;
  agg::cache_pass_fn cache_pass_ = nullptr;
  std::vector<std::byte> victim_;
  bool draining_ = false;
  std::vector<std::vector<std::byte>> sent_;
  std::vector<bool> combined_;
  bool on_at_open_ = false;
};

// AGG-150: a key added is found until the table is cleared; after any number of clears
// (the generation wraps at 255) a key is new again.
TEST(CombineTable, FindsWhatItAddedAndForgetsOnClear) {
  agg::combine_table t(100, 1 << 20);
  EXPECT_EQ(t.slots(), 256u);
  std::vector<std::uint64_t> keys;
  for (std::uint64_t k = 0; k < 100; ++k) keys.push_back(k * 7919);
  for (std::uint32_t i = 0; i < keys.size(); ++i) {
    const auto r = t.find_or_add(agg::combine_hash(0, keys[i]), i,
                                 [&](std::uint32_t j) { return keys[j] == keys[i]; });
    EXPECT_EQ(r, agg::combine_table::added);
  }
  for (std::uint32_t i = 0; i < keys.size(); ++i) {
    const auto r = t.find_or_add(agg::combine_hash(0, keys[i]), 999,
                                 [&](std::uint32_t j) { return keys[j] == keys[i]; });
    EXPECT_EQ(r, static_cast<std::int32_t>(i));
  }
  t.clear();
  EXPECT_EQ(t.size(), 0u);
  const auto r = t.find_or_add(agg::combine_hash(0, keys[5]), 0,
                               [&](std::uint32_t j) { return keys[j] == keys[5]; });
  EXPECT_EQ(r, agg::combine_table::added);
}

TEST(CombineTable, GenerationWrapClearsEverySlot) {
  agg::combine_table t(8, 16);
  const std::uint64_t key = 42;
  for (int round = 0; round < 70000; ++round) {
    ASSERT_EQ(t.find_or_add(agg::combine_hash(0, key), 0, [](std::uint32_t) { return true; }),
              agg::combine_table::added)
        << round;
    ASSERT_EQ(t.find_or_add(agg::combine_hash(0, key), 1, [](std::uint32_t j) { return j == 0; }),
              0)
        << round;
    t.clear();
  }
}

// AGG-151: slots = min(bit_ceil(2 x records), max_slots), 4 bytes each; at most half used.
TEST(CombineTable, MemoryIsBoundedAndLoadAtMostHalf) {
  agg::combine_table t(100000, 64);
  EXPECT_EQ(t.slots(), 64u);
  EXPECT_EQ(t.memory_bytes(), 256u);
  EXPECT_EQ(agg::combine_table::slots_for(944, 4096), 2048u);
  EXPECT_EQ(agg::combine_table::slots_for(944, 1000), 512u);
  EXPECT_EQ(agg::combine_table::slots_for(1, 4096), 16u);
  int added = 0, full = 0;
  for (std::uint32_t i = 0; i < 100; ++i) {
    const auto r = t.find_or_add(agg::combine_hash(0, i), i, [](std::uint32_t) { return false; });
    added += r == agg::combine_table::added;
    full += r == agg::combine_table::full;
  }
  EXPECT_EQ(added, 32);
  EXPECT_EQ(full, 68);
}

// AGG-152: random skewed keys over several tags (destinations): the values that leave equal
// what was offered per (tag, key), each buffer that combined holds a key once, and hot keys
// cut records; every offer is a record or a hit.
TEST(CombiningLane, EveryContributionExactlyOnce) {
  for (std::uint32_t tb : {0u, 1u, 2u, 3u}) {
    lane_rig rig(16384, tb, 1 << 20);
    std::mt19937_64 rng(tb + 1);
    totals_t want;
    const std::uint64_t n_tags = tb == 0 ? 1 : 5;
    const layout lay;
    for (int i = 0; i < 200000; ++i) {
      // Half the offers on 50 hot keys, half on a million.
      const std::uint64_t key = (rng() & 1) ? rng() % 50 : rng() % 1000000;
      const std::uint64_t tag = rng() % n_tags;
      const std::uint64_t value = rng() % 1000;
      want[{tag, key_bytes_of(lay, key)}] += value;
      rig.offer(tag, key, value);
    }
    rig.seal();
    EXPECT_EQ(rig.totals(), want) << "tag bytes " << tb;
    EXPECT_TRUE(rig.combined_buffers_distinct()) << "tag bytes " << tb;
    EXPECT_LT(rig.records_sent(), 200000u * 3 / 4) << "tag bytes " << tb;
    EXPECT_EQ(rig.records_sent() + rig.comb().hits, 200000u);
  }
}

// AGG-153: equal keys toward different tags are different records.
TEST(CombiningLane, EqualKeysOfDifferentTagsStaySeparate) {
  lane_rig rig(4096, 2, 1 << 20);
  for (std::uint64_t tag = 0; tag < 3; ++tag)
    for (int i = 0; i < 10; ++i) rig.offer(tag, 7, 1);
  rig.seal();
  const auto t = rig.totals();
  ASSERT_EQ(t.size(), 3u);
  for (std::uint64_t tag = 0; tag < 3; ++tag) EXPECT_EQ(t.at({tag, key_bytes_of({}, 7)}), 10u);
  EXPECT_EQ(rig.records_sent(), 3u);
}

// AGG-154: a combining lane keeps its true limit (the inline push appends); at fill, a pass
// that frees a 32nd of the buffer or more lets the lane go on filling, and one that
// frees less sends it on to be posted.
TEST(CombiningLane, FoldOnFillKeepsTheInlinePushOpen) {
  lane_rig rig(4096, 1, 1 << 20);  // 240 records of 17 bytes
  EXPECT_TRUE(rig.comb().on);
  EXPECT_EQ(rig.lane().limit, 4096u - 17);
  std::uint64_t k = 0;
  while (!rig.put(0, k % 100, 1)) ++k;  // 100 keys; no pass until the lane is full
  ASSERT_EQ(k + 1, 240u);
  EXPECT_EQ(rig.comb().hits, 0u);
  EXPECT_TRUE(rig.refill()) << "100 records kept of 240";
  EXPECT_EQ(rig.comb().hits, 140u);
  EXPECT_EQ(rig.lane().used, agg::header_bytes + std::size_t{100} * 17);
  EXPECT_EQ(rig.lane().items, 100u);
  while (!rig.put(0, 1000 + k, 1)) ++k;  // unique keys
  EXPECT_FALSE(rig.refill()) << "nothing freed";
  EXPECT_EQ(rig.lane().items, 240u);
  EXPECT_EQ(rig.buffers_sent(), 0u);
}

// AGG-151: keys past the table's load limit are appended uncombined, the others still fold.
TEST(CombiningLane, TableAtItsLoadLimitAppendsTheRest) {
  agg::combine_gate::policy always;  // no early stop: this test is about the table
  always.sample = 1u << 30;
  always.min_hit_per_1024 = 0;
  lane_rig rig(16384, 1, 64, always);  // 32 keys at most per buffer
  totals_t want;
  for (std::uint64_t k = 0; k < 500; ++k) {
    rig.offer(0, k, 1);
    want[{0, key_bytes_of({}, k)}] += 1;
  }
  for (std::uint64_t k = 0; k < 32; ++k) {  // the first 32 are in the table: they combine
    rig.offer(0, k, 1);
    want[{0, key_bytes_of({}, k)}] += 1;
  }
  rig.seal();
  EXPECT_EQ(rig.totals(), want);
  EXPECT_EQ(rig.records_sent(), 500u);
}

// AGG-155: keys that never repeat stop combining after the sample, with skips 1, 2, ..., 64.
TEST(CombineGate, UniformKeysTurnCombiningOffWithGrowingSkips) {
  lane_rig rig(16384, 1, 1 << 20);
  std::mt19937_64 rng(5);
  std::size_t combined_buffers = 0, buffers = 0;
  std::size_t last = rig.buffers_sent();
  bool was_on = rig.comb().on;
  for (int i = 0; i < 2000000; ++i) {
    rig.offer(rng() % 4, rng(), 1);
    if (rig.buffers_sent() != last) {
      ++buffers;
      combined_buffers += was_on;
      last = rig.buffers_sent();
      was_on = rig.comb().on;
    }
  }
  // Skips 1, 2, 4, ..., 64: about 7 + (buffers - 127) / 65 buffers start combining, and
  // each stops after its 256-offer sample.
  EXPECT_GT(buffers, 1000u);
  EXPECT_LE(combined_buffers, 7 + buffers / 65 + 1);
  EXPECT_EQ(rig.comb().hits, 0u);
  EXPECT_GE(rig.comb().gate.failures(), combined_buffers - 1);
}

TEST(CombineGate, SkewedKeysKeepCombining) {
  lane_rig rig(16384, 1, 1 << 20);
  std::mt19937_64 rng(6);
  std::size_t off_buffers = 0, last = 0;
  for (int i = 0; i < 500000; ++i) {
    rig.offer(0, rng() % 2000, 1);  // a quarter of the offers hit
    if (rig.buffers_sent() != last) {
      last = rig.buffers_sent();
      off_buffers += !rig.comb().on;
    }
  }
  EXPECT_EQ(off_buffers, 0u);
  EXPECT_EQ(rig.comb().gate.failures(), 0u);
  EXPECT_GT(rig.comb().hits, 100000u);
}

TEST(CombineGate, TheFirstFullPassJudgesTheBuffer) {
  lane_rig rig(16384, 1, 1 << 20);  // 962 records of 17 bytes fill a buffer
  for (std::uint64_t k = 0; k < 900; ++k) rig.offer(0, k, 1);
  for (std::uint64_t k = 0; k < 50; ++k) rig.offer(0, k, 1);  // 50 hits in 950: below 1/16
  EXPECT_TRUE(rig.comb().on);
  while (rig.buffers_sent() == 0) rig.offer(0, 5000 + rig.lane().used, 1);
  EXPECT_EQ(rig.comb().hits, 50u) << "the pass at fill folded what repeated";
  EXPECT_FALSE(rig.comb().on) << "the next buffer is skipped";
  EXPECT_EQ(rig.comb().gate.skip(), 0u) << "skip 1, spent on the buffer that opened";
  EXPECT_EQ(rig.comb().gate.failures(), 1u);
}

// AGG-162: once the worth of a saved record is known, a buffer keeps combining only if its
// folds times that worth reach its examined records times what examining one costs (the
// lane's running mean over its passes, a preempted pass capped at 4x the mean) times the
// policy's margin (2 by default); the policy's fixed worth wins over a measured one; an
// unknown worth (0) judges by the folds alone; min_hit 0 always combines.
TEST(CombineGate, DecidesByWhatTheSavedRecordsAreWorth) {
  agg::combine_gate::policy p;  // sample 256, 64 folds per 1024 at least, margin 2
  agg::combine_gate measured(p);
  ASSERT_TRUE(measured.start_buffer());
  EXPECT_TRUE(measured.note(200, 10, 1000)) << "too few examined to judge";
  EXPECT_EQ(measured.ns_per_record(), 5.0);
  EXPECT_TRUE(measured.note(56, 6, 280)) << "worth unknown: 16 folds in 256 pay";
  measured.measured_saved_record_ns(20.0);
  EXPECT_EQ(measured.saved_record_ns(), 20.0);
  ASSERT_TRUE(measured.start_buffer());
  EXPECT_FALSE(measured.note(256, 127, 1280)) << "127 x 20 ns saved < 2 x 256 x 5 ns examined";
  EXPECT_EQ(measured.failures(), 1u);
  EXPECT_FALSE(measured.start_buffer()) << "one buffer skipped";
  ASSERT_TRUE(measured.start_buffer());
  EXPECT_TRUE(measured.note(256, 128, 1280)) << "128 x 20 ns saved = 2 x 256 x 5 ns examined";
  EXPECT_FALSE(measured.note(256, 0, 1280)) << "judged over the whole buffer: 128 of 512";
  ASSERT_TRUE(!measured.start_buffer() && measured.start_buffer());
  EXPECT_TRUE(measured.note(256, 200, 10'000'000)) << "a preempted pass counts as 4x the mean";
  EXPECT_DOUBLE_EQ(measured.ns_per_record(),
                   5.0 + (20.0 - 5.0) * 256 / (256 + agg::combine_gate::cost_records))
      << "moved 256 / (256 + cost_records) of the way";
  measured.measured_saved_record_ns(1e9);
  ASSERT_TRUE(measured.start_buffer());
  EXPECT_FALSE(measured.note(1024, 63, 0)) << "the folds' bar holds whatever they save";

  agg::combine_gate::policy even = p;
  even.cost_margin = 1.0;  // the folds need only cover the passes
  agg::combine_gate bare(even);
  bare.measured_saved_record_ns(10.0);
  ASSERT_TRUE(bare.start_buffer());
  EXPECT_FALSE(bare.note(256, 127, 1280)) << "127 x 10 ns saved < 256 x 5 ns examined";
  ASSERT_TRUE(!bare.start_buffer() && bare.start_buffer());
  EXPECT_TRUE(bare.note(256, 128, 1280)) << "128 x 10 ns saved = 256 x 5 ns examined";

  p.saved_record_ns = 1.0;
  agg::combine_gate fixed(p);
  fixed.measured_saved_record_ns(1000.0);
  EXPECT_EQ(fixed.saved_record_ns(), 1.0) << "the policy's worth wins";
  ASSERT_TRUE(fixed.start_buffer());
  EXPECT_FALSE(fixed.note(256, 256, 512));

  p.min_hit_per_1024 = 0;
  agg::combine_gate always(p);
  ASSERT_TRUE(always.start_buffer());
  EXPECT_TRUE(always.note(1u << 20, 0, 1u << 30));
  EXPECT_EQ(always.failures(), 0u);
}

// AGG-162: the cost per record is a mean over records, not over passes: a lane whose full
// passes examine 940 records at 10 ns each and whose short passes (a buffer's tail) 10
// records at 100 ns each spends (940 x 10 + 10 x 100) / 950 = 10.9 ns per record; a mean
// of the passes' figures, 1/8 a pass, would settle near 55 (each short pass capped at 4x
// the mean: m = (7 x (7m + 10) / 8 + 100) / 8 gives m = 58 after a short pass, 52 after a
// full one).
TEST(CombineGate, CostIsAMeanOverRecords) {
  agg::combine_gate::policy p;
  p.min_hit_per_1024 = 0;  // judge nothing: this measures the cost
  agg::combine_gate g(p);
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(g.start_buffer());
    EXPECT_TRUE(g.note(940, 500, 9400));
    EXPECT_TRUE(g.note(10, 5, 1000));
  }
  EXPECT_GT(g.ns_per_record(), 10.0);
  EXPECT_LT(g.ns_per_record(), 11.5);
}

// AGG-163: an out-link's wire worth is a window's stall per byte posted, lowered by at
// most 1/8 per window: after a stall of 2 ns per byte, windows that stall less take it
// down 0.875 each (17 of them leave 2 x 0.875^17, about 0.21), a window that posted
// nothing keeps it, and a window that stalls more raises it at once.
TEST(WireWorth, RemembersAStallAcrossWindows) {
  agg::wire_worth w;
  EXPECT_EQ(w.ns_per_byte(), 0.0);
  EXPECT_EQ(w.window(0, 1000), 0.0) << "no stall: no worth";
  EXPECT_EQ(w.window(2000, 1000), 2.0);
  EXPECT_EQ(w.window(5000, 0), 2.0) << "nothing posted: the figure stays";
  EXPECT_EQ(w.window(0, 1000), 1.75);
  EXPECT_EQ(w.window(1000, 1000), 1.75 * 0.875) << "1 ns per byte is below 7/8 of 1.75";
  double expect = 1.75 * 0.875;
  for (int i = 0; i < 15; ++i) {
    expect *= 0.875;
    EXPECT_DOUBLE_EQ(w.window(0, 4096), expect) << "window " << i;
  }
  EXPECT_LT(w.ns_per_byte(), 0.25);
  EXPECT_GT(w.ns_per_byte(), 0.2);
  EXPECT_EQ(w.window(3000, 1000), 3.0) << "a larger stall counts at once";
}

// AGG-156: every instantiation pick_fold_pass chooses (items of 8, 16, 24 and other
// sizes; keys of 4, 8 and other sizes, above 8 compared bytewise behind an 8-byte hash
// prefix shared by 16 keys; the key first and the value right after it or elsewhere; tags
// of 0, 1 and 2 bytes; the fold called or inlined) keeps every contribution exactly once
// and leaves the item's other bytes alone.
TEST(CombiningLane, EveryItemAndKeyLayout) {
  const layout layouts[] = {
      {8, 4, 4, 0, 4},  {16, 0, 8, 8, 8},  {16, 12, 4, 0, 8},  {24, 0, 8, 16, 8}, {24, 3, 2, 8, 8},
      {12, 0, 4, 4, 8}, {20, 8, 12, 0, 8}, {40, 16, 20, 0, 4}, {9, 0, 1, 1, 8},   {17, 8, 8, 0, 8},
      {8, 0, 4, 4, 4},  {16, 0, 4, 4, 8},  {24, 0, 8, 8, 8},   {24, 0, 4, 4, 4},
  };
  for (const layout& lay : layouts)
    for (const std::uint32_t tb : {0u, 1u, 2u})
      for (const bool inline_op : {false, true}) {
        agg::combine_gate::policy always;
        always.sample = 1u << 30;
        always.min_hit_per_1024 = 0;
        lane_rig rig(4096, tb, 1 << 20, always, lay, inline_op);
        std::mt19937_64 rng(lay.item_bytes * 31 + lay.key_bytes + tb);
        totals_t want;
        const std::uint64_t n_keys = 40;  // above 8 bytes: 16 hash prefixes
        for (int i = 0; i < 20000; ++i) {
          const std::uint64_t key = rng() % n_keys;
          const std::uint64_t tag = tb == 0 ? 0 : rng() % 3;
          want[{tag, key_bytes_of(lay, key)}] += i;
          rig.offer(tag, key, static_cast<std::uint64_t>(i));
        }
        rig.seal();
        const std::string what =
            "item " + std::to_string(lay.item_bytes) + " key " + std::to_string(lay.key_bytes) +
            "@" + std::to_string(lay.key_offset) + " tag bytes " + std::to_string(tb) +
            (inline_op ? ", fold inlined" : ", fold called");
        EXPECT_EQ(rig.totals(), want) << what;
        EXPECT_TRUE(rig.combined_buffers_distinct()) << what;
        EXPECT_TRUE(rig.padding_intact()) << what;
        EXPECT_GT(rig.comb().hits, 20000u / 4) << what;  // 40-byte items: 99 records, 120 keys
      }
}

// AGG-157: every hold-back cache pass pick_cache_pass chooses (items of 8, 16, 24 and
// other sizes; keys of 4, 8 and other sizes; the fold called or inlined), and the pass for
// any layout, keep every contribution exactly once through the cache, its evictions, the
// table and the drain, and leave the item's other bytes alone; the hot keys fold in the
// cache across buffers.
TEST(CombiningLane, EveryLayoutThroughTheCache) {
  const layout layouts[] = {
      {8, 4, 4, 0, 4},  {16, 0, 8, 8, 8},  {16, 12, 4, 0, 8}, {24, 0, 8, 16, 8}, {24, 3, 2, 8, 8},
      {12, 0, 4, 4, 8}, {20, 8, 12, 0, 8}, {8, 0, 4, 4, 4},   {24, 0, 4, 4, 4},
  };
  for (const layout& lay : layouts)
    for (const std::uint32_t tb : {0u, 1u, 2u})
      for (const bool inline_op : {false, true})
        for (const bool any_layout : {false, true}) {
          agg::combine_gate::policy always;
          always.sample = 1u << 30;
          always.min_hit_per_1024 = 0;
          lane_rig rig(1024, tb, 1 << 20, always, lay, inline_op);
          rig.use_cache(64, any_layout);
          std::mt19937_64 rng(lay.item_bytes * 31 + lay.key_bytes + tb);
          totals_t want;
          constexpr int offers = 8000;
          for (int i = 0; i < offers; ++i) {
            // a quarter over 8 hot keys, the rest over 4 000
            const std::uint64_t key = rng() % 4 == 0 ? rng() % 8 : 8 + rng() % 4000;
            const std::uint64_t tag = tb == 0 ? 0 : rng() % 3;
            want[{tag, key_bytes_of(lay, key)}] += i;
            rig.offer(tag, key, static_cast<std::uint64_t>(i));
          }
          rig.drain();
          rig.seal();
          const std::string what =
              "item " + std::to_string(lay.item_bytes) + " key " + std::to_string(lay.key_bytes) +
              "@" + std::to_string(lay.key_offset) + " tag bytes " + std::to_string(tb) +
              (inline_op ? ", fold inlined" : ", fold called") +
              (any_layout ? ", any layout" : ", picked");
          EXPECT_EQ(rig.totals(), want) << what;
          EXPECT_TRUE(rig.padding_intact()) << what;
          EXPECT_GT(rig.comb().hits, std::uint64_t{offers} / 5) << what;  // hot keys fold
        }
}

// AGG-150, AGG-151: a record kept 64 KiB or more past the buffer's first one is kept
// without a name (the slot's offset has 16 bits): later records of its key stay apart,
// while those of keys named before it still fold; every value leaves once. One pass over
// 10 000 records of 17 bytes in a 256 KiB buffer: keys 0..4999, then the same again.
TEST(CombiningLane, RecordsPast64KiBAreKeptUnnamed) {
  agg::combine_gate::policy always;
  always.sample = 1u << 30;
  always.min_hit_per_1024 = 0;
  lane_rig rig(262144, 1, 1 << 16, always);  // 15 420 records, 32 768 keys at most
  totals_t want;
  for (int round = 0; round < 2; ++round)
    for (std::uint64_t k = 0; k < 5000; ++k) {
      rig.offer(1, k, k + 1);
      want[{1, key_bytes_of({}, k)}] += k + 1;
    }
  EXPECT_EQ(rig.buffers_sent(), 0u) << "no pass before the seal";
  rig.seal();
  const std::uint64_t named = 3855;  // offsets 0, 17, ..., 65 518 (below max_at, 65 535)
  EXPECT_EQ(rig.comb().hits, named);
  EXPECT_EQ(rig.records_sent(), 10000 - named);
  EXPECT_EQ(rig.totals(), want);
}

// AGG-150: the hash keeps a one-byte tag and a key below 2^56 apart (no two collide), and
// its top bits, which pick the slot, differ between tags of one key.
TEST(CombineTable, HashSeparatesTagsAndKeys) {
  std::set<std::uint64_t> hashes;
  std::set<std::uint64_t> slots_of_key_7;
  for (std::uint64_t tag = 0; tag < 256; ++tag) {
    for (std::uint64_t key = 0; key < 1000; ++key)
      hashes.insert(agg::combine_hash(tag, key * 0x10001 + (key << 40)));
    slots_of_key_7.insert(agg::combine_hash(tag, 7) >> 56);
  }
  EXPECT_EQ(hashes.size(), 256u * 1000);
  EXPECT_EQ(slots_of_key_7.size(), 256u);
}

// AGG-156: a spec that cannot describe the item is named.
TEST(CombineSpec, ProblemsAreNamed) {
  const agg::combine_spec ok{0, 8, 8, 8, add_u64};
  EXPECT_EQ(agg::combine_spec_problem(ok, 16), nullptr);
  EXPECT_EQ(agg::combine_spec_problem(ok, 24), nullptr);
  EXPECT_NE(agg::combine_spec_problem(ok, 15), nullptr);
  agg::combine_spec s = ok;
  s.fn = nullptr;
  EXPECT_NE(agg::combine_spec_problem(s, 16), nullptr);
  s = ok;
  s.key_bytes = 0;
  EXPECT_NE(agg::combine_spec_problem(s, 16), nullptr);
  s = ok;
  s.value_offset = 4;  // overlaps the key
  EXPECT_NE(agg::combine_spec_problem(s, 16), nullptr);
  s = {8, 4, 0, 8, add_u64};  // value first, key after it
  EXPECT_EQ(agg::combine_spec_problem(s, 12), nullptr);
}

}  // namespace
