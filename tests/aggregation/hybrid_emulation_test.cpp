// The emulated node boundary decides which links use shared memory (aggregation/README.md,
// AGG-60). Run under several CONVOY_EMULATE_NODES layouts (tests/aggregation/CMakeLists.txt);
// CONVOY_TEST_EXPECT_NODES, written by hand beside each layout, is the oracle: the node of
// every rank. Unset (no emulation): every rank is on the one real node.
#include <gtest/gtest.h>
#include <mpi.h>

#include <convoy/aggregation/hybrid_transport.hpp>
#include <convoy/aggregation/mpi_transport.hpp>
#include <convoy/aggregation/node_map.hpp>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "convoy_test/mpi.hpp"
#include "error_of.hpp"
#include "traffic_drive.hpp"
#include "transport_driver.hpp"

namespace agg = convoy::aggregation;
using convoy_test::all_to_all;
using convoy_test::contains;
using convoy_test::error_of;
using convoy_test::exchange;
using convoy_test::world_rank;
using convoy_test::world_size;

namespace {

// The expected node of every rank: CONVOY_TEST_EXPECT_NODES ("0,0,1,1"), or all 0.
std::vector<int> expected_nodes() {
  std::vector<int> nodes;
  if (const char* v = std::getenv("CONVOY_TEST_EXPECT_NODES")) {
    std::stringstream in(v);
    std::string item;
    while (std::getline(in, item, ',')) nodes.push_back(std::stoi(item));
  } else {
    nodes.assign(static_cast<std::size_t>(world_size()), 0);
  }
  return nodes;
}

bool emulated() { return std::getenv("CONVOY_EMULATE_NODES") != nullptr; }

// Emulated nodes with no oracle: the whole suite run under an outer CONVOY_EMULATE_NODES
// (e.g. over TCP), where the ".real" entry's "one real node" does not hold.
bool no_oracle() { return emulated() && std::getenv("CONVOY_TEST_EXPECT_NODES") == nullptr; }

// What the link to `peer` must use: shared memory exactly when the oracle puts both ends
// on one node (all ranks of these runs share one real host).
agg::link_medium want(const std::vector<int>& nodes, int rank, int peer) {
  return nodes.at(static_cast<std::size_t>(rank)) == nodes.at(static_cast<std::size_t>(peer))
             ? agg::link_medium::shm
             : agg::link_medium::mpi;
}

bool node_has_company(const std::vector<int>& nodes) {
  for (std::size_t a = 0; a < nodes.size(); ++a)
    for (std::size_t b = a + 1; b < nodes.size(); ++b)
      if (nodes[a] == nodes[b]) return true;
  return false;
}

}  // namespace

// AGG-60: the node map is discovery's (emulated nodes when emulating, else empty = real).
TEST(EmulatedNodes, NodeMapComesFromDiscovery) {
  if (no_oracle()) GTEST_SKIP() << "CONVOY_EMULATE_NODES without CONVOY_TEST_EXPECT_NODES";
  ASSERT_EQ(expected_nodes().size(), static_cast<std::size_t>(world_size()));
  const agg::node_map nodes = agg::discover_node_map(MPI_COMM_WORLD);
  if (emulated()) {
    EXPECT_EQ(nodes, expected_nodes());
  } else {
    EXPECT_TRUE(nodes.empty());
  }
  // The same with settings already resolved (they are not read again).
  EXPECT_EQ(
      agg::discover_node_map(MPI_COMM_WORLD, convoy::base::settings::from_env(MPI_COMM_WORLD)),
      nodes);
}

// AGG-60: make_transport with resolved settings discovers the same nodes: the automatic
// kind (no CONVOY_TRANSPORT in these runs) is the hybrid exactly when some node holds two.
TEST(EmulatedNodes, ResolvedSettingsChooseTheSameTransport) {
  if (no_oracle()) GTEST_SKIP() << "CONVOY_EMULATE_NODES without CONVOY_TEST_EXPECT_NODES";
  const auto s = convoy::base::settings::from_env(MPI_COMM_WORLD);
  // A run of the suite with CONVOY_TRANSPORT set (e.g. =rma) chose its transport itself.
  if (s.transport_or_auto() != convoy::base::transport_kind::automatic)
    GTEST_SKIP() << "CONVOY_TRANSPORT is set: the automatic choice is not made";
  auto t = agg::make_transport(MPI_COMM_WORLD, s);
  EXPECT_EQ(dynamic_cast<agg::hybrid_transport*>(t.get()) != nullptr,
            node_has_company(expected_nodes()));
}

// AGG-60: off_node_links is "the oracle puts the two ranks on different nodes" (the links
// a codec compresses), emulated or real; a rank outside the communicator is an error.
TEST(EmulatedNodes, OffNodeLinksFollowDiscovery) {
  if (no_oracle()) GTEST_SKIP() << "CONVOY_EMULATE_NODES without CONVOY_TEST_EXPECT_NODES";
  const std::vector<int> nodes = expected_nodes();
  const auto off =
      agg::off_node_links(MPI_COMM_WORLD, convoy::base::settings::from_env(MPI_COMM_WORLD));
  const int p = world_size();
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b)
      EXPECT_EQ(off(a, b), want(nodes, a, b) == agg::link_medium::mpi) << a << " -> " << b;
  EXPECT_THROW((void)off(0, p), std::out_of_range);
  EXPECT_TRUE(
      contains(error_of([] { (void)agg::off_node_links(MPI_COMM_NULL, convoy::base::settings{}); }),
               "MPI_COMM_NULL"));
}

// AGG-60: every link of the automatic transport uses shared memory exactly when both ends
// are on one (emulated) node, identically at both ends; traffic over both media arrives
// exactly once and in order, and the MPI side carried exactly the MPI links' buffers.
TEST(EmulatedNodes, NodeBoundaryDecidesTheMedium) {
  if (no_oracle()) GTEST_SKIP() << "CONVOY_EMULATE_NODES without CONVOY_TEST_EXPECT_NODES";
  const int rank = world_rank(), p = world_size();
  const std::vector<int> nodes = expected_nodes();
  auto t = agg::make_transport(MPI_COMM_WORLD, convoy::base::transport_kind::automatic);
  auto* hybrid = dynamic_cast<agg::hybrid_transport*>(t.get());
  // The automatic kind is the hybrid exactly when some node holds two ranks.
  ASSERT_EQ(hybrid != nullptr, node_has_company(nodes));
  ASSERT_EQ(dynamic_cast<agg::mpi_transport*>(t.get()) != nullptr, !node_has_company(nodes));
  const auto lay = all_to_all(rank, p, 2, 400, 2);
  t->open(lay);
  std::size_t mpi_out = 0, mpi_in = 0;
  for (std::size_t l = 0; l < lay.out_links.size(); ++l) {
    const agg::link_medium m = want(nodes, rank, lay.out_links[l].peer);
    mpi_out += m == agg::link_medium::mpi ? 1 : 0;
    if (hybrid) {
      EXPECT_EQ(hybrid->out_medium(static_cast<int>(l)), m)
          << "out-link to " << lay.out_links[l].peer;
    }
  }
  for (std::size_t l = 0; l < lay.in_links.size(); ++l) {
    const agg::link_medium m = want(nodes, rank, lay.in_links[l].peer);
    mpi_in += m == agg::link_medium::mpi ? 1 : 0;
    if (hybrid) {
      EXPECT_EQ(hybrid->in_medium(static_cast<int>(l)), m)
          << "in-link from " << lay.in_links[l].peer;
    }
  }
  if (hybrid) {
    EXPECT_EQ(hybrid->n_shm_links(), lay.out_links.size() - mpi_out + lay.in_links.size() - mpi_in);
    EXPECT_EQ(hybrid->mpi().max_memory_bytes(), (mpi_out + mpi_in) * 2 * 400);
  }
  exchange(
      *t, lay,
      {.tag = 21, .seed = 7u + static_cast<unsigned>(rank), .hold_percent = 20, .per_link = 50});
  // AGG-66: the MPI side counted exactly the MPI links' buffers.
  const agg::mpi_transport& mpi = hybrid ? hybrid->mpi() : dynamic_cast<agg::mpi_transport&>(*t);
  EXPECT_EQ(mpi.counters().data_sent, 50 * mpi_out);
  EXPECT_EQ(mpi.counters().data_received, 50 * mpi_in);
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-60 for an explicit shm kind: the hybrid is built even without company, and its
// links follow the same node map.
TEST(EmulatedNodes, ShmKindFollowsTheNodeMapToo) {
  if (no_oracle()) GTEST_SKIP() << "CONVOY_EMULATE_NODES without CONVOY_TEST_EXPECT_NODES";
  const int rank = world_rank(), p = world_size();
  const std::vector<int> nodes = expected_nodes();
  auto t = agg::make_transport(MPI_COMM_WORLD, convoy::base::transport_kind::shm);
  auto* hybrid = dynamic_cast<agg::hybrid_transport*>(t.get());
  ASSERT_NE(hybrid, nullptr);
  const auto lay = all_to_all(rank, p, 1, 256, 1);
  t->open(lay);
  for (std::size_t l = 0; l < lay.out_links.size(); ++l)
    EXPECT_EQ(hybrid->out_medium(static_cast<int>(l)), want(nodes, rank, lay.out_links[l].peer));
  exchange(
      *t, lay,
      {.tag = 22, .seed = 9u + static_cast<unsigned>(rank), .hold_percent = 0, .per_link = 30});
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-68: a communicator's node group is split once per node map and shared, its ranks
// those split_node gives; another map, or another communicator, has its own.
TEST(EmulatedNodes, NodeGroupOncePerCommunicatorAndMap) {
  if (no_oracle()) GTEST_SKIP() << "CONVOY_EMULATE_NODES without CONVOY_TEST_EXPECT_NODES";
  const int rank = world_rank(), p = world_size();
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  const agg::node_map nodes = agg::discover_node_map(c);
  const auto g = agg::shared_node_group(c, nodes);
  EXPECT_EQ(agg::shared_node_group(c, nodes), g);
  MPI_Comm split = agg::split_node(c, nodes);
  int size = 0;
  MPI_Comm_size(split, &size);
  EXPECT_EQ(g->size, size);
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(split, g->comm, &result);
  EXPECT_EQ(result, MPI_CONGRUENT);
  MPI_Comm_free(&split);
  int largest = 0;
  MPI_Allreduce(&size, &largest, 1, MPI_INT, MPI_MAX, c);
  EXPECT_EQ(g->largest, largest);
  int node_rank = 0;
  MPI_Comm_rank(g->comm, &node_rank);
  EXPECT_EQ(g->parent_rank.at(static_cast<std::size_t>(node_rank)), rank);

  agg::node_map alone(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) alone[static_cast<std::size_t>(r)] = p + r;  // not a discovered map
  const auto a = agg::shared_node_group(c, alone);
  EXPECT_NE(a, g);
  EXPECT_EQ(a->size, 1);
  EXPECT_EQ(a->largest, 1);
  EXPECT_EQ(agg::shared_node_group(c, nodes), g);
  EXPECT_NE(agg::shared_node_group(MPI_COMM_WORLD, nodes), g);
  MPI_Comm_free(&c);
  EXPECT_EQ(g.use_count(), 1);  // the communicator's cache let it go; we still hold it
}

// split_node: a node map of the wrong length or with a negative node is refused on every
// rank alike; a map putting every rank alone gives one-rank node communicators.
TEST(EmulatedNodes, SplitNodeChecksTheMap) {
  if (no_oracle()) GTEST_SKIP() << "CONVOY_EMULATE_NODES without CONVOY_TEST_EXPECT_NODES";
  const int rank = world_rank(), p = world_size();
  EXPECT_TRUE(contains(error_of([&] {
                         (void)agg::split_node(MPI_COMM_WORLD,
                                               agg::node_map(static_cast<std::size_t>(p) + 1, 0));
                       }),
                       "entries for a communicator of"));
  agg::node_map negative(static_cast<std::size_t>(p), 0);
  negative.back() = -2;
  EXPECT_TRUE(contains(error_of([&] { (void)agg::split_node(MPI_COMM_WORLD, negative); }),
                       "negative node -2"));
  agg::node_map alone(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) alone[static_cast<std::size_t>(r)] = p - r;
  MPI_Comm node = agg::split_node(MPI_COMM_WORLD, alone);
  int size = 0;
  MPI_Comm_size(node, &size);
  EXPECT_EQ(size, 1);
  MPI_Comm_free(&node);
  static_cast<void>(rank);
  EXPECT_TRUE(
      contains(error_of([] { (void)agg::discover_node_map(MPI_COMM_NULL); }), "MPI_COMM_NULL"));
}
