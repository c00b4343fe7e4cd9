// convoy::async frames: the per-thread pool reuses the frames of finished tasks (API-80),
// and every frame goes back to it whether a task ends at once, after waiting, nested, in
// a when_all, or by an exception (API-81). Under AddressSanitizer a pooled frame is
// poisoned, so a use of a finished task's frame is reported even though it is reused.
#include <gtest/gtest.h>

#include <convoy/async/runtime.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using convoy::async::frame_statistics;
using convoy::async::runtime;
using convoy::async::runtime_options;
using convoy::async::task;
using convoy_test::world_rank;
using convoy_test::world_size;

constexpr std::size_t k_max_tasks = 64;

runtime_options small_buffers() {
  runtime_options o;
  o.max_tasks = k_max_tasks;
  o.conveyor.buffer_bytes = 256;  // backpressure all the time
  o.conveyor.n_buffers = 1;
  return o;
}

task<std::uint64_t> twice(runtime& rt,
                          const convoy::async::remote_fn<std::uint64_t, std::uint64_t>& f, int rank,
                          std::uint64_t x) {
  const std::uint64_t a = co_await rt.call(rank, f, x);
  co_return a + co_await rt.call(rank, f, x + 1);
}

// Task k of a phase: ends without waiting (a call to this rank), after one remote call,
// after a nested task, or after a when_all of two, by k % 4. Returns the frames it makes.
struct mix_of_tasks {
  runtime& rt;
  convoy::async::remote_fn<std::uint64_t, std::uint64_t> f;
  std::uint64_t sum = 0;

  task<> operator()(std::size_t k) {
    const int p = world_size(), me = world_rank();
    const int other = (me + 1 + static_cast<int>(k % 7)) % p;
    switch (k % 4) {
      case 0:
        sum += co_await rt.call(me, f, std::uint64_t{k});
        break;
      case 1:
        sum += co_await rt.call(other, f, std::uint64_t{k});
        break;
      case 2:
        sum += co_await twice(rt, f, other, k);
        break;
      default: {
        std::vector<task<std::uint64_t>> kids;
        kids.push_back(twice(rt, f, other, k));
        kids.push_back(twice(rt, f, me, k));
        for (const auto v : co_await convoy::async::when_all(std::move(kids))) sum += v;
      }
    }
  }
  // Frames created by tasks 0..n-1 and the sum they add (f(x) = x + 1).
  static std::uint64_t frames(std::size_t n) {
    std::uint64_t c = 0;
    for (std::size_t k = 0; k < n; ++k) c += k % 4 == 2 ? 2 : k % 4 == 3 ? 3 : 1;
    return c;
  }
  static std::uint64_t want(std::size_t n) {
    std::uint64_t s = 0;
    for (std::uint64_t k = 0; k < n; ++k)
      s += k % 4 < 2 ? k + 1 : k % 4 == 2 ? 2 * k + 3 : 2 * (2 * k + 3);
    return s;
  }
};

// API-80: after one phase has filled the pool, thousands more tasks of the same shapes take
// no frame from the general allocator beyond the most that can be alive at once.
TEST(AsyncFrames, ReusedAcrossThousandsOfTasks) {
  runtime rt(MPI_COMM_WORLD, small_buffers());
  mix_of_tasks m{rt, rt.define([](std::uint64_t x) { return x + 1; })};
  const std::size_t n = 4000;
  rt.run_each(n, [&](std::size_t k) { return m(k); });  // warm-up: fills the pool
  ASSERT_EQ(m.sum, mix_of_tasks::want(n));
  const auto before = frame_statistics();
  for (int phase = 0; phase < 5; ++phase) {
    m.sum = 0;
    rt.run_each(n, [&](std::size_t k) { return m(k); });
    ASSERT_EQ(m.sum, mix_of_tasks::want(n)) << "phase " << phase;
  }
  const auto after = frame_statistics();
  EXPECT_EQ(after.allocations - before.allocations, 5 * mix_of_tasks::frames(n));
  EXPECT_EQ(after.live, before.live);
  // At most k_max_tasks roots and three frames under each are alive at once.
  EXPECT_LE(after.fresh - before.fresh, 3 * k_max_tasks);
  EXPECT_LE(after.peak_live - before.live, 3 * k_max_tasks);
  EXPECT_GE(after.pooled_bytes, before.pooled_bytes);
  EXPECT_TRUE(convoy_test::all_ranks(true));
}

// API-81: frames of tasks that throw (before or after waiting, root or nested) go back to
// the pool too, and the runtime runs the next phase on the same frames.
TEST(AsyncFrames, FreedWhenTasksThrow) {
  runtime rt(MPI_COMM_WORLD, small_buffers());
  auto f = rt.define([](std::uint64_t x) { return x + 1; });
  const int p = world_size(), me = world_rank();
  const auto before = frame_statistics();
  std::string what;
  try {
    rt.run_each(3000, [&](std::size_t k) -> task<> {
      if (k % 500 == 1) throw std::runtime_error("early " + std::to_string(k));
      const auto v = co_await twice(rt, f, (me + 1) % p, k);
      if (k % 500 == 7) throw std::runtime_error("late " + std::to_string(v));
    });
  } catch (const convoy::error& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("threw"), std::string::npos) << what;
  EXPECT_EQ(frame_statistics().live, before.live);
  std::uint64_t sum = 0;
  rt.run_each(1000, [&](std::size_t k) -> task<> {
    sum += co_await twice(rt, f, static_cast<int>(k % static_cast<std::size_t>(p)), k);
  });
  EXPECT_EQ(sum, 1000u * 999u + 3000u);
  EXPECT_EQ(frame_statistics().live, before.live);
}

}  // namespace
