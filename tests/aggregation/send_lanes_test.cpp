// Per-peer buffers alone (aggregation/README.md AGG-20..24): send lanes over a fake
// transport whose buffers are exactly buffer_bytes long (so ASan sees any store past
// the end), the loopback pool, the receive queue of an in-link.
#include <gtest/gtest.h>

#include <algorithm>
#include <convoy/aggregation/packing.hpp>
#include <convoy/aggregation/receive_queue.hpp>
#include <convoy/aggregation/send_lanes.hpp>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace {

namespace agg = convoy::aggregation;

// Hands out `free` buffers of exactly `capacity` bytes per link; never sends.
class fake_transport final : public agg::transport {
 public:
  fake_transport(std::size_t capacity, int free) : capacity_(capacity), free_(free) {}
  void open(const agg::link_layout&) override {}
  std::byte* acquire(int) noexcept override {
    if (free_ == 0) return nullptr;
    --free_;
    buffers_.push_back(std::make_unique<std::byte[]>(capacity_));
    return buffers_.back().get();
  }
  void post(int, std::byte*, std::size_t) override {}
  bool poll(agg::received&) override { return false; }
  void release(const agg::received&) override {}
  void progress() override {}
  bool idle() const noexcept override { return true; }
  std::size_t memory_bytes() const noexcept override { return 0; }
  std::size_t max_memory_bytes() const noexcept override { return 0; }
  void give(int n) { free_ += n; }

 private:
  std::size_t capacity_;
  int free_;
  std::vector<std::unique_ptr<std::byte[]>> buffers_;
};

// AGG-20: a rigid lane takes records while used <= limit, every record and the 8-byte tag
// store inside the buffer (ASan checks), and says "full" exactly when the next one would not.
TEST(SendLanes, RigidLaneFillsToCapacity) {
  for (const std::size_t item : {1u, 4u, 7u, 8u, 13u, 32u, 100u})
    for (const int tb : {0, 1, 2, 3, 8}) {
      const std::size_t capacity = 256;
      fake_transport t(capacity, 1);
      agg::send_lanes lanes({tb}, capacity, 2, false);
      lanes.start_cycle(item);
      ASSERT_TRUE(lanes.open(0, t, 0));
      agg::send_lane& l = lanes[0];
      const std::size_t record = static_cast<std::size_t>(tb) + item;
      const std::vector<std::byte> payload(item, std::byte{0x5c});
      std::size_t n = 0;
      bool full = false;
      while (!full) {
        ASSERT_LE(l.used, l.limit);
        full = l.put_rigid(0x0102030405060708ULL, payload.data(), item);
        ++n;
      }
      // A record is written only where an 8-byte store fits too (records under 8 bytes
      // leave the last few bytes of the buffer unused).
      const std::size_t reserve = std::max<std::size_t>(record, 8);
      EXPECT_EQ(n, (capacity - reserve - agg::header_bytes) / record + 1) << item << " " << tb;
      EXPECT_LE(capacity - l.used, reserve - 1) << "room for another record was left";
      EXPECT_EQ(l.used, agg::header_bytes + n * record);
      EXPECT_EQ(l.items, n);
      // The records read back: tag (tb bytes) then the payload.
      const agg::record r = agg::get_record(l.buf + agg::header_bytes + record, tb, false, item);
      EXPECT_EQ(r.tag, tb ? 0x0102030405060708ULL & (~0ULL >> (64 - 8 * tb)) : 0u);
      EXPECT_EQ(std::memcmp(r.payload, payload.data(), item), 0);
    }
}

// AGG-21: no free buffer, no lane: open() fails and nothing is written.
TEST(SendLanes, BackpressureWhenNoBufferIsFree) {
  fake_transport t(128, 0);
  agg::send_lanes lanes({1, 1}, 128, 2, false);
  lanes.start_cycle(8);
  EXPECT_FALSE(lanes.open(1, t, 0));
  EXPECT_FALSE(lanes.has_buffer(1));
  EXPECT_GT(lanes[1].used, lanes[1].limit) << "the inline test must fail without a buffer";
  t.give(1);
  EXPECT_TRUE(lanes.open(1, t, 0));
  EXPECT_FALSE(lanes.has_items(1));
  EXPECT_FALSE(lanes.put(1, 3, "abcdefgh", 8));
  EXPECT_TRUE(lanes.has_items(1));
  const agg::sealed_buffer b = lanes.seal(1);
  EXPECT_EQ(b.bytes, agg::header_bytes + 9);
  EXPECT_FALSE(lanes.has_buffer(1));
}

// AGG-20 for elastic records: put() writes the size field; fits() says when to post.
TEST(SendLanes, ElasticRecords) {
  fake_transport t(64, 1);
  agg::send_lanes lanes({2}, 64, 1, true);
  lanes.start_cycle(0);
  ASSERT_TRUE(lanes.open(0, t, 0));
  EXPECT_TRUE(lanes.fits(0, 64 - 16 - 2 - 4));
  EXPECT_FALSE(lanes.fits(0, 64 - 16 - 2 - 4 + 1));
  EXPECT_FALSE(lanes.put(0, 7, "xyz", 3));
  const agg::record r = agg::get_record(lanes[0].buf + agg::header_bytes, 2, true, 0);
  EXPECT_EQ(r.tag, 7u);
  EXPECT_EQ(r.bytes, 3u);
  EXPECT_EQ(std::memcmp(r.payload, "xyz", 3), 0);
}

// AGG-22: the loopback lane's buffers come from n_buffers pool buffers, never from the
// transport, and come back by slot.
TEST(SendLanes, LoopbackPool) {
  fake_transport t(128, 0);
  agg::send_lanes lanes({1}, 128, 2, false);
  lanes.start_cycle(8);
  const int self = lanes.loopback();
  EXPECT_EQ(self, 1);
  EXPECT_EQ(lanes.memory_bytes(), 2u * 128u);
  ASSERT_TRUE(lanes.open(self, t, 0));
  const agg::sealed_buffer a = lanes.seal(self);
  ASSERT_TRUE(lanes.open(self, t, 0));
  const agg::sealed_buffer b = lanes.seal(self);
  EXPECT_NE(a.slot, b.slot);
  EXPECT_NE(a.data, b.data);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data) % 64, 0u);
  EXPECT_FALSE(lanes.open(self, t, 0)) << "a third loopback buffer";
  lanes.give_back_loopback(a.slot);
  ASSERT_TRUE(lanes.open(self, t, 0));
  EXPECT_EQ(lanes[self].buf, a.data);
}

// AGG-23: a lane remembers when its buffer opened (steady dispatch counts from there).
TEST(SendLanes, WaitedCountsFromOpen) {
  fake_transport t(128, 2);
  agg::send_lanes lanes({0}, 128, 2, false);
  ASSERT_TRUE(lanes.open(0, t, 5));
  EXPECT_EQ(lanes.waited(0, 5), 0u);
  EXPECT_EQ(lanes.waited(0, 8), 3u);
}

// AGG-24: an in-link's queue keeps arrival order, tells this cycle's buffers from held
// ones, and refuses more than its n_buffers credits.
TEST(ReceiveQueue, OrderHoldingAndCapacity) {
  std::vector<agg::received> slots(3);
  agg::receive_queue q;
  q.bind(slots.data(), 3);
  auto buf = [](int i) {
    agg::received r;
    r.slot = i;
    return r;
  };
  EXPECT_TRUE(q.empty());
  q.push_back(buf(1), true);
  q.push_back(buf(2), true);
  q.push_back(buf(3), false);
  EXPECT_EQ(q.now(), 2);
  EXPECT_TRUE(q.holding());
  EXPECT_THROW(q.push_back(buf(4), true), convoy::error);
  EXPECT_EQ(q.front().slot, 1);
  q.offset = 40;
  q.pop_front();
  EXPECT_EQ(q.offset, agg::header_bytes);
  EXPECT_EQ(q.front().slot, 2);
  q.push_front(buf(1));
  EXPECT_EQ(q.front().slot, 1);
  q.pop_front();
  q.pop_front();
  EXPECT_TRUE(q.empty());
  EXPECT_TRUE(q.holding());
  q.set_now(1);  // a new cycle admits the held buffer
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.front().slot, 3);
  EXPECT_EQ(q.at(0).slot, 3);
}

}  // namespace
