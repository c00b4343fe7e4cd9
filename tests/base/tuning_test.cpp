// The tuning file's format, keys and errors (base/README.md BASE-8), and the precedence of
// its values under the environment's (BASE-5).
#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/base/tuning.hpp>
#include <string>

namespace base = convoy::base;

namespace {

std::string message_of(const std::string& text) {
  try {
    (void)base::tuning::parse("t.conf", text);
  } catch (const convoy::error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Tuning, TodaysFormatReadsAsBefore) {  // BASE-8
  const auto t = base::tuning::parse("t.conf",
                                     "# written by convoy-tune\n"
                                     "buffer_bytes=8192\n"
                                     "n_buffers=4   # per link\n"
                                     "\n"
                                     "mesh=node,core\n");
  EXPECT_EQ(t.path, "t.conf");
  EXPECT_EQ(t.buffer_bytes(), 8192u);
  EXPECT_EQ(t.n_buffers(), 4);
  EXPECT_EQ(t.mesh(), "node,core");
  EXPECT_EQ(t.kind(), std::nullopt);
  EXPECT_EQ(t.entries.size(), 3u);
}

TEST(Tuning, BlanksCrlfRepeatsAndSuffixes) {  // BASE-8
  const auto t =
      base::tuning::parse("t.conf", "  buffer_bytes = 8Ki \r\nn_buffers=2\r\nn_buffers=8\r\n");
  EXPECT_EQ(t.buffer_bytes(), 8192u);
  EXPECT_EQ(t.n_buffers(), 8);  // the last wins
  EXPECT_EQ(t.get("buffer_bytes"), "8Ki");
}

TEST(Tuning, UnknownKeysAreKeptAndNotChecked) {  // BASE-8
  const auto t = base::tuning::parse("t.conf", "future_knob=??\nbuffer_bytes=100\n");
  EXPECT_EQ(t.get("future_knob"), "??");
  EXPECT_EQ(t.buffer_bytes(), 100u);
}

// Files of convoy 0.5 name the buffer size capacity_bytes: read and checked as buffer_bytes,
// a kind's own entry first, and the new name before the old at the same scope.
TEST(Tuning, CapacityBytesIsTheOldNameOfBufferBytes) {  // BASE-8
  const auto old =
      base::tuning::parse("t.conf", "capacity_bytes=4Ki\ntensor3.capacity_bytes=2Ki\n");
  EXPECT_EQ(old.buffer_bytes(), 4096u);
  EXPECT_EQ(old.buffer_bytes("tensor3"), 2048u);
  EXPECT_EQ(old.buffer_bytes("mesh"), 4096u);
  const auto both = base::tuning::parse(
      "t.conf", "capacity_bytes=4Ki\nbuffer_bytes=8Ki\ntensor3.capacity_bytes=2Ki\n");
  EXPECT_EQ(both.buffer_bytes(), 8192u);
  EXPECT_EQ(both.buffer_bytes("tensor3"), 2048u);
  try {
    (void)base::tuning::parse("t.conf", "\ncapacity_bytes=lots\n");
    ADD_FAILURE() << "a bad capacity_bytes accepted";
  } catch (const convoy::error& e) {
    EXPECT_NE(std::string(e.what()).find("t.conf:2: capacity_bytes='lots'"), std::string::npos)
        << e.what();
  }
}

TEST(Tuning, KindAndPerKindEntries) {  // BASE-8
  const auto t = base::tuning::parse("t.conf",
                                     "kind=tensor3\n"
                                     "buffer_bytes=16Ki\n"
                                     "tensor3.buffer_bytes=4Ki\n"
                                     "tensor3.n_buffers=4\n"
                                     "mesh1d.mesh=8\n");
  EXPECT_EQ(t.kind(), "tensor3");
  EXPECT_EQ(t.buffer_bytes("tensor3"), 4096u);
  EXPECT_EQ(t.buffer_bytes("tensor2"), 16384u);  // falls back to the unscoped key
  EXPECT_EQ(t.buffer_bytes(), 16384u);
  EXPECT_EQ(t.n_buffers("tensor3"), 4);
  EXPECT_EQ(t.n_buffers(), std::nullopt);
  EXPECT_EQ(t.mesh("mesh1d"), "8");
  EXPECT_EQ(t.mesh(), std::nullopt);
}

TEST(Tuning, MalformedLinesNameFileAndLine) {  // BASE-8
  EXPECT_EQ(message_of("buffer_bytes=8192\nmesh node,core\n"),
            "tuning file t.conf:2: expected key=value");
  EXPECT_EQ(message_of("\n\n=5\n"), "tuning file t.conf:3: expected key=value");
}

TEST(Tuning, BadValuesNameFileLineKeyAndValue) {  // BASE-8
  EXPECT_EQ(message_of("buffer_bytes=12q\n"),
            "tuning file t.conf:1: buffer_bytes='12q': must be a byte count from 64 bytes to "
            "1 GiB: digits with an optional suffix k, Ki, M or Mi");
  EXPECT_EQ(message_of("# c\nn_buffers=3\n"),
            "tuning file t.conf:2: n_buffers='3': must be a power of two from 1 to 1024");
  EXPECT_EQ(message_of("n_buffers=4,8\n"),
            "tuning file t.conf:1: n_buffers='4,8': must be a power of two from 1 to 1024");
  EXPECT_EQ(message_of("mesh=8xx2\n"),
            "tuning file t.conf:1: mesh: mesh spec '8xx2': size 2 is empty (expected sizes like "
            "8x4x2)");
  EXPECT_EQ(message_of("kind=\n"), "tuning file t.conf:1: kind='': is empty");
  EXPECT_EQ(message_of("tensor3.buffer_bytes=0\n"),
            "tuning file t.conf:1: tensor3.buffer_bytes='0': must be a byte count from 64 bytes to "
            "1 GiB: digits with an optional suffix k, Ki, M or Mi");
}

TEST(Settings, PrecedenceEnvironmentThenTuningThenDefault) {  // BASE-5
  base::settings s = base::settings::from_values({});
  EXPECT_EQ(s.buffer_bytes_or_default(), base::default_buffer_bytes);
  EXPECT_EQ(s.n_buffers_or_default(), base::default_n_buffers);
  EXPECT_EQ(s.mesh_text(), "auto");
  s.tuning = base::tuning::parse("t.conf", "buffer_bytes=1Ki\nn_buffers=8\nmesh=node,core\n");
  EXPECT_EQ(s.buffer_bytes_or_default(), 1024u);
  EXPECT_EQ(s.n_buffers_or_default(), 8);
  EXPECT_EQ(s.mesh_text(), "node,core");
  EXPECT_EQ(s.mesh_or_auto(), base::mesh_spec::of_levels({base::level::node, base::level::core}));
  const auto env = base::settings::from_values(
      {{"CONVOY_BUFFER_BYTES", "2Ki"}, {"CONVOY_N_BUFFERS", "4"}, {"CONVOY_MESH", "2x1"}});
  s.buffer_bytes = env.buffer_bytes;
  s.n_buffers = env.n_buffers;
  s.mesh = env.mesh;
  EXPECT_EQ(s.buffer_bytes_or_default(), 2048u);
  EXPECT_EQ(s.n_buffers_or_default(), 4);
  EXPECT_EQ(s.mesh_text(), "2x1");
}

TEST(Settings, DescribeShowsTheTuningFile) {  // BASE-8
  base::settings s = base::settings::from_values({});
  EXPECT_EQ(s.describe().find("\ntuning file"), std::string::npos);
  s.tuning = base::tuning::parse("/x/tune.conf", "n_buffers=8\nkind=tensor3\n");
  const std::string text = s.describe();
  EXPECT_NE(text.find("\ntuning file /x/tune.conf:\n  kind=tensor3\n  n_buffers=8\n"),
            std::string::npos)
      << text;
}
