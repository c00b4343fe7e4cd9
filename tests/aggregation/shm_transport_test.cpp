// The node shared-memory transport and the hybrid transport (aggregation/README.md,
// "Transports" AGG-1–AGG-10 and "Shared memory" M1–M7). All ranks of these runs share one node;
// the hybrid tests emulate remote peers by sending some links through MPI. Every loop is
// bounded by a deadline that fails the test instead of hanging.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <convoy/aggregation/hybrid_transport.hpp>
#include <convoy/aggregation/mpi_transport.hpp>
#include <convoy/aggregation/shm_transport.hpp>
#include <convoy/base/error.hpp>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
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

// The filling mode under test: CONVOY_TEST_SHM_FILLING=zero-copy (a second CTest entry),
// else staged (the default).
agg::shm_filling filling() {
  const char* v = std::getenv("CONVOY_TEST_SHM_FILLING");
  return v && std::string(v) == "zero-copy" ? agg::shm_filling::zero_copy
                                            : agg::shm_filling::staged;
}

using clock_type = std::chrono::steady_clock;

}  // namespace

// AGG-1 FIFO, AGG-2 exactly once, M5 memory, M6 idle: all-to-all with random sizes up to the
// capacity, receivers holding 30% of buffers and releasing them out of order.
TEST(ShmTransport, AllToAllFifoExactlyOnce) {
  const int rank = world_rank(), p = world_size();
  for (const int nb : {1, 2, 4}) {
    SCOPED_TRACE("n_buffers " + std::to_string(nb));
    const auto lay = all_to_all(rank, p, 1, 500, nb);
    agg::shm_transport t(MPI_COMM_WORLD, filling());
    EXPECT_EQ(t.node_size(), p);
    EXPECT_EQ(t.memory_bytes(), 0u);
    t.open(lay);
    EXPECT_EQ(t.memory_bytes(),
              static_cast<std::size_t>(p - 1) * agg::shm_transport::ring_bytes(500, nb));
    // M8: staging adds one slot-sized buffer per out-link, allocated on first use.
    const std::size_t staging =
        filling() == agg::shm_filling::staged ? static_cast<std::size_t>(p - 1) * 512 : 0;
    EXPECT_EQ(t.max_memory_bytes(), t.memory_bytes() + staging);
    // M2: slots of 500 bytes round up to 512; three control lines and the entry lines.
    EXPECT_GE(agg::shm_transport::ring_bytes(500, nb),
              static_cast<std::size_t>(nb) * 512 + std::size_t{3} * 64);
    exchange(t, lay,
             {.tag = 5,
              .seed = 5000u + static_cast<unsigned>(rank),
              .hold_percent = 30,
              .per_link = 300});
    EXPECT_TRUE(t.idle());
    EXPECT_EQ(t.memory_bytes(), t.max_memory_bytes());  // every link was used
    EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// M3 zero copy: acquire() hands out 64-byte aligned slots of the receiver's ring, and
// poll() on the receiver returns the very bytes the sender wrote, at a slot-sized stride.
TEST(ShmTransport, SlotsAreAlignedAndDistinct) {
  if (filling() != agg::shm_filling::zero_copy) GTEST_SKIP() << "zero-copy filling only";
  const int rank = world_rank(), p = world_size();
  const auto lay = all_to_all(rank, p, 1, 100, 4);
  agg::shm_transport t(MPI_COMM_WORLD, filling());
  t.open(lay);
  for (std::size_t l = 0; l < lay.out_links.size(); ++l) {
    std::vector<std::byte*> got;
    got.reserve(4);
    for (int i = 0; i < 4; ++i) got.push_back(t.acquire(static_cast<int>(l)));
    EXPECT_EQ(t.acquire(static_cast<int>(l)), nullptr);
    for (std::byte* b : got) {
      ASSERT_NE(b, nullptr);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 64, 0u);
      for (std::byte* c : got)
        if (c != b) {
          EXPECT_GE(c > b ? c - b : b - c, 128);
        }
    }
    // Unposted slots are not in flight (AGG-6) and can be posted in any order.
    EXPECT_TRUE(t.idle());
    traffic tr(t, lay, 1u, 1u);
    for (int i = 3; i >= 0; --i) tr.post_one(static_cast<int>(l), got[static_cast<std::size_t>(i)]);
  }
  std::vector<std::unique_ptr<traffic>> ts;
  ts.push_back(std::make_unique<traffic>(t, lay, 1u, 2u));
  for (std::size_t l = 0; l < lay.in_links.size(); ++l) ts[0]->set_expect(static_cast<int>(l), 4);
  EXPECT_TRUE(drive(ts));
  expect_no_errors(ts);
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-70: a destroyed transport's window serves the next transport on the node whose
// ranks need segments of the same sizes (its rings at the same addresses, empty again);
// other sizes get another window. Zero-copy: acquire() hands out the receiver's slot.
TEST(ShmTransport, WindowsServeTheNextTransportOfTheSameSizes) {
  if (filling() != agg::shm_filling::zero_copy) GTEST_SKIP() << "zero-copy filling only";
  const int rank = world_rank(), p = world_size();
  if (p < 2) GTEST_SKIP() << "needs a peer on the node";
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);  // a communicator of its own: no window kept yet
  // One buffer on every link, its slot's address returned for link 0.
  auto one_round = [&](int capacity, unsigned seed) {
    const auto lay = all_to_all(rank, p, 1, capacity, 2);
    agg::shm_transport t(c, filling());
    t.open(lay);
    std::byte* slot0 = nullptr;
    std::vector<std::unique_ptr<traffic>> ts;
    ts.push_back(std::make_unique<traffic>(t, lay, 3u, seed));
    for (std::size_t l = 0; l < lay.out_links.size(); ++l) {
      std::byte* b = t.acquire(static_cast<int>(l));
      EXPECT_NE(b, nullptr);
      if (l == 0) slot0 = b;
      ts[0]->post_one(static_cast<int>(l), b);
    }
    for (std::size_t l = 0; l < lay.in_links.size(); ++l) ts[0]->set_expect(static_cast<int>(l), 1);
    EXPECT_TRUE(drive(ts));
    expect_no_errors(ts);
    MPI_Barrier(MPI_COMM_WORLD);
    return slot0;
  };
  std::byte* const first = one_round(256, 1u);
  EXPECT_EQ(one_round(256, 2u), first);  // the same window, rings zeroed again
  EXPECT_NE(one_round(512, 3u), first);  // other sizes: another window (the first is kept)
  EXPECT_EQ(one_round(256, 4u), first);
  MPI_Comm_free(&c);  // the kept windows go with the node communicator
}

// AGG-3: links of two stages between the same two ranks never mix.
TEST(ShmTransport, TwoStagesSamePairDoNotMix) {
  const int rank = world_rank(), p = world_size();
  const auto lay = all_to_all(rank, p, 2, 256, 2);
  agg::shm_transport t(MPI_COMM_WORLD, filling());
  t.open(lay);
  exchange(
      t, lay,
      {.tag = 9, .seed = 9000u + static_cast<unsigned>(rank), .hold_percent = 20, .per_link = 150});
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-7: many transports (each with its own window) alive and exchanging at once; no buffer
// reaches another transport.
TEST(ShmTransport, ManyTransportsNoCrosstalk) {
  const int rank = world_rank(), p = world_size();
  const auto fleet = many_at_once(
      40, [] { return std::make_unique<agg::shm_transport>(MPI_COMM_WORLD, filling()); },
      [&](int i) { return all_to_all(rank, p, 1 + i % 2, 64 + 64 * (i % 3), 1 + i % 2); }, 10, 8);
  for (const auto& t : fleet.traffics)
    for (int l = 0; l < p - 1; ++l) EXPECT_EQ(t->received_on(l), 8u);
  MPI_Barrier(MPI_COMM_WORLD);
}

// M8 staged filling: acquire() hands out the link's own page-aligned buffer, outside the
// window, once until it is posted; post() copies it into a slot, and the receiver polls
// exactly those bytes.
TEST(ShmTransport, StagedBufferIsPrivateAndCopied) {
  if (filling() != agg::shm_filling::staged) GTEST_SKIP() << "staged filling only";
  const int rank = world_rank(), p = world_size();
  const auto lay = all_to_all(rank, p, 1, 256, 2);
  agg::shm_transport t(MPI_COMM_WORLD, filling());
  t.open(lay);
  for (std::size_t l = 0; l < lay.out_links.size(); ++l) {
    const int link = static_cast<int>(l);
    std::byte* b = t.acquire(link);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 4096, 0u);
    EXPECT_EQ(t.acquire(link), nullptr);  // one staging buffer per link
    std::memset(b, 0, 256);
    agg::buffer_header h{256, 1, 1, 0};
    std::memcpy(b, &h, sizeof h);
    for (std::size_t i = sizeof h; i < 256; ++i)
      b[i] = static_cast<std::byte>(static_cast<std::size_t>(rank) * 7 + i);
    t.post(link, b, 256);
    std::byte* again = t.acquire(link);
    EXPECT_EQ(again, b);  // the same staging buffer, for the ring's second slot
    if (again) {
      h.seq = 2;
      std::memcpy(again, &h, sizeof h);
      t.post(link, again, 256);
    }
    EXPECT_EQ(t.acquire(link), nullptr);  // both slots posted: no credit left
  }
  MPI_Barrier(MPI_COMM_WORLD);
  agg::received r;
  std::vector<int> per_link(lay.in_links.size(), 0);
  while (t.poll(r)) {
    const int peer = lay.in_links[static_cast<std::size_t>(r.in_link)].peer;
    EXPECT_EQ(r.bytes, 256u);
    for (std::size_t i = sizeof(agg::buffer_header); i < 256; ++i)
      ASSERT_EQ(r.data[i], static_cast<std::byte>(static_cast<std::size_t>(peer) * 7 + i))
          << "byte " << i;
    ++per_link[static_cast<std::size_t>(r.in_link)];
    t.release(r);
  }
  for (int n : per_link) EXPECT_EQ(n, 2);
  EXPECT_EQ(t.memory_bytes(), t.max_memory_bytes());
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-4 / M4: the ring is the credit. Rank 1 holds everything: rank 0 gets exactly n_buffers
// slots (no queue beyond the ring), rank 1 sees exactly n_buffers. Releasing the newest
// held buffer (out of order) gives back exactly one slot, whose buffer arrives next.
TEST(ShmTransport, RingIsTheCredit) {
  const int rank = world_rank(), p = world_size();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  for (const int nb : {1, 2, 4}) {
    SCOPED_TRACE("n_buffers " + std::to_string(nb));
    const auto lay = all_to_all(rank, p, 1, 64, nb);
    agg::shm_transport t(MPI_COMM_WORLD, filling());
    t.open(lay);
    traffic tr(t, lay, 1u, 1u);
    std::vector<agg::received> held;
    agg::received r;
    if (rank == 0) {
      int posted = 0;
      for (int i = 0; i < 100; ++i)
        if (std::byte* b = t.acquire(0)) {
          tr.post_one(0, b);
          ++posted;
        }
      EXPECT_EQ(posted, nb);
      EXPECT_TRUE(t.idle());  // M6: posted is delivered
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
      while (t.poll(r)) held.push_back(r);
      EXPECT_EQ(held.size(), static_cast<std::size_t>(nb));
      t.release(held.back());
      held.pop_back();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      std::byte* b = t.acquire(0);
      EXPECT_NE(b, nullptr);
      EXPECT_EQ(t.acquire(0), nullptr);
      if (b) tr.post_one(0, b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
      ASSERT_TRUE(t.poll(r));
      agg::buffer_header h{};
      std::memcpy(&h, r.data, sizeof h);
      EXPECT_EQ(h.seq, static_cast<std::uint32_t>(nb + 1));
      EXPECT_FALSE(t.poll(r));
      held.push_back(r);
      for (const auto& x : held) t.release(x);
      EXPECT_TRUE(contains(error_of([&] { t.release(held[0]); }), "already released"));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      int again = 0;
      while (std::byte* b = t.acquire(0)) {
        tr.post_one(0, b);
        ++again;
      }
      EXPECT_EQ(again, nb);  // every slot came back
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// AGG-9: two senders fill rank 0's rings; poll() alternates between the links.
TEST(ShmTransport, PollIsRoundRobin) {
  const int rank = world_rank(), p = world_size();
  if (p < 3) GTEST_SKIP() << "needs three ranks";
  constexpr int nb = 4;
  const auto lay = all_to_all(rank, p, 1, 64, nb);
  agg::shm_transport t(MPI_COMM_WORLD, filling());
  t.open(lay);
  traffic tr(t, lay, 1u, 1u);
  if (rank == 1 || rank == 2)
    for (int i = 0; i < nb; ++i) tr.post_one(0, t.acquire(0));  // out-link 0 goes to rank 0
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    std::vector<int> links;
    agg::received r;
    while (t.poll(r)) {
      links.push_back(r.in_link);
      t.release(r);
    }
    ASSERT_EQ(links.size(), 2u * nb);
    for (std::size_t i = 1; i < links.size(); ++i) EXPECT_NE(links[i], links[i - 1]) << i;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-10: a bad layout on one rank is that rank's own message and, on the other node ranks,
// a message naming the rank; nobody is left waiting in a collective and the transport
// can still be opened afterwards.
TEST(ShmTransport, BadLayoutIsAConvoyErrorOnEveryRank) {
  const int rank = world_rank(), p = world_size();
  agg::shm_transport t(MPI_COMM_WORLD, filling());
  auto lay = all_to_all(rank, p, 1, 64, 2);
  if (rank == p - 1) lay.out_links.push_back({0, p + 3});
  const std::string e1 = error_of([&] { t.open(lay); });
  if (rank == p - 1)
    EXPECT_TRUE(contains(e1, "peer rank out of range")) << e1;
  else
    EXPECT_TRUE(contains(e1, "failed on rank " + std::to_string(p - 1))) << e1;

  lay = all_to_all(rank, p, 1, 64, 2);
  lay.out_links.push_back({0, rank});
  EXPECT_TRUE(contains(error_of([&] { t.open(lay); }), "to the rank itself"));
  lay = all_to_all(rank, p + 1, 1, 64, 2);
  if (p > 1) {
    EXPECT_TRUE(contains(error_of([&] { t.open(lay); }), "this endpoint is rank"));
    // The ends disagree on n_buffers.
    lay = all_to_all(rank, p, 1, 64, rank == 0 ? 1 : 2);
    EXPECT_TRUE(contains(error_of([&] { t.open(lay); }), "disagree"));
    // Rank 0 sends to rank 1 on stage 7, which rank 1 does not expect.
    lay = all_to_all(rank, p, 1, 64, 2);
    if (rank == 0) lay.out_links.push_back({7, 1});
    EXPECT_TRUE(contains(error_of([&] { t.open(lay); }), "the receiver does not serve it"));
    lay = all_to_all(rank, p, 1, 64, 2);
    EXPECT_TRUE(contains(error_of([&] { t.open(lay, {}, {}); }), "one flag per link"));
  }
  EXPECT_TRUE(contains(error_of([] { agg::shm_transport bad(MPI_COMM_NULL); }), "MPI_COMM_NULL"));

  lay = all_to_all(rank, p, 1, 64, 2);
  t.open(lay);
  EXPECT_TRUE(contains(error_of([&] { t.open(lay); }), "twice"));
  agg::received bogus;
  EXPECT_TRUE(contains(error_of([&] { t.release(bogus); }), "did not hand out"));
  if (p > 1) {
    std::byte* b = t.acquire(0);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(contains(error_of([&] { t.post(0, b, 65); }), "must be in [16, 64]"));
    EXPECT_TRUE(contains(error_of([&] { t.post(0, b + 1, 32); }), "not an acquired"));
    EXPECT_TRUE(contains(error_of([&] { t.post(99, b, 32); }), "does not serve"));
    EXPECT_EQ(t.acquire(99), nullptr);
    EXPECT_EQ(t.acquire(-1), nullptr);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// AGG-8 for the hybrid: on-node links split by (rank + peer) parity between shared memory
// and MPI (emulating remote peers); exactly once and FIFO over both, link ids preserved.
TEST(HybridTransport, HalfShmHalfMpiExactlyOnce) {
  const int rank = world_rank(), p = world_size();
  for (const int nb : {1, 2, 4}) {
    SCOPED_TRACE("n_buffers " + std::to_string(nb));
    const auto lay = all_to_all(rank, p, 2, 300, nb);
    agg::hybrid_transport t(MPI_COMM_WORLD, [](int a, int b) { return (a + b) % 2 == 0; });
    t.open(lay);
    std::size_t even = 0;
    for (const auto& l : lay.out_links) even += (rank + l.peer) % 2 == 0 ? 2 : 0;  // out + in
    EXPECT_EQ(t.n_shm_links(), even);
    EXPECT_EQ(t.shm().memory_bytes(), even / 2 * agg::shm_transport::ring_bytes(300, nb));
    EXPECT_EQ(t.mpi().max_memory_bytes(), (lay.out_links.size() * 2 - even) * nb * 300);
    EXPECT_EQ(t.max_memory_bytes(), t.shm().max_memory_bytes() + t.mpi().max_memory_bytes());
    exchange(t, lay,
             {.tag = 11,
              .seed = 11000u + static_cast<unsigned>(rank),
              .hold_percent = 30,
              .per_link = 120});
    EXPECT_TRUE(t.idle());
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// AGG-11 for the hybrid: a buffer source gives the MPI side's buffers in one grab of the same
// size on every rank; the shared-memory rings stay in their window (the source never sees
// them); delivery exact; the block goes back at destruction.
TEST(HybridTransport, BufferSourceServesTheMpiSideOnly) {
  const int rank = world_rank(), p = world_size();
  const auto lay = all_to_all(rank, p, 2, 300, 2);
  auto src = std::make_shared<convoy_test::counting_source>();
  {
    agg::hybrid_transport t(
        MPI_COMM_WORLD, [](int a, int b) { return (a + b) % 2 == 0; }, src);
    t.open(lay);
    std::size_t mpi_links = 0;
    for (const auto& l : lay.out_links) mpi_links += (rank + l.peer) % 2 == 0 ? 0 : 2;
    unsigned long long need = mpi_links * 2 * 320, most = 0;  // 300 rounds up to 320
    MPI_Allreduce(&need, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    ASSERT_EQ(src->sizes.size(), most ? 1u : 0u);
    if (most) {
      EXPECT_EQ(src->sizes[0], most + 63);
    }
    EXPECT_EQ(t.mpi().memory_bytes(), mpi_links * 2 * 300);
    exchange(t, lay,
             {.tag = 13,
              .seed = 13000u + static_cast<unsigned>(rank),
              .hold_percent = 20,
              .per_link = 100});
    EXPECT_TRUE(t.idle());
    EXPECT_EQ(src->n_released, 0u);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  EXPECT_EQ(src->n_released, src->sizes.size());
  EXPECT_EQ(src->live_bytes, 0u);
  // A bad layout on one rank: the shared-memory side fails on every node rank, the MPI
  // side carries the failure through its collective agreement, nobody waits.
  if (p > 1) {
    agg::hybrid_transport t(MPI_COMM_WORLD, {}, src);
    auto bad = all_to_all(rank, p, 1, 64, 2);
    if (rank == p - 1) bad.out_links.push_back({0, p + 3});
    const std::string e = error_of([&] { t.open(bad); });
    EXPECT_FALSE(e.empty());
  }
  for (const auto& e : src->errors) ADD_FAILURE() << e;
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// Hybrid, every peer on the node: everything goes through shared memory.
TEST(HybridTransport, AllOnNodeUsesShm) {
  const int rank = world_rank(), p = world_size();
  const auto lay = all_to_all(rank, p, 1, 128, 2);
  agg::hybrid_transport t(MPI_COMM_WORLD);
  t.open(lay);
  EXPECT_EQ(t.n_shm_links(), 2 * lay.out_links.size());
  EXPECT_EQ(t.mpi().max_memory_bytes(), 0u);
  exchange(t, lay,
           {.tag = 12,
            .seed = 12000u + static_cast<unsigned>(rank),
            .hold_percent = 10,
            .per_link = 100});
  // A buffer of the shared-memory side posted as if MPI served it is refused.
  EXPECT_TRUE(
      contains(error_of([&] { t.post(static_cast<int>(lay.out_links.size()), nullptr, 16); }),
               "does not serve"));
  MPI_Barrier(MPI_COMM_WORLD);
}

// The factory: each kind builds a working transport of the documented type.
TEST(MakeTransport, EveryKindDelivers) {
  const int rank = world_rank(), p = world_size();
  for (const auto kind : {convoy::base::transport_kind::automatic,
                          convoy::base::transport_kind::mpi, convoy::base::transport_kind::shm}) {
    SCOPED_TRACE(convoy::base::transport_kind_name(kind));
    auto t = agg::make_transport(MPI_COMM_WORLD, kind);
    ASSERT_NE(t, nullptr);
    const bool hybrid = dynamic_cast<agg::hybrid_transport*>(t.get()) != nullptr;
    const bool mpi = dynamic_cast<agg::mpi_transport*>(t.get()) != nullptr;
    if (kind == convoy::base::transport_kind::mpi) {
      EXPECT_TRUE(mpi);
    } else if (kind == convoy::base::transport_kind::shm) {
      EXPECT_TRUE(hybrid);
    } else {
      EXPECT_EQ(hybrid, p > 1);  // one node here
      EXPECT_EQ(mpi, p == 1);
    }
    const auto lay = all_to_all(rank, p, 1, 256, 2);
    t->open(lay);
    exchange(*t, lay,
             {.tag = 13,
              .seed = 13000u + static_cast<unsigned>(rank),
              .hold_percent = 20,
              .per_link = 60});
    MPI_Barrier(MPI_COMM_WORLD);
  }
  EXPECT_TRUE(contains(
      error_of([] { (void)agg::make_transport(MPI_COMM_NULL, convoy::base::transport_kind::mpi); }),
      "MPI_COMM_NULL"));
}

// CONVOY_TRANSPORT reaches the factory's kind.
TEST(MakeTransport, KindFromSettings) {  // BASE-5 (one transport enum)
  EXPECT_EQ(convoy::base::settings{}.transport_or_auto(), convoy::base::transport_kind::automatic);
  for (const auto& [text, kind] :
       {std::pair{"auto", convoy::base::transport_kind::automatic},
        std::pair{"mpi", convoy::base::transport_kind::mpi},
        std::pair{"shm", convoy::base::transport_kind::shm},
        std::pair{"shm-zero-copy", convoy::base::transport_kind::shm_zero_copy}}) {
    const auto s = convoy::base::settings::from_values({{"CONVOY_TRANSPORT", text}});
    EXPECT_EQ(s.transport_or_auto(), kind) << text;
    EXPECT_STREQ(convoy::base::transport_kind_name(kind), text);
  }
}
