// convoy-topo's reports (tools/topo_report.hpp): the JSON document parses and gives back
// host names and specs exactly, whatever characters they hold (BENCH-1).
#include "topo_report.hpp"

#include <gtest/gtest.h>

#include <convoy/topology/build_mesh.hpp>
#include <convoy/topology/machine.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace topo = convoy::topology;

namespace {

TEST(TopoReport, JsonKeepsHostNamesExactly) {
  topo::machine m = topo::emulate_machine(4, {2, 2}, "", convoy::base::placement::block);
  const std::string host0 = "node\"0\\a\x01\n", host1 = "n\xc3\xa9ud 1";
  m.nodes[0].host = host0;
  m.nodes[1].host = host1;
  for (auto& p : m.ranks) p.host = p.node == 0 ? host0 : host1;
  m.source = "emulated \"2,2\"";
  const topo::mesh g = topo::build_mesh(m, convoy::base::parse_mesh_spec("node,core"));
  const std::string text = convoy::tools::json_report(m, g, "node,core");
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(text)) << text;
  EXPECT_EQ(doc["ranks"], 4);
  EXPECT_EQ(doc["spec"], "node,core");
  EXPECT_EQ(doc["source"], m.source);
  ASSERT_EQ(doc["nodes"].size(), 2u);
  EXPECT_EQ(doc["nodes"][0]["host"], host0);
  EXPECT_EQ(doc["nodes"][1]["host"], host1);
  EXPECT_EQ(doc["nodes"][1]["ranks"], nlohmann::json({2, 3}));
  ASSERT_EQ(doc["places"].size(), 4u);
  EXPECT_EQ(doc["places"][3]["host"], host1);
  EXPECT_EQ(doc["places"][3]["node"], 1);
  // 2 x 2 mesh: rank 3 sits at [1, 1], its node line holds rank 1, its core line rank 2.
  EXPECT_EQ(doc["dims"].size(), 2u);
  EXPECT_EQ(doc["coords"][3], nlohmann::json({1, 1}));
  EXPECT_EQ(doc["peers"][3], nlohmann::json({{1}, {2}}));
  EXPECT_EQ(doc["buffers_per_rank"], g.buffers_per_rank());
  EXPECT_TRUE(doc["holes"].empty());
}

TEST(TopoReport, TextNamesNodesAndMesh) {
  const topo::machine m = topo::emulate_machine(3, {2, 1}, "", convoy::base::placement::block);
  const topo::mesh g = topo::build_mesh(m, convoy::base::parse_mesh_spec("node,core"));
  const std::string text = convoy::tools::text_report(m, g, "node,core");
  EXPECT_NE(text.find("3 ranks on 2 nodes"), std::string::npos) << text;
  EXPECT_NE(text.find("1 hole"), std::string::npos) << text;
}

}  // namespace
