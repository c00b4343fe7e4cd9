// The in-process simulated transport (docs/aggregation-reference.md, "Transports": AGG-1–AGG-6,
// AGG-9, AGG-10, AGG-30–AGG-32).
#include <gtest/gtest.h>

#include <algorithm>
#include <convoy/aggregation/sim_transport.hpp>
#include <convoy/base/error.hpp>
#include <convoy_test/counting_source.hpp>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "transport_driver.hpp"

namespace agg = convoy::aggregation;
using convoy_test::all_to_all;
using convoy_test::traffic;

namespace {

struct sim_run {
  std::unique_ptr<agg::sim_network> net;
  std::vector<std::unique_ptr<agg::transport>> ts;
  std::vector<agg::link_layout> layouts;
  std::vector<std::unique_ptr<traffic>> tr;
};

// Every rank sends a random number (0..max_per_link) of buffers on each out-link; the
// receiver expects exactly that many, in order.
sim_run make_run(std::vector<agg::link_layout> layouts, std::uint64_t seed,
                 std::uint32_t max_per_link, int hold_percent, std::size_t max_bytes,
                 const std::shared_ptr<agg::buffer_source>& memory = {}) {
  sim_run run;
  const int p = static_cast<int>(layouts.size());
  run.net = std::make_unique<agg::sim_network>(p, seed);
  run.layouts = std::move(layouts);
  std::mt19937_64 plan(1234);
  for (int r = 0; r < p; ++r) {
    run.ts.push_back(run.net->endpoint(r, memory));
    run.ts.back()->open(run.layouts[static_cast<std::size_t>(r)]);
    run.tr.push_back(std::make_unique<traffic>(*run.ts.back(),
                                               run.layouts[static_cast<std::size_t>(r)], 7u,
                                               static_cast<std::uint64_t>(r) * 977 + 1));
    run.tr.back()->set_hold_percent(hold_percent);
    run.tr.back()->set_max_bytes(max_bytes);
  }
  // Sender's out-link i and receiver's matching in-link: find by (stage, peer).
  for (int r = 0; r < p; ++r) {
    const auto& lay = run.layouts[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < lay.out_links.size(); ++i) {
      const auto n = static_cast<std::uint32_t>(plan() % (max_per_link + 1));
      run.tr[static_cast<std::size_t>(r)]->set_send(static_cast<int>(i), n);
      const auto& rl = run.layouts[static_cast<std::size_t>(lay.out_links[i].peer)];
      for (std::size_t j = 0; j < rl.in_links.size(); ++j)
        if (rl.in_links[j] == agg::link{lay.out_links[i].stage, r})
          run.tr[static_cast<std::size_t>(lay.out_links[i].peer)]->set_expect(static_cast<int>(j),
                                                                              n);
    }
  }
  return run;
}

// Rounds of: every rank steps, then the network delivers about half of what is in flight,
// one buffer at a time. Returns false if it did not finish within max_rounds.
bool drive(sim_run& run, int max_rounds) {
  for (int round = 0; round < max_rounds; ++round) {
    bool all_done = true;
    for (auto& t : run.tr) {
      t->step();
      all_done = all_done && t->done();
    }
    if (all_done && run.net->in_flight() == 0) return true;
    const std::size_t n = run.net->in_flight() / 2 + 1;
    for (std::size_t i = 0; i < n && run.net->deliver_one(); ++i) {
    }
  }
  return false;
}

void expect_clean(const sim_run& run) {
  for (const auto& t : run.tr)
    for (const auto& e : t->errors()) ADD_FAILURE() << e;
  for (std::size_t r = 0; r < run.ts.size(); ++r) {
    EXPECT_TRUE(run.ts[r]->idle()) << "rank " << r;
    EXPECT_LE(run.ts[r]->memory_bytes(), run.ts[r]->max_memory_bytes()) << "rank " << r;
  }
}

// 16×16×16 mesh as TRAM stages: in stage d a rank's peers differ from it in dimension d.
agg::link_layout mesh_layout(int rank, int side, std::size_t capacity, int n_buffers) {
  agg::link_layout l;
  l.rank = rank;
  l.n_ranks = side * side * side;
  l.buffer_bytes = capacity;
  l.n_buffers = n_buffers;
  int stride = 1;
  for (int d = 0; d < 3; ++d, stride *= side) {
    const int mine = (rank / stride) % side;
    for (int v = 0; v < side; ++v)
      if (v != mine) {
        const int peer = rank + (v - mine) * stride;
        l.out_links.push_back({d, peer});
        l.in_links.push_back({d, peer});
      }
  }
  return l;
}

std::vector<agg::link_layout> all_to_all_layouts(int p, int stages, std::size_t cap, int nb) {
  std::vector<agg::link_layout> v;
  v.reserve(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) v.push_back(all_to_all(r, p, stages, cap, nb));
  return v;
}

}  // namespace

// AGG-1 (FIFO per link), AGG-2 (exactly once), AGG-5 (memory bound), AGG-6 (idle): all-to-all,
// random buffer sizes, receivers holding buffers and releasing them out of order.
TEST(SimTransport, AllToAllFifoExactlyOnce) {
  for (const int nb : {1, 2, 4}) {
    SCOPED_TRACE("n_buffers " + std::to_string(nb));
    auto run = make_run(all_to_all_layouts(7, 1, 256, nb), 42, 40, 30, 256);
    ASSERT_TRUE(drive(run, 100000));
    expect_clean(run);
    EXPECT_EQ(run.net->in_flight(), 0u);
  }
}

// AGG-3: two stages between the same pair of ranks never mix.
TEST(SimTransport, TwoStagesSamePairDoNotMix) {
  auto run = make_run(all_to_all_layouts(5, 2, 128, 2), 3, 30, 20, 128);
  ASSERT_TRUE(drive(run, 100000));
  expect_clean(run);
}

// AGG-4: after n_buffers sends to a receiver that does not release, n_buffers more are
// queued at the sender, then acquire() returns nullptr; a release lets one more through.
TEST(SimTransport, CreditLimitIsBackpressure) {
  for (const int nb : {1, 2, 4}) {
    SCOPED_TRACE("n_buffers " + std::to_string(nb));
    agg::sim_network net(2, 9);
    auto a = net.endpoint(0);
    auto b = net.endpoint(1);
    a->open(all_to_all(0, 2, 1, 64, nb));
    b->open(all_to_all(1, 2, 1, 64, nb));
    traffic ta(*a, all_to_all(0, 2, 1, 64, nb), 1, 5);
    int posted = 0;
    for (int i = 0; i < 10 * nb; ++i) {
      std::byte* buf = a->acquire(0);
      if (!buf) break;
      ta.post_one(0, buf);
      ++posted;
      a->progress();
      net.deliver_all();
    }
    EXPECT_EQ(posted, 2 * nb);
    EXPECT_EQ(a->acquire(0), nullptr);
    EXPECT_FALSE(a->idle());  // nb buffers wait for credit
    EXPECT_EQ(net.in_flight(), 0u);
    std::vector<agg::received> held;
    agg::received r;
    while (b->poll(r)) held.push_back(r);
    ASSERT_EQ(held.size(), static_cast<std::size_t>(nb));  // never more than n_buffers
    a->progress();
    EXPECT_EQ(net.in_flight(), 0u);
    EXPECT_EQ(a->acquire(0), nullptr);
    b->release(held.front());
    EXPECT_EQ(a->acquire(0), nullptr);  // the credit is back, the queued buffer not sent yet
    a->progress();
    EXPECT_EQ(net.in_flight(), 1u);
    EXPECT_EQ(a->acquire(0), nullptr);  // still in flight
    EXPECT_EQ(net.deliver_all(), 1u);
    std::byte* again = a->acquire(0);
    EXPECT_NE(again, nullptr);
    ASSERT_TRUE(b->poll(r));
    agg::buffer_header h{};
    std::memcpy(&h, r.data, sizeof h);
    EXPECT_EQ(h.seq, static_cast<std::uint32_t>(nb + 1));
    ta.post_one(0, again);
  }
}

// AGG-5: memory_bytes grows lazily and stays within max_memory_bytes, which is the formula.
TEST(SimTransport, MemoryBytes) {
  agg::sim_network net(4, 1);
  auto t = net.endpoint(2);
  auto peer = net.endpoint(0);
  const auto lay = all_to_all(2, 4, 2, 1000, 2);
  t->open(lay);
  peer->open(all_to_all(0, 4, 2, 1000, 2));
  EXPECT_EQ(t->max_memory_bytes(), (lay.out_links.size() + lay.in_links.size()) * 2 * 1000);
  EXPECT_EQ(t->memory_bytes(), 0u);
  std::byte* b = t->acquire(0);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 64, 0u);
  EXPECT_EQ(t->memory_bytes(), 2u * 1000);
  std::byte* b2 = t->acquire(0);
  ASSERT_NE(b2, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b2) % 64, 0u);
  EXPECT_EQ(t->memory_bytes(), 2u * 1000);  // both buffers of the link came at once
  EXPECT_EQ(t->acquire(0), nullptr);
  // Rank 0's in-link from rank 2 gets its receive buffers on first delivery.
  traffic tr(*t, lay, 1, 1);
  tr.post_one(0, b);
  EXPECT_EQ(peer->memory_bytes(), 0u);
  net.deliver_all();
  EXPECT_EQ(peer->memory_bytes(), 2u * 1000);
  EXPECT_LE(peer->memory_bytes(), peer->max_memory_bytes());
  EXPECT_TRUE(t->idle());
}

// AGG-30: 4096 virtual ranks of a 16×16×16 mesh (45 links each), random traffic, exactly once
// and FIFO on every link.
TEST(SimTransport, Mesh4096RandomTraffic) {
  std::vector<agg::link_layout> lays;
  lays.reserve(4096);
  for (int r = 0; r < 4096; ++r) lays.push_back(mesh_layout(r, 16, 64, 2));
  auto run = make_run(std::move(lays), 2026, 12, 10, 64);
  ASSERT_TRUE(drive(run, 10000));
  expect_clean(run);
  std::uint64_t total = 0;
  for (const auto& t : run.tr) total += t->n_received();
  RecordProperty("buffers", std::to_string(total));
  EXPECT_GT(total, 1000000u);
}

// AGG-31: the same seed gives the same delivery order; another seed another order.
TEST(SimTransport, SeedDeterminesSchedule) {
  auto trace_of = [](std::uint64_t seed) {
    auto run = make_run(all_to_all_layouts(16, 1, 128, 2), seed, 20, 25, 128);
    std::vector<std::uint64_t> trace;
    for (auto& t : run.tr) t->set_trace(&trace);
    EXPECT_TRUE(drive(run, 100000));
    expect_clean(run);
    return trace;
  };
  const auto a = trace_of(11), b = trace_of(11), c = trace_of(12);
  EXPECT_EQ(a.size(), b.size());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), c.size());
  EXPECT_NE(a, c);
}

// AGG-32: a buffer posted before its receiver opened waits in flight, then arrives.
TEST(SimTransport, ReceiverOpensLate) {
  agg::sim_network net(2, 5);
  auto a = net.endpoint(0);
  a->open(all_to_all(0, 2, 1, 64, 2));
  traffic ta(*a, all_to_all(0, 2, 1, 64, 2), 1, 5);
  ta.post_one(0, a->acquire(0));
  EXPECT_EQ(net.in_flight(), 1u);
  EXPECT_FALSE(net.deliver_one());
  auto b = net.endpoint(1);
  b->open(all_to_all(1, 2, 1, 64, 2));
  EXPECT_TRUE(net.deliver_one());
  agg::received r;
  ASSERT_TRUE(b->poll(r));
  b->release(r);
  EXPECT_TRUE(a->idle());
}

// AGG-33: endpoints share the network's state, so they may outlive the sim_network object
// (ASan checks that nothing is used after free).
TEST(SimTransport, EndpointsOutliveTheNetwork) {
  auto net = std::make_unique<agg::sim_network>(2, 3);
  auto a = net->endpoint(0);
  auto b = net->endpoint(1);
  a->open(all_to_all(0, 2, 1, 64, 2));
  b->open(all_to_all(1, 2, 1, 64, 2));
  traffic ta(*a, all_to_all(0, 2, 1, 64, 2), 1, 5);
  ta.post_one(0, a->acquire(0));
  net.reset();
  a->progress();
  agg::received r;
  EXPECT_FALSE(b->poll(r)) << "nothing was delivered";
  EXPECT_FALSE(a->idle()) << "the buffer is still in flight";
  EXPECT_NE(a->acquire(0), nullptr);
}

using convoy_test::error_of;

// AGG-10: bad input is a convoy::error naming the problem, and changes nothing.
TEST(SimTransport, MisuseIsReported) {
  EXPECT_NE(error_of([] { agg::sim_network n(0, 1); }).find("n_ranks"), std::string::npos);
  agg::sim_network net(3, 1);
  EXPECT_NE(error_of([&] { static_cast<void>(net.endpoint(3)); }).find("out of range"),
            std::string::npos);
  auto t = net.endpoint(0);
  auto lay = all_to_all(0, 3, 1, 64, 2);
  lay.out_links.push_back({0, 7});
  EXPECT_NE(error_of([&] { t->open(lay); }).find("peer rank out of range"), std::string::npos);
  lay = all_to_all(0, 3, 1, 64, 2);
  lay.in_links.push_back({1, 0});
  EXPECT_NE(error_of([&] { t->open(lay); }).find("to the rank itself"), std::string::npos);
  lay = all_to_all(0, 3, 1, 64, 2);
  lay.out_links.push_back({0, 1});
  EXPECT_NE(error_of([&] { t->open(lay); }).find("duplicates"), std::string::npos);
  lay = all_to_all(0, 3, 1, 8, 2);
  EXPECT_NE(error_of([&] { t->open(lay); }).find("buffer_bytes"), std::string::npos);
  lay = all_to_all(0, 3, 1, 64, 0);
  EXPECT_NE(error_of([&] { t->open(lay); }).find("n_buffers"), std::string::npos);
  lay = all_to_all(1, 3, 1, 64, 2);
  EXPECT_NE(error_of([&] { t->open(lay); }).find("this endpoint is rank 0"), std::string::npos);
  t->open(all_to_all(0, 3, 1, 64, 2));
  EXPECT_NE(error_of([&] { t->open(all_to_all(0, 3, 1, 64, 2)); }).find("twice"),
            std::string::npos);
  auto dup = net.endpoint(0);
  EXPECT_NE(error_of([&] { dup->open(all_to_all(0, 3, 1, 64, 2)); }).find("already open"),
            std::string::npos);
  auto other = net.endpoint(1);
  EXPECT_NE(error_of([&] { other->open(all_to_all(1, 3, 1, 64, 4)); }).find("disagree"),
            std::string::npos);
  other->open(all_to_all(1, 3, 1, 64, 2));  // the failed open registered nothing

  std::byte foreign[64] = {};
  EXPECT_NE(error_of([&] { t->post(0, foreign, 32); }).find("not an acquired"), std::string::npos);
  std::byte* b = t->acquire(0);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(error_of([&] { t->post(0, b, 65); }).find("65 bytes"), std::string::npos);
  EXPECT_NE(error_of([&] { t->post(1, b, 32); }).find("not an acquired"), std::string::npos);
  traffic tr(*t, all_to_all(0, 3, 1, 64, 2), 1, 1);
  tr.post_one(0, b);
  net.deliver_all();
  agg::received r;
  ASSERT_TRUE(other->poll(r));
  other->release(r);
  EXPECT_NE(error_of([&] { other->release(r); }).find("already released"), std::string::npos);
  agg::received bogus;
  EXPECT_NE(error_of([&] { other->release(bogus); }).find("did not hand out"), std::string::npos);
}

// AGG-9: poll() serves in-links round-robin among those with arrived buffers; each link in
// order.
TEST(SimTransport, PollIsFairAcrossLinks) {
  agg::sim_network net(4, 8);
  std::vector<std::unique_ptr<agg::transport>> ts;
  for (int r = 0; r < 4; ++r) {
    ts.push_back(net.endpoint(r));
    ts.back()->open(all_to_all(r, 4, 1, 64, 4));
  }
  for (int r = 1; r < 4; ++r) {
    traffic tr(*ts[static_cast<std::size_t>(r)], all_to_all(r, 4, 1, 64, 4), 1, 1);
    for (int i = 0; i < 4; ++i) tr.post_one(0, ts[static_cast<std::size_t>(r)]->acquire(0));
  }
  net.deliver_all();
  std::vector<int> links;
  std::vector<std::uint32_t> last(3, 0);
  agg::received r;
  while (ts[0]->poll(r)) {
    links.push_back(r.in_link);
    agg::buffer_header h{};
    std::memcpy(&h, r.data, sizeof h);
    EXPECT_EQ(h.seq, ++last[static_cast<std::size_t>(r.in_link)]);
    ts[0]->release(r);
  }
  ASSERT_EQ(links.size(), 12u);
  for (std::size_t i = 0; i + 3 <= links.size(); i += 3) {
    std::vector<int> round(links.begin() + static_cast<long>(i),
                           links.begin() + static_cast<long>(i) + 3);
    std::sort(round.begin(), round.end());
    EXPECT_EQ(round, (std::vector<int>{0, 1, 2})) << "round " << i / 3;
  }
}

// AGG-11: endpoints given a buffer source take all their link buffers in one grab at open()
// (their own need: 2 × links × n_buffers × capacity rounded to 64, + 63), 64-byte aligned,
// delivery unchanged, and give the blocks back when destroyed, LIFO.
TEST(SimTransport, BufferSourceOneGrabPerEndpoint) {
  auto src = std::make_shared<convoy_test::counting_source>();
  const int p = 5;
  {
    auto run = make_run(all_to_all_layouts(p, 2, 100, 2), 11, 40, 30, 100, src);
    ASSERT_EQ(src->sizes.size(), static_cast<std::size_t>(p));
    for (const std::size_t s : src->sizes) EXPECT_EQ(s, 2u * 2 * (p - 1) * 2 * 128 + 63);
    for (const auto& t : run.ts) EXPECT_EQ(t->memory_bytes(), t->max_memory_bytes());
    std::byte* b = run.ts[0]->acquire(0);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 64, 0u);
    EXPECT_TRUE(b >= src->live[0] && b < src->live[0] + src->sizes[0]);
    while (!run.ts.empty()) {  // reverse order of construction: LIFO
      run.tr.pop_back();
      run.ts.pop_back();
    }
  }
  EXPECT_EQ(src->live_bytes, 0u);
  {
    auto run = make_run(all_to_all_layouts(p, 2, 100, 2), 12, 40, 30, 100, src);
    EXPECT_TRUE(drive(run, 100000));
    expect_clean(run);
    // Destroyed in reverse order of construction: LIFO.
    while (!run.ts.empty()) {
      run.tr.pop_back();
      run.ts.pop_back();
    }
  }
  EXPECT_EQ(src->sizes.size(), 2u * p);
  EXPECT_EQ(src->n_released, 2u * p);
  EXPECT_EQ(src->live_bytes, 0u);
  for (const auto& e : src->errors) ADD_FAILURE() << e;
}
