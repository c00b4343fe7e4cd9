// convoy::biconveyor<Q, R> and untyped_biconveyor (conveyor_api/README.md, API-23..25):
// every query answered exactly once, on its destination, by a function that sees the
// query's true source; every reply back at its requester, in push order, with the right
// bytes; over streaming mesh and tensor conveyors and the bulk kind; misuse codes.
#include <gtest/gtest.h>
#include <mpi.h>

#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/biconveyor.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using convoy::biconveyor;
using convoy::conveyor_kind;
using convoy::conveyor_options;
using convoy_test::world_rank;
using convoy_test::world_size;

struct query {
  std::int32_t src;  // the requester, as it claims: the answerer checks it against `from`
  std::uint32_t index;
};
struct reply {
  std::int32_t owner, asker;
  std::uint64_t value;
  std::uint32_t index;
};
std::uint64_t value_at(int owner, std::uint32_t index) {
  return (static_cast<std::uint64_t>(owner) << 40) ^ (index * 0x9e3779b97f4a7c15ULL);
}

// One cycle: n queries from this rank to random owners; every reply checked in push order;
// queries answered per source compared with queries sent per destination (MPI_Alltoall).
void gather(biconveyor<query, reply>& b, std::uint32_t n, unsigned seed) {
  const int me = world_rank(), p = world_size();
  const auto up = static_cast<std::size_t>(p);
  std::mt19937 rng(seed * 104729u + static_cast<unsigned>(me));
  std::vector<query> asked(n);
  std::vector<int> owner(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    owner[i] = static_cast<int>(rng() % up);
    asked[i] = {me, static_cast<std::uint32_t>(rng() % 100000u)};
  }
  std::vector<int> sent(up, 0), answered(up, 0);
  std::uint64_t wrong_source = 0, wrong_reply = 0;
  b.begin([&](const query& q, int from) {
    if (q.src != from || from < 0 || from >= p) ++wrong_source;
    ++answered[static_cast<std::size_t>(from)];
    return reply{me, from, value_at(me, q.index), q.index};
  });
  std::uint32_t i = 0, j = 0;
  std::uint64_t rounds = 0;
  while (b.advance(i == n)) {
    ASSERT_LT(++rounds, 10'000'000u);
    for (; i < n; ++i) {
      if (!b.push(asked[i], owner[i])) break;
      ++sent[static_cast<std::size_t>(owner[i])];
    }
    while (auto r = b.pull()) {
      ASSERT_LT(j, i) << "a reply to a query not pushed";
      const reply want{owner[j], me, value_at(owner[j], asked[j].index), asked[j].index};
      if (r->owner != want.owner || r->asker != want.asker || r->value != want.value ||
          r->index != want.index)
        ++wrong_reply;
      ++j;
    }
  }
  EXPECT_FALSE(b.pull()) << "nothing after done";
  b.reset();
  EXPECT_EQ(i, n);
  EXPECT_EQ(j, n) << "every query's reply pulled once";
  EXPECT_EQ(wrong_source, 0u) << "the answer saw the query's source";
  EXPECT_EQ(wrong_reply, 0u) << "replies in push order, right bytes";
  std::vector<int> owed(up, 0);
  MPI_Alltoall(sent.data(), 1, MPI_INT, owed.data(), 1, MPI_INT, MPI_COMM_WORLD);
  EXPECT_EQ(answered, owed) << "every query answered exactly once on its destination";
}

conveyor_options kind(const char* name) {
  conveyor_options o;
  o.buffer_bytes = 512;
  if (std::string(name) == "tensor1") o.tensor_order = 1;
  if (std::string(name) == "tensor2") {
    o.tensor_order = 2;
    o.n_local = 1;
  }
  if (std::string(name) == "bulk") o.kind = conveyor_kind::bulk;
  if (std::string(name) == "dynamic") o.dynamic = true;
  return o;
}

// API-23, API-24: exactly once, in push order, the source seen by the answer; two cycles.
// 20000 queries exceed the reorder window (8192): pushes wait for pulls.
TEST(Biconveyor, EveryQueryAnsweredOnceInOrder) {
  unsigned seed = 1;
  for (const char* k : {"mesh", "tensor1", "tensor2", "bulk", "dynamic"}) {
    SCOPED_TRACE(k);
    biconveyor<query, reply> b(MPI_COMM_WORLD, kind(k));
    ASSERT_NO_FATAL_FAILURE(gather(b, 3000, seed++));
    ASSERT_NO_FATAL_FAILURE(gather(b, 20000, seed++));
    EXPECT_TRUE(b.core().queries().engine_options().steady);
  }
  EXPECT_TRUE(convoy_test::all_ranks(!::testing::Test::HasFailure()));
}

// API-25: misuse returns a code and changes nothing (untyped) / throws (typed).
TEST(Biconveyor, Misuse) {
  namespace term = convoy::termination;
  convoy::untyped_biconveyor b(MPI_COMM_WORLD, kind("mesh"));
  const auto echo = [](const std::byte* q, std::byte* r, int) { *r = *q; };
  const std::uint64_t x = 5;
  std::uint64_t out = 0;
  EXPECT_EQ(b.push(&x, 0), term::error_state);
  EXPECT_EQ(b.pull(&out), term::error_state);
  EXPECT_EQ(b.advance(true), term::error_state);
  EXPECT_EQ(b.reset(), 1) << "DORMANT: no-op";
  EXPECT_EQ(b.begin(8, 8, nullptr), term::error_argument);
  EXPECT_EQ(b.begin(0, 8, echo), term::error_size);
  EXPECT_EQ(b.begin(8, 1u << 30, echo), term::error_size) << "reply above a buffer";
  EXPECT_EQ(b.current_state(), term::state::dormant);
  ASSERT_EQ(b.begin(8, 8, echo), 1);
  EXPECT_EQ(b.begin(8, 8, echo), term::error_state);
  EXPECT_EQ(b.push(&x, world_size()), term::error_rank);
  EXPECT_EQ(b.push(&x, -1), term::error_rank);
  EXPECT_EQ(b.push(nullptr, 0), term::error_argument);
  EXPECT_EQ(b.pull(nullptr), term::error_argument);
  EXPECT_EQ(b.pull(&out), 0) << "nothing outstanding";
  EXPECT_EQ(b.reset(), term::error_state);
  int rc = 0;
  while ((rc = b.advance(true)) != term::done) ASSERT_GT(rc, 0);
  EXPECT_EQ(b.reset(), 1);

  conveyor_options plain;  // not steady: refused as a biconveyor's conveyor
  EXPECT_THROW(convoy::untyped_biconveyor(convoy::untyped_conveyor(MPI_COMM_WORLD, plain),
                                          convoy::untyped_conveyor(MPI_COMM_WORLD, plain)),
               convoy::error);
  biconveyor<query, reply> typed(MPI_COMM_WORLD);
  EXPECT_THROW((void)typed.push(query{}, 0), convoy::error);
  EXPECT_TRUE(convoy_test::all_ranks(!::testing::Test::HasFailure()));
}

}  // namespace
