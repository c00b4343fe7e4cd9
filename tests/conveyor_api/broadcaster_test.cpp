// convoy::broadcaster<T> over MPI (termination/README.md BCAST-1..8, conveyor_api/README.md
// API-91): every rank regenerates what every root broadcast, so each rank checks that it
// pulled every (root, i) exactly once, intact, from = root. Node first (the default) and core
// first, small buffers (backpressure), several cycles; misuse. Run on real and emulated
// layouts (the CTest entries set CONVOY_EMULATE_NODES).
#include <gtest/gtest.h>

#include <algorithm>
#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/broadcaster.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <convoy_test/mpi.hpp>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace {

using convoy::broadcaster;
using convoy::conveyor_options;
using convoy_test::world_rank;
using convoy_test::world_size;

struct item {
  std::int32_t root;
  std::uint32_t i;
  std::uint64_t value;
};

std::uint64_t value_of(int root, std::uint32_t i, int cycle) {
  std::uint64_t x = static_cast<std::uint64_t>(root) << 40 ^ std::uint64_t{i} << 8 ^
                    static_cast<std::uint64_t>(cycle);
  x ^= x >> 31;
  x *= 0x94d049bb133111ebu;
  x ^= x >> 29;
  return x;
}

// Rank r broadcasts n_of(r) items (ranks differ, one sends none when p > 2).
std::uint32_t n_of(int r, int p, std::uint32_t base) {
  if (p > 2 && r == p - 1) return 0;
  return base + static_cast<std::uint32_t>(r) * 37;
}

// One cycle: every rank broadcasts its items; returns the failure (empty if none) after
// checking every (root, i) was pulled once with the right value and from. Pulls by the
// handler-style advance (batch 0), or by pull_batch(batch); sends one by one, or with
// `batch_sends` by broadcast_batch, up to 100 items a call.
std::string run_cycle(broadcaster<item>& b, std::uint32_t base, int cycle, std::size_t batch = 0,
                      bool batch_sends = false) {
  const int me = world_rank(), p = world_size();
  std::vector<std::vector<std::uint8_t>> seen(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) seen[static_cast<std::size_t>(r)].assign(n_of(r, p, base), 0);
  std::string failure;
  const auto take = [&](const item& it, int from) {
    if (!failure.empty()) return;
    if (from != it.root || it.root < 0 || it.root >= p) {
      failure =
          "item of root " + std::to_string(it.root) + " reported from " + std::to_string(from);
      return;
    }
    auto& s = seen[static_cast<std::size_t>(it.root)];
    if (it.i >= s.size() || it.value != value_of(it.root, it.i, cycle) || s[it.i]++ != 0)
      failure = "root " + std::to_string(it.root) + " item " + std::to_string(it.i) +
                " corrupted or pulled twice";
  };
  b.begin();
  const std::uint32_t n = n_of(me, p, base);
  std::uint32_t i = 0;
  std::vector<item> mine;
  for (std::uint32_t k = 0; k < n; ++k) mine.push_back(item{me, k, value_of(me, k, cycle)});
  const auto send = [&] {
    if (!batch_sends) {
      for (; i < n; ++i)
        if (!b.broadcast(mine[i])) break;
      return;
    }
    for (std::size_t sent = 1; i < n && sent > 0;) {
      sent = b.broadcast_batch(std::span(mine).subspan(i, std::min(n - i, 100u)));
      i += static_cast<std::uint32_t>(sent);
    }
  };
  if (batch == 0) {
    while (b.advance(i == n, take)) send();
  } else {
    while (b.advance(i == n)) {
      send();
      for (auto got = b.pull_batch(batch); !got.empty(); got = b.pull_batch(batch)) {
        if (got.size() > batch) failure = "a batch of " + std::to_string(got.size());
        for (const auto& [it, from] : got) take(it, from);
      }
    }
  }
  b.reset();
  for (int r = 0; r < p && failure.empty(); ++r)
    for (std::size_t k = 0; k < seen[static_cast<std::size_t>(r)].size(); ++k)
      if (seen[static_cast<std::size_t>(r)][k] != 1) {
        failure = "root " + std::to_string(r) + " item " + std::to_string(k) + " pulled " +
                  std::to_string(seen[static_cast<std::size_t>(r)][k]) + " times";
        break;
      }
  return failure;
}

// Innermost dimension first over the default mesh (core first on node x core).
std::vector<int> core_first() {
  conveyor_options o;
  o.kind = convoy::conveyor_kind::broadcast;
  const auto n = static_cast<int>(convoy::make_plan(MPI_COMM_WORLD, o)->mesh_sizes().size());
  std::vector<int> order;
  for (int d = n - 1; d >= 0; --d) order.push_back(d);
  return order;
}

std::vector<conveyor_options> option_sets() {
  std::vector<conveyor_options> v(4);
  v[1].buffer_bytes = 256;  // backpressure: a fan-out stops and resumes
  v[1].n_buffers = 1;
  v[2].dim_order = core_first();
  v[3].steady = true;
  v[3].buffer_bytes = 1024;
  return v;
}

// BCAST-1, API-91: every rank pulls every broadcast once, from its root, on each option
// set, over four cycles of one broadcaster each: pulled one by one, in batches of at most
// 5 items, in whole buffers (pull_batch); the last cycle sent by broadcast_batch (BCAST-7).
TEST(Broadcaster, EveryRankGetsEveryItemOnce) {
  int set = 0;
  for (const conveyor_options& o : option_sets()) {
    broadcaster<item> b(MPI_COMM_WORLD, o);
    for (int cycle = 0; cycle < 4; ++cycle) {
      const std::size_t batch = cycle == 0 ? 0 : cycle == 1 ? 5 : SIZE_MAX;
      const std::string why =
          run_cycle(b, 3000 + static_cast<std::uint32_t>(cycle) * 500, cycle, batch, cycle == 3);
      EXPECT_TRUE(why.empty()) << "set " << set << " cycle " << cycle << " rank " << world_rank()
                               << ": " << why;
    }
    const auto s = b.stats(true);
    std::uint64_t sent = 0, mine = 0;
    for (int r = 0; r < world_size(); ++r)
      for (std::uint32_t base : {3000u, 3500u, 4000u, 4500u}) {
        sent += n_of(r, world_size(), base);
        if (r == world_rank()) mine += n_of(r, world_size(), base);
      }
    EXPECT_EQ(s.pulls - s.unpulls, sent) << "set " << set;
    EXPECT_EQ(s.pushes, mine) << "set " << set;
    ++set;
  }
}

// BCAST-8: with no size given, a broadcaster's buffers are broadcast_buffer_bytes of its
// plan (not the 16 KiB of the other kinds); a size in the options wins.
TEST(Broadcaster, DefaultBuffersFitTheBudget) {
  broadcaster<item> b(MPI_COMM_WORLD);
  const auto& plan = *b.core().plan();
  const int n_buffers = b.core().engine_options().n_buffers;
  EXPECT_EQ(b.core().engine_options().buffer_bytes,
            convoy::termination::broadcast_buffer_bytes(plan, n_buffers));
  if (world_size() <= 8) {  // at most 8 lanes of 2 buffers
    EXPECT_EQ(b.core().engine_options().buffer_bytes, 256u << 10);
  }
  conveyor_options o;
  o.buffer_bytes = 4096;
  broadcaster<item> small(MPI_COMM_WORLD, o);
  EXPECT_EQ(small.core().engine_options().buffer_bytes, 4096u);
  convoy::conveyor<item> plain(MPI_COMM_WORLD);
  EXPECT_EQ(plain.core().engine_options().buffer_bytes, convoy::base::default_buffer_bytes);
}

// API-91: the default stage order is outermost dimension first (node first).
TEST(Broadcaster, DefaultOrderIsNodeFirst) {
  conveyor_options o;
  o.mesh = "node,core";
  o.kind = convoy::conveyor_kind::broadcast;
  const auto plan = convoy::make_plan(MPI_COMM_WORLD, o);
  for (int s = 0; s < plan->n_stages(); ++s) EXPECT_EQ(plan->stage_dimension(s), s);
}

// BCAST-4: push on a broadcaster's conveyor is refused; broadcast on a point-to-point
// conveyor too; the bulk kind and tensor order 3 throw at construction.
TEST(Broadcaster, MisuseIsRefused) {
  broadcaster<item> b(MPI_COMM_WORLD);
  EXPECT_THROW((void)b.broadcast(item{}), convoy::error);  // DORMANT
  const item some[2] = {};
  EXPECT_THROW((void)b.broadcast_batch(some), convoy::error);
  b.begin();
  const item it{};
  EXPECT_EQ(b.core().push(&it, 0), convoy::termination::error_mode);
  while (b.advance(true)) {
  }
  b.reset();
  convoy::conveyor<item> c(MPI_COMM_WORLD);
  c.begin();
  EXPECT_EQ(c.core().broadcast(&it), convoy::termination::error_mode);
  while (c.advance(true)) {
  }
  c.reset();
  conveyor_options bulk;
  bulk.kind = convoy::conveyor_kind::bulk;
  EXPECT_THROW((broadcaster<item>(MPI_COMM_WORLD, bulk)), convoy::error);
  conveyor_options t3;
  t3.tensor_order = 3;
  t3.n_local = 1;
  try {
    broadcaster<item> bad(MPI_COMM_WORLD, t3);
    ADD_FAILURE() << "tensor order 3 accepted";
  } catch (const convoy::error& e) {
    EXPECT_NE(std::string(e.what()).find("duplicates"), std::string::npos) << e.what();
  }
}

}  // namespace
