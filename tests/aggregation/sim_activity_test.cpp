// The simulated network's per-rank activity count (aggregation/README.md AGG-143), which
// lets a driver rest a rank with nothing to do until something happens at its endpoint.
#include <gtest/gtest.h>

#include <convoy/aggregation/sim_transport.hpp>
#include <cstdint>
#include <vector>

#include "transport_driver.hpp"

namespace agg = convoy::aggregation;
using convoy_test::all_to_all;
using convoy_test::traffic;

namespace {

// AGG-143: every event at an endpoint changes its rank's count, and only its rank's; calls
// that change nothing leave it alone.
TEST(SimTransport, ActivityChangesOnEveryEventAtTheEndpoint) {
  agg::sim_network net(3, 4);
  auto a = net.endpoint(0);
  auto b = net.endpoint(1);
  auto c = net.endpoint(2);
  a->open(all_to_all(0, 3, 1, 64, 1));
  b->open(all_to_all(1, 3, 1, 64, 1));
  c->open(all_to_all(2, 3, 1, 64, 1));
  traffic ta(*a, all_to_all(0, 3, 1, 64, 1), 1, 5);
  auto counts = [&] {
    return std::vector<std::uint64_t>{net.activity(0), net.activity(1), net.activity(2)};
  };
  auto changed = [&](const std::vector<std::uint64_t>& before) {
    const auto now = counts();
    std::vector<int> ranks;
    for (int r = 0; r < 3; ++r)
      if (now[static_cast<std::size_t>(r)] != before[static_cast<std::size_t>(r)])
        ranks.push_back(r);
    return ranks;
  };
  using ranks = std::vector<int>;
  auto before = counts();
  agg::received r;
  EXPECT_FALSE(b->poll(r));
  a->progress();
  EXPECT_EQ(changed(before), ranks{});  // nothing happened

  // Out-link 0 of rank 0 goes to rank 1 (all_to_all: peers in rank order, self left out).
  ta.post_one(0, a->acquire(0));  // a post: the sender's event
  EXPECT_EQ(changed(before), ranks{0});
  before = counts();
  ASSERT_EQ(net.deliver_all(), 1u);  // a delivery: both ends (the send is done)
  EXPECT_EQ(changed(before), (ranks{0, 1}));
  before = counts();
  ta.post_one(0, a->acquire(0));  // the buffer is free, the credit not back: queued
  EXPECT_EQ(changed(before), ranks{0});
  EXPECT_EQ(net.in_flight(), 0u);
  before = counts();
  ASSERT_TRUE(b->poll(r));  // a poll that returned a buffer: the receiver's
  EXPECT_EQ(changed(before), ranks{1});
  before = counts();
  b->release(r);  // a release: the receiver's, and the credit is the sender's
  EXPECT_EQ(changed(before), (ranks{0, 1}));
  before = counts();
  a->progress();  // the queued buffer leaves
  EXPECT_EQ(changed(before), ranks{0});
  EXPECT_EQ(net.in_flight(), 1u);
  before = counts();
  a->progress();
  EXPECT_FALSE(c->poll(r));
  EXPECT_EQ(changed(before), ranks{});
  EXPECT_EQ(net.activity(-1), 0u);
  EXPECT_EQ(net.activity(3), 0u);
}

}  // namespace
