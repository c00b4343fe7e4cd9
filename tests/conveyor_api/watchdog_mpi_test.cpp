// The watchdog through the C++ API (termination/README.md, TERM-15): conveyor_options'
// watchdog_seconds turns it on, a negative value off whatever CONVOY_WATCHDOG says, and
// without abort the run goes on after the one diagnosis of a stall. Each rank's stderr is
// caught in a file; the job-wide count of diagnoses is their sum.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <convoy/conveyor_api/conveyor.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace {

using convoy::conveyor;
using convoy::conveyor_options;
using convoy_test::world_rank;
using convoy_test::world_size;

// This rank's stderr, caught in a temporary file from construction to text().
class caught_stderr {
 public:
  caught_stderr() {
    std::fflush(stderr);
    saved_ = dup(fileno(stderr));
    char name[] = "/tmp/convoy_watchdog_XXXXXX";
    const int fd = mkstemp(name);
    path_ = name;
    dup2(fd, fileno(stderr));
    close(fd);
  }
  ~caught_stderr() {
    restore();
    std::remove(path_.c_str());
  }
  caught_stderr(const caught_stderr&) = delete;
  caught_stderr& operator=(const caught_stderr&) = delete;
  std::string text() {
    restore();
    std::ifstream in(path_);
    std::ostringstream all;
    all << in.rdbuf();
    return all.str();
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, fileno(stderr));
    close(saved_);
    saved_ = -1;
  }
  int saved_ = -1;
  std::string path_;
};

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// One cycle in which the last rank pauses for `pause` in user code before its first
// advance; returns the diagnoses printed by the whole job and checks every item arrived.
int diagnoses_of_a_pause(const conveyor_options& o, std::chrono::milliseconds pause,
                         std::string& mine) {
  const int me = world_rank(), p = world_size();
  caught_stderr caught;
  std::int64_t received = 0;
  {
    conveyor<std::int64_t> c(MPI_COMM_WORLD, o);
    c.begin();
    constexpr int n = 100;
    int i = 0;
    for (; i < n && c.push(i, (me + 1) % p); ++i) {
    }
    if (me == p - 1) std::this_thread::sleep_for(pause);
    while (c.advance(i == n)) {
      for (; i < n && c.push(i, (me + 1) % p); ++i) {
      }
      while (auto d = c.pull()) ++received;
    }
    EXPECT_EQ(received, n);
  }
  mine = caught.text();
  int local = count_of(mine, "convoy watchdog: rank "), all = 0;
  MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

TEST(WatchdogMpi, OptionNamesTheRankThatPausesOnceAndTheRunGoesOn) {  // TERM-15
  conveyor_options o;
  o.watchdog_seconds = 0.3;
  std::string mine;
  const int all = diagnoses_of_a_pause(o, std::chrono::milliseconds(800), mine);
  // With one rank nobody else advances while it pauses: nothing to diagnose.
  EXPECT_EQ(all, world_size() > 1 ? 1 : 0);
  if (!mine.empty()) {
    const std::string cause =
        "likely cause:\n    rank " + std::to_string(world_size() - 1) + " has not called advance";
    EXPECT_NE(mine.find(cause), std::string::npos) << mine;
  }
}

TEST(WatchdogMpi, SettingAppliesUnlessTheOptionTurnsItOff) {   // TERM-15, BASE-5
  if (world_rank() == 0) setenv("CONVOY_WATCHDOG", "0.3", 1);  // settings are rank 0's
  std::string mine;
  conveyor_options o;
  const int with_setting = diagnoses_of_a_pause(o, std::chrono::milliseconds(800), mine);
  o.watchdog_seconds = -1;
  const int turned_off = diagnoses_of_a_pause(o, std::chrono::milliseconds(800), mine);
  if (world_rank() == 0) unsetenv("CONVOY_WATCHDOG");
  EXPECT_EQ(with_setting, world_size() > 1 ? 1 : 0);
  EXPECT_EQ(turned_off, 0);
}

TEST(WatchdogMpi, BulkKindRefusesTheOptionAndIgnoresTheSetting) {  // TERM-15, API-22
  conveyor_options o;
  o.kind = convoy::conveyor_kind::bulk;
  o.watchdog_seconds = 1;
  EXPECT_THROW(conveyor<std::int64_t>(MPI_COMM_WORLD, o), convoy::error);
  o.watchdog_seconds = 0;
  if (world_rank() == 0) setenv("CONVOY_WATCHDOG", "1", 1);
  conveyor<std::int64_t> c(MPI_COMM_WORLD, o);
  if (world_rank() == 0) unsetenv("CONVOY_WATCHDOG");
  c.begin();
  std::int64_t received = 0;
  bool pushed = false;
  while (c.advance(pushed)) {
    if (!pushed) pushed = c.push(world_rank(), (world_rank() + 1) % world_size());
    while (auto d = c.pull())
      received += d->item == (world_rank() + world_size() - 1) % world_size();
  }
  EXPECT_EQ(received, 1);
}

}  // namespace
