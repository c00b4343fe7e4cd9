// convoy::conveyor<T> over MPI: the conveyor contract (termination/README.md, guarantees
// 1-7) on real ranks, with the layouts the CTest entries emulate (CONVOY_EMULATE_*).
#include <gtest/gtest.h>

#include <convoy/conveyor_api/conveyor.hpp>
#include <convoy_test/mpi.hpp>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using convoy::conveyor;
using convoy::conveyor_options;
using convoy_test::world_rank;
using convoy_test::world_size;

struct tracer {
  std::int32_t src, dst;
  std::uint32_t seq, check;
};
std::uint32_t checksum(const tracer& t) {
  return static_cast<std::uint32_t>(t.src) * 2654435761u ^
         static_cast<std::uint32_t>(t.dst) * 40503u ^ t.seq * 97u ^ 0x5bd1e995u;
}

// Every rank pushes `per_rank` items to destinations from `pick`; checks exactly-once,
// FIFO per pair and sources on the receiving side, and that the totals agree globally.
// Pulls one by one (batch 0) or by pull_batch(batch).
template <class Pick>
void run_round(conveyor<tracer>& c, int per_rank, Pick pick, std::size_t batch = 0) {
  const int me = world_rank(), p = world_size();
  std::vector<std::uint32_t> next_seq(static_cast<std::size_t>(p), 0),
      seen(static_cast<std::size_t>(p), 0);
  std::vector<std::uint64_t> sent_to(static_cast<std::size_t>(p), 0);
  std::uint64_t received = 0;
  std::string failure;
  c.begin();
  int i = 0;
  std::uint64_t spins = 0;
  while (c.advance(i == per_rank)) {
    for (; i < per_rank; ++i) {
      tracer t{me, pick(i), 0, 0};
      t.seq = next_seq[static_cast<std::size_t>(t.dst)];
      t.check = checksum(t);
      if (!c.push(t, t.dst)) break;
      ++next_seq[static_cast<std::size_t>(t.dst)];
      ++sent_to[static_cast<std::size_t>(t.dst)];
    }
    const auto take = [&](const tracer& t, int from) {
      if (failure.empty()) {
        if (t.check != checksum(t))
          failure = "corrupted item";
        else if (t.dst != me)
          failure = "item for rank " + std::to_string(t.dst) + " delivered here";
        else if (from != t.src)
          failure = "source " + std::to_string(from) + " reported for an item of " +
                    std::to_string(t.src);
        else if (t.seq != seen[static_cast<std::size_t>(t.src)])
          failure = "from " + std::to_string(t.src) + ": seq " + std::to_string(t.seq) +
                    " expected " + std::to_string(seen[static_cast<std::size_t>(t.src)]);
      }
      ++seen[static_cast<std::size_t>(t.src)];
      ++received;
    };
    if (batch == 0) {
      while (auto d = c.pull()) take(d->item, d->from);
    } else {
      for (auto got = c.pull_batch(batch); !got.empty(); got = c.pull_batch(batch)) {
        if (got.size() > batch) failure = "a batch of " + std::to_string(got.size());
        for (std::size_t k = 0; k < got.size(); ++k) take(got.item(k), got.from(k));
      }
    }
    ASSERT_LT(++spins, 50'000'000u) << "conveyor did not terminate";
  }
  EXPECT_EQ(c.current_state(), convoy::state::complete);
  c.reset();
  EXPECT_EQ(failure, "");
  // Exactly once: what everyone sent to me is what I received.
  std::vector<std::uint64_t> expect(static_cast<std::size_t>(p), 0);
  MPI_Allreduce(sent_to.data(), expect.data(), p, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(received, expect[static_cast<std::size_t>(me)]);
  std::vector<std::uint64_t> from_each(seen.begin(), seen.end());
  // sent_to_me[s] = what rank s sent to me.
  std::vector<std::uint64_t> sent_to_me(static_cast<std::size_t>(p), 0);
  MPI_Alltoall(sent_to.data(), 1, MPI_UINT64_T, sent_to_me.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  EXPECT_EQ(from_each, sent_to_me);
}

std::vector<conveyor_options> option_sets() {
  std::vector<conveyor_options> v;
  conveyor_options o;
  o.buffer_bytes = 512;
  v.push_back(o);  // auto mesh
  o.mesh = "node,core";
  o.n_buffers = 1;
  v.push_back(o);
  o.mesh = std::to_string(world_size());  // 1-D
  o.n_buffers = 4;
  v.push_back(o);
  for (int order = 1; order <= 3; ++order) {
    conveyor_options t;
    t.tensor_order = order;
    t.buffer_bytes = 400;
    v.push_back(t);
  }
  conveyor_options st;
  st.steady = true;
  st.buffer_bytes = 256;
  v.push_back(st);
  return v;
}

// API-1, API-2
TEST(ConveyorMpi, UniformRandomEveryKind) {
  for (const auto& o : option_sets()) {
    conveyor<tracer> c(MPI_COMM_WORLD, o);
    std::mt19937 rng(static_cast<unsigned>(world_rank() * 7 + 1));
    run_round(c, 3000,
              [&](int) { return static_cast<int>(rng() % static_cast<unsigned>(world_size())); });
  }
}

// API-1, API-2 by the bulk pull (pull_batch): every option set and the bulk kind, batches
// of at most 3 items and of whole buffers.
TEST(ConveyorMpi, BatchPullsEveryKind) {
  std::vector<conveyor_options> sets = option_sets();
  conveyor_options bulk;
  bulk.kind = convoy::conveyor_kind::bulk;
  sets.push_back(bulk);
  for (const auto& o : sets) {
    conveyor<tracer> c(MPI_COMM_WORLD, o);
    std::mt19937 rng(static_cast<unsigned>(world_rank() * 5 + 3));
    for (std::size_t batch : {std::size_t{3}, std::size_t{SIZE_MAX}})
      run_round(
          c, 3000,
          [&](int) { return static_cast<int>(rng() % static_cast<unsigned>(world_size())); },
          batch);
  }
}

// API-2, API-5
TEST(ConveyorMpi, PatternsAndReuse) {
  conveyor_options o;
  o.buffer_bytes = 300;
  conveyor<tracer> c(MPI_COMM_WORLD, o);
  const int p = world_size(), me = world_rank();
  run_round(c, 2000, [&](int) { return 0; });                                       // all to one
  run_round(c, me == p - 1 ? 4000 : 0, [&](int i) { return i % p; });               // one to all
  run_round(c, 500, [&](int) { return me; });                                       // self
  run_round(c, 0, [&](int) { return 0; });                                          // nobody
  run_round(c, me == 0 ? 3000 : 0, [&](int i) { return (i * 7) % p; });             // one sender
  run_round(c, me == 1 % p ? 20000 : 10, [&](int i) { return (i * 13 + 1) % p; });  // imbalance
  EXPECT_EQ(c.stats(true).begins, 6u);
}

// API-1
TEST(ConveyorMpi, HundredConveyorsAliveAtOnce) {
  conveyor_options o;
  o.buffer_bytes = 256;
  std::vector<std::unique_ptr<conveyor<tracer>>> all;
  all.reserve(100);
  for (int k = 0; k < 100; ++k)
    all.push_back(std::make_unique<conveyor<tracer>>(MPI_COMM_WORLD, o));
  // Interleave: every conveyor carries its own traffic at the same time.
  const int p = world_size(), me = world_rank();
  for (auto& c : all) c->begin();
  std::vector<int> pushed(all.size(), 0);
  std::vector<bool> finished(all.size(), false);
  std::vector<std::vector<std::uint32_t>> seen(
      all.size(), std::vector<std::uint32_t>(static_cast<std::size_t>(p), 0));
  std::size_t n_finished = 0;
  for (std::uint64_t spin = 0; n_finished < all.size(); ++spin) {
    ASSERT_LT(spin, 10'000'000u);
    for (std::size_t k = 0; k < all.size(); ++k) {
      if (finished[k]) continue;
      auto& c = *all[k];
      for (; pushed[k] < 50; ++pushed[k]) {
        tracer t{me,
                 static_cast<int>((pushed[k] + k + static_cast<std::size_t>(me)) %
                                  static_cast<std::size_t>(p)),
                 static_cast<std::uint32_t>(k), 0};
        t.check = checksum(t);
        if (!c.push(t, t.dst)) break;
      }
      while (auto d = c.pull()) {
        ASSERT_EQ(d->item.seq, k) << "item of conveyor " << d->item.seq << " arrived on " << k;
        ++seen[k][static_cast<std::size_t>(d->from)];
      }
      if (!c.advance(pushed[k] == 50)) {
        finished[k] = true;
        ++n_finished;
        c.reset();
      }
    }
  }
  for (std::size_t k = 0; k < all.size(); ++k) {
    std::uint64_t total = 0;
    for (auto n : seen[k]) total += n;
    std::uint64_t all_total = 0;
    MPI_Allreduce(&total, &all_total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(all_total, 50u * static_cast<unsigned>(p));
  }
}

// API-3
TEST(ConveyorMpi, MisuseThrowsAndChangesNothing) {
  conveyor<tracer> c(MPI_COMM_WORLD);
  tracer t{};
  EXPECT_THROW((void)c.push(t, 0), convoy::error);  // before begin
  c.begin();
  try {
    (void)c.push(t, world_size());
    FAIL() << "push to an out-of-range rank accepted";
  } catch (const convoy::error& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
  EXPECT_THROW(c.unpull(), convoy::error);  // nothing pulled
  EXPECT_THROW(c.begin(), convoy::error);   // already begun
  EXPECT_EQ(c.current_state(), convoy::state::working);
  while (c.advance(true)) {
    while (c.pull()) {
    }
  }
  try {
    (void)c.push(t, 0);
    FAIL() << "push after done accepted";
  } catch (const convoy::error& e) {
    EXPECT_NE(std::string(e.what()).find("COMPLETE"), std::string::npos) << e.what();
  }
  c.reset();
  EXPECT_EQ(c.stats().pushes, 0u);
}

// API-1
TEST(ConveyorMpi, BadSettingsRaiseTheSameErrorEverywhere) {
  conveyor_options o;
  o.mesh = "3x5x7x11";  // product != rank count
  std::string what;
  try {
    conveyor<tracer> c(MPI_COMM_WORLD, o);
  } catch (const convoy::error& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("3x5x7x11"), std::string::npos) << what;
  o = {};
  o.tensor_order = 4;
  EXPECT_THROW(conveyor<tracer>(MPI_COMM_WORLD, o), convoy::error);
}

// One plan, several engines (no discovery per engine); a plan of another size is refused.
// API-6
TEST(ConveyorMpi, EnginesOverOnePlan) {
  const conveyor_options o;
  const auto plan = convoy::make_plan(MPI_COMM_WORLD, o);
  for (int k = 0; k < 3; ++k) {
    conveyor<tracer> c(convoy::make_mpi_engine(MPI_COMM_WORLD, plan, o));
    EXPECT_EQ(&c.engine().plan(), plan.get());
    run_round(c, 300, [](int i) { return (i * 7 + world_rank()) % world_size(); });
  }
  std::string what;
  try {
    (void)convoy::make_mpi_engine(MPI_COMM_WORLD,
                                  convoy::router::make_tensor_plan(1, world_size() + 1, 1), o);
  } catch (const convoy::error& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("ranks, the communicator"), std::string::npos) << what;
}

// API-4. Rank s sends item i * 1000003 + s to rank (i + s) % P for i < 1000, so rank `me` must get
// from each s exactly the i = (me - s) mod P, (me - s) mod P + P, ... below 1000, in order.
TEST(ConveyorMpi, HandlerStyle) {
  conveyor_options o;
  o.buffer_bytes = 256;
  conveyor<std::int64_t> c(MPI_COMM_WORLD, o);
  const int p = world_size(), me = world_rank();
  constexpr std::int64_t n = 1000, stride = 1000003;
  std::vector<std::int64_t> next_i(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) next_i[static_cast<std::size_t>(s)] = ((me - s) % p + p) % p;
  std::int64_t count = 0, wrong = 0;
  c.begin();
  int i = 0;
  while (c.advance(i == n, [&](std::int64_t v, int from) {
    ++count;
    if (from < 0 || from >= p || v % stride != from) {
      ++wrong;
      return;
    }
    auto& want = next_i[static_cast<std::size_t>(from)];
    if (v / stride != want) ++wrong;  // lost, repeated or out of order
    want = v / stride + p;
  })) {
    for (; i < n; ++i)
      if (!c.push(std::int64_t{i} * stride + me, (i + me) % p)) break;
  }
  c.reset();
  EXPECT_EQ(wrong, 0);
  // Every source's sequence ran to its end: the next i due is the first one >= n.
  for (int s = 0; s < p; ++s) EXPECT_GE(next_i[static_cast<std::size_t>(s)], n) << "from " << s;
  for (int s = 0; s < p; ++s) EXPECT_LT(next_i[static_cast<std::size_t>(s)], n + p) << "from " << s;
  std::int64_t total = 0;
  MPI_Allreduce(&count, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(total, n * p);
}

}  // namespace
