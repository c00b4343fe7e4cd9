// Combinable updates of convoy::async (API-82): Zipf-skewed updates through the combining
// engines, over several phases, against a serial oracle of every rank's draws; a get in a
// later phase sees them all; misuse is a clear error; CONVOY_STATS reports the combining
// conveyors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <convoy/async/dist_array.hpp>
#include <convoy/async/runtime.hpp>
#include <convoy_test/mix.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../../bench/zipf.hpp"

namespace {

using convoy::async::combinable;
using convoy::async::dist_array;
using convoy::async::runtime;
using convoy::async::runtime_options;
using convoy::async::task;
using convoy_test::mix;
using convoy_test::world_rank;
using convoy_test::world_size;

// Draw k of rank r in phase f: a Zipf(s) key rank over [1, n] spread over the owners, and
// a value; regenerable by every rank for the oracle.
struct draws {
  convoy::bench::zipf_sampler zipf;
  convoy::bench::key_spread spread;
  std::uint64_t key(int r, int f, std::uint64_t k) const {
    std::uint64_t c =
        mix((static_cast<std::uint64_t>(r) << 40) ^ (static_cast<std::uint64_t>(f) << 32) ^ k);
    return spread(zipf([&c] {
      c = mix(c);
      return static_cast<double>(c >> 11) * 0x1.0p-53;
    }));
  }
  static std::uint64_t value(int r, int f, std::uint64_t k) {
    return 1 + mix(k ^ (static_cast<std::uint64_t>(r) << 20) ^ static_cast<std::uint64_t>(f)) % 7;
  }
};

struct extremes {
  std::uint32_t lo, hi;
};

std::uint64_t sum_over_ranks(std::uint64_t x) {
  std::uint64_t s = 0;
  MPI_Allreduce(&x, &s, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return s;
}

// API-82: a sum and a min/max (two engines, 16- and 16-byte items of different ops) under
// Zipf skews 0.8 and 1.5, three phases, with small buffers (backpressure) and default ones:
// every element equals the serial fold of every rank's updates.
void check_skewed(const runtime_options& o, double s) {
  runtime rt(MPI_COMM_WORLD, o);
  const int me = world_rank(), p = world_size();
  const std::uint64_t n = 211 * static_cast<std::uint64_t>(p);
  dist_array<std::uint64_t> sums(rt, n);
  dist_array<extremes> ext(rt, n);
  for (auto& e : ext.local()) e = {~0u, 0};
  auto add = sums.define_update([](std::uint64_t& x, std::uint64_t v) { x += v; }, combinable);
  auto widen = ext.define_update(
      [](extremes& x, extremes v) {
        x.lo = std::min(x.lo, v.lo);
        x.hi = std::max(x.hi, v.hi);
      },
      combinable);
  const draws d{convoy::bench::zipf_sampler(n, s), convoy::bench::key_spread(n, 17)};
  const std::uint64_t per_task = 50, tasks = 60;
  const int phases = 3;
  for (int f = 0; f < phases; ++f)
    rt.run_each(tasks, [&](std::size_t t) -> task<> {
      for (std::uint64_t j = 0; j < per_task; ++j) {
        const std::uint64_t k = t * per_task + j;
        const std::uint64_t i = d.key(me, f, k);
        const std::uint64_t v = draws::value(me, f, k);
        sums.update(i, add, v);
        const auto w = static_cast<std::uint32_t>(mix(k + 7 * v));
        ext.update(i, widen, extremes{w, w});
      }
      co_return;
    });
  std::vector<std::uint64_t> want(n, 0);
  std::vector<extremes> want_ext(n, extremes{~0u, 0});
  for (int r = 0; r < p; ++r)
    for (int f = 0; f < phases; ++f)
      for (std::uint64_t k = 0; k < per_task * tasks; ++k) {
        const std::uint64_t i = d.key(r, f, k);
        const std::uint64_t v = draws::value(r, f, k);
        want[i] += v;
        const auto w = static_cast<std::uint32_t>(mix(k + 7 * v));
        want_ext[i].lo = std::min(want_ext[i].lo, w);
        want_ext[i].hi = std::max(want_ext[i].hi, w);
      }
  for (std::size_t l = 0; l < sums.local().size(); ++l) {
    ASSERT_EQ(sums.local()[l], want[sums.first() + l]) << "element " << sums.first() + l;
    ASSERT_EQ(ext.local()[l].lo, want_ext[ext.first() + l].lo) << "element " << ext.first() + l;
    ASSERT_EQ(ext.local()[l].hi, want_ext[ext.first() + l].hi) << "element " << ext.first() + l;
  }
  const auto st = rt.stats();
  EXPECT_EQ(st.combinable, std::uint64_t{2} * phases * per_task * tasks);
  EXPECT_EQ(st.posts, 0u);  // combinable updates are not requests
  if (s >= 1.5 && o.conveyor.buffer_bytes == 0) {
    EXPECT_GT(sum_over_ranks(st.combined), 0u) << "hot keys at skew " << s << " never combined";
  }
}

TEST(AsyncCombine, SkewedUpdatesEqualTheSerialFold) {
  for (const double s : {0.8, 1.5}) {
    check_skewed(runtime_options{}, s);
    runtime_options small;
    small.max_tasks = 8;
    small.conveyor.buffer_bytes = 256;  // a dozen records per buffer: paths fill up
    small.conveyor.n_buffers = 1;
    check_skewed(small, s);
  }
}

// API-82 with API-76: a combinable update is applied before its phase ends, so a get in
// the next phase sees every one; ordinary updates and calls share the phase.
TEST(AsyncCombine, AppliedBeforeThePhaseEnds) {
  runtime rt(MPI_COMM_WORLD);
  const int me = world_rank(), p = world_size();
  const std::uint64_t n = 37 * static_cast<std::uint64_t>(p);
  dist_array<std::int64_t> a(rt, n);
  dist_array<std::int64_t> b(rt, n);
  auto add = a.define_update([](std::int64_t& x, std::int64_t v) { x += v; }, combinable);
  auto plain = b.define_update([](std::int64_t& x, std::int64_t v) { x += v; });
  const std::uint64_t m = 3000;
  std::uint64_t read_sum = 0;
  rt.run_each(m, [&](std::size_t k) -> task<> {
    const std::uint64_t i = mix(k + 100000 * static_cast<std::uint64_t>(me)) % n;
    a.update(i % 5, add, 1);  // five hot elements
    b.update(i, plain, 2);
    read_sum += static_cast<std::uint64_t>(co_await b.get(i)) & 1;  // even: always 0
  });
  EXPECT_EQ(read_sum, 0u);
  std::int64_t seen = 0;
  rt.run_each(5, [&](std::size_t k) -> task<> { seen += co_await a.get(k); });
  EXPECT_EQ(seen, static_cast<std::int64_t>(m) * p);
  std::int64_t total_b = 0;
  for (const auto x : b.local()) total_b += x;
  std::int64_t all_b = 0;
  MPI_Allreduce(&total_b, &all_b, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(all_b, 2 * static_cast<std::int64_t>(m) * p);
}

// CONVOY_STATS (docs/stats-format.md): the runtime's request and reply conveyors and one
// combining conveyor per combinable update, api "async", in creation order; each combining
// conveyor pushed every update of its kind once (pushes over ranks) and delivered at most
// as many records (pulls: combined records arrive once): the pushes less the records folded.
TEST(AsyncCombine, StatsDocumentHoldsTheCombiningConveyors) {
  const std::uint64_t id = world_rank() == 0 ? static_cast<std::uint64_t>(::getpid()) : 0;
  std::uint64_t job = id;
  MPI_Allreduce(&id, &job, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("convoy-async-stats-" + std::to_string(job) + ".json"))
                               .string();
  const std::uint64_t m = 2000;
  const auto all = m * static_cast<std::uint64_t>(world_size());
  {
    auto s =
        std::make_shared<convoy::base::settings>(convoy::base::settings::from_env(MPI_COMM_WORLD));
    s->stats_path = path;
    runtime_options o;
    o.conveyor.settings = s;
    runtime rt(MPI_COMM_WORLD, o);
    dist_array<std::uint64_t> a(rt, 64);
    auto add = a.define_update([](std::uint64_t& x, std::uint64_t v) { x += v; }, combinable);
    auto lowest =
        a.define_update([](std::uint64_t& x, std::uint64_t v) { x = std::min(x, v); }, combinable);
    rt.run_each(m, [&](std::size_t k) -> task<> {
      a.update(k % 7, add, 1);  // seven hot elements
      a.update(k % 64, lowest, k);
      co_return;
    });
  }
  if (world_rank() != 0) return;
  std::ifstream in(path);
  ASSERT_TRUE(in) << "no document at " << path;
  const auto doc = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  const auto& cs = doc.at("conveyors");
  std::vector<std::string> names;
  for (const auto& c : cs)
    names.push_back(c.at("api").get<std::string>() + "/" + c.at("kind").get<std::string>());
  const std::vector<std::string> want{"async/requests", "async/replies", "async/combine",
                                      "async/combine"};
  ASSERT_EQ(names, want);
  for (std::size_t i = 2; i < 4; ++i) {
    const auto& r = cs[i].at("reduced");
    EXPECT_EQ(r.at("pushes").at("sum").get<std::uint64_t>(), all) << i;
    EXPECT_LE(r.at("pulls").at("sum").get<std::uint64_t>(), all) << i;
    EXPECT_GT(r.at("pulls").at("sum").get<std::uint64_t>(), 0u) << i;
    EXPECT_EQ(cs[i].at("item_bytes").get<std::size_t>(), 16u) << i;
    // Folded records are pushes not pulled; a rank's links fold at most what the rank does.
    EXPECT_EQ(r.at("pushes").at("sum").get<std::uint64_t>() -
                  r.at("combined").at("sum").get<std::uint64_t>(),
              r.at("pulls").at("sum").get<std::uint64_t>())
        << i;
    for (const auto& row : cs[i].at("per_rank")) {
      std::uint64_t links = 0;
      for (const auto& st : row.at("stages"))
        for (const auto& l : st.at("links")) links += l.at("combined").get<std::uint64_t>();
      EXPECT_LE(links, row.at("combined").get<std::uint64_t>()) << i;
    }
  }
}

std::string phase_error(runtime& rt, const std::function<task<>()>& root) {
  try {
    rt.run([&] { return root(); });
  } catch (const convoy::error& e) {
    return e.what();
  }
  return {};
}

// API-78 for combinable updates: outside a phase, another array's handle, a definition
// during a phase, an update from a remote function, ranks that define different ones.
TEST(AsyncCombine, MisuseIsAClearError) {
  runtime rt(MPI_COMM_WORLD);
  dist_array<std::uint64_t> a(rt, 64);
  dist_array<std::uint64_t> other(rt, 64);
  auto add = a.define_update([](std::uint64_t& x, std::uint64_t v) { x += v; }, combinable);
  EXPECT_THROW(a.update(1, add, 1), convoy::error);
  EXPECT_THROW(a.update(64, add, 1), convoy::error);
  std::string what = phase_error(rt, [&]() -> task<> {
    other.update(1, add, 1);
    co_return;
  });
  EXPECT_NE(what.find("another array"), std::string::npos) << what;
  what = phase_error(rt, [&]() -> task<> {
    (void)a.define_update([](std::uint64_t& x, std::uint64_t v) { x ^= v; }, combinable);
    co_return;
  });
  EXPECT_NE(what.find("not legal during a phase"), std::string::npos) << what;
  auto f = rt.define([&](std::uint64_t i) { a.update(i, add, 1); });
  what = phase_error(rt, [&]() -> task<> { co_await rt.call(0, f, std::uint64_t{3}); });
  EXPECT_NE(what.find("cannot issue a combinable update"), std::string::npos) << what;
  // Still usable: the failed phases applied nothing, the next one works.
  rt.run([&]() -> task<> {
    a.update(5, add, 2);
    co_return;
  });
  if (a.owner(5) == world_rank()) {
    EXPECT_EQ(a.local()[5 - a.first()], 2u * static_cast<unsigned>(world_size()));
  }
}

TEST(AsyncCombine, MismatchedDefinitionsAreAnErrorEverywhere) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  runtime rt(MPI_COMM_WORLD);
  dist_array<std::uint64_t> a(rt, 64);
  if (world_rank() == 0)
    (void)a.define_update([](std::uint64_t& x, std::uint64_t v) { x += v; }, combinable);
  const std::string what = phase_error(rt, []() -> task<> { co_return; });
  EXPECT_NE(what.find("combinable updates"), std::string::npos) << what;
}

}  // namespace
