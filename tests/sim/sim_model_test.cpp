// The cost model file of convoy-sim (docs/sim-reference.md "The model", SIM-3): a round
// trip keeps every value, a partial file keeps the rest, mistakes name the key.
#include "sim_model.hpp"

#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <cstdio>
#include <string>

namespace {

using convoy::sim::cost_model;

cost_model odd_model() {
  cost_model m = cost_model::defaults();
  m.links[0] = {1.25e-7, 3.5e-7, 1.0 / 3e9};
  m.links[1] = {2.5e-7, 7e-7, 1.0 / 7e9};
  m.links[2] = {1.1e-6, 2.3e-6, 1.0 / 11e9};
  m.push_s = 4.4e-9;
  m.forward_s = 6.6e-9;
  m.pull_s = 2.2e-9;
  m.app_s = 8.8e-9;
  m.source = "calibrated by hand";
  return m;
}

TEST(SimModelFile, RoundTripKeepsEveryValue) {
  const cost_model m = odd_model();
  EXPECT_EQ(convoy::sim::model_from_json_text(convoy::sim::to_json_text(m), cost_model{}), m);
  const std::string path = ::testing::TempDir() + "sim_model_test.json";
  convoy::sim::save_model(path, m);
  EXPECT_EQ(convoy::sim::load_model(path, cost_model{}), m);
  std::remove(path.c_str());
}

TEST(SimModelFile, PartialDocumentKeepsTheBase) {
  const cost_model base = odd_model();
  const cost_model m = convoy::sim::model_from_json_text(
      R"({"links": {"off_node": {"latency_s": 5e-6}}, "pull_s": 1e-8})", base);
  EXPECT_EQ(m.links[2].latency_s, 5e-6);
  EXPECT_EQ(m.links[2].alpha_s, base.links[2].alpha_s);
  EXPECT_EQ(m.links[0], base.links[0]);
  EXPECT_EQ(m.pull_s, 1e-8);
  EXPECT_EQ(m.push_s, base.push_s);
  EXPECT_EQ(m.app_s, base.app_s);
}

void expect_error(const std::string& text, const std::string& fragment) {
  try {
    (void)convoy::sim::model_from_json_text(text, cost_model::defaults());
    ADD_FAILURE() << "no error for " << text;
  } catch (const convoy::error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(SimModelFile, MistakesNameTheKey) {
  expect_error("not json", "not JSON");
  expect_error("[1, 2]", "not a JSON object");
  expect_error(R"({"push": 1})", "unknown key 'push'");
  expect_error(R"({"pull_s": -1})", "'pull_s' is negative");
  expect_error(R"({"forward_s": "fast"})", "'forward_s' is not a number");
  expect_error(R"({"links": {"rack": {}}})", "unknown link class 'links.rack'");
  expect_error(R"({"links": {"off_node": {"beta": 1}}})", "unknown key 'links.off_node.beta'");
  EXPECT_THROW((void)convoy::sim::load_model("/nonexistent/model.json", cost_model{}),
               convoy::error);
}

}  // namespace
