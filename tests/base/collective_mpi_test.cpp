// The error type, the MPI check and collective agreement (base/README.md BASE-1, BASE-2).
#include <gtest/gtest.h>

#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <convoy_test/mpi.hpp>
#include <stdexcept>
#include <string>

namespace base = convoy::base;
using convoy_test::same_everywhere;
using convoy_test::world_rank;
using convoy_test::world_size;

namespace {

// A duplicate of MPI_COMM_WORLD that returns errors, as every communicator of ours does.
class returning_comm {
 public:
  returning_comm() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }
  ~returning_comm() { MPI_Comm_free(&comm_); }
  returning_comm(const returning_comm&) = delete;
  returning_comm& operator=(const returning_comm&) = delete;
  [[nodiscard]] MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace

TEST(Error, MpiCheckEvaluatesItsCallOnce) {  // BASE-1
  int calls = 0;
  auto call = [&] {
    ++calls;
    return MPI_SUCCESS;
  };
  CONVOY_MPI_CHECK(call());
  EXPECT_EQ(calls, 1);
}

TEST(Error, MpiFailureCarriesCodeCallAndText) {  // BASE-1
  const returning_comm comm;
  int rank = 0;
  try {
    CONVOY_MPI_CHECK(MPI_Comm_rank(comm.get(), &rank));
    CONVOY_MPI_CHECK(MPI_Bcast(&rank, -1, MPI_INT, 0, comm.get()));
    FAIL() << "MPI_Bcast with a negative count did not fail";
  } catch (const convoy::error& e) {
    EXPECT_NE(e.mpi_code(), MPI_SUCCESS);
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(e.mpi_code(), text, &len);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("MPI_Bcast(&rank, -1, MPI_INT, 0, comm.get()) failed: ", 0), 0u) << what;
    EXPECT_NE(what.find(std::string(text, static_cast<size_t>(len))), std::string::npos) << what;
    EXPECT_NE(what.find("collective_mpi_test.cpp:"), std::string::npos) << what;
  }
  EXPECT_EQ(convoy::error("plain").mpi_code(), MPI_SUCCESS);
}

TEST(Agree, ReturnsTheResultWhenNoRankFails) {  // BASE-2
  const int got = base::agree(MPI_COMM_WORLD, [] { return world_rank() * 10; });
  EXPECT_EQ(got, world_rank() * 10);
}

TEST(Agree, EveryRankThrowsTheLowestFailingRanksMessage) {  // BASE-2
  const int p = world_size();
  // Failing ranks: only the last; every odd rank; every rank.
  for (int pattern = 0; pattern < 3; ++pattern) {
    auto fails = [&](int r) {
      return pattern == 0 ? r == p - 1 : pattern == 1 ? r % 2 == 1 || p == 1 : true;
    };
    int lowest = -1;
    for (int r = p - 1; r >= 0; --r)
      if (fails(r)) lowest = r;
    std::string got;
    try {
      (void)base::agree(MPI_COMM_WORLD, [&] {
        if (fails(world_rank())) throw std::runtime_error("rank " + std::to_string(world_rank()));
        return 1;
      });
    } catch (const convoy::error& e) {
      got = e.what();
    }
    EXPECT_EQ(got, "rank " + std::to_string(lowest)) << "pattern " << pattern;
    EXPECT_TRUE(same_everywhere(got));
  }
}

TEST(Agree, RaiseIfAnyFailedIsSilentWithoutFailure) {  // BASE-2
  EXPECT_NO_THROW(base::raise_if_any_failed(MPI_COMM_WORLD, nullptr));
  const std::string mine = "only rank 0 saw it";
  std::string got;
  try {
    base::raise_if_any_failed(MPI_COMM_WORLD, world_rank() == 0 ? &mine : nullptr);
  } catch (const convoy::error& e) {
    got = e.what();
  }
  EXPECT_EQ(got, mine);
}
