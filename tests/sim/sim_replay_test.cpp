// convoy-sim --from-stats (tools/sim/README.md "Replaying a measured run", SIM-14..SIM-16):
// the gravity estimate's rounding, a stats document made from a simulated run replayed to
// the same per-link counts, the items per link against a hand count, bad documents named
// by their field, and a replay at a larger P.
#include "sim_replay.hpp"

#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <tuple>

namespace {

using convoy::sim::run_config;
using convoy::sim::run_result;
using nlohmann::json;

// Every rank sends `k` items to every rank, itself included.
std::shared_ptr<const convoy::sim::traffic_matrix> all_to_all(int p, std::uint64_t k) {
  auto m = std::make_shared<convoy::sim::traffic_matrix>();
  m->rows.resize(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s)
    for (int d = 0; d < p; ++d) m->rows[static_cast<std::size_t>(s)].push_back({d, k});
  m->total = static_cast<std::uint64_t>(p) * static_cast<std::uint64_t>(p) * k;
  return m;
}

// A CONVOY_STATS document (version 1, every field of the contract) of a simulated run, as
// the library would write it for one conveyor that ran `cycles` identical cycles.
json stats_of(const run_config& c, const run_result& r, const std::vector<int>& rank_node,
              const std::vector<int>& mesh, const std::vector<int>& stage_dimension,
              std::uint64_t cycles) {
  const int p = r.ranks;
  std::vector<std::uint64_t> pushes(static_cast<std::size_t>(p)), pulls(pushes.size());
  for (int s = 0; s < p; ++s)
    for (const auto& e : c.traffic->rows[static_cast<std::size_t>(s)]) {
      pushes[static_cast<std::size_t>(s)] += e.items;
      pulls[static_cast<std::size_t>(e.dst)] += e.items;
    }
  std::map<std::tuple<int, int, int>, const convoy::sim::link_count*> by_link;
  for (const auto& l : r.links) by_link[{l.rank, l.stage, l.peer}] = &l;
  json ranks = json::array();
  for (int q = 0; q < p; ++q) {
    const auto i = static_cast<std::size_t>(q);
    json stages = json::array();
    for (int s = 0; s < r.stages; ++s) {
      json links = json::array();
      for (const auto& l : r.links) {
        if (l.rank != q || l.stage != s) continue;
        const auto back = by_link.find({l.peer, s, q});
        const auto* in = back == by_link.end() ? nullptr : back->second;
        links.push_back(
            {{"peer", l.peer},
             {"peer_node", rank_node[static_cast<std::size_t>(l.peer)]},
             {"items_sent", l.items * cycles},
             {"bytes_sent", l.bytes * cycles},
             {"buffers_full", l.buffers_full * cycles},
             {"buffers_partial", l.buffers_partial * cycles},
             {"credit_stalls", 0},
             {"items_received", in ? in->items * cycles : 0},
             {"bytes_received", in ? in->bytes * cycles : 0},
             {"buffers_received", in ? (in->buffers_full + in->buffers_partial) * cycles : 0}});
      }
      stages.push_back({{"stage", s},
                        {"dimension", stage_dimension[static_cast<std::size_t>(s)]},
                        {"links", links}});
    }
    ranks.push_back({{"rank", q},
                     {"node", rank_node[i]},
                     {"pushes", pushes[i] * cycles},
                     {"pulls", pulls[i] * cycles},
                     {"advances", 0},
                     {"advance_seconds", 0.5 * r.rank_seconds[i] * static_cast<double>(cycles)},
                     {"cycle_seconds", r.rank_seconds[i] * static_cast<double>(cycles)},
                     {"memory_high_water", 0},
                     {"credit_stalls", 0},
                     {"items_forwarded", 0},
                     {"buffers_sent", 0},
                     {"bytes_sent", 0},
                     {"buffers_received", 0},
                     {"stages", stages}});
  }
  json conveyor = {{"index", 0},
                   {"api", "cpp"},
                   {"kind", "mesh"},
                   {"mesh", mesh},
                   {"stage_dimension", stage_dimension},
                   {"item_bytes", c.item_bytes},
                   {"buffer_bytes", c.buffer_bytes},
                   {"n_buffers", c.n_buffers},
                   {"cycles", cycles},
                   {"reduced", json::object()},
                   {"per_rank", ranks}};
  int nodes = 0;
  for (const int n : rank_node) nodes = std::max(nodes, n + 1);
  return {{"format", "convoy-stats"}, {"version", 1},           {"ranks", p},
          {"nodes", nodes},           {"rank_node", rank_node}, {"conveyors", {conveyor}}};
}

// A simulated "measured" run: `traffic` on `nodes` with mesh `mesh`, links counted.
run_result measured(run_config& c, const std::vector<int>& nodes, const std::string& mesh,
                    std::shared_ptr<const convoy::sim::traffic_matrix> traffic) {
  c.machine.node_sizes = nodes;
  c.plan.mesh = mesh;
  c.workload = convoy::sim::workload_kind::traffic;
  c.traffic = std::move(traffic);
  c.count_links = true;
  c.buffer_bytes = 256;  // several buffers per link, full and partial
  return convoy::sim::run(c);
}

// Writes the document where a CLI test or a reader can look at it (the fixtures of
// tests/sim were made this way).
void keep(const json& doc, const char* name) {
  if (const char* dir = std::getenv("CONVOY_REPLAY_FIXTURE_DIR")) {
    std::ofstream(std::string(dir) + "/" + name) << doc.dump(1) << "\n";
  }
}

TEST(Gravity, RowsExactEntriesWithinOneOfTheirShare) {
  const std::vector<std::uint64_t> pushes = {10, 7, 0, 1000};
  const std::vector<std::uint64_t> weights = {1, 3, 0, 5};
  const auto m = convoy::sim::gravity_matrix(pushes, weights);
  std::uint64_t total = 0;
  for (std::size_t s = 0; s < pushes.size(); ++s) {
    std::uint64_t row = 0;
    for (const auto& e : m.rows[s]) {
      const double share = static_cast<double>(pushes[s]) *
                           static_cast<double>(weights[static_cast<std::size_t>(e.dst)]) / 9.0;
      EXPECT_LT(std::abs(static_cast<double>(e.items) - share), 1.0) << s << "->" << e.dst;
      EXPECT_NE(e.dst, 2) << "a destination of weight 0 got items";
      row += e.items;
    }
    EXPECT_EQ(row, pushes[s]);
    total += row;
  }
  EXPECT_EQ(m.total, total);
  EXPECT_THROW((void)convoy::sim::gravity_matrix({5}, {0}), convoy::error);
}

TEST(Gravity, IntegerSharesAreExact) {
  const auto m = convoy::sim::gravity_matrix({12, 12, 12}, {4, 4, 4});
  for (const auto& row : m.rows) {
    ASSERT_EQ(row.size(), 3U);
    for (const auto& e : row) EXPECT_EQ(e.items, 4U);
  }
}

// SIM-14: an all-to-all run (the gravity estimate is exact for it) replayed from its stats
// document gives every link the same items, bytes, full and partial buffers; the items
// per link are the hand count of the 2 x 2 mesh: a link carries the items of two pairs.
TEST(Replay, SameCountsPerLinkAsTheMeasuredRun) {
  run_config c;
  const std::uint64_t k = 50, cycles = 3;
  const auto r = measured(c, {2, 2}, "2x2", all_to_all(4, k));
  for (const auto& l : r.links) EXPECT_EQ(l.items, 2 * k) << l.rank << "->" << l.peer;
  const json doc = stats_of(c, r, {0, 0, 1, 1}, {2, 2}, {1, 0}, cycles);
  keep(doc, "stats_2x2.json");
  const auto run = convoy::sim::parse_stats(doc.dump(), "2x2");
  const auto& cv = convoy::sim::choose_conveyor(run, -1);
  // The measured run's model: the application's time fitted from the stats would change
  // when buffers leave, and with it how many go out partial.
  convoy::sim::replay_request req;
  req.fit_app = false;
  const auto setup = convoy::sim::setup_replay(run, cv, run_config{}, req);
  EXPECT_EQ(setup.check.buffer_bytes, 256U);
  EXPECT_EQ(setup.mesh_text, "auto");  // node x core: the 2x2 of two nodes of two
  const auto replay = convoy::sim::run(setup.check);
  ASSERT_EQ(replay.links.size(), r.links.size());
  std::map<std::tuple<int, int, int>, convoy::sim::link_count> want;
  for (const auto& l : r.links) want[{l.rank, l.stage, l.peer}] = l;
  for (const auto& l : replay.links) {
    const auto& w = want.at({l.rank, l.stage, l.peer});
    EXPECT_EQ(l.items, w.items);
    EXPECT_EQ(l.bytes, w.bytes);
    EXPECT_EQ(l.buffers_full, w.buffers_full);
    EXPECT_EQ(l.buffers_partial, w.buffers_partial);
    EXPECT_EQ(l.off_node, w.off_node);
  }
  // Fitted: (cycle - advance - push - pull) / pushes, advance being half of the cycle.
  const auto fitted = convoy::sim::setup_replay(run, cv, run_config{}, {});
  const auto& r0 = cv.per_rank[0];
  const double own = 0.5 * r0.cycle_seconds / static_cast<double>(r0.pushes);
  EXPECT_GT(fitted.check.model.app_s, 0);
  EXPECT_LT(fitted.check.model.app_s, own * 1.5);
}

// SIM-14 on a ragged machine: 3 ranks on nodes of 2 and 1, the library's default mesh
// (node x core with a hole), found from the links; uneven traffic.
TEST(Replay, RaggedMachineFindsTheAutoMesh) {
  run_config c;
  auto t = std::make_shared<convoy::sim::traffic_matrix>();
  t->rows = {{{1, 40}, {2, 20}}, {{0, 10}, {2, 30}}, {{0, 25}, {1, 25}, {2, 5}}};
  t->total = 155;
  const auto r = measured(c, {2, 1}, "auto", t);
  const json doc = stats_of(c, r, {0, 0, 1}, {2, 2}, {1, 0}, 1);
  keep(doc, "stats_ragged.json");
  const auto run = convoy::sim::parse_stats(doc.dump(), "ragged");
  const auto setup = convoy::sim::setup_replay(run, run.conveyors[0], run_config{}, {});
  EXPECT_EQ(setup.mesh_text, "auto");
  const auto replay = convoy::sim::run(setup.check);
  EXPECT_EQ(replay.items, 155U);
  EXPECT_EQ(replay.links.size(), r.links.size());
  // Two sockets per node, ragged (4 and 2 ranks): auto is node,socket,core, three stages
  // with holes, which no Cartesian shape gives.
  run_config two;
  two.machine.sockets_per_node = 2;
  const auto r2 = measured(two, {4, 2}, "auto", all_to_all(6, 3));
  const auto run2 = convoy::sim::parse_stats(
      stats_of(two, r2, {0, 0, 0, 0, 1, 1}, {2, 2, 2}, {2, 1, 0}, 1).dump(), "sockets");
  EXPECT_EQ(convoy::sim::setup_replay(run2, run2.conveyors[0], run_config{}, {}).mesh_text,
            "auto (2 sockets)");
}

// SIM-14 for bale's tensor route: kind "tensor", no mesh, stage_dimension -1 per stage.
TEST(Replay, TensorKindReplays) {
  run_config c;
  c.plan.tensor = 2;
  const auto r = measured(c, {2, 2}, "auto", all_to_all(4, 10));
  json doc = stats_of(c, r, {0, 0, 1, 1}, {}, {-1, -1}, 1);
  doc["conveyors"][0]["kind"] = "tensor";
  const auto run = convoy::sim::parse_stats(doc.dump(), "tensor");
  convoy::sim::replay_request req;
  req.fit_app = false;
  const auto setup = convoy::sim::setup_replay(run, run.conveyors[0], run_config{}, req);
  EXPECT_EQ(setup.check.plan.tensor, 2);
  const auto replay = convoy::sim::run(setup.check);
  ASSERT_EQ(replay.links.size(), r.links.size());
  for (std::size_t i = 0; i < r.links.size(); ++i)
    EXPECT_EQ(replay.links[i].items, r.links[i].items);
  doc["conveyors"][0]["kind"] = "simple";  // a bulk exchange: no streaming plan
  const auto simple = convoy::sim::parse_stats(doc.dump(), "simple");
  EXPECT_THROW((void)convoy::sim::setup_replay(simple, simple.conveyors[0], run_config{}, req),
               convoy::error);
}

// SIM-14 for the estimate's own case: a uniform random run (16 ranks on 4 nodes, 2 000
// items per rank) replayed from its totals carries per stage and link class the measured
// items within 3 %, and every link within 25 % (sampling noise of ~500 items per link).
TEST(Replay, UniformRandomRunAgreesPerClass) {
  const int p = 16;
  auto t = std::make_shared<convoy::sim::traffic_matrix>();
  t->rows.resize(p);
  std::mt19937_64 rng(7);
  for (int s = 0; s < p; ++s) {
    std::vector<std::uint64_t> n(p);
    for (int i = 0; i < 2000; ++i) ++n[static_cast<std::size_t>(rng() % p)];
    for (int d = 0; d < p; ++d)
      t->rows[static_cast<std::size_t>(s)].push_back({d, n[static_cast<std::size_t>(d)]});
  }
  t->total = std::uint64_t{2000} * p;
  run_config c;
  const auto r = measured(c, {4, 4, 4, 4}, "auto", t);
  std::vector<int> rank_node(p);
  for (int q = 0; q < p; ++q) rank_node[static_cast<std::size_t>(q)] = q / 4;
  const auto run =
      convoy::sim::parse_stats(stats_of(c, r, rank_node, {4, 4}, {1, 0}, 1).dump(), "u");
  const auto setup = convoy::sim::setup_replay(run, run.conveyors[0], run_config{}, {});
  const auto replay = convoy::sim::run(setup.check);
  std::map<std::pair<int, bool>, std::pair<double, double>> by_class;
  std::map<std::tuple<int, int, int>, double> measured_link;
  for (const auto& l : r.links) {
    by_class[{l.stage, l.off_node}].first += static_cast<double>(l.items);
    measured_link[{l.rank, l.stage, l.peer}] = static_cast<double>(l.items);
  }
  for (const auto& l : replay.links) {
    by_class[{l.stage, l.off_node}].second += static_cast<double>(l.items);
    const double m = measured_link.at({l.rank, l.stage, l.peer});
    EXPECT_NEAR(static_cast<double>(l.items), m, 0.25 * m) << l.rank << "->" << l.peer;
  }
  EXPECT_EQ(by_class.size(), 2U);  // stage 0 on the node, stage 1 across
  for (const auto& [key, v] : by_class) EXPECT_NEAR(v.second, v.first, 0.03 * v.first);
}

// SIM-16: --ranks/--ppn with the stats: the pattern tiled over 16 ranks of 2 per node.
TEST(Replay, ScaledRunKeepsThePerRankPushes) {
  run_config c;
  const auto r = measured(c, {2, 2}, "2x2", all_to_all(4, 20));
  const auto run =
      convoy::sim::parse_stats(stats_of(c, r, {0, 0, 1, 1}, {2, 2}, {1, 0}, 1).dump(), "2x2");
  run_config base;
  base.machine.ranks = 16;
  base.machine.ranks_per_node = 2;
  base.plan.mesh = "8x2";
  convoy::sim::replay_request req;
  req.scale = req.mesh_given = true;
  const auto setup = convoy::sim::setup_replay(run, run.conveyors[0], base, req);
  ASSERT_TRUE(setup.scaled.has_value());
  const auto big = convoy::sim::run(*setup.scaled);
  EXPECT_EQ(big.ranks, 16);
  EXPECT_EQ(big.items, 16U * 80U);  // every rank pushes what a measured rank pushed
  // Without --mesh the measured mesh (auto: node x core) is laid on the new machine.
  req.mesh_given = false;
  const auto by_auto = convoy::sim::setup_replay(run, run.conveyors[0], base, req);
  EXPECT_EQ(by_auto.scaled->plan.mesh, "auto");
  // A 2x2 on one node is Cartesian (auto would be one dimension of 4): it says nothing
  // about 16 ranks, so the scaled run needs --mesh.
  run_config one;
  const auto r1 = measured(one, {4}, "2x2", all_to_all(4, 20));
  const auto run1 =
      convoy::sim::parse_stats(stats_of(one, r1, {0, 0, 0, 0}, {2, 2}, {1, 0}, 1).dump(), "one");
  EXPECT_THROW((void)convoy::sim::setup_replay(run1, run1.conveyors[0], base, req), convoy::error);
  req.scale = false;
  EXPECT_EQ(convoy::sim::setup_replay(run1, run1.conveyors[0], base, req).mesh_text, "2x2");
}

// SIM-15: a bad document is an error naming the file and the field.
TEST(Replay, BadDocumentsNameTheField) {
  run_config c;
  const auto r = measured(c, {2, 2}, "2x2", all_to_all(4, 5));
  const json good = stats_of(c, r, {0, 0, 1, 1}, {2, 2}, {1, 0}, 1);
  const auto message = [](const json& doc) {
    try {
      (void)convoy::sim::parse_stats(doc.dump(), "f.json");
    } catch (const convoy::error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json d = good;
  d["format"] = "other";
  EXPECT_NE(message(d).find("stats file 'f.json': format: 'other'"), std::string::npos);
  d = good;
  d["version"] = 2;
  EXPECT_NE(message(d).find("version: 2 is not 1"), std::string::npos);
  d = good;
  d["conveyors"][0]["per_rank"][1].erase("pushes");
  EXPECT_NE(message(d).find("conveyors[0].per_rank[1].pushes: missing"), std::string::npos);
  d = good;
  d["conveyors"][0]["per_rank"][2]["stages"][0]["links"][0]["items_sent"] = "many";
  EXPECT_NE(message(d).find("conveyors[0].per_rank[2].stages[0].links[0].items_sent: is not"),
            std::string::npos);
  d = good;
  d["conveyors"][0]["per_rank"][0]["stages"][0]["links"][0]["peer"] = 9;
  EXPECT_NE(message(d).find("links[0].peer: 9 is outside 0..3"), std::string::npos);
  d = good;
  d["rank_node"] = {0, 0, 1};
  EXPECT_NE(message(d).find("rank_node: holds 3 entries for 4 ranks"), std::string::npos);
  EXPECT_THROW((void)convoy::sim::parse_stats("[1, 2", "f.json"), convoy::error);
  d = good;
  d["unknown_field"] = {{"x", 1}};  // unknown fields are ignored
  EXPECT_EQ(message(d), "no error");
  const auto run = convoy::sim::parse_stats(good.dump(), "f.json");
  EXPECT_THROW((void)convoy::sim::choose_conveyor(run, 7), convoy::error);
  d = good;
  d["conveyors"][0]["kind"] = "etensor";
  const auto et = convoy::sim::parse_stats(d.dump(), "f.json");
  EXPECT_THROW((void)convoy::sim::setup_replay(et, et.conveyors[0], run_config{}, {}),
               convoy::error);
  d = good;
  d["conveyors"][0]["per_rank"][0]["stages"][1]["links"][0]["peer"] = 1;  // a stage-0 peer
  d["conveyors"][0]["per_rank"][0]["stages"][1]["links"][0]["peer_node"] = 0;
  const auto wrong = convoy::sim::parse_stats(d.dump(), "f.json");
  EXPECT_THROW((void)convoy::sim::setup_replay(wrong, wrong.conveyors[0], run_config{}, {}),
               convoy::error);
}

}  // namespace
