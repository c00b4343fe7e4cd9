// The trace recorder over MPI (termination/README.md, TERM-17): with CONVOY_TRACE set, every
// rank writes its file when the conveyor is freed. Parsed back on rank 0: the buffers rank a
// sent toward b on a stage are the buffers b received from a on it, and the engine's own count
// of buffers sent; advance calls do not overlap; every stage closes once per cycle and every
// buffer is received inside an advance; a directory that cannot be made is one error on every rank.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

namespace {

using convoy::conveyor;
using convoy::conveyor_options;
using convoy_test::world_rank;
using convoy_test::world_size;
using json = nlohmann::json;
namespace fs = std::filesystem;

// A fresh directory named by rank 0, removed at the end.
class trace_dir {
 public:
  trace_dir() {
    std::string p;
    if (world_rank() == 0) {
      char name[] = "/tmp/convoy_trace_XXXXXX";
      p = mkdtemp(name);
    }
    path_ = convoy_test::from_root(p);
  }
  ~trace_dir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) fs::remove_all(path_);
  }
  trace_dir(const trace_dir&) = delete;
  trace_dir& operator=(const trace_dir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Settings are rank 0's (BASE-6): only its environment matters.
void set_trace(const char* value) {
  if (world_rank() != 0) return;
  if (value)
    setenv("CONVOY_TRACE", value, 1);
  else
    unsetenv("CONVOY_TRACE");
}

// `cycles` cycles of `n` items per rank to pseudo-random destinations through small buffers
// (many buffers, some partly filled, backpressure). Returns this rank's buffers sent.
std::uint64_t run(const conveyor_options& o, int cycles, int n) {
  const int me = world_rank(), p = world_size();
  conveyor<std::int64_t> c(MPI_COMM_WORLD, o);
  std::int64_t received = 0;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    c.begin();
    std::uint64_t x = 12345 + 77 * static_cast<std::uint64_t>(me) + cycle;
    int i = 0;
    auto push_some = [&] {
      for (; i < n; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        if (!c.push(i, static_cast<int>((x >> 33) % static_cast<std::uint64_t>(p)))) break;
      }
    };
    push_some();
    while (c.advance(i == n)) {
      push_some();
      while (auto d = c.pull()) ++received;
    }
    c.reset();
  }
  std::int64_t all = 0;
  MPI_Allreduce(&received, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(all, static_cast<std::int64_t>(cycles) * n * p);
  return c.stats(true).buffers_sent;
}

// Rank 0: every rank's file of the one conveyor in `dir`.
std::vector<json> read_all(const std::string& dir) {
  std::vector<json> docs(static_cast<std::size_t>(world_size()));
  int conveyor = -1;
  for (const auto& f : fs::directory_iterator(dir)) {
    const std::string name = f.path().filename().string();
    int c = 0, r = 0;
    if (std::sscanf(name.c_str(), "convoy-trace.%d.%d.json", &c, &r) != 2) continue;
    EXPECT_TRUE(conveyor < 0 || conveyor == c) << "one conveyor, one index: " << name;
    conveyor = c;
    std::ifstream in(f.path());
    docs.at(static_cast<std::size_t>(r)) = json::parse(in);
  }
  return docs;
}

struct rank_facts {
  std::map<std::tuple<int, int>, int> sent, received;  // (stage, peer) -> buffers
  int sends = 0;
};

// One rank's file: its events checked in themselves, its buffers per link counted.
void check_rank(const json& d, int rank, int cycles, rank_facts& f) {
  const json& other = d.at("otherData");
  EXPECT_EQ(other.at("events_dropped"), 0);
  const auto& outs = other.at("out_links");
  const auto& ins = other.at("in_links");
  const int n_out = static_cast<int>(outs.size());
  std::vector<std::pair<double, double>> advances;
  std::vector<double> inside_advance;
  std::map<int, int> closed;
  int thread_names = 0;
  for (const auto& e : d.at("traceEvents")) {
    EXPECT_EQ(e.at("pid"), rank);
    const std::string ph = e.at("ph");
    if (ph == "M") {
      thread_names += e.at("name") == "thread_name";
      continue;
    }
    const std::string name = e.at("name");
    const int tid = e.at("tid");
    const double ts = e.at("ts");
    if (ph == "X") {
      ASSERT_TRUE(e.contains("dur")) << e;
      if (name == "advance") advances.emplace_back(ts, e.at("dur").get<double>());
    } else if (name == "send") {
      ASSERT_GE(tid, 1);
      ASSERT_LE(tid, n_out);
      const auto& l = outs.at(static_cast<std::size_t>(tid - 1));
      ++f.sent[{l[0].get<int>(), l[1].get<int>()}];
      ++f.sends;
    } else if (name == "receive") {
      ASSERT_GT(tid, n_out);
      const auto& l = ins.at(static_cast<std::size_t>(tid - 1 - n_out));
      ++f.received[{l[0].get<int>(), l[1].get<int>()}];
      inside_advance.push_back(ts);  // taken from the transport by advance only
    } else if (name == "stage closed") {
      ++closed[e.at("args").at("stage").get<int>()];
      inside_advance.push_back(ts);
    }
  }
  EXPECT_EQ(thread_names, 1 + n_out + static_cast<int>(ins.size()));
  // Advance calls follow one another (a merged run of idle calls spans them all).
  std::sort(advances.begin(), advances.end());
  for (std::size_t k = 1; k < advances.size(); ++k)
    EXPECT_GE(advances[k].first + 0.002, advances[k - 1].first + advances[k - 1].second)
        << "rank " << rank << " advance " << k;
  // Termination closes each stage once per cycle; it and the receives happen inside advance.
  for (int s = 0; s < other.at("n_stages").get<int>(); ++s)
    EXPECT_EQ(closed[s], cycles) << "rank " << rank << " stage " << s;
  for (double t : inside_advance)
    EXPECT_TRUE(std::any_of(
        advances.begin(), advances.end(),
        [t](const auto& a) { return t + 0.002 >= a.first && t <= a.first + a.second + 0.002; }))
        << "rank " << rank << ": a receive or stage closed at " << t << " outside every advance";
}

TEST(TraceMpi, BuffersSentEqualBuffersReceivedAndTheEngineCount) {  // TERM-17
  trace_dir dir;
  set_trace(dir.path().c_str());
  conveyor_options o;
  o.buffer_bytes = 256;
  constexpr int cycles = 2;
  const std::uint64_t sent = run(o, cycles, 3000);
  set_trace(nullptr);
  std::vector<unsigned long long> all(static_cast<std::size_t>(world_size()));
  const unsigned long long mine = sent;
  MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, 0,
             MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);  // every file written
  if (world_rank() != 0) return;
  const auto docs = read_all(dir.path());
  std::vector<rank_facts> facts;
  for (int r = 0; r < world_size(); ++r) {
    ASSERT_FALSE(docs[static_cast<std::size_t>(r)].is_null()) << "no file of rank " << r;
    check_rank(docs[static_cast<std::size_t>(r)], r, cycles, facts.emplace_back());
    EXPECT_EQ(static_cast<unsigned long long>(facts.back().sends), all[static_cast<std::size_t>(r)])
        << "rank " << r;
  }
  EXPECT_GT(facts[0].sends, 0);
  for (int a = 0; a < world_size(); ++a)
    for (const auto& [key, n] : facts[static_cast<std::size_t>(a)].sent) {
      const auto [stage, b] = key;
      EXPECT_EQ(n, (facts[static_cast<std::size_t>(b)].received[{stage, a}]))
          << "stage " << stage << ": rank " << a << " -> rank " << b;
    }
  for (int b = 0; b < world_size(); ++b)
    for (const auto& [key, n] : facts[static_cast<std::size_t>(b)].received) {
      const auto [stage, a] = key;
      EXPECT_EQ(n, (facts[static_cast<std::size_t>(a)].sent[{stage, b}]));
    }
}

TEST(TraceMpi, DirectoryThatCannotBeMadeIsOneErrorOnEveryRank) {  // TERM-17
  set_trace("/dev/null/trace");
  std::string what;
  try {
    conveyor<std::int64_t> c(MPI_COMM_WORLD, conveyor_options{});
  } catch (const convoy::error& e) {
    what = e.what();
  }
  set_trace(nullptr);
  EXPECT_EQ(what.rfind("CONVOY_TRACE='/dev/null/trace': cannot create the directory", 0), 0u)
      << what;
  EXPECT_TRUE(convoy_test::same_everywhere(what));
}

}  // namespace
