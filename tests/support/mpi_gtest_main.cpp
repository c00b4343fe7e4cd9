// gtest main for MPI tests: every rank runs every test; rank 0 prints the usual report,
// the other ranks print only their own failures (prefixed with their rank), and the
// program exits non-zero on every rank if any rank failed.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

namespace {

// Prints only failed assertions, tagged with the rank that saw them.
class failure_printer : public testing::EmptyTestEventListener {
 public:
  explicit failure_printer(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }
  void OnTestEnd(const testing::TestInfo& info) override {
    if (info.result()->Failed())
      std::fprintf(stderr, "[rank %d] FAILED %s.%s\n", rank_, info.test_suite_name(), info.name());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new failure_printer(rank));
  }
  int local_failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any_failed && !local_failed)
    std::fprintf(stderr, "FAILED on another rank (see [rank N] lines above)\n");
  MPI_Finalize();
  return any_failed;
}
