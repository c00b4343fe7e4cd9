// Values kept with a communicator (base/README.md BASE-9).
#include <gtest/gtest.h>
#include <mpi.h>

#include <convoy/base/comm_cache.hpp>
#include <convoy/base/error.hpp>
#include <memory>
#include <string>
#include <vector>

namespace base = convoy::base;

namespace {

// A value that notes in `log` when it goes.
std::shared_ptr<void> noted(std::vector<std::string>& log, std::string name) {
  return std::shared_ptr<void>(new int(0), [&log, name = std::move(name)](void* p) {
    delete static_cast<int*>(p);
    log.push_back(name);
  });
}

MPI_Comm dup_world() {
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  return c;
}

}  // namespace

TEST(CommCache, KeepsAValueUntilTheCommunicatorIsFreed) {  // BASE-9
  std::vector<std::string> gone;
  MPI_Comm c = dup_world();
  EXPECT_EQ(base::comm_cached(c, "a"), nullptr);
  base::comm_cache(c, "a", std::make_shared<int>(7));
  ASSERT_NE(base::comm_cached_as<int>(c, "a"), nullptr);
  EXPECT_EQ(*base::comm_cached_as<int>(c, "a"), 7);
  EXPECT_EQ(base::comm_cached(c, "b"), nullptr);
  base::comm_cache(c, "first", noted(gone, "first"));
  base::comm_cache(c, "second", noted(gone, "second"));
  base::comm_cache(c, "third", noted(gone, "third"));
  base::comm_cache(c, "first", noted(gone, "first again"));  // replaces: the old one goes now
  EXPECT_EQ(gone, std::vector<std::string>{"first"});
  EXPECT_EQ(base::comm_cached(MPI_COMM_WORLD, "second"), nullptr);  // per communicator
  MPI_Comm_free(&c);
  // The last kept goes first.
  EXPECT_EQ(gone, (std::vector<std::string>{"first", "first again", "third", "second"}));
}

TEST(CommCache, ADuplicateStartsEmptyAndAValueOutlivesItsCommunicatorWhileHeld) {  // BASE-9
  MPI_Comm c = dup_world();
  base::comm_cache(c, "x", std::make_shared<int>(1));
  MPI_Comm d = MPI_COMM_NULL;
  MPI_Comm_dup(c, &d);
  EXPECT_EQ(base::comm_cached(d, "x"), nullptr);
  const std::shared_ptr<int> held = base::comm_cached_as<int>(c, "x");
  MPI_Comm_free(&c);
  EXPECT_EQ(*held, 1);
  EXPECT_EQ(held.use_count(), 1);  // the cache let it go
  MPI_Comm_free(&d);
}

TEST(CommCache, UncacheGivesTheValueBack) {  // BASE-9
  MPI_Comm c = dup_world();
  EXPECT_EQ(base::comm_uncache(c, "x"), nullptr);
  base::comm_cache(c, "x", std::make_shared<int>(3));
  const auto v = std::static_pointer_cast<int>(base::comm_uncache(c, "x"));
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v, 3);
  EXPECT_EQ(base::comm_cached(c, "x"), nullptr);
  MPI_Comm_free(&c);
}

TEST(CommCache, NullCommunicatorIsAnError) {  // BASE-9
  EXPECT_THROW((void)base::comm_cached(MPI_COMM_NULL, "x"), convoy::error);
  EXPECT_THROW(base::comm_cache(MPI_COMM_NULL, "x", nullptr), convoy::error);
}
