// The large-item channels, two-sided (mpi_large_channel) and rendezvous
// (rma_large_channel), through the same tests (aggregation/README.md, AGG-52..57,
// AGG-120..127). Small chunk sizes make the chunking visible with small items; every loop
// is bounded. Where a test needs a ticket without an engine, a small MPI message carries
// it (size and descriptor), as the engine's ticket would.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <convoy/aggregation/large_channel.hpp>
#include <convoy/aggregation/rma_large_channel.hpp>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "convoy_test/mpi.hpp"
#include <convoy_test/counting_source.hpp>
#include "error_of.hpp"

namespace agg = convoy::aggregation;
using kind = convoy::base::large_kind;
using convoy_test::world_rank;
using convoy_test::world_size;

namespace {

std::vector<std::byte> item_bytes(int src, std::size_t n, std::size_t k) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::byte>(static_cast<std::size_t>(src) * 31 + k * 7 + i * 13);
  return v;
}

bool within(std::chrono::steady_clock::time_point start, int seconds) {
  return std::chrono::steady_clock::now() - start < std::chrono::seconds(seconds);
}

class LargeChannel : public ::testing::TestWithParam<kind> {
 protected:
  [[nodiscard]] bool rendezvous() const { return GetParam() == kind::rendezvous; }
  [[nodiscard]] std::unique_ptr<agg::large_channel> make(
      std::size_t bound, std::size_t chunk, std::shared_ptr<agg::buffer_source> source = {}) const {
    return agg::make_large_channel(MPI_COMM_WORLD, GetParam(), {bound, chunk, std::move(source)});
  }
};

// Stages and starts `v` to `to`; returns the ticket's descriptor.
std::uint64_t send(agg::large_channel& ch, const std::vector<std::byte>& v, int to) {
  const std::uint64_t where = ch.stage_send(v.data(), v.size(), to);
  ch.start_send();
  return where;
}

// AGG-52, AGG-53: items of every size around the chunk boundary go from each rank to the
// next, one in flight at a time, received in order and intact.
// The descriptors travel to the receiver as the engine's tickets would (here: one small
// message per item, in order).
TEST_P(LargeChannel, RingOfSizesChunked) {
  const int me = world_rank(), p = world_size();
  const int to = (me + 1) % p, from = (me + p - 1) % p;
  const std::vector<std::size_t> sizes = {0, 1, 999, 1000, 1001, 5003, 64, 20000};
  auto owner = make(20000, 1000);
  agg::large_channel& ch = *owner;
  std::vector<std::uint64_t> out(sizes.size()), in(sizes.size());
  std::vector<MPI_Request> tickets(sizes.size(), MPI_REQUEST_NULL);
  MPI_Request ticket_in = MPI_REQUEST_NULL;
  bool have_ticket = false;
  EXPECT_EQ(ch.max_item_bytes(), 20000u);
  std::size_t sent = 0, got = 0;
  const auto start = std::chrono::steady_clock::now();
  while ((sent < sizes.size() || got < sizes.size()) && within(start, 60)) {
    if (sent < sizes.size() && ch.send_ready()) {
      const auto v = item_bytes(me, sizes[sent], sent);
      out[sent] = send(ch, v, to);
      MPI_Isend(&out[sent], 1, MPI_UINT64_T, to, 7, MPI_COMM_WORLD, &tickets[sent]);
      EXPECT_FALSE(ch.idle());
      ++sent;
    }
    if (got < sizes.size()) {
      if (!have_ticket && ticket_in == MPI_REQUEST_NULL)
        MPI_Irecv(&in[got], 1, MPI_UINT64_T, from, 7, MPI_COMM_WORLD, &ticket_in);
      if (!have_ticket) {
        int flag = 0;
        MPI_Test(&ticket_in, &flag, MPI_STATUS_IGNORE);
        have_ticket = flag != 0;
      }
      if (have_ticket && !ch.receiving()) ch.start_receive(from, sizes[got], in[got]);
      if (ch.receive_done()) {
        const auto want = item_bytes(from, sizes[got], got);
        if (!want.empty()) {
          EXPECT_EQ(std::memcmp(ch.incoming(), want.data(), want.size()), 0) << "item " << got;
        }
        ++got;
        have_ticket = false;
      }
    }
    ch.progress();
  }
  ASSERT_EQ(got, sizes.size());
  MPI_Waitall(static_cast<int>(tickets.size()), tickets.data(), MPI_STATUSES_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_TRUE(ch.send_ready());
  EXPECT_TRUE(ch.idle());
  // 1+1+1+1+2+6+1+20 chunks (an empty item is one empty message, and no get; an item to
  // self is a copy).
  EXPECT_EQ(ch.stats().messages, rendezvous() ? (p > 1 ? 32u : 0u) : 33u);
  if (p > 1) {
    EXPECT_EQ(ch.stats().sent, sizes.size());
    EXPECT_EQ(ch.stats().received, sizes.size());
  } else {
    EXPECT_EQ(ch.stats().sent, 0u) << "items to self are not counted as sent";
  }
  EXPECT_LE(ch.memory_bytes(), ch.max_memory_bytes());
  const std::size_t control = rendezvous() ? agg::rma_large_channel::control_bytes : 0;
  EXPECT_EQ(ch.memory_bytes(), std::size_t{2} * 20000 + control)
      << "each buffer grew to the largest item";
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-54: a receive started before its sender has sent is "not yet", without blocking;
// it completes once the bytes come.
// (Two-sided only: a rendezvous receive starts from the ticket's descriptor, so after the
// send; its "not yet" is SenderNotReadyUntilFetched's.)
TEST_P(LargeChannel, ReceiveNotDoneUntilSent) {
  if (rendezvous()) GTEST_SKIP() << "a rendezvous receive needs the sender's descriptor";
  const int me = world_rank(), p = world_size();
  auto owner = make(4096, 512);
  agg::large_channel& ch = *owner;
  const auto v = item_bytes(me, 4096, 3);
  ch.start_receive((me + p - 1) % p, 4096, 0);
  MPI_Barrier(MPI_COMM_WORLD);  // nobody has sent
  for (int i = 0; i < 100; ++i) {
    ch.progress();
    EXPECT_FALSE(ch.receive_done());
  }
  EXPECT_TRUE(ch.receiving());
  MPI_Barrier(MPI_COMM_WORLD);
  (void)send(ch, v, (me + 1) % p);
  const auto start = std::chrono::steady_clock::now();
  while (!ch.receive_done() && within(start, 30)) ch.progress();
  EXPECT_FALSE(ch.receiving());
  const auto want = item_bytes((me + p - 1) % p, 4096, 3);
  EXPECT_EQ(std::memcmp(ch.incoming(), want.data(), want.size()), 0);
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-55: the bound, and only one send in flight.
// AGG-126: and the rendezvous channel's own misuse.
TEST_P(LargeChannel, BoundAndMisuse) {
  using convoy_test::contains;
  using convoy_test::error_of;
  auto owner = make(100, 40);
  agg::large_channel& ch = *owner;
  const std::vector<std::byte> big(101);
  EXPECT_TRUE(
      contains(error_of([&] { (void)ch.stage_send(big.data(), 101, 0); }), "exceeds the bound"));
  EXPECT_TRUE(contains(error_of([&] { ch.start_receive(0, 101, 1); }), "exceeds the bound"));
  EXPECT_TRUE(contains(error_of([&] { ch.start_send(); }), "no item staged"));
  EXPECT_FALSE(ch.receiving());
  // (Rendezvous: the window's control line and item room exist from construction.)
  EXPECT_EQ(ch.memory_bytes(), rendezvous() ? agg::rma_large_channel::control_bytes + 100 : 0u)
      << "nothing allocated by a refused item";
  EXPECT_TRUE(contains(error_of([&] { (void)make(10, 0); }), "chunk_bytes"));
  if (rendezvous()) {
    EXPECT_TRUE(
        contains(error_of([&] { (void)ch.stage_send(big.data(), 1, world_size()); }), "outside"));
    EXPECT_TRUE(contains(error_of([&] { ch.start_receive(-1, 1, 1); }), "outside"));
    EXPECT_TRUE(contains(error_of([&] { ch.start_receive(0, 1, 0); }), "descriptor"));
  }
  // A self send completes only when received: a second stage_send meanwhile is refused.
  const auto v = item_bytes(0, 100, 0);
  const std::uint64_t where = send(ch, v, world_rank());
  EXPECT_TRUE(
      contains(error_of([&] { (void)ch.stage_send(v.data(), 100, world_rank()); }), "in flight"));
  ch.start_receive(world_rank(), 100, where);
  const auto start = std::chrono::steady_clock::now();
  while (!ch.receive_done() && within(start, 30)) ch.progress();
  while (!ch.send_ready() && within(start, 30)) ch.progress();
  EXPECT_EQ(std::memcmp(ch.incoming(), v.data(), 100), 0);
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-56: with a buffer source both buffers (the bound each) are grabbed at construction,
// outgoing first, and released last-in first-out.
// (Rendezvous: only the incoming buffer comes from the source, the outgoing one is the
// window's; a failed grab on any rank throws on every rank, as the window is collective.)
TEST_P(LargeChannel, BufferSource) {
  auto source = std::make_shared<convoy_test::counting_source>();
  const std::size_t control = rendezvous() ? agg::rma_large_channel::control_bytes : 0;
  {
    auto owner = make(3000, 1000, source);
    agg::large_channel& ch = *owner;
    const std::vector<std::size_t> grabs =
        rendezvous() ? std::vector<std::size_t>{3000} : std::vector<std::size_t>{3000, 3000};
    ASSERT_EQ(source->sizes, grabs);
    EXPECT_EQ(ch.memory_bytes(), 6000u + control);
    const auto v = item_bytes(world_rank(), 2500, 1);
    const std::uint64_t where = send(ch, v, world_rank());
    ch.start_receive(world_rank(), v.size(), where);
    const auto start = std::chrono::steady_clock::now();
    while (!ch.receive_done() && within(start, 30)) ch.progress();
    EXPECT_EQ(std::memcmp(ch.incoming(), v.data(), v.size()), 0);
    EXPECT_EQ(source->sizes.size(), rendezvous() ? 1u : 2u) << "no grab per item";
  }
  EXPECT_EQ(source->n_released, rendezvous() ? 1u : 2u);
  EXPECT_TRUE(source->errors.empty()) << source->errors.front();
  source->fail = true;
  EXPECT_THROW((void)make(3000, 1000, source), std::bad_alloc);
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-121, AGG-123: a rendezvous sender's buffer is not reusable (send_ready() false, not
// idle) until its receiver has fetched the bytes; the receiver, once it has the descriptor,
// completes in later tests without the sender doing anything.
TEST_P(LargeChannel, SenderNotReadyUntilFetched) {
  if (!rendezvous()) GTEST_SKIP() << "two-sided sends may complete before the receive";
  using convoy_test::contains;
  using convoy_test::error_of;
  const int me = world_rank(), p = world_size();
  const int to = (me + 1) % p, from = (me + p - 1) % p;
  auto owner = make(8192, 1000);
  agg::large_channel& ch = *owner;
  const auto v = item_bytes(me, 8192, 5);
  std::uint64_t where = send(ch, v, to), theirs = 0;
  MPI_Sendrecv(&where, 1, MPI_UINT64_T, to, 3, &theirs, 1, MPI_UINT64_T, from, 3, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  for (int i = 0; i < 100; ++i) {
    ch.progress();
    EXPECT_FALSE(ch.send_ready()) << "ready before the receiver fetched";
  }
  EXPECT_FALSE(ch.idle());
  EXPECT_TRUE(contains(error_of([&] { (void)ch.stage_send(v.data(), 10, to); }), "in flight"));
  MPI_Barrier(MPI_COMM_WORLD);  // every sender has seen "not ready"
  ch.start_receive(from, 8192, theirs);
  const auto start = std::chrono::steady_clock::now();
  while (!ch.receive_done() && within(start, 30)) {
  }
  EXPECT_FALSE(ch.receiving());
  const auto want = item_bytes(from, 8192, 5);
  EXPECT_EQ(std::memcmp(ch.incoming(), want.data(), want.size()), 0);
  while (!ch.send_ready() && within(start, 30)) ch.progress();
  EXPECT_TRUE(ch.idle());
  EXPECT_EQ(ch.stats().messages, p > 1 ? 9u : 0u) << "8192 bytes in gets of at most 1000";
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-124: every rank sends items of sizes around the chunk boundary to rank 0 (itself
// included), tickets in send order per pair; rank 0 takes them as they come, each sender's
// in order, every byte checked.
TEST_P(LargeChannel, ManySendersOneReceiver) {
  const int me = world_rank(), p = world_size();
  constexpr int n = 12;
  const std::vector<std::size_t> sizes = {63, 64, 65, 0, 127, 128, 129, 1000, 1, 640, 64, 200};
  auto owner = make(1000, 64);
  agg::large_channel& ch = *owner;
  struct ticket {
    std::uint64_t bytes, where, k;
  };
  std::vector<ticket> out(n);
  std::vector<MPI_Request> sends(n, MPI_REQUEST_NULL);
  std::vector<int> got(p, 0);
  std::vector<ticket> queue;  // rank 0: tickets met, not yet received
  std::vector<int> queue_from;
  int sent = 0, received = 0;
  const auto start = std::chrono::steady_clock::now();
  while ((sent < n || (me == 0 && received < n * p)) && within(start, 60)) {
    if (sent < n && ch.send_ready()) {
      const auto v = item_bytes(me, sizes[sent], static_cast<std::size_t>(sent));
      out[sent] = ticket{v.size(), send(ch, v, 0), static_cast<std::uint64_t>(sent)};
      MPI_Isend(&out[sent], 3, MPI_UINT64_T, 0, 9, MPI_COMM_WORLD, &sends[sent]);
      ++sent;
    }
    if (me == 0) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &flag, &st);
      if (flag) {
        ticket t{};
        MPI_Recv(&t, 3, MPI_UINT64_T, st.MPI_SOURCE, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        queue.push_back(t);
        queue_from.push_back(st.MPI_SOURCE);
      }
      if (!queue.empty() && !ch.receiving())
        ch.start_receive(queue_from.front(), queue.front().bytes, queue.front().where);
      if (ch.receive_done()) {
        const int src = queue_from.front();
        const auto k = static_cast<std::size_t>(queue.front().k);
        EXPECT_EQ(k, static_cast<std::size_t>(got[src])) << "from " << src << " out of order";
        const auto want = item_bytes(src, sizes[k], k);
        if (!want.empty()) {
          EXPECT_EQ(std::memcmp(ch.incoming(), want.data(), want.size()), 0)
              << "from " << src << " item " << k;
        }
        ++got[src];
        ++received;
        queue.erase(queue.begin());
        queue_from.erase(queue_from.begin());
      }
    }
    ch.progress();
  }
  MPI_Waitall(n, sends.data(), MPI_STATUSES_IGNORE);
  EXPECT_EQ(sent, n);
  if (me == 0) {
    EXPECT_EQ(received, n * p);
    EXPECT_EQ(ch.stats().received, static_cast<std::uint64_t>(n * (p - 1)));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const auto s2 = std::chrono::steady_clock::now();
  while (!ch.send_ready() && within(s2, 30)) ch.progress();
  EXPECT_TRUE(ch.idle()) << "the last item was released";
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

// AGG-127: CONVOY_LARGE=auto is rendezvous when every rank shares a node (always so in these
// runs) and no buffer source is given, two-sided otherwise; explicit kinds stay as named.
TEST(LargeChannelKind, AutoIsRendezvousOnOneNode) {
  EXPECT_EQ(agg::resolve_large_kind(MPI_COMM_WORLD, kind::automatic), kind::rendezvous);
  EXPECT_EQ(agg::resolve_large_kind(MPI_COMM_WORLD, kind::two_sided), kind::two_sided);
  auto ch = agg::make_large_channel(MPI_COMM_WORLD, kind::automatic, {100, 40, {}});
  EXPECT_NE(dynamic_cast<agg::rma_large_channel*>(ch.get()), nullptr);
  // With a buffer source, auto keeps every buffer in it: two-sided.
  EXPECT_EQ(agg::resolve_large_kind(MPI_COMM_WORLD, kind::automatic, true), kind::two_sided);
  auto source = std::make_shared<convoy_test::counting_source>();
  auto sourced = agg::make_large_channel(MPI_COMM_WORLD, kind::automatic, {100, 40, source});
  EXPECT_NE(dynamic_cast<agg::mpi_large_channel*>(sourced.get()), nullptr);
  EXPECT_TRUE(convoy_test::all_ranks(!HasFailure()));
}

INSTANTIATE_TEST_SUITE_P(Kinds, LargeChannel, ::testing::Values(kind::two_sided, kind::rendezvous),
                         [](const ::testing::TestParamInfo<kind>& param) {
                           return param.param == kind::rendezvous ? "rendezvous" : "two_sided";
                         });

}  // namespace
