// convoy::combining_conveyor<K, V, Op> over MPI (termination/README.md TERM-20..24,
// conveyor_api/README.md API-90): random and Zipf-skewed keys; every rank regenerates every
// rank's updates, so the owner's totals are checked against a sequential oracle. Run on
// real and emulated layouts (the CTest entries set CONVOY_EMULATE_NODES).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/combining_conveyor.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

using convoy::combining_conveyor;
using convoy::conveyor_options;
using convoy_test::world_rank;
using convoy_test::world_size;

std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x94d049bb133111ebu;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9u;
  x ^= x >> 32;
  return x;
}

int owner_of(std::uint64_t key, int p) {
  return static_cast<int>(mix64(key + 17) % static_cast<std::uint64_t>(p));
}

// Rank r's i-th update: a key drawn from Zipf(s) over n keys (s = 0: uniform), and a value.
class updates {
 public:
  updates(std::uint64_t n, double s) : cdf_(n) {
    double sum = 0;
    for (std::uint64_t k = 0; k < n; ++k) cdf_[k] = sum += 1.0 / std::pow(double(k + 1), s);
    for (double& c : cdf_) c /= sum;
  }
  // Regenerable on every rank: the stream of rank r.
  [[nodiscard]] std::vector<std::uint64_t> keys_of(int r, int count) const {
    std::mt19937_64 rng(static_cast<std::uint64_t>(r) * 7919 + 3);
    std::vector<std::uint64_t> k;
    for (int i = 0; i < count; ++i) {
      const double u = std::uniform_real_distribution<double>(0, 1)(rng);
      const auto it = std::lower_bound(cdf_.begin(), cdf_.end(), u);
      k.push_back(
          std::min<std::uint64_t>(static_cast<std::uint64_t>(it - cdf_.begin()), cdf_.size() - 1));
    }
    return k;
  }
  static std::uint64_t value_of(int r, int i) {
    return 1 + mix64(static_cast<std::uint64_t>(r) << 32 | static_cast<std::uint32_t>(i)) % 997;
  }

 private:
  std::vector<double> cdf_;
};

struct sum_totals {
  std::uint64_t pushes = 0, pulls = 0, combined = 0;
};

// Every rank pushes `count` updates (sum of values per key); the owner's totals equal the
// oracle's, computed from every rank's regenerated stream. Returns this rank's counters.
// Pulls by the handler-style advance, or (`batches`) by pull_batch.
sum_totals run_sums(combining_conveyor<std::uint64_t, std::uint64_t>& c, const updates& u,
                    int count, bool batches = false) {
  const int me = world_rank(), p = world_size();
  const auto keys = u.keys_of(me, count);
  std::map<std::uint64_t, std::uint64_t> got;
  c.begin();
  int i = 0;
  std::uint64_t spins = 0;
  const auto take = [&](std::uint64_t k, std::uint64_t v) {
    EXPECT_EQ(owner_of(k, p), me) << "key " << k;
    got[k] += v;
  };
  while (batches ? c.advance(i == count) : c.advance(i == count, take)) {
    if (batches)
      for (auto b = c.pull_batch(); !b.empty(); b = c.pull_batch())
        for (std::size_t k = 0; k < b.size(); ++k) take(b[k].first, b[k].second);
    for (; i < count; ++i) {
      const std::uint64_t k = keys[static_cast<std::size_t>(i)];
      if (!c.push(k, updates::value_of(me, i), owner_of(k, p))) break;
    }
    if (++spins > 50'000'000u) {
      ADD_FAILURE() << "did not terminate";
      break;
    }
  }
  const auto s = c.stats();
  c.reset();
  std::map<std::uint64_t, std::uint64_t> want;
  for (int r = 0; r < p; ++r) {
    const auto ks = u.keys_of(r, count);
    for (int j = 0; j < count; ++j)
      if (owner_of(ks[static_cast<std::size_t>(j)], p) == me)
        want[ks[static_cast<std::size_t>(j)]] += updates::value_of(r, j);
  }
  EXPECT_EQ(got, want) << "rank " << me;
  return {s.pushes, s.pulls, s.combined};
}

std::vector<conveyor_options> option_sets() {
  std::vector<conveyor_options> v;
  conveyor_options o;
  o.buffer_bytes = 512;  // many buffers, backpressure
  v.push_back(o);
  o.mesh = "node,core";
  o.n_buffers = 1;
  v.push_back(o);
  conveyor_options d;  // defaults
  v.push_back(d);
  conveyor_options st;
  st.steady = true;
  st.buffer_bytes = 1024;
  v.push_back(st);
  return v;
}

// TERM-20, TERM-24, API-90: sums per key equal the oracle for skews 0, 1.0 and 1.5 on every
// option set, pulled one by one or by batches; Σ pushes - Σ combined = Σ pulls; skewed keys
// combine.
TEST(CombiningConveyor, SumsEqualTheSequentialOracle) {
  for (double skew : {0.0, 1.0, 1.5}) {
    const updates u(static_cast<std::uint64_t>(500 * world_size()), skew);
    std::uint64_t combined = 0;
    bool batches = false;  // every other option set pulls by pull_batch
    for (const auto& o : option_sets()) {
      combining_conveyor<std::uint64_t, std::uint64_t> c(MPI_COMM_WORLD, o);
      const sum_totals t = run_sums(c, u, 20000, batches);
      batches = !batches;
      std::uint64_t mine[3] = {t.pushes, t.pulls, t.combined}, all[3] = {0, 0, 0};
      MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_EQ(all[0] - all[2], all[1]) << "skew " << skew;
      EXPECT_EQ(all[0], 20000u * static_cast<std::uint64_t>(world_size()));
      combined += all[2];
    }
    if (skew >= 1.5) {  // one push in 20 at least, over the four option sets
      EXPECT_GT(combined, 4u * 20000u * static_cast<unsigned>(world_size()) / 20);
    }
  }
}

struct max_op {
  void operator()(std::int32_t& into, const std::int32_t& from) const {
    into = std::max(into, from);
  }
};

// API-90: a fold that updates in place (void op(V&, const V&)), 4-byte keys and values,
// and a conveyor reused over cycles.
TEST(CombiningConveyor, MaxPerKeyOverCycles) {
  const int me = world_rank(), p = world_size();
  conveyor_options o;
  o.buffer_bytes = 256;
  combining_conveyor<std::uint32_t, std::int32_t, max_op> c(MPI_COMM_WORLD, o);
  for (int cycle = 0; cycle < 3; ++cycle) {
    std::map<std::uint32_t, std::int32_t> got;
    const auto value = [&](int r, int i) {
      return static_cast<std::int32_t>(
          mix64(static_cast<std::uint64_t>(r) * 100003 + static_cast<std::uint64_t>(i + cycle)) %
          1000000);
    };
    c.begin();
    int i = 0;
    const int n = 5000;
    while (c.advance(i == n, [&](std::uint32_t k, std::int32_t v) {
      auto [it, fresh] = got.try_emplace(k, v);
      if (!fresh) it->second = std::max(it->second, v);
    }))
      for (; i < n; ++i) {
        const auto k = static_cast<std::uint32_t>(i % 13);
        if (!c.push(k, value(me, i), owner_of(k, p))) break;
      }
    c.reset();
    std::map<std::uint32_t, std::int32_t> want;
    for (int r = 0; r < p; ++r)
      for (int j = 0; j < n; ++j) {
        const auto k = static_cast<std::uint32_t>(j % 13);
        if (owner_of(k, p) != me) continue;
        auto [it, fresh] = want.try_emplace(k, value(r, j));
        if (!fresh) it->second = std::max(it->second, value(r, j));
      }
    EXPECT_EQ(got, want) << "cycle " << cycle;
  }
  EXPECT_EQ(c.stats(true).begins, 3u);
  EXPECT_GT(c.stats(true).combined, 0u);
}

// TERM-24: CONVOY_COMBINE_MIN_HIT sets the gate's bar. 13 keys per rank, so that nearly
// every offer folds: under the default bar (64 per 1024) no buffer fails the check; with
// the bar at 1024 (every offer must fold) every buffer of 256 offers or more fails it, and
// the owners' totals stay exact while the gate turns combining off and on.
TEST(CombiningConveyor, GateBarFromTheSetting) {
  const int me = world_rank(), p = world_size();
  for (const char* bar : {static_cast<const char*>(nullptr), "1024"}) {
    if (bar != nullptr) setenv("CONVOY_COMBINE_MIN_HIT", bar, 1);
    combining_conveyor<std::uint64_t, std::uint64_t> c(MPI_COMM_WORLD);
    unsetenv("CONVOY_COMBINE_MIN_HIT");
    std::map<std::uint64_t, std::uint64_t> got;
    c.begin();
    int i = 0;
    const int n = 20000;
    while (c.advance(i == n, [&](std::uint64_t k, std::uint64_t v) { got[k] += v; }))
      for (; i < n; ++i) {
        const std::uint64_t k = static_cast<std::uint64_t>(i % 13) * 7919;
        if (!c.push(k, static_cast<std::uint64_t>(me + 1), owner_of(k, p))) break;
      }
    c.reset();
    std::map<std::uint64_t, std::uint64_t> want;
    for (int j = 0; j < n; ++j) {
      const std::uint64_t k = static_cast<std::uint64_t>(j % 13) * 7919;
      if (owner_of(k, p) == me) want[k] += static_cast<std::uint64_t>(p) * (p + 1) / 2;
    }
    EXPECT_EQ(got, want) << "bar " << (bar ? bar : "default");
    std::uint64_t stops = c.stats(true).combine_stops, all = 0;
    MPI_Allreduce(&stops, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (bar == nullptr)
      EXPECT_EQ(all, 0u) << "the default bar stopped combining on keys that nearly all fold";
    else
      EXPECT_GT(all, 0u) << "CONVOY_COMBINE_MIN_HIT=1024 did not reach the gate";
  }
}

// API-5 with API-90: a conveyor counts its combining tables in max_memory_bytes whether
// combining came with its construction or later through set_combine, static and dynamic
// alike, and no longer once set_combine turned it off; a combining cycle stays within it.
TEST(CombiningConveyor, SetCombineCountsItsTablesInMaxMemory) {
  using summing = combining_conveyor<std::uint64_t, std::uint64_t>;
  const int me = world_rank(), p = world_size();
  for (const bool dynamic : {false, true}) {
    conveyor_options o;
    o.dynamic = dynamic;
    const summing built(MPI_COMM_WORLD, o);
    convoy::untyped_conveyor later(MPI_COMM_WORLD, o);
    const std::size_t plain = later.max_memory_bytes();
    ASSERT_GT(built.max_memory_bytes(), plain) << "dynamic " << dynamic;
    ASSERT_EQ(later.set_combine(summing::spec()), 1);
    EXPECT_EQ(later.max_memory_bytes(), built.max_memory_bytes()) << "dynamic " << dynamic;
    ASSERT_EQ(later.begin(summing::item_bytes), 1);
    std::uint64_t got = 0, i = 0;
    const std::uint64_t n = 3000;
    for (bool more = true; more;) {
      for (; i < n; ++i) {
        const std::uint64_t item[2] = {i % 5, 1};
        if (later.push(item, static_cast<int>((static_cast<std::uint64_t>(me) + i) % p)) <= 0)
          break;
      }
      const int rc = later.advance(i == n);
      ASSERT_GE(rc, 0);
      more = rc != convoy::termination::done;
      EXPECT_LE(later.memory_bytes(), later.max_memory_bytes());
      convoy::termination::item_view v;
      while (later.pull(v) > 0) {
        std::uint64_t item[2];
        std::memcpy(item, v.data, sizeof item);
        got += item[1];
      }
    }
    EXPECT_EQ(got, n) << "every rank sends n ones spread over all ranks' keys";
    ASSERT_EQ(later.reset(), 1);
    ASSERT_EQ(later.set_combine({}), 1);
    EXPECT_EQ(later.max_memory_bytes(), plain) << "dynamic " << dynamic;
  }
}

// TERM-27, API-1: the hold-back caches' size is rank 0's, as the buffers' are: ranks asked
// for other sizes get the caches of the conveyor whose every rank asked for rank 0's (on
// emulated nodes, where the links that leave a node have caches; max_memory_bytes counts
// them from the first combining begin, and memory_bytes stays within it).
TEST(CombiningConveyor, CacheEntriesAreRankZeros) {
  using summing = combining_conveyor<std::uint64_t, std::uint64_t>;
  const int me = world_rank();
  std::size_t bytes[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    conveyor_options o;
    o.combine_cache_entries = k == 0 || me == 0 ? 1024 : std::size_t{1024} << me;
    convoy::untyped_conveyor c(MPI_COMM_WORLD, o);
    ASSERT_EQ(c.set_combine(summing::spec()), 1);
    ASSERT_EQ(c.begin(summing::item_bytes), 1);
    bytes[k] = c.max_memory_bytes();
    EXPECT_LE(c.memory_bytes(), bytes[k]);
    for (int rc = c.advance(true); rc != convoy::termination::done; rc = c.advance(true))
      ASSERT_GT(rc, 0);
    ASSERT_EQ(c.reset(), 1);
  }
  EXPECT_EQ(bytes[1], bytes[0]) << "rank " << me;
}

// TERM-27: without a size set, every link that leaves the node has a cache, as many
// entries (a power of two, at most 16 Ki) as fit an equal share of 4 MiB per rank; 0 turns
// them off. The links are counted from a conveyor of 1 024 entries a link (on emulated
// nodes some ranks have some; on one node none, and the default costs nothing).
TEST(CombiningConveyor, CachesByDefaultOnTheLinksThatLeaveTheNode) {
  using summing = combining_conveyor<std::uint64_t, std::uint64_t>;
  const auto max_bytes = [](std::optional<std::size_t> entries) {
    conveyor_options o;
    o.combine_cache_entries = entries;
    convoy::untyped_conveyor c(MPI_COMM_WORLD, o);
    EXPECT_EQ(c.set_combine(summing::spec()), 1);
    EXPECT_EQ(c.begin(summing::item_bytes), 1);
    const std::size_t bytes = c.max_memory_bytes();
    for (int rc = c.advance(true); rc != convoy::termination::done; rc = c.advance(true))
      EXPECT_GT(rc, 0);
    EXPECT_EQ(c.reset(), 1);
    return bytes;
  };
  const std::size_t none = max_bytes(0);
  const std::size_t per_link = 1024 * 32 + 64;  // 16-byte items: 32 bytes an entry, a line
  const std::size_t with_1024 = max_bytes(1024) - none;
  ASSERT_EQ(with_1024 % per_link, 0u) << with_1024;
  const std::size_t links = with_1024 / per_link;
  unsigned long long all_links = links;
  MPI_Allreduce(MPI_IN_PLACE, &all_links, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (std::getenv("CONVOY_EMULATE_NODES") != nullptr) {  // a ragged node's rank may have none
    EXPECT_GT(all_links, 0u) << "no rank has a link that leaves its node";
  }
  std::size_t entries = 16384;  // the largest power of two whose caches fit 4 MiB
  while (links > 0 && links * (entries * 32 + 64) > (std::size_t{4} << 20)) entries /= 2;
  EXPECT_EQ(max_bytes({}) - none, links * (entries * 32 + 64)) << links << " links";
}

// API-90: the bulk kind does not combine.
TEST(CombiningConveyor, BulkKindIsRefused) {
  conveyor_options o;
  o.kind = convoy::conveyor_kind::bulk;
  EXPECT_THROW((combining_conveyor<std::uint64_t, std::uint64_t>(MPI_COMM_WORLD, o)),
               convoy::error);
}

}  // namespace
