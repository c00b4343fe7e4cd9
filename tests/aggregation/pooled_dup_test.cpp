// Duplicates handed from one transport to the next (aggregation/README.md, AGG-69).
#include <gtest/gtest.h>
#include <mpi.h>

#include <convoy/aggregation/detail/pooled_dup.hpp>
#include <convoy/aggregation/mpi_transport.hpp>
#include <cstdint>
#include <vector>

#include "convoy_test/mpi.hpp"
#include "traffic_drive.hpp"
#include "transport_driver.hpp"

namespace agg = convoy::aggregation;
using agg::detail::pooled_dup;
using convoy_test::all_to_all;
using convoy_test::exchange;
using convoy_test::world_rank;
using convoy_test::world_size;

namespace {

// Marks communicators: a duplicate handed on keeps the mark, a new one has none.
class marker {
 public:
  marker() {
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key_, nullptr);
  }
  ~marker() { MPI_Comm_free_keyval(&key_); }
  marker(const marker&) = delete;
  marker& operator=(const marker&) = delete;
  void mark(MPI_Comm c) { MPI_Comm_set_attr(c, key_, &value_); }
  [[nodiscard]] bool marked(MPI_Comm c) const {
    void* v = nullptr;
    int found = 0;
    MPI_Comm_get_attr(c, key_, &v, &found);
    return found != 0;
  }

 private:
  int key_ = MPI_KEYVAL_INVALID;
  int value_ = 1;
};

MPI_Comm dup_world() {
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  return c;
}

}  // namespace

TEST(PooledDup, HandedBackWhenSettledFreedOtherwise) {  // AGG-69
  marker m;
  MPI_Comm parent = dup_world();
  {
    pooled_dup a(parent);
    int result = MPI_UNEQUAL;
    MPI_Comm_compare(a.get(), parent, &result);
    EXPECT_EQ(result, MPI_CONGRUENT);
    m.mark(a.get());
    a.end(true);
    EXPECT_EQ(a.get(), MPI_COMM_NULL);
  }
  pooled_dup b(parent);
  EXPECT_TRUE(m.marked(b.get()));  // the same duplicate
  pooled_dup c(parent);            // b holds it: a new one
  EXPECT_FALSE(m.marked(c.get()));
  b.end(false);  // not settled: freed
  pooled_dup d(parent);
  EXPECT_FALSE(m.marked(d.get()));
  // Another communicator has its own.
  m.mark(d.get());
  d.end(true);
  MPI_Comm other = dup_world();
  pooled_dup e(other);
  EXPECT_FALSE(m.marked(e.get()));
  pooled_dup f(parent);
  EXPECT_TRUE(m.marked(f.get()));
  MPI_Comm_free(&other);
  MPI_Comm_free(&parent);  // the kept duplicates go with it; f's stays f's
  EXPECT_NE(f.get(), MPI_COMM_NULL);
}

// Ranks that disagree about a kept duplicate (one rank freed it) all make a new one, and
// the rank that kept it drops it, so the next round agrees again.
TEST(PooledDup, DisagreementMakesANewOneAndHeals) {  // AGG-69
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  marker m;
  MPI_Comm parent = dup_world();
  {
    pooled_dup a(parent);
    m.mark(a.get());
    a.end(world_rank() == 0);
  }
  pooled_dup b(parent);
  EXPECT_FALSE(m.marked(b.get()));
  m.mark(b.get());
  b.end(true);
  pooled_dup c(parent);
  EXPECT_TRUE(m.marked(c.get()));
  // It is one communicator on every rank: a collective over it completes.
  int one = 1, sum = 0;
  EXPECT_EQ(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c.get()), MPI_SUCCESS);
  EXPECT_EQ(sum, world_size());
  c.end(true);
  MPI_Comm_free(&parent);
}

// Through the transport: the next mpi_transport on the communicator takes the duplicate of
// the one destroyed settled, and the traffic of both arrives where it should.
TEST(PooledDup, MpiTransportsHandTheirDuplicateOn) {  // AGG-69, AGG-63
  marker m;
  const int rank = world_rank(), p = world_size();
  MPI_Comm parent = dup_world();
  for (int round = 0; round < 3; ++round) {
    agg::mpi_transport t(parent);
    EXPECT_EQ(m.marked(t.comm()), round > 0);
    m.mark(t.comm());
    const auto lay = all_to_all(rank, p, 1, 128, 1 + round % 2);
    t.open(lay);
    exchange(t, lay,
             {.tag = 30u + static_cast<std::uint32_t>(round),
              .seed = 5u + static_cast<unsigned>(rank),
              .hold_percent = 20,
              .per_link = 50});
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Comm_free(&parent);
}
