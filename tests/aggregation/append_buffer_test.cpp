// One-sided append (docs/aggregation-reference.md, "One-sided append": AGG-100..AGG-105).
// Every push writes a self-describing record {source, seq, length} + bytes derived from
// (source, target, seq, cycle), so the target checks each byte, exactly-once and the
// totals on its own.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <convoy/aggregation/append_buffer.hpp>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "convoy_test/mpi.hpp"

namespace agg = convoy::aggregation;
using convoy_test::all_ranks;
using convoy_test::world_rank;
using convoy_test::world_size;

namespace {

struct record_head {
  std::uint32_t source;
  std::uint32_t seq;
  std::uint64_t payload_bytes;
};

std::uint8_t byte_of(int source, int target, std::uint32_t seq, int cycle, std::size_t i) {
  std::uint64_t x = (static_cast<std::uint64_t>(source) << 40) ^
                    (static_cast<std::uint64_t>(target) << 24) ^ (std::uint64_t{seq} << 8) ^
                    static_cast<std::uint64_t>(cycle) ^ (i * 0x9E3779B97F4A7C15ULL);
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ULL;
  return static_cast<std::uint8_t>(x >> 56);
}

std::vector<std::byte> make_record(int source, int target, std::uint32_t seq, int cycle,
                                   std::size_t payload) {
  std::vector<std::byte> r(sizeof(record_head) + payload);
  const record_head h{static_cast<std::uint32_t>(source), seq, payload};
  std::memcpy(r.data(), &h, sizeof h);
  for (std::size_t i = 0; i < payload; ++i)
    r[sizeof h + i] = std::byte{byte_of(source, target, seq, cycle, i)};
  return r;
}

/// Payload size of the seq-th record from `source`: 0 to ~300 bytes, some empty.
std::size_t payload_of(int source, std::uint32_t seq) {
  return (static_cast<std::size_t>(source) * 131 + std::size_t{seq} * 71) % 301;
}

/// Parses `bytes` of records; checks every byte; counts records per source. Returns the
/// first problem, "" if none.
std::string check_records(const std::byte* data, std::size_t bytes, int target, int cycle,
                          std::map<int, std::vector<int>>& seen) {
  std::size_t at = 0;
  while (at < bytes) {
    if (bytes - at < sizeof(record_head)) return "a partial record head at " + std::to_string(at);
    record_head h{};
    std::memcpy(&h, data + at, sizeof h);
    if (h.payload_bytes != payload_of(static_cast<int>(h.source), h.seq))
      return "record at " + std::to_string(at) + " has a wrong length";
    if (bytes - at - sizeof h < h.payload_bytes) return "record at " + std::to_string(at) + " cut";
    for (std::size_t i = 0; i < h.payload_bytes; ++i)
      if (data[at + sizeof h + i] !=
          std::byte{byte_of(static_cast<int>(h.source), target, h.seq, cycle, i)})
        return "byte " + std::to_string(i) + " of record (" + std::to_string(h.source) + "," +
               std::to_string(h.seq) + ") is wrong";
    seen[static_cast<int>(h.source)].push_back(static_cast<int>(h.seq));
    at += sizeof h + h.payload_bytes;
  }
  return "";
}

/// Every rank pushes `per_target` records to each target in `targets`, interleaved; then
/// every rank checks its buffer byte by byte. True on every rank iff all is right.
bool exchange_and_check(agg::append_buffer& buf, const std::vector<int>& targets, int per_target,
                        int cycle) {
  const int me = world_rank(), n = world_size();
  for (int k = 0; k < per_target; ++k)
    for (int t : targets) {
      const auto r = make_record(me, t, static_cast<std::uint32_t>(k), cycle,
                                 payload_of(me, static_cast<std::uint32_t>(k)));
      if (buf.push(t, r) != r.size()) return all_ranks(false);
    }
  MPI_Barrier(MPI_COMM_WORLD);
  const auto v = buf.local_view();
  const bool target = std::find(targets.begin(), targets.end(), me) != targets.end();
  std::size_t expect_bytes = 0;
  if (target)
    for (int s = 0; s < n; ++s)
      for (int k = 0; k < per_target; ++k)
        expect_bytes += sizeof(record_head) + payload_of(s, static_cast<std::uint32_t>(k));
  bool ok = v.complete && v.bytes == expect_bytes && v.requested_bytes == expect_bytes &&
            v.n_appends == (target ? static_cast<std::uint64_t>(n) * per_target : 0);
  EXPECT_TRUE(ok) << "complete " << v.complete << " bytes " << v.bytes << " of " << expect_bytes
                  << " appends " << v.n_appends;
  std::map<int, std::vector<int>> seen;
  const std::string problem = check_records(v.data, v.bytes, me, cycle, seen);
  EXPECT_EQ(problem, "");
  ok = ok && problem.empty();
  // Exactly once, and the records of one source in its push order (one sender's pushes to
  // one target are serial, so their reservations are ordered).
  if (target)
    for (int s = 0; s < n; ++s) {
      std::vector<int> want(static_cast<std::size_t>(per_target));
      for (int k = 0; k < per_target; ++k) want[static_cast<std::size_t>(k)] = k;
      EXPECT_EQ(seen[s], want) << "records from rank " << s;
      ok = ok && seen[s] == want;
    }
  return all_ranks(ok);
}

}  // namespace

// AGG-100 (no byte lost or duplicated), AGG-101 (counters): many senders, one target.
TEST(AppendBuffer, ManySendersOneTarget) {
  agg::append_buffer buf(MPI_COMM_WORLD, 1 << 20);
  EXPECT_TRUE(exchange_and_check(buf, {0}, 40, 0));
  buf.reset();
  EXPECT_TRUE(exchange_and_check(buf, {world_size() - 1}, 5, 1));
}

// AGG-100: every rank pushes to every rank at once, interleaved; checked byte by byte.
TEST(AppendBuffer, ConcurrentAllToAll) {
  agg::append_buffer buf(MPI_COMM_WORLD, 1 << 20);
  std::vector<int> all(static_cast<std::size_t>(world_size()));
  for (int t = 0; t < world_size(); ++t)
    all[static_cast<std::size_t>(t)] = (t + world_rank()) % world_size();
  EXPECT_TRUE(exchange_and_check(buf, all, 30, 0));
}

// AGG-102: truncation exactly at the boundary (one sender, known order).
TEST(AppendBuffer, TruncationAtTheBoundary) {
  agg::append_buffer buf(MPI_COMM_WORLD, 1000);
  const int target = world_size() - 1;
  std::vector<std::byte> src(1500);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = std::byte{static_cast<std::uint8_t>(i * 7)};
  if (world_rank() == 0) {
    const std::span<const std::byte> all(src);
    EXPECT_EQ(buf.push(target, all.subspan(0, 600)), 600U);
    EXPECT_EQ(buf.push(target, all.subspan(600, 400)), 400U);  // ends exactly at capacity
    EXPECT_EQ(buf.push(target, all.subspan(0, 1)), 0U);        // full: nothing
    EXPECT_EQ(buf.push(target, all.subspan(0, 0)), 0U);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == target) {
    const auto v = buf.local_view();
    EXPECT_TRUE(v.complete);
    EXPECT_EQ(v.bytes, 1000U);
    EXPECT_EQ(v.requested_bytes, 1001U);
    EXPECT_EQ(v.n_appends, 2U);
    EXPECT_EQ(std::memcmp(v.data, src.data(), 1000), 0);
  }
  buf.reset();
  // One push one byte past the capacity keeps its first 1000 bytes.
  if (world_rank() == 0) {
    EXPECT_EQ(buf.push(target, src), 1000U);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == target) {
    const auto v = buf.local_view();
    EXPECT_EQ(v.bytes, 1000U);
    EXPECT_EQ(v.requested_bytes, 1500U);
    EXPECT_EQ(v.n_appends, 1U);
    EXPECT_EQ(std::memcmp(v.data, src.data(), 1000), 0);
  }
}

// AGG-102: all ranks race to fill one buffer; what they got sums to the capacity exactly,
// at most one push was cut, and the cut push kept its first bytes.
TEST(AppendBuffer, ConcurrentTruncation) {
  constexpr std::size_t capacity = 4099;  // prime: pushes of 64 never end on it
  agg::append_buffer buf(MPI_COMM_WORLD, capacity);
  const int me = world_rank();
  std::vector<std::byte> src(64, std::byte{static_cast<std::uint8_t>(me + 1)});
  unsigned long long got = 0, cut = 0;
  for (;;) {
    const std::size_t n = buf.push(0, src);
    got += n;
    if (n > 0 && n < src.size()) ++cut;
    if (n < src.size()) break;
  }
  unsigned long long sums[2] = {got, cut}, totals[2] = {0, 0};
  MPI_Allreduce(sums, totals, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(totals[0], capacity);
  EXPECT_EQ(totals[1], 1U);  // 4099 is not a multiple of 64: exactly one push is cut
  if (me == 0) {
    const auto v = buf.local_view();
    EXPECT_TRUE(v.complete);
    EXPECT_EQ(v.bytes, capacity);
    // Records are 64-byte runs of one value, except the cut one at the end.
    for (std::size_t at = 0; at < capacity; at += 64) {
      const std::size_t len = std::min<std::size_t>(64, capacity - at);
      for (std::size_t i = 1; i < len; ++i) ASSERT_EQ(v.data[at + i], v.data[at]) << at + i;
    }
  }
}

// AGG-103: zero-length pushes return 0 and change nothing, even on a full buffer.
TEST(AppendBuffer, ZeroLengthPushes) {
  agg::append_buffer buf(MPI_COMM_WORLD, 16);
  for (int t = 0; t < world_size(); ++t) EXPECT_EQ(buf.push(t, {}), 0U);
  MPI_Barrier(MPI_COMM_WORLD);
  auto v = buf.local_view();
  EXPECT_TRUE(v.complete);
  EXPECT_EQ(v.bytes, 0U);
  EXPECT_EQ(v.requested_bytes, 0U);
  EXPECT_EQ(v.n_appends, 0U);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::vector<std::byte> sixteen(16, std::byte{9});
  if (world_rank() == 0) {
    EXPECT_EQ(buf.push(0, sixteen), 16U);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(buf.push(0, {}), 0U);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    v = buf.local_view();
    EXPECT_EQ(v.requested_bytes, 16U);
    EXPECT_EQ(v.n_appends, 1U);
  }
}

// AGG-104: reset empties every buffer; ten cycles with different data each.
TEST(AppendBuffer, ReuseOverCycles) {
  agg::append_buffer buf(MPI_COMM_WORLD, 64 << 10);
  std::vector<int> all(static_cast<std::size_t>(world_size()));
  for (int t = 0; t < world_size(); ++t) all[static_cast<std::size_t>(t)] = t;
  for (int cycle = 0; cycle < 10; ++cycle) {
    ASSERT_TRUE(exchange_and_check(buf, all, 1 + cycle % 4, cycle)) << "cycle " << cycle;
    buf.reset();
    const auto v = buf.local_view();
    EXPECT_EQ(v.bytes, 0U);
    EXPECT_EQ(v.n_appends, 0U);
    MPI_Barrier(MPI_COMM_WORLD);  // nobody pushes the next cycle before every rank looked
  }
}

// AGG-105: misuse is an error naming the problem, never a crash.
TEST(AppendBuffer, Misuse) {
  agg::append_buffer buf(MPI_COMM_WORLD, 128);
  const std::vector<std::byte> one(1);
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const convoy::error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { static_cast<void>(buf.push(-1, one)); }).find("outside [0, "),
            std::string::npos);
  EXPECT_NE(message([&] { static_cast<void>(buf.push(world_size(), one)); }).find("rank "),
            std::string::npos);
  buf.free();
  EXPECT_TRUE(buf.freed());
  EXPECT_NE(
      message([&] { static_cast<void>(buf.push(0, one)); }).find("push: the buffer was freed"),
      std::string::npos);
  EXPECT_NE(message([&] { static_cast<void>(buf.local_view()); }).find("freed"), std::string::npos);
  EXPECT_NE(message([&] { buf.reset(); }).find("freed"), std::string::npos);
  EXPECT_NE(message([&] { buf.free(); }).find("freed"), std::string::npos);
  // Different sizes: an error on every rank (with one rank there is nothing to differ).
  if (world_size() > 1) {
    const std::string m =
        message([&] { agg::append_buffer bad(MPI_COMM_WORLD, world_rank() == 0 ? 100 : 200); });
    EXPECT_NE(m.find("same on every rank"), std::string::npos) << m;
    // Too large on one rank only: every rank throws rank 0's message, none waits.
    const std::string huge = message([&] {
      agg::append_buffer bad(MPI_COMM_WORLD,
                             world_rank() == 0 ? (std::size_t{1} << 62) + 1 : std::size_t{100});
    });
    EXPECT_NE(huge.find("beyond 2^62"), std::string::npos) << huge;
  }
}
