// The MPI transport (docs/aggregation-reference.md, "Transports": AGG-1–AGG-10). Every loop is
// bounded by a deadline that fails the test instead of hanging.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <convoy/aggregation/mpi_transport.hpp>
#include <convoy/base/error.hpp>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "convoy_test/mpi.hpp"
#include <convoy_test/counting_source.hpp>
#include "error_of.hpp"
#include "traffic_drive.hpp"
#include "transport_driver.hpp"

namespace agg = convoy::aggregation;
using convoy_test::all_to_all;
using convoy_test::contains;
using convoy_test::drive;
using convoy_test::error_of;
using convoy_test::exchange;
using convoy_test::expect_no_errors;
using convoy_test::many_at_once;
using convoy_test::traffic;
using convoy_test::world_rank;
using convoy_test::world_size;

namespace {

using clock_type = std::chrono::steady_clock;

}  // namespace

// AGG-1 FIFO per link, AGG-2 exactly once, AGG-5 memory bound, AGG-6 idle: all-to-all with random
// sizes up to the capacity, receivers releasing out of order.
TEST(MpiTransport, AllToAllFifoExactlyOnce) {
  const int rank = world_rank(), p = world_size();
  for (const int nb : {1, 2, 4}) {
    SCOPED_TRACE("n_buffers " + std::to_string(nb));
    const auto lay = all_to_all(rank, p, 1, 512, nb);
    agg::mpi_transport t(MPI_COMM_WORLD);
    t.open(lay);
    EXPECT_EQ(t.max_memory_bytes(), 2u * static_cast<std::size_t>(p - 1) * nb * 512);
    EXPECT_EQ(t.memory_bytes(), static_cast<std::size_t>(p - 1) * nb * 512);  // receives only
    exchange(
        t, lay,
        {.tag = 5, .seed = 17u + static_cast<unsigned>(rank), .hold_percent = 30, .per_link = 200});
    EXPECT_TRUE(t.idle());
    EXPECT_LE(t.memory_bytes(), t.max_memory_bytes());
    EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// AGG-3: links of two stages between the same two ranks never mix.
TEST(MpiTransport, TwoStagesSamePairDoNotMix) {
  const int rank = world_rank(), p = world_size();
  const auto lay = all_to_all(rank, p, 2, 256, 2);
  agg::mpi_transport t(MPI_COMM_WORLD);
  t.open(lay);
  exchange(
      t, lay,
      {.tag = 9, .seed = 3u + static_cast<unsigned>(rank), .hold_percent = 20, .per_link = 100});
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-7: 100 transports alive at once on MPI_COMM_WORLD, all exchanging at the same time,
// no buffer reaches another transport. AGG-63: each settles its credits before its
// communicator is freed, so none reaches the next one created.
TEST(MpiTransport, HundredTransportsNoCrosstalk) {
  const int rank = world_rank(), p = world_size();
  const auto fleet = many_at_once(
      100, [] { return std::make_unique<agg::mpi_transport>(MPI_COMM_WORLD); },
      [&](int i) { return all_to_all(rank, p, 1, 64, 1 + i % 2); }, 0, 5);
  for (const auto& t : fleet.traffics)
    for (int l = 0; l < p - 1; ++l) EXPECT_EQ(t->received_on(l), 5u);
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-4, AGG-64: rank 1 does not release. Rank 0 gets n_buffers sent and n_buffers queued, then
// acquire() returns nullptr; rank 1 sees exactly n_buffers (MPI's queue holds no more).
// One release lets exactly one more through, in order.
TEST(MpiTransport, CreditLimitIsBackpressure) {
  const int rank = world_rank(), p = world_size();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  constexpr int nb = 2;
  const auto lay = all_to_all(rank, p, 1, 64, nb);
  agg::mpi_transport t(MPI_COMM_WORLD);
  t.open(lay);
  traffic tr(t, lay, 1u, 1u);
  std::vector<agg::received> held;
  agg::received r;
  if (rank == 0) {
    // Every send has the chance to complete: nb are sent, nb queued, then it is blocked.
    const int posted = convoy_test::post_until_blocked(t, tr, 0);
    EXPECT_EQ(posted, 2 * nb);
    EXPECT_FALSE(t.idle());
  } else if (rank == 1) {
    const auto deadline = clock_type::now() + std::chrono::seconds(10);
    while (clock_type::now() < deadline && held.size() < static_cast<std::size_t>(nb)) {
      if (t.poll(r)) held.push_back(r);
      std::this_thread::yield();
    }
    EXPECT_EQ(held.size(), static_cast<std::size_t>(nb));
  }
  MPI_Barrier(MPI_COMM_WORLD);  // rank 0 has stopped posting
  if (rank == 1) {
    for (int i = 0; i < 1000; ++i) EXPECT_FALSE(t.poll(r)) << "more than n_buffers arrived";
    t.release(held.back());
    held.pop_back();
    const auto deadline = clock_type::now() + std::chrono::seconds(10);
    bool got = false;
    while (clock_type::now() < deadline && !(got = t.poll(r))) std::this_thread::yield();
    EXPECT_TRUE(got);
    if (got) {
      agg::buffer_header h{};
      std::memcpy(&h, r.data, sizeof h);
      EXPECT_EQ(h.seq, static_cast<std::uint32_t>(nb + 1));
      held.push_back(r);
    }
  } else if (rank == 0) {
    // One credit comes back: the first queued buffer leaves, its slot frees, the second
    // queued buffer still waits.
    const auto deadline = clock_type::now() + std::chrono::seconds(10);
    std::byte* b = nullptr;
    while (clock_type::now() < deadline && (b = t.acquire(0)) == nullptr) {
      t.progress();
      std::this_thread::yield();
    }
    EXPECT_NE(b, nullptr);
    EXPECT_EQ(t.acquire(0), nullptr);
    EXPECT_FALSE(t.idle());
    if (b) tr.post_one(0, b);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1)
    for (const auto& h : held) t.release(h);
  // Drain: rank 1 receives everything rank 0 posted; everyone ends idle.
  const auto deadline = clock_type::now() + std::chrono::seconds(30);
  std::uint32_t got = 0;
  while (clock_type::now() < deadline) {
    while (t.poll(r)) {
      ++got;
      t.release(r);
    }
    t.progress();
    if (rank == 0 && t.idle()) break;
    if (rank == 1 && got == static_cast<std::uint32_t>(nb) && t.idle()) break;
    if (rank > 1) break;
    std::this_thread::yield();
  }
  EXPECT_TRUE(t.idle());
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-8: a serving subset (the hybrid transport's building block): two transports split
// the links by (rank + peer) parity, both ends choosing alike; together they deliver all.
TEST(MpiTransport, SubsetOfLinks) {
  const int rank = world_rank(), p = world_size();
  const auto lay = all_to_all(rank, p, 1, 128, 2);
  std::vector<bool> even_out, even_in;
  for (const auto& l : lay.out_links) even_out.push_back((rank + l.peer) % 2 == 0);
  for (const auto& l : lay.in_links) even_in.push_back((rank + l.peer) % 2 == 0);
  auto flip = [](std::vector<bool> v) {
    v.flip();
    return v;
  };
  agg::mpi_transport a(MPI_COMM_WORLD), b(MPI_COMM_WORLD);
  a.open(lay, even_out, even_in);
  b.open(lay, flip(even_out), flip(even_in));
  std::size_t n_even = 0;
  for (const bool e : even_out) n_even += e ? 1 : 0;
  EXPECT_EQ(a.max_memory_bytes(), 2 * n_even * 2 * 128);
  EXPECT_EQ(a.max_memory_bytes() + b.max_memory_bytes(), 2 * lay.out_links.size() * 2 * 128);
  std::vector<std::unique_ptr<traffic>> ts;
  ts.push_back(std::make_unique<traffic>(a, lay, 4u, 1u));
  ts.push_back(std::make_unique<traffic>(b, lay, 4u, 2u));
  for (std::size_t i = 0; i < lay.out_links.size(); ++i) {
    ts[even_out[i] ? 0 : 1]->set_send(static_cast<int>(i), 50);
    ts[even_in[i] ? 0 : 1]->set_expect(static_cast<int>(i), 50);
    EXPECT_EQ((even_out[i] ? b : a).acquire(static_cast<int>(i)), nullptr);
  }
  EXPECT_TRUE(drive(ts));
  expect_no_errors(ts);
  if (p > 1) {
    // A buffer of link 0 posted to the transport that does not serve link 0.
    agg::mpi_transport& serving = even_out[0] ? a : b;
    agg::mpi_transport& other = even_out[0] ? b : a;
    std::byte* buf = serving.acquire(0);
    ASSERT_NE(buf, nullptr);
    EXPECT_TRUE(contains(error_of([&] { other.post(0, buf, 32); }), "does not serve"));
    EXPECT_TRUE(serving.idle());  // an acquired, unposted buffer is not in flight
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-10: bad layouts are rejected by open() with a message naming the problem, before MPI
// sees them; the transport stays usable.
TEST(MpiTransport, BadLayoutIsAConvoyError) {
  const int rank = world_rank(), p = world_size();
  agg::mpi_transport t(MPI_COMM_WORLD);
  auto lay = all_to_all(rank, p, 1, 64, 2);
  lay.out_links.push_back({0, p + 3});
  EXPECT_TRUE(contains(error_of([&] { t.open(lay); }), "peer rank out of range"));
  lay = all_to_all(rank, p, 1, 64, 2);
  lay.in_links.push_back({0, -1});
  EXPECT_TRUE(contains(error_of([&] { t.open(lay); }), "peer rank out of range"));
  lay = all_to_all(rank, p, 1, 64, 2);
  lay.out_links.push_back({0, rank});
  EXPECT_TRUE(contains(error_of([&] { t.open(lay); }), "to the rank itself"));
  lay = all_to_all(rank, p + 1, 1, 64, 2);
  EXPECT_TRUE(contains(error_of([&] { t.open(lay); }), "this endpoint is rank"));
  lay = all_to_all(rank, p, 1, 64, 2);
  lay.out_links.push_back({1 << 30, (rank + 1) % p});
  if (p > 1) {
    EXPECT_TRUE(contains(error_of([&] { t.open(lay); }), "MPI_TAG_UB"));
    lay = all_to_all(rank, p, 1, 64, 2);
    EXPECT_TRUE(contains(error_of([&] { t.open(lay, {}, {}); }), "one flag per link"));
  }
  lay = all_to_all(rank, p, 1, 64, 2);
  EXPECT_TRUE(contains(error_of([] { agg::mpi_transport bad(MPI_COMM_NULL); }), "MPI_COMM_NULL"));
  t.open(lay);
  EXPECT_TRUE(contains(error_of([&] { t.open(lay); }), "twice"));
  agg::received bogus;
  EXPECT_TRUE(contains(error_of([&] { t.release(bogus); }), "did not hand out"));
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-10: a failure inside MPI is a convoy::error carrying MPI's code: a receiver whose buffers
// are smaller than the sender's message gets MPI_ERR_TRUNCATE from poll(). The sender's
// transport then waits out its bounded destructor (its peer never returns the credit), so
// only the two-rank entry runs it: the others would wait the same 20 s for nothing new.
TEST(MpiTransport, MpiErrorIsAConvoyError) {
  const int rank = world_rank(), p = world_size();
  if (p != 2) GTEST_SKIP() << "runs at np 2 only (the sender's destructor waits its 20 s bound)";
  // MPICH raises an error of MPI_Testsome on MPI_COMM_WORLD's handler (fatal by default),
  // not on the requests' communicator, whose MPI_ERRORS_RETURN the transport set.
  if (convoy_test::mpich_family())
    GTEST_SKIP() << "MPICH reports MPI_Testsome's errors through MPI_COMM_WORLD's error handler";
  const auto lay = all_to_all(rank, 2, 1, rank == 0 ? 256 : 64, 1);
  {
    agg::mpi_transport t(MPI_COMM_WORLD);
    t.open(lay);
    if (rank == 0) {
      traffic tr(t, lay, 1u, 1u);
      tr.set_max_bytes(200);
      std::byte* b = t.acquire(0);
      ASSERT_NE(b, nullptr);
      std::memset(b, 0, 200);
      agg::buffer_header h{200, 1, 1, 0};
      std::memcpy(b, &h, sizeof h);
      t.post(0, b, 200);
      const auto deadline = clock_type::now() + std::chrono::seconds(10);
      while (!t.idle() && clock_type::now() < deadline) {
        t.progress();
        std::this_thread::yield();
      }
      EXPECT_TRUE(t.idle());
    } else {
      const auto deadline = clock_type::now() + std::chrono::seconds(10);
      bool thrown = false;
      while (!thrown && clock_type::now() < deadline) {
        try {
          agg::received r;
          static_cast<void>(t.poll(r));
        } catch (const convoy::error& e) {
          thrown = true;
          int cls = 0;
          MPI_Error_class(e.mpi_code(), &cls);
          EXPECT_EQ(cls, MPI_ERR_TRUNCATE) << e.what();
          EXPECT_TRUE(contains(e.what(), "MPI_Testsome")) << e.what();
        }
        std::this_thread::yield();
      }
      EXPECT_TRUE(thrown);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-11: with a buffer source, every link buffer (send and receive) comes from ONE grab at
// open(), of the same size on every rank even when ranks serve different numbers of links
// (the (rank + peer) parity split of AGG-8 gives odd rank counts unequal subsets); slices are
// 64-byte aligned inside the block; delivery is unchanged; the block goes back at
// destruction, LIFO across two transports.
TEST(MpiTransport, BufferSourceOneGrabSameSizeEverywhere) {
  const int rank = world_rank(), p = world_size();
  const auto lay = all_to_all(rank, p, 2, 200, 2);
  std::vector<bool> even_out, even_in;
  for (const auto& l : lay.out_links) even_out.push_back((rank + l.peer) % 2 == 0);
  for (const auto& l : lay.in_links) even_in.push_back((rank + l.peer) % 2 == 0);
  std::size_t n_even = 0;
  for (const bool e : even_out) n_even += e ? 1 : 0;
  auto src = std::make_shared<convoy_test::counting_source>();
  {
    agg::mpi_transport a(MPI_COMM_WORLD, src);
    agg::mpi_transport b(MPI_COMM_WORLD, src);
    EXPECT_TRUE(src->sizes.empty());  // nothing before open()
    auto odd_out = even_out, odd_in = even_in;
    odd_out.flip();
    odd_in.flip();
    a.open(lay, even_out, even_in);
    b.open(lay, odd_out, odd_in);
    // Block sizes: the largest need over the ranks (+63 for alignment), equal everywhere.
    unsigned long long need = 2 * n_even * 2 * 256, most = 0;  // 200 rounds up to 256
    MPI_Allreduce(&need, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (most == 0) {
      EXPECT_TRUE(src->sizes.size() <= 1);  // 1 rank: no link, nothing to grab for `a`
    } else {
      ASSERT_GE(src->sizes.size(), 1u);
      EXPECT_EQ(src->sizes[0], most + 63);
    }
    for (const std::size_t s : src->sizes) {
      unsigned long long mine = s, lo = 0, hi = 0;
      MPI_Allreduce(&mine, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(&mine, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
      EXPECT_EQ(lo, hi) << "grab sizes differ between ranks";
    }
    EXPECT_EQ(a.memory_bytes(), a.max_memory_bytes());  // held from open() on
    EXPECT_EQ(a.max_memory_bytes(), 2 * n_even * 2 * 200);
    for (std::size_t i = 0; i < lay.out_links.size(); ++i) {
      agg::mpi_transport& t = even_out[i] ? a : b;
      std::byte* buf = t.acquire(static_cast<int>(i));
      ASSERT_NE(buf, nullptr);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buf) % 64, 0u);
      bool inside = false;
      for (std::size_t k = 0; k < src->live.size(); ++k)
        inside = inside || (buf >= src->live[k] && buf + 200 <= src->live[k] + src->live_sizes[k]);
      EXPECT_TRUE(inside) << "out-link " << i << " buffer is not in a grabbed block";
      agg::buffer_header h{32, 1, 0, 0};
      std::memcpy(buf, &h, sizeof h);
      t.post(static_cast<int>(i), buf, 32);  // seq 0: the traffic below starts over
    }
    // Drain those probes, then run real traffic through both.
    std::size_t got = 0;
    const auto deadline = clock_type::now() + std::chrono::seconds(30);
    while (got < lay.in_links.size() && clock_type::now() < deadline) {
      agg::received r;
      for (auto* t : {&a, &b}) {
        while (t->poll(r)) {
          ++got;
          t->release(r);
        }
        t->progress();
      }
      std::this_thread::yield();
    }
    EXPECT_EQ(got, lay.in_links.size());
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<std::unique_ptr<traffic>> ts;
    ts.push_back(std::make_unique<traffic>(a, lay, 4u, 1u));
    ts.push_back(std::make_unique<traffic>(b, lay, 4u, 2u));
    for (std::size_t i = 0; i < lay.out_links.size(); ++i) {
      ts[even_out[i] ? 0 : 1]->set_send(static_cast<int>(i), 60);
      ts[even_in[i] ? 0 : 1]->set_expect(static_cast<int>(i), 60);
    }
    EXPECT_TRUE(drive(ts));
    expect_no_errors(ts);
    EXPECT_EQ(src->n_released, 0u);
    MPI_Barrier(MPI_COMM_WORLD);
  }  // b, then a: LIFO
  EXPECT_EQ(src->n_released, src->sizes.size());
  EXPECT_EQ(src->live_bytes, 0u);
  for (const auto& e : src->errors) ADD_FAILURE() << e;
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-11 with AGG-10: with a buffer source open() is collective, so a bad layout on ONE rank
// makes open() throw on every rank (none is left waiting), and a source failing on one
// rank makes every rank give its block back and throw.
TEST(MpiTransport, BufferSourceFailuresThrowEverywhere) {
  const int rank = world_rank(), p = world_size();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  auto src = std::make_shared<convoy_test::counting_source>();
  {
    agg::mpi_transport t(MPI_COMM_WORLD, src);
    auto lay = all_to_all(rank, p, 1, 64, 2);
    if (rank == p - 1) lay.out_links.push_back({0, p + 3});
    const auto e = error_of([&] { t.open(lay); });
    EXPECT_TRUE(contains(e, rank == p - 1 ? "peer rank out of range" : "another rank")) << e;
    EXPECT_TRUE(src->sizes.empty());
  }
  {
    agg::mpi_transport t(MPI_COMM_WORLD, src);
    src->fail = rank == 0;
    const auto e = error_of([&] { t.open(all_to_all(rank, p, 1, 64, 2)); });
    EXPECT_TRUE(contains(e, rank == 0 ? "buffer source failed to provide" : "on another rank"))
        << e;
    src->fail = false;
  }
  EXPECT_EQ(src->live_bytes, 0u);
  EXPECT_EQ(src->n_released, rank == 0 ? 0u : 1u);
  for (const auto& e : src->errors) ADD_FAILURE() << e;
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

namespace {

// Posts one header-only buffer numbered `seq` on out-link `l`; false if none is free.
bool post_numbered(agg::mpi_transport& t, int l, std::uint32_t seq) {
  std::byte* b = t.acquire(l);
  if (!b) return false;
  const agg::buffer_header h{static_cast<std::uint32_t>(sizeof(agg::buffer_header)), 0, seq, 0};
  std::memcpy(b, &h, sizeof h);
  t.post(l, b, sizeof h);
  return true;
}

// Polls until a buffer arrives (or the deadline passes); checks its number and that the
// transport's header bits are cleared, then releases it.
bool receive_numbered(agg::mpi_transport& t, std::uint32_t seq) {
  const auto deadline = clock_type::now() + std::chrono::seconds(20);
  agg::received r;
  while (!t.poll(r)) {
    if (clock_type::now() > deadline) return false;
    std::this_thread::yield();
  }
  agg::buffer_header h{};
  std::memcpy(&h, r.data, sizeof h);
  EXPECT_EQ(h.seq, seq);
  EXPECT_EQ(h.flags & agg::transport_flag_mask, 0u) << "credit bits leaked to the engine";
  t.release(r);
  return true;
}

}  // namespace

// AGG-61 message economy: ranks 0 and 1 play ping-pong (each posts only after receiving
// the other's buffer). Every credit rides back inside the next data buffer, so no credit
// message goes at all until the transports settle at destruction (1 message per buffer).
TEST(MpiTransport, CreditsRideOnDataGoingBack) {
  const int rank = world_rank(), p = world_size();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  constexpr std::uint32_t rounds = 50;
  const auto lay = all_to_all(rank, p, 1, 256, 2);
  agg::mpi_transport t(MPI_COMM_WORLD);
  t.open(lay);
  if (rank < 2) {
    const int l = 0;  // the link to the other of ranks 0 and 1 (all_to_all: peers in order)
    ASSERT_EQ(lay.out_links[0].peer, 1 - rank);
    for (std::uint32_t i = 1; i <= rounds; ++i) {
      if (rank == 0) {
        ASSERT_TRUE(post_numbered(t, l, i));
        ASSERT_TRUE(receive_numbered(t, i));
      } else {
        ASSERT_TRUE(receive_numbered(t, i));
        ASSERT_TRUE(post_numbered(t, l, i));
      }
    }
    const agg::mpi_counters& c = t.counters();
    EXPECT_EQ(c.data_sent, rounds);
    EXPECT_EQ(c.data_received, rounds);
    EXPECT_EQ(c.credit_messages_sent, 0u);
    // Rank 0's first buffer had nothing to carry; its last release is still owed.
    EXPECT_EQ(c.credits_piggybacked, rank == 0 ? rounds - 1 : rounds);
  }
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
  MPI_Barrier(MPI_COMM_WORLD);
}
