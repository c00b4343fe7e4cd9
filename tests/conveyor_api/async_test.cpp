// convoy::async (coroutine tasks over conveyors): every result checked against a serial
// computation of the same draws; the invariants API-70..79 of conveyor_api/README.md.
#include <gtest/gtest.h>

#include <convoy/async/dist_array.hpp>
#include <convoy/async/runtime.hpp>
#include <convoy_test/mix.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace {

using convoy::async::dist_array;
using convoy::async::runtime;
using convoy::async::runtime_options;
using convoy::async::task;
using convoy_test::mix;
using convoy_test::world_rank;
using convoy_test::world_size;

runtime_options small_buffers(std::size_t max_tasks) {
  runtime_options o;
  o.max_tasks = max_tasks;
  o.conveyor.buffer_bytes = 256;  // a few records per buffer: backpressure all the time
  o.conveyor.n_buffers = 1;
  return o;
}

// API-70 (every call answered by its owner, result to the caller) and API-71 (max_tasks).
TEST(Async, CallRunsOnOwnerAndReturnsItsResult) {
  for (std::size_t cap : {1u, 7u, 1024u}) {
    runtime rt(MPI_COMM_WORLD, small_buffers(cap));
    const int me = world_rank(), p = world_size();
    auto owner_says = rt.define([me](std::uint64_t x) { return x * 1000 + me; });
    const std::size_t n = 3000;
    std::vector<std::uint64_t> got(n, 0);
    rt.run_each(n, [&](std::size_t k) -> task<> {
      const int r = static_cast<int>(mix(k + 77 * static_cast<std::uint64_t>(me)) % p);
      got[k] = co_await rt.call(r, owner_says, std::uint64_t{k});
    });
    for (std::size_t k = 0; k < n; ++k) {
      const auto r = mix(k + 77 * static_cast<std::uint64_t>(me)) % p;
      ASSERT_EQ(got[k], k * 1000 + r) << "task " << k << " cap " << cap;
    }
    EXPECT_LE(rt.stats().peak_tasks, cap);
    EXPECT_TRUE(convoy_test::all_ranks(true));
  }
}

// API-70 for both kinds of handle: the one define() returns (a call to this rank runs the
// function inline in the task) and the type-erased remote_fn it converts to (through the
// function's entry); a noexcept function is defined like any other.
TEST(Async, TypedAndErasedHandlesCallAlike) {
  runtime rt(MPI_COMM_WORLD, small_buffers(16));
  const int me = world_rank(), p = world_size();
  std::uint64_t ran = 0;
  auto typed = rt.define([&ran, me](std::uint64_t x) noexcept {
    ++ran;
    return x * 10 + static_cast<std::uint64_t>(me);
  });
  const convoy::async::remote_fn<std::uint64_t, std::uint64_t> erased = typed;
  const std::size_t n = 1000;
  std::vector<std::uint64_t> a(n, 0), b(n, 0);
  const auto owner = [&](std::size_t k) {
    return static_cast<int>(mix(k + static_cast<std::uint64_t>(me)) %
                            static_cast<std::uint64_t>(p));
  };
  rt.run_each(n, [&](std::size_t k) -> task<> {
    a[k] = co_await rt.call(owner(k), typed, std::uint64_t{k});
    b[k] = co_await rt.call(owner(k), erased, std::uint64_t{k});
  });
  std::uint64_t here = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint64_t want = k * 10 + static_cast<std::uint64_t>(owner(k));
    ASSERT_EQ(a[k], want) << "typed, task " << k;
    ASSERT_EQ(b[k], want) << "erased, task " << k;
    here += owner(k) == me ? 2 : 0;
  }
  EXPECT_EQ(rt.stats().local, here);  // both kinds ran the calls to this rank here
  std::uint64_t all = 0;
  MPI_Allreduce(&ran, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(all, 2 * n * static_cast<std::uint64_t>(p));  // each call ran once, somewhere
}

// API-70 and API-73 for records assembled in a register (at most 8 bytes: a u32 token, a
// handler id of 0, 1 or 2 bytes as 1, 3 or 301 functions are defined, and small
// arguments): every call's argument and function reach the owner intact, every post once.
TEST(Async, SmallRecordsOfEveryIdWidthArriveIntact) {
  const int me = world_rank(), p = world_size();
  const auto P = static_cast<std::uint64_t>(p);
  for (const std::size_t n_fns : {std::size_t{1}, std::size_t{2}, std::size_t{300}}) {
    const bool posts = n_fns > 1;  // one function alone: records without an id
    runtime rt(MPI_COMM_WORLD, small_buffers(64));
    std::vector<convoy::async::remote_fn<std::uint32_t, std::uint16_t>> fns;
    for (std::size_t j = 0; j < n_fns; ++j)
      fns.push_back(rt.define([j, me](std::uint16_t x) {
        return static_cast<std::uint32_t>(x) * 100000u + static_cast<std::uint32_t>(j) * 10u +
               static_cast<std::uint32_t>(me);
      }));
    std::uint64_t posted = 0;
    convoy::async::remote_fn<void, std::uint8_t> add;  // 1 byte of arguments
    if (posts) add = rt.define([&posted](std::uint8_t x) { posted += x; });
    const std::size_t n = 2000;
    std::vector<std::uint32_t> got(n, 0);
    rt.run_each(n, [&](std::size_t k) -> task<> {
      const auto x = static_cast<std::uint16_t>(mix(k) & 0xFFFF);
      const int r = static_cast<int>(mix(k + 5 * static_cast<std::uint64_t>(me)) % P);
      if (posts) rt.post(r, add, static_cast<std::uint8_t>(k & 0xFF));
      got[k] = co_await rt.call(r, fns[k % n_fns], x);
    });
    std::uint64_t want_posted = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint32_t x = mix(k) & 0xFFFF;
      const auto r = static_cast<std::uint32_t>(mix(k + 5 * static_cast<std::uint64_t>(me)) % P);
      ASSERT_EQ(got[k], x * 100000u + static_cast<std::uint32_t>(k % n_fns) * 10u + r)
          << n_fns << " functions, task " << k;
      want_posted += k & 0xFF;
    }
    std::uint64_t all = 0;
    MPI_Allreduce(&posted, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(all, posts ? want_posted * P : 0) << n_fns << " functions";
  }
}

// API-70 with functions of different sizes in one phase: only calls whose arguments fill
// the phase's request record take the inline push (the others take the slow path), and
// replies of 0, 4, 8 and 16 bytes each land in their own caller (token = reply slot).
TEST(Async, CallsOfDifferentSizesReachTheirCallers) {
  struct pair16 {
    std::uint64_t a, b;
  };
  for (std::size_t cap : {3u, 4096u}) {
    for (bool small : {true, false}) {
      runtime_options o = small ? small_buffers(cap) : runtime_options{};
      o.max_tasks = cap;
      runtime rt(MPI_COMM_WORLD, o);
      const int me = world_rank(), p = world_size();
      std::uint64_t touched = 0;
      auto f4 = rt.define([me](std::uint8_t x) { return static_cast<std::uint32_t>(x + me); });
      auto f8 = rt.define([me](std::uint32_t x) { return std::uint64_t{x} * 3 + me; });
      auto f16 = rt.define([me](std::uint64_t x, std::uint64_t y) {
        return pair16{x + y, y + me};
      });
      auto f0 = rt.define([&touched](std::uint64_t x) { touched += x; });
      const std::size_t n = 2000;
      std::vector<std::uint64_t> got(n, 0);
      rt.run_each(n, [&](std::size_t k) -> task<> {
        const int r = static_cast<int>(mix(k + 31 * static_cast<std::uint64_t>(me)) % p);
        const std::uint32_t a = co_await rt.call(r, f4, static_cast<std::uint8_t>(k));
        const std::uint64_t b = co_await rt.call(r, f8, static_cast<std::uint32_t>(k));
        const pair16 c = co_await rt.call(r, f16, std::uint64_t{k}, std::uint64_t{7});
        co_await rt.call(r, f0, std::uint64_t{1});
        got[k] = a + b + c.a + c.b;
      });
      for (std::size_t k = 0; k < n; ++k) {
        const auto r = mix(k + 31 * static_cast<std::uint64_t>(me)) % p;
        const std::uint64_t want = ((k & 0xFF) + r) + (k * 3 + r) + (k + 7) + (7 + r);
        ASSERT_EQ(got[k], want) << "task " << k << " cap " << cap << " small " << small;
      }
      std::uint64_t all = 0;
      MPI_Allreduce(&touched, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_EQ(all, n * static_cast<std::uint64_t>(p));  // every void call ran once
      EXPECT_EQ(rt.stats().calls + rt.stats().local, 4 * n);
    }
  }
}

// API-72: get reads the owner's element (index-gather against the serial table).
TEST(Async, GetMatchesSerialTable) {
  runtime rt(MPI_COMM_WORLD, small_buffers(64));
  const std::uint64_t n_global = 1000 * static_cast<std::uint64_t>(world_size()) + 13;
  dist_array<std::uint64_t> table(rt, n_global);
  for (std::size_t l = 0; l < table.local().size(); ++l) table.local()[l] = mix(table.first() + l);
  const std::size_t n = 5000;
  std::vector<std::uint64_t> out(n, 0);
  const int me = world_rank();
  rt.run_each(n, [&](std::size_t k) -> task<> {
    out[k] = co_await table.get(mix(k * 31 + me) % n_global);
  });
  for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(out[k], mix(mix(k * 31 + me) % n_global)) << k;
}

// API-73: fire-and-forget updates, each applied exactly once (histogram vs serial counts).
TEST(Async, UpdatesAppliedExactlyOnce) {
  runtime rt(MPI_COMM_WORLD, small_buffers(16));
  const std::uint64_t n_global = 97 * static_cast<std::uint64_t>(world_size());
  dist_array<std::int64_t> counts(rt, n_global);
  auto add = counts.define_update([](std::int64_t& x, std::int64_t by) { x += by; });
  const std::size_t n = 4000;
  const int me = world_rank(), p = world_size();
  for (int phase = 0; phase < 2; ++phase)  // phases repeat (API-76)
    rt.run([&]() -> task<> {
      for (std::size_t k = 0; k < n; ++k)
        counts.update(mix(k + 1000 * static_cast<std::uint64_t>(me)) % n_global, add, 1 + k % 3);
      co_return;
    });
  // Serial oracle over every rank's draws.
  std::vector<std::int64_t> want(n_global, 0);
  for (int r = 0; r < p; ++r)
    for (std::size_t k = 0; k < n; ++k)
      want[mix(k + 1000 * static_cast<std::uint64_t>(r)) % n_global] +=
          2 * static_cast<std::int64_t>(1 + k % 3);
  for (std::size_t l = 0; l < counts.local().size(); ++l)
    ASSERT_EQ(counts.local()[l], want[counts.first() + l]) << "element " << counts.first() + l;
}

// API-74: a rank's update to an owner is applied before its later read of that owner.
TEST(Async, WriteThenReadSeesTheWrite) {
  runtime rt(MPI_COMM_WORLD, small_buffers(256));
  const int me = world_rank(), p = world_size();
  const std::uint64_t per = 500;
  dist_array<std::uint64_t> a(rt,
                              per * static_cast<std::uint64_t>(p) * static_cast<std::uint64_t>(p));
  auto set = a.define_update([](std::uint64_t& x, std::uint64_t v) { x = v; });
  std::uint64_t wrong = 0;
  rt.run_each(per, [&](std::size_t k) -> task<> {
    // Element private to (this rank, k), owned by some other rank in general.
    const std::uint64_t i = (k * static_cast<std::uint64_t>(p) + static_cast<std::uint64_t>(me)) *
                            static_cast<std::uint64_t>(p) % a.size();
    const std::uint64_t v = mix(i) | 1;
    a.update(i, set, v);
    if (co_await a.get(i) != v) ++wrong;
  });
  EXPECT_EQ(wrong, 0u);
}

// API-74 for this rank as owner: posts to this rank travel the request conveyor's loopback
// lane (no branch on the destination in runtime::post), so a later call to this rank must
// not run at once while they wait there. Set-then-add is order-sensitive (set after add
// gives 1, not 11), and the read right after sees both, on this rank's elements and on
// other ranks' alike; with tiny buffers the posts also take the slow path.
TEST(Async, PostsToThisRankApplyInOrderBeforeItsNextCall) {
  for (std::size_t cap : {1u, 64u, 1024u}) {
    runtime rt(MPI_COMM_WORLD, small_buffers(cap));
    const int me = world_rank(), p = world_size();
    const std::uint64_t per = 2000;
    const auto up = static_cast<std::uint64_t>(p), ume = static_cast<std::uint64_t>(me);
    dist_array<std::uint64_t> a(rt, per * up * up);  // a slot per (rank, task) on every owner
    auto set = a.define_update([](std::uint64_t& x, std::uint64_t v) { x = v; });
    auto add = a.define_update([](std::uint64_t& x, std::uint64_t v) { x += v; });
    std::uint64_t wrong = 0;
    rt.run_each(per, [&](std::size_t k) -> task<> {
      // This task's own slot: on this rank for every other task, the rest spread.
      const std::uint64_t owner = k % 2 == 0 ? ume : mix(k) % up;
      const std::uint64_t i = a.begin_of(owner) + ume * per + k;
      a.update(i, set, 1);
      a.update(i, add, 10);
      if (co_await a.get(i) != 11) ++wrong;
    });
    EXPECT_EQ(wrong, 0u) << "max_tasks " << cap;
    EXPECT_EQ(rt.stats().posts, 2 * per);
    EXPECT_TRUE(convoy_test::all_ranks(wrong == 0));
  }
}

task<std::uint64_t> sum_of_reads(dist_array<std::uint64_t>& t, std::uint64_t base, int k) {
  std::uint64_t s = 0;
  for (int j = 0; j < k; ++j)
    s += co_await t.get((base + static_cast<std::uint64_t>(j) * 7) % t.size());
  co_return s;
}

// API-78: a remote function may not call or post, whether its call came from another rank
// (run on the owner's serve loop) or from its own rank (run at once in the caller's task):
// the phase ends on every rank with that message, and the post is not made.
TEST(Async, RemoteFunctionCannotPostWhereverItRuns) {
  runtime rt(MPI_COMM_WORLD);
  const int me = world_rank(), p = world_size();
  std::uint64_t applied = 0;
  auto count = rt.define([&applied](std::uint64_t) { ++applied; });
  auto poster = rt.define([&](std::uint64_t x) -> std::uint64_t {
    rt.post(0, count, x);
    return x;
  });
  for (const int step : {0, 1}) {  // this rank, then the next one
    if (step == 1 && p == 1) break;
    std::string what;
    try {
      rt.run(
          [&]() -> task<> { (void)co_await rt.call((me + step) % p, poster, std::uint64_t{7}); });
    } catch (const convoy::error& e) {
      what = e.what();
    }
    EXPECT_NE(what.find("a remote function cannot post"), std::string::npos)
        << "step " << step << ": " << what;
  }
  EXPECT_EQ(applied, 0u);
}

// API-75: nested tasks and when_all return their values in order.
TEST(Async, NestedTasksAndWhenAll) {
  runtime rt(MPI_COMM_WORLD, small_buffers(32));
  dist_array<std::uint64_t> t(rt, 64 * static_cast<std::uint64_t>(world_size()));
  for (std::size_t l = 0; l < t.local().size(); ++l) t.local()[l] = t.first() + l;
  std::vector<std::uint64_t> sums(100, 0), direct(100, 0);
  rt.run_each(100, [&](std::size_t k) -> task<> {
    std::vector<task<std::uint64_t>> kids;
    kids.reserve(5);
    for (int c = 0; c < 5; ++c)
      kids.push_back(sum_of_reads(t, k * 5 + static_cast<std::size_t>(c), 3));
    auto parts = co_await convoy::async::when_all(std::move(kids));
    for (auto v : parts) sums[k] += v;
    direct[k] = co_await sum_of_reads(t, k, 4);
  });
  for (std::uint64_t k = 0; k < 100; ++k) {
    std::uint64_t want = 0, want_direct = 0;
    for (std::uint64_t c = 0; c < 5; ++c)
      for (std::uint64_t j = 0; j < 3; ++j) want += (k * 5 + c + j * 7) % t.size();
    for (std::uint64_t j = 0; j < 4; ++j) want_direct += (k + j * 7) % t.size();
    ASSERT_EQ(sums[k], want) << k;
    ASSERT_EQ(direct[k], want_direct) << k;
  }
}

// API-77: a task that throws ends the phase on every rank with its message.
TEST(Async, TaskExceptionEndsPhaseEverywhere) {
  runtime rt(MPI_COMM_WORLD, small_buffers(8));
  const int p = world_size();
  auto echo = rt.define([](std::uint64_t x) { return x; });
  std::string what;
  try {
    rt.run_each(200, [&](std::size_t k) -> task<> {
      (void)co_await rt.call(static_cast<int>(k % static_cast<std::size_t>(p)), echo,
                             std::uint64_t{k});
      if (world_rank() == p - 1 && k == 57) throw std::runtime_error("boom in task 57");
    });
  } catch (const convoy::error& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("boom in task 57"), std::string::npos) << what;
  // The runtime is usable again after a failed phase.
  std::vector<std::uint64_t> got(10, 0);
  rt.run_each(
      10, [&](std::size_t k) -> task<> { got[k] = co_await rt.call(0, echo, std::uint64_t{k}); });
  for (std::uint64_t k = 0; k < 10; ++k) EXPECT_EQ(got[k], k);
}

// API-77: a handler that throws fails the caller's await (remote_error) and the phase.
TEST(Async, HandlerExceptionReachesCallerAndPhase) {
  runtime rt(MPI_COMM_WORLD, small_buffers(8));
  const int p = world_size();
  auto picky = rt.define([](std::uint64_t x) -> std::uint64_t {
    if (x == 13) throw std::runtime_error("thirteen is unlucky");
    return x + 1;
  });
  int caught = 0;
  std::string what;
  try {
    rt.run_each(20, [&](std::size_t k) -> task<> {
      try {
        const auto v = co_await rt.call(static_cast<int>((k + 1) % static_cast<std::size_t>(p)),
                                        picky, std::uint64_t{k});
        if (v != k + 1) throw std::runtime_error("wrong result");
      } catch (const convoy::async::remote_error&) {
        ++caught;
      }
    });
  } catch (const convoy::error& e) {
    what = e.what();
  }
  // Task 13 calls rank 14 % p; a local call rethrows the handler's own exception instead.
  EXPECT_EQ(caught, 14 % p == world_rank() ? 0 : 1);
  EXPECT_NE(what.find("thirteen is unlucky"), std::string::npos) << what;
}

// API-73 and API-77 for posts: every post (to this rank, queued and applied in batches, or
// to another) is applied once; a posted function that throws ends the phase everywhere and
// the other posts of its batch are still applied.
TEST(Async, PostedFunctionThatThrowsEndsThePhase) {
  runtime rt(MPI_COMM_WORLD, small_buffers(8));
  const int me = world_rank(), p = world_size();
  std::uint64_t sum = 0, count = 0;
  auto add = rt.define([&](std::uint64_t x) {
    if (x == 1001) throw std::runtime_error("post 1001 refused");
    sum += x;
    ++count;
  });
  const std::uint64_t n = 3000;  // several batches of posts to this rank
  std::string what;
  try {
    rt.run([&]() -> task<> {
      for (std::uint64_t k = 0; k < n; ++k)
        rt.post(
            static_cast<int>((k + static_cast<std::uint64_t>(me)) % static_cast<std::uint64_t>(p)),
            add, me == 0 ? k : k + 5000);
      co_return;
    });
  } catch (const convoy::error& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("post 1001 refused"), std::string::npos) << what;
  std::uint64_t all[2] = {sum, count}, total[2] = {0, 0};
  MPI_Allreduce(all, total, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  const auto P = static_cast<std::uint64_t>(p);
  const std::uint64_t want_sum = n * (n - 1) / 2 - 1001 + (P - 1) * (n * (n - 1) / 2 + 5000 * n);
  EXPECT_EQ(total[1], n * P - 1);
  EXPECT_EQ(total[0], want_sum);
}

// API-78: ranks that define different functions get one clear error, on every rank.
TEST(Async, MismatchedDefinitionsAreAnErrorEverywhere) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  runtime rt(MPI_COMM_WORLD);
  (void)rt.define([](std::uint64_t x) { return x; });
  if (world_rank() == 0) (void)rt.define([](int x) { return x; });
  try {
    rt.run([]() -> task<> { co_return; });
    ADD_FAILURE() << "phase ran with different definitions";
  } catch (const convoy::error& e) {
    EXPECT_NE(std::string(e.what()).find("define different remote functions"), std::string::npos)
        << e.what();
  }
}

// API-78: misuse outside a phase or with a bad rank is a clear error.
TEST(Async, MisuseIsAClearError) {
  runtime rt(MPI_COMM_WORLD);
  auto f = rt.define([](std::uint64_t x) { return x; });
  EXPECT_THROW(rt.post(0, f, std::uint64_t{1}), convoy::error);
  EXPECT_THROW(rt.spawn([]() -> task<> { co_return; }()), convoy::error);
  EXPECT_THROW(runtime(MPI_COMM_WORLD,
                       [] {
                         runtime_options o;
                         o.max_tasks = 0;
                         return o;
                       }()),
               convoy::error);
  std::string what;
  try {
    rt.run([&]() -> task<> { (void)co_await rt.call(world_size() + 3, f, std::uint64_t{1}); });
  } catch (const convoy::error& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("call to rank"), std::string::npos) << what;
}

// API-78: a remote function is valid only with the runtime that defined it; a handle that
// was never defined, or another runtime's, is a clear error in a task (ending the phase
// with its message) and outside one, for calls and posts alike.
TEST(Async, ForeignOrUndefinedRemoteFunctionIsAClearError) {
  runtime rt(MPI_COMM_WORLD), other(MPI_COMM_WORLD);
  auto mine = rt.define([](std::uint64_t x) { return x + 1; });
  auto theirs = other.define([](std::uint64_t x) { return x + 2; });
  const convoy::async::remote_fn<std::uint64_t, std::uint64_t> never;
  const auto phase_error = [&](auto body) {
    std::string what;
    try {
      rt.run(body);
    } catch (const convoy::error& e) {
      what = e.what();
    }
    return what;
  };
  std::string what = phase_error([&]() -> task<> { (void)co_await rt.call(0, never, 1ul); });
  EXPECT_NE(what.find("call of a remote function that was never defined"), std::string::npos)
      << what;
  what = phase_error([&]() -> task<> { (void)co_await rt.call(0, theirs, 1ul); });
  EXPECT_NE(what.find("call of a remote function defined on another runtime"), std::string::npos)
      << what;
  what = phase_error([&]() -> task<> {
    rt.post(0, theirs, 1ul);
    co_return;
  });
  EXPECT_NE(what.find("post of a remote function defined on another runtime"), std::string::npos)
      << what;
  try {
    rt.post(0, never, 1ul);
    ADD_FAILURE() << "post of an undefined function accepted";
  } catch (const convoy::error& e) {
    EXPECT_NE(std::string(e.what()).find("never defined"), std::string::npos) << e.what();
  }
  // Both runtimes still work, each with its own function.
  std::uint64_t got = 0, got_other = 0;
  rt.run([&]() -> task<> { got = co_await rt.call(world_size() - 1, mine, 40ul); });
  other.run([&]() -> task<> { got_other = co_await other.call(0, theirs, 40ul); });
  EXPECT_EQ(got, 41u);
  EXPECT_EQ(got_other, 42u);
}

// API-71: memory stays bounded with many tasks: frames alive <= max_tasks (+ children).
TEST(Async, FramesBoundedByMaxTasks) {
  runtime rt(MPI_COMM_WORLD, small_buffers(64));
  auto f = rt.define([](std::uint64_t x) { return x + 1; });
  convoy::async::reset_frame_peak();
  const auto before = convoy::async::frame_statistics();
  std::uint64_t sum = 0;
  const int p = world_size();
  rt.run_each(100000, [&](std::size_t k) -> task<> {
    sum += co_await rt.call(static_cast<int>(k % static_cast<std::size_t>(p)), f, std::uint64_t{k});
  });
  const auto after = convoy::async::frame_statistics();
  EXPECT_EQ(sum, 100000ull * 99999ull / 2 + 100000ull);
  EXPECT_LE(after.peak_live, before.live + 64);
  EXPECT_EQ(after.live, before.live);
  EXPECT_EQ(after.allocations - before.allocations, 100000u);
}

// API-79: tasks spawned during a phase are part of it.
TEST(Async, SpawnedTasksBelongToThePhase) {
  runtime rt(MPI_COMM_WORLD, small_buffers(4));
  auto f = rt.define([](std::uint64_t x) { return 2 * x; });
  std::uint64_t sum = 0;
  const int p = world_size();
  rt.run([&]() -> task<> {
    for (std::uint64_t k = 0; k < 50; ++k)
      rt.spawn(
          [](runtime& r, decltype(f) fn, std::uint64_t x, std::uint64_t& s, int ranks) -> task<> {
            s += co_await r.call(static_cast<int>(x % static_cast<std::uint64_t>(ranks)), fn, x);
          }(rt, f, k, sum, p));
    co_return;
  });
  EXPECT_EQ(sum, 2u * (49u * 50u / 2u));
}

}  // namespace
