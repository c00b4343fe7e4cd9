// Collective settings resolution: rank 0's environment and tuning file, read on rank 0
// only, the same settings or the same error on every rank (base/README.md BASE-6..BASE-8).
//
// The "rank-specific path" trick: CONVOY_TUNE_FILE=/dev/fd/<N> on every rank, where fd N is,
// on each rank, a file of that rank's choosing (or closed). A rank other than 0 that opened
// the path would read its own file, not rank 0's.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace base = convoy::base;
using convoy_test::same_everywhere;
using convoy_test::world_rank;

namespace {

constexpr int tune_fd = 200;
const std::string tune_path = "/dev/fd/" + std::to_string(tune_fd);

// A file of this rank with `text`, opened as fd `tune_fd` (or fd closed if `open` is false).
class rank_file {
 public:
  rank_file(const std::string& text, bool open) {
    char name[] = "/tmp/convoy_tune_XXXXXX";
    const int fd = ::mkstemp(name);
    path_ = name;
    std::ofstream(path_) << text;
    ::close(fd);
    ::close(tune_fd);
    if (open) {
      const int f = ::open(path_.c_str(), O_RDONLY);
      ::dup2(f, tune_fd);
      ::close(f);
    }
  }
  ~rank_file() {
    ::close(tune_fd);
    ::unlink(path_.c_str());
  }
  rank_file(const rank_file&) = delete;
  rank_file& operator=(const rank_file&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets (or unsets, for nullptr) an environment variable for the scope.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~scoped_env() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The settings, or the message thrown, as text.
std::string outcome() {
  try {
    return base::settings::from_env(MPI_COMM_WORLD).describe();
  } catch (const convoy::error& e) {
    return std::string("error: ") + e.what();
  }
}

}  // namespace

TEST(SettingsMpi, TuningFileIsReadOnRankZeroOnly) {  // BASE-7, BASE-6
  // Rank 0's fd holds a valid file; every other rank's a different valid file, then none.
  for (const bool others_open : {true, false}) {
    SCOPED_TRACE(others_open ? "other ranks: another file" : "other ranks: fd closed");
    const rank_file file(world_rank() == 0 ? "buffer_bytes=1Ki\nn_buffers=8\nkind=tensor3\n"
                                           : "buffer_bytes=2Ki\nn_buffers=4\n",
                         world_rank() == 0 || others_open);
    const scoped_env env("CONVOY_TUNE_FILE", tune_path.c_str());
    base::settings s;
    ASSERT_NO_THROW(s = base::settings::from_env(MPI_COMM_WORLD));
    EXPECT_EQ(s.tuning.path, tune_path);
    EXPECT_EQ(s.buffer_bytes_or_default(), 1024u);
    EXPECT_EQ(s.n_buffers_or_default(), 8);
    EXPECT_EQ(s.tuning.kind(), "tensor3");
    EXPECT_TRUE(same_everywhere(s.describe())) << s.describe();
  }
}

TEST(SettingsMpi, DefaultTuningFileIsRankZerosHome) {  // BASE-7
  char dir[] = "/tmp/convoy_home_XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string home = dir;
  ASSERT_EQ(::mkdir((home + "/.config").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((home + "/.config/convoy").c_str(), 0700), 0);
  const std::string conf = home + "/.config/convoy/tune.conf";
  // Rank 0 has a valid file; the others a malformed one that they must never read.
  std::ofstream(conf) << (world_rank() == 0 ? "n_buffers=16\n" : "this is not key value\n");
  {
    const scoped_env h("HOME", dir);
    const scoped_env t("CONVOY_TUNE_FILE", nullptr);
    const std::string got = outcome();
    EXPECT_TRUE(same_everywhere(got)) << got;
    // Each rank made its own HOME; rank 0's file is the one named.
    const std::string root_conf = convoy_test::from_root(conf);
    EXPECT_NE(got.find("\ntuning file " + root_conf + ":\n  n_buffers=16\n"), std::string::npos)
        << got;
  }
  {
    // No file at the default path: no tuning, no error.
    ::unlink(conf.c_str());
    const scoped_env h("HOME", dir);
    const scoped_env t("CONVOY_TUNE_FILE", nullptr);
    base::settings s;
    ASSERT_NO_THROW(s = base::settings::from_env(MPI_COMM_WORLD));
    EXPECT_TRUE(s.tuning.path.empty());
    EXPECT_EQ(s.n_buffers_or_default(), base::default_n_buffers);
  }
  ::rmdir((home + "/.config/convoy").c_str());
  ::rmdir((home + "/.config").c_str());
  ::rmdir(dir);
}

TEST(SettingsMpi, TuningErrorsAreTheSameOnEveryRank) {  // BASE-8, BASE-6
  struct error_case {
    const char* file;  // rank 0's file
    std::string want;
  };
  const error_case cases[] = {
      {"buffer_bytes=8192\nmesh node,core\n",
       "error: tuning file " + tune_path + ":2: expected key=value"},
      {"n_buffers=3\n", "error: tuning file " + tune_path +
                            ":1: n_buffers='3': must be a power of two from 1 to 1024"},
      {"# tuned\ncapacity_bytes=lots\n",
       "error: tuning file " + tune_path +
           ":2: capacity_bytes='lots': must be a byte count from 64 bytes to 1 GiB: digits "
           "with an optional suffix k, Ki, M or Mi"},
  };
  for (const auto& c : cases) {
    // The other ranks hold a valid file: only rank 0's counts.
    const rank_file file(world_rank() == 0 ? c.file : "n_buffers=2\n", true);
    const scoped_env env("CONVOY_TUNE_FILE", tune_path.c_str());
    const std::string got = outcome();
    EXPECT_EQ(got, c.want);
    EXPECT_TRUE(same_everywhere(got));
  }
}

TEST(SettingsMpi, UnreadableNamedFileIsTheSameErrorOnEveryRank) {  // BASE-8, BASE-6
  {
    const scoped_env env("CONVOY_TUNE_FILE", "/nonexistent/convoy/tune.conf");
    const std::string got = outcome();
    EXPECT_EQ(got, "error: CONVOY_TUNE_FILE: cannot read '/nonexistent/convoy/tune.conf'");
    EXPECT_TRUE(same_everywhere(got));
  }
  {
    // Unreadable on rank 0 only (its fd closed): every rank fails alike, none waits.
    const rank_file file("n_buffers=2\n", world_rank() != 0);
    const scoped_env env("CONVOY_TUNE_FILE", tune_path.c_str());
    const std::string got = outcome();
    EXPECT_EQ(got, "error: CONVOY_TUNE_FILE: cannot read '" + tune_path + "'");
    EXPECT_TRUE(same_everywhere(got));
  }
  {
    // Not a tuning file: an error, not a hang.
    const scoped_env env("CONVOY_TUNE_FILE", "/dev/zero");
    const std::string got = outcome();
    EXPECT_EQ(got, "error: tuning file /dev/zero: larger than 1 MiB; is it a tuning file?");
    EXPECT_TRUE(same_everywhere(got));
  }
}

TEST(SettingsMpi, RankZeroEnvironmentWinsAndEveryVariableTravels) {  // BASE-6
  // Every variable set on rank 0, other values (valid or not) elsewhere.
  const bool root = world_rank() == 0;
  const scoped_env e1("CONVOY_MESH", root ? "node,core" : "bogus");
  const scoped_env e2("CONVOY_EMULATE_MAP", root ? "cyclic" : "block");
  const scoped_env e3("CONVOY_BUFFER_BYTES", root ? "4Ki" : "3");
  const scoped_env e4("CONVOY_TRANSPORT", root ? "shm-zero-copy" : "mpi");
  const scoped_env e5("CONVEY_NLOCAL", root ? "2" : nullptr);
  const scoped_env e6("CONVOY_TUNE_FILE", root ? nullptr : "/nonexistent");
  base::settings s;
  ASSERT_NO_THROW(s = base::settings::from_env(MPI_COMM_WORLD));
  EXPECT_EQ(s.mesh, "node,core");
  EXPECT_EQ(s.emulate_map, base::placement::cyclic);
  EXPECT_EQ(s.buffer_bytes, 4096u);
  EXPECT_EQ(s.transport_or_auto(), base::transport_kind::shm_zero_copy);
  EXPECT_EQ(s.convey_nlocal, 2);
  EXPECT_EQ(s.tune_file, std::nullopt);
  EXPECT_TRUE(same_everywhere(s.describe())) << s.describe();
}
