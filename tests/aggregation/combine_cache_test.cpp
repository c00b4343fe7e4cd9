// The hold-back cache in front of a combining lane (aggregation/README.md, AGG-157..160):
// every contribution leaves exactly once through evictions, buffers and drains — against a
// per-(tag, key) sum — a drain stopped by a full lane resumes and also finds entries held
// since, hot keys stay held, keys above 8 bytes compare bytewise, only the lane's tag bytes
// count, and memory is the entries.
#include <gtest/gtest.h>

#include <convoy/aggregation/combine_cache.hpp>
#include <convoy/aggregation/combine_table.hpp>
#include <convoy/aggregation/packing.hpp>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace {

namespace agg = convoy::aggregation;

void add_u64(void* into, const void* from) {
  std::uint64_t a = 0, b = 0;
  std::memcpy(&a, into, 8);
  std::memcpy(&b, from, 8);
  a += b;
  std::memcpy(into, &a, 8);
}

agg::combine_spec sum_spec() {
  agg::combine_spec s;
  s.fn = add_u64;
  return s;
}

using totals = std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t>;

// A cache in front of a combining lane (one-byte tags, 16-byte {key, value} items) over a
// private 16 KiB buffer; sealed buffers are summed into `out`.
struct rig {
  static constexpr std::uint32_t capacity = 16384;
  std::vector<std::byte> buf = std::vector<std::byte>(capacity + 8);
  agg::send_lane lane;
  agg::combining_lane comb{(capacity - agg::header_bytes) / 17, 1 << 20};
  agg::combine_spec spec = sum_spec();
  agg::combine_cache cache;
  totals out;
  explicit rig(std::size_t entries) : cache(entries, 16, 1, sum_spec()) {
    lane.tag_bytes = 1;
    lane.record_bytes = 17;
    open();
  }
  agg::fold_pass_fn pass = agg::pick_fold_pass(16, sum_spec(), 1);
  void open() {
    lane.buf = buf.data();
    lane.used = agg::header_bytes;
    lane.limit = capacity - 17;
    comb.opened();
  }
  agg::fold_result fold() { return pass(lane, comb, spec); }
  void seal() {
    comb.sealing([&] { return fold(); });
    for (std::uint32_t off = agg::header_bytes; off < lane.used; off += 17) {
      std::uint64_t tag = 0, key = 0, value = 0;
      std::memcpy(&tag, buf.data() + off, 1);
      std::memcpy(&key, buf.data() + off + 1, 8);
      std::memcpy(&value, buf.data() + off + 9, 8);
      out[{tag, key}] += value;
    }
    open();
  }
  // An append, as the engine's drain does; a full lane folds, and is sealed unless that
  // freed room.
  void to_lane(std::uint64_t tag, const std::byte* item) {
    if (lane.put_rigid<16>(tag, item, 16) && !comb.refill(lane, [&] { return fold(); })) seal();
  }
  agg::combine_cache::outcome offer(std::uint64_t tag, std::uint64_t key, std::uint64_t value) {
    const std::uint64_t item[2] = {key, value};
    std::uint64_t victim_tag = 0;
    std::byte victim[16];
    const auto o = cache.offer(tag, reinterpret_cast<const std::byte*>(item), victim_tag, victim);
    if (o == agg::combine_cache::outcome::evicted) to_lane(victim_tag, victim);
    return o;
  }
  void drain_all() {
    ASSERT_TRUE(cache.drain([&](std::uint64_t tag, const std::byte* item) {
      to_lane(tag, item);
      return true;
    }));
    seal();
  }
};

// AGG-157: half the offers over 100 hot keys, half over a million; 4 tags.
TEST(CombineCache, EveryContributionLeavesExactlyOnce) {
  for (std::size_t entries : {2u, 64u, 4096u}) {
    rig r(entries);
    std::mt19937_64 rng(entries);
    totals want;
    std::uint64_t folded = 0;
    for (int i = 0; i < 100000; ++i) {
      const std::uint64_t key = (rng() & 1) ? rng() % 100 : rng() % 1000000;
      const std::uint64_t tag = rng() % 4, value = rng() % 7;
      want[{tag, key}] += value;
      folded += r.offer(tag, key, value) == agg::combine_cache::outcome::folded ? 1 : 0;
      ASSERT_LE(r.cache.held(), entries);
    }
    r.drain_all();
    EXPECT_TRUE(r.cache.empty());
    EXPECT_EQ(r.out, want) << entries;
    if (entries == 4096) {
      EXPECT_GT(folded, 40000u);
    }
  }
}

// AGG-158: a drain that the lane stops resumes where it stopped; entries held in between
// (also in slots the first pass had passed) are drained too.
TEST(CombineCache, DrainResumesWhereTheLaneRefused) {
  rig r(1024);
  totals want;
  for (std::uint64_t k = 0; k < 3000; ++k) {
    want[{k % 3, k}] += k;
    r.offer(k % 3, k, k);
  }
  const std::size_t held = r.cache.held();
  ASSERT_GT(held, 100u);
  int budget = 50;  // the lane takes 50 records, then has no free buffer
  EXPECT_FALSE(r.cache.drain([&](std::uint64_t tag, const std::byte* item) {
    if (budget == 0) return false;
    --budget;
    r.to_lane(tag, item);
    return true;
  }));
  EXPECT_EQ(r.cache.held(), held - 50);
  for (std::uint64_t k = 5000; k < 5400; ++k) {
    want[{1, k}] += 1;
    r.offer(1, k, 1);
  }
  r.drain_all();
  EXPECT_TRUE(r.cache.empty());
  EXPECT_EQ(r.out, want);
}

// AGG-157: a key offered every other time is never evicted by keys seen once.
TEST(CombineCache, HotKeysStayHeld) {
  rig r(256);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) r.offer(0, i % 2 == 0 ? 42 : rng() | 1ull << 40, 1);
  EXPECT_EQ(r.out.count({0, 42}), 0u);  // nothing of key 42 reached a buffer
  r.drain_all();
  EXPECT_EQ((r.out[{0, 42}]), 50000u);
}

// AGG-157: a lane whose fill pass goes through its cache (pick_cache_pass's pass, and
// fold_through_cache for any layout), as the engine's: records offered to the cache leave
// the buffer, evicted entries take their place by the table, a drain appends plainly;
// every contribution leaves exactly once, and hot keys held across buffers cut the records
// sent below what the buffers alone keep.
TEST(CombineCache, FillPassThroughTheCache) {
  const auto run = [](bool cached, agg::cache_pass_fn pass) {
    rig r(256);
    std::vector<std::byte> victim(16);
    bool draining = false;
    const auto fill_pass = [&] {
      if (!cached || draining) return r.fold();
      return pass(r.lane, r.comb, r.spec, r.cache, victim.data());
    };
    const auto append = [&](std::uint64_t tag, const std::byte* item) {
      if (r.lane.put_rigid<16>(tag, item, 16) && !r.comb.refill(r.lane, fill_pass)) r.seal();
    };
    std::mt19937_64 rng(11);
    totals want;
    for (int i = 0; i < 200000; ++i) {
      const std::uint64_t key = (rng() % 4 == 0) ? rng() % 64 : rng() % 1000000;
      const std::uint64_t item[2] = {key, 1 + rng() % 5};
      const std::uint64_t tag = rng() % 3;
      want[{tag, key}] += item[1];
      append(tag, reinterpret_cast<const std::byte*>(item));
    }
    draining = true;
    EXPECT_TRUE(r.cache.drain([&](std::uint64_t tag, const std::byte* item) {
      append(tag, item);
      return true;
    }));
    r.seal();
    EXPECT_EQ(r.out, want) << (cached ? "through the cache" : "table only");
    return r.comb.hits;
  };
  const std::uint64_t table_only = run(false, nullptr);
  const std::uint64_t picked = run(true, agg::pick_cache_pass(16, sum_spec()));
  const std::uint64_t any_layout = run(true, &agg::fold_through_cache);
  EXPECT_GT(picked, table_only + 10000) << "the cache folds hot keys across buffers";
  EXPECT_EQ(picked, any_layout) << "the picked pass folds as the one for any layout";
}

// AGG-159: keys of 12 bytes compare bytewise (equal first 8 bytes stay apart); tags compare
// over the lane's tag bytes only.
TEST(CombineCache, WideKeysAndTagBytes) {
  agg::combine_spec s = sum_spec();
  s.key_bytes = 12;
  s.value_offset = 12;
  agg::combine_cache c(64, 20, 1, s);
  std::byte a[20] = {}, b[20] = {};
  a[9] = std::byte{1};
  b[9] = std::byte{2};  // equal first 8 key bytes, different 10th
  std::uint64_t vt = 0;
  std::byte victim[20];
  EXPECT_EQ(c.offer(5, a, vt, victim), agg::combine_cache::outcome::held);
  EXPECT_EQ(c.offer(5, b, vt, victim), agg::combine_cache::outcome::held);
  EXPECT_EQ(c.offer(0x105, a, vt, victim), agg::combine_cache::outcome::folded);  // tag byte 5
  EXPECT_EQ(c.held(), 2u);
  std::vector<std::uint64_t> tags;
  EXPECT_TRUE(c.drain([&](std::uint64_t tag, const std::byte*) {
    tags.push_back(tag);
    return true;
  }));
  EXPECT_EQ(tags, (std::vector<std::uint64_t>{5, 5}));
}

// AGG-160: entries rounded down to a power of two (2 at least), 8 + item + 4 bytes each
// rounded up to 8, and a cache line to align them.
TEST(CombineCache, MemoryIsTheEntries) {
  const agg::combine_cache c(1000, 16, 1, sum_spec());
  EXPECT_EQ(c.entries(), 512u);
  EXPECT_EQ(c.memory_bytes(), 512u * 32 + 64);
  EXPECT_EQ(agg::combine_cache::bytes_for(1000, 20), 512u * 32 + 64);  // 8 + 20 + 4
  EXPECT_EQ(agg::combine_cache::bytes_for(1000, 16), c.memory_bytes());
  EXPECT_EQ(agg::combine_cache::entries_for(0), 0u);
  EXPECT_EQ(agg::combine_cache::entries_for(1), 2u);
  EXPECT_EQ(agg::combine_cache(1, 8, 1, sum_spec()).entries(), 2u);
}

// AGG-160: a budget's cache is the largest power of two of entries that fits it, capped,
// and none below the least it may have — against a search over every power of two.
TEST(CombineCache, EntriesWithinABudget) {
  using cc = agg::combine_cache;
  EXPECT_EQ(cc::entries_within(std::size_t{512} << 10, 16, 16384),
            8192u);  // 32 B each, 64 to align
  EXPECT_EQ(cc::entries_within((std::size_t{512} << 10) + 64, 16, 16384), 16384u);
  EXPECT_EQ(cc::entries_within(std::size_t{4} << 20, 16, 16384), 16384u);  // the cap
  EXPECT_EQ(cc::entries_within(64, 16, 16384), 0u);                        // the line alone
  EXPECT_EQ(cc::entries_within(64 + 64 * 32, 16, 16384, 64), 64u);
  EXPECT_EQ(cc::entries_within(64 + 64 * 32 - 1, 16, 16384, 64), 0u);
  for (std::size_t item : {4u, 16u, 24u, 100u})
    for (std::size_t max : {0u, 1u, 2u, 1000u, 16384u})
      for (std::size_t least : {2u, 64u})
        for (std::size_t bytes = 0; bytes < (std::size_t{1} << 20); bytes = bytes * 3 / 2 + 7) {
          std::size_t best = 0;  // the oracle: every power of two in turn
          for (std::size_t n = 2; n <= max; n *= 2)
            if (cc::bytes_for(n, item) <= bytes) best = n;
          if (best < least) best = 0;
          ASSERT_EQ(cc::entries_within(bytes, item, max, least), best)
              << bytes << " bytes, items of " << item << ", at most " << max << ", least " << least;
        }
}

}  // namespace
