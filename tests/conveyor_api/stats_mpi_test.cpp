// CONVOY_STATS through the C++ API (conveyor_api/README.md, API-30; docs/stats-format.md):
// conveyors of three kinds (one dynamic) run a cycle or two and are destroyed; rank 0's document is then
// read back and checked against what the ranks pushed and against itself: pushes = pulls =
// items pushed over the ranks, each link's sent counts equal its other end's received
// counts, min <= median <= max and sum over the per-rank rows, nodes as convoy sees them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <convoy/base/settings.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <tuple>

namespace {

using convoy::conveyor;
using convoy::conveyor_options;
using convoy_test::world_rank;
using convoy_test::world_size;
using json = nlohmann::json;

// A path in the temporary directory, rank 0's, on every rank.
std::string shared_path(const char* stem) {
  long id = static_cast<long>(::getpid());
  MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return (std::filesystem::temp_directory_path() /
          (std::string(stem) + "-" + std::to_string(id) + ".json"))
      .string();
}

std::shared_ptr<const convoy::base::settings> with_stats(const std::string& path) {
  auto s =
      std::make_shared<convoy::base::settings>(convoy::base::settings::from_env(MPI_COMM_WORLD));
  s->stats_path = path;
  return s;
}

// One cycle: `n` items from this rank to random ranks; returns the items pulled here.
std::uint64_t run_cycle(conveyor<std::uint64_t>& c, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dest(0, world_size() - 1);
  std::uint64_t pulled = 0;
  c.begin();
  int i = 0;
  int to = dest(rng);
  while (c.advance(i == n)) {
    for (; i < n; ++i, to = dest(rng))
      if (!c.push(static_cast<std::uint64_t>(i), to)) break;
    while (c.pull()) ++pulled;
  }
  c.reset();
  return pulled;
}

std::uint64_t sum_over_ranks(std::uint64_t v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

// Checks one conveyor of the document; `items` were pushed in all.
void check_conveyor(const json& c, const json& doc, std::uint64_t items, bool links) {
  const int p = doc.at("ranks").get<int>();
  const json& rows = c.at("per_rank");
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(p));
  std::uint64_t pushes = 0, pulls = 0;
  // (rank, stage, peer) -> {items, bytes, buffers} sent and received.
  std::map<std::tuple<int, int, int>, std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> sent,
      received;
  for (int r = 0; r < p; ++r) {
    const json& row = rows.at(static_cast<std::size_t>(r));
    EXPECT_EQ(row.at("rank").get<int>(), r);
    EXPECT_EQ(row.at("node"), doc.at("rank_node").at(static_cast<std::size_t>(r)));
    pushes += row.at("pushes").get<std::uint64_t>();
    pulls += row.at("pulls").get<std::uint64_t>();
    EXPECT_GE(row.at("cycle_seconds").get<double>(), row.at("advance_seconds").get<double>());
    std::uint64_t posted = 0;
    const json& stages = row.at("stages");
    ASSERT_EQ(stages.size(), c.at("stage_dimension").size());
    for (std::size_t k = 0; k < stages.size(); ++k) {
      const json& st = stages[k];
      EXPECT_EQ(st.at("stage").get<std::size_t>(), k);
      EXPECT_EQ(st.at("dimension"), c.at("stage_dimension").at(k));
      for (const json& l : st.at("links")) {
        const int peer = l.at("peer").get<int>();
        EXPECT_NE(peer, r) << "a loopback link";
        EXPECT_EQ(l.at("peer_node"), doc.at("rank_node").at(static_cast<std::size_t>(peer)));
        const int s = static_cast<int>(k);
        const auto u = [&l](const char* f) { return l.at(f).get<std::uint64_t>(); };
        const std::uint64_t buffers = u("buffers_full") + u("buffers_partial");
        if (buffers > 0) sent[{r, s, peer}] = {u("items_sent"), u("bytes_sent"), buffers};
        if (u("buffers_received") > 0)
          received[{peer, s, r}] = {u("items_received"), u("bytes_received"),
                                    u("buffers_received")};
        posted += l.at("buffers_full").get<std::uint64_t>() +
                  l.at("buffers_partial").get<std::uint64_t>();
      }
    }
    if (links) {
      EXPECT_EQ(posted, row.at("buffers_sent").get<std::uint64_t>()) << "rank " << r;
    }
  }
  EXPECT_EQ(pushes, items);
  EXPECT_EQ(pulls, items);
  // What A sent to B on stage s is what B received from A on stage s (both keyed A, s, B).
  if (links) {
    EXPECT_EQ(sent, received);
  }
  for (const auto& [name, red] : c.at("reduced").items()) {
    EXPECT_LE(red.at("min"), red.at("median")) << name;
    EXPECT_LE(red.at("median"), red.at("max")) << name;
    double sum = 0;
    for (const json& row : rows) sum += row.at(name).get<double>();
    EXPECT_DOUBLE_EQ(red.at("sum").get<double>(), sum) << name;
  }
  EXPECT_EQ(c.at("reduced").at("pushes").at("sum").get<std::uint64_t>(), items);
}

TEST(StatsDocument, ThreeKindsWrittenAtDestructionAndReadBack) {
  const std::string path = shared_path("convoy-stats-test");
  const auto settings = with_stats(path);
  std::uint64_t pushed[3] = {0, 0, 0};
  {
    conveyor_options mesh;
    mesh.settings = settings;
    conveyor_options bulk = mesh;
    bulk.kind = convoy::conveyor_kind::bulk;
    conveyor_options tensor = mesh;
    tensor.tensor_order = 2;
    tensor.n_local = 1;
    conveyor_options dynamic = mesh;  // an engine per cycle: the lifetime sums them
    dynamic.dynamic = true;
    conveyor<std::uint64_t> a(MPI_COMM_WORLD, dynamic);
    conveyor<std::uint64_t> b(MPI_COMM_WORLD, bulk);
    conveyor<std::uint64_t> unused(MPI_COMM_WORLD, mesh);  // never begins: not reported
    conveyor<std::uint64_t> t(MPI_COMM_WORLD, tensor);
    const int n = 3000 + 100 * world_rank();
    pushed[0] = sum_over_ranks(2 * static_cast<std::uint64_t>(n));
    pushed[1] = sum_over_ranks(static_cast<std::uint64_t>(n));
    pushed[2] = sum_over_ranks(static_cast<std::uint64_t>(n));
    std::uint64_t pulled = run_cycle(a, n, 1 + world_rank());
    pulled += run_cycle(a, n, 100 + world_rank());
    EXPECT_EQ(sum_over_ranks(pulled), pushed[0]);
    EXPECT_EQ(sum_over_ranks(run_cycle(b, n, 7)), pushed[1]);
    EXPECT_EQ(sum_over_ranks(run_cycle(t, n, 9)), pushed[2]);
    // The C++ API returns the same counters: this rank's links, each a distinct peer.
    const auto s = a.stats(true);
    EXPECT_EQ(s.begins, 2u);
    for (const auto& st : s.stages)
      for (const auto& l : st.links) EXPECT_NE(l.peer, world_rank());
  }  // destroyed in reverse order: t, unused, b, a
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << path;
    const json doc = json::parse(in);
    EXPECT_EQ(doc.at("format"), "convoy-stats");
    EXPECT_EQ(doc.at("version"), 1);
    EXPECT_EQ(doc.at("ranks").get<int>(), world_size());
    ASSERT_EQ(doc.at("rank_node").size(), static_cast<std::size_t>(world_size()));
    int nodes = 0;
    for (const json& n : doc.at("rank_node")) nodes = std::max(nodes, n.get<int>() + 1);
    EXPECT_EQ(doc.at("nodes").get<int>(), nodes);
    if (const char* e = std::getenv("CONVOY_EMULATE_NODES"); e && std::string(e) == "2,2") {
      EXPECT_EQ(doc.at("rank_node"), json({0, 0, 1, 1}));
    }
    const json& cs = doc.at("conveyors");
    ASSERT_EQ(cs.size(), 3u) << "the conveyor that never began is not reported";
    const char* kinds[] = {"mesh", "bulk", "tensor"};
    for (std::size_t i = 0; i < 3; ++i) {
      SCOPED_TRACE(kinds[i]);
      EXPECT_EQ(cs[i].at("index").get<std::size_t>(), i);
      EXPECT_EQ(cs[i].at("api"), "cpp");
      EXPECT_EQ(cs[i].at("kind"), kinds[i]);
      EXPECT_EQ(cs[i].at("item_bytes"), 8);
      EXPECT_GT(cs[i].at("buffer_bytes").get<std::size_t>(), 0u);
      check_conveyor(cs[i], doc, pushed[i], true);
    }
    EXPECT_EQ(cs[0].at("cycles"), 2);
    EXPECT_EQ(cs[2].at("mesh"), json::array());
    std::size_t mesh_ranks = 1;
    for (const json& d : cs[0].at("mesh")) mesh_ranks *= d.get<std::size_t>();
    EXPECT_GE(mesh_ranks, static_cast<std::size_t>(world_size()));
    std::remove(path.c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A CONVOY_STATS path in a directory that does not exist: construction fails on every rank
// with one error naming the setting and the directory.
TEST(StatsDocument, UnwritableDirectoryIsAnErrorAtConstruction) {
  conveyor_options o;
  o.settings = with_stats("/nonexistent-convoy-dir/stats.json");
  try {
    conveyor<int> c(MPI_COMM_WORLD, o);
    ADD_FAILURE() << "constructed";
  } catch (const convoy::error& e) {
    EXPECT_EQ(std::string(e.what()),
              "CONVOY_STATS='/nonexistent-convoy-dir/stats.json': directory "
              "'/nonexistent-convoy-dir' does not exist");
  }
}

}  // namespace
