// Dimension-ordered termination counting alone, against a fake link layer: no engine, no
// transport (termination/README.md TERM-4, TERM-8; Wesolowski et al. 2014, sec. III.D).
#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <convoy/termination/counting.hpp>
#include <cstdint>
#include <vector>

namespace {

using convoy::aggregation::buffer_header;
using convoy::aggregation::flag_last;
using convoy::termination::link_layer;
using convoy::termination::stage_counting;

// Out-links whose buffers can be made unavailable, in-links whose drained state the test
// sets; every last buffer sent is recorded with its count, in order.
class fake_links final : public link_layer {
 public:
  fake_links(int n_out, int n_in)
      : free_(static_cast<std::size_t>(n_out), true),
        count_(static_cast<std::size_t>(n_out), 0),
        drained_(static_cast<std::size_t>(n_in), true) {}
  bool send_last(int out_link, std::uint32_t count) override {
    if (!free_[static_cast<std::size_t>(out_link)]) return false;
    EXPECT_EQ(count_[static_cast<std::size_t>(out_link)], 0u) << "a second last buffer";
    count_[static_cast<std::size_t>(out_link)] = count;
    sent.push_back(out_link);
    return true;
  }
  bool drained(int in_link) const override { return drained_[static_cast<std::size_t>(in_link)]; }

  void set_free(int out_link, bool f) { free_[static_cast<std::size_t>(out_link)] = f; }
  void set_drained(int in_link, bool d) { drained_[static_cast<std::size_t>(in_link)] = d; }
  std::uint32_t count(int out_link) const { return count_[static_cast<std::size_t>(out_link)]; }
  void new_cycle() {
    std::fill(count_.begin(), count_.end(), 0u);
    sent.clear();
  }
  std::vector<int> sent;  // out-links, in the order their last buffers went

 private:
  std::vector<bool> free_;
  std::vector<std::uint32_t> count_;
  std::vector<bool> drained_;
};

buffer_header data(std::uint32_t epoch, std::uint32_t seq) { return {16, epoch, seq, 0}; }
buffer_header last(std::uint32_t epoch, std::uint32_t count) {
  return {16, epoch, count, flag_last};
}

// Three stages: out-links 0,1 (stage 0), 2 (stage 1), 3,4 (stage 2); in-links 0,1
// (stage 0), 2 (stage 1), 3 (stage 2).
struct three_stages {
  fake_links links{5, 4};
  stage_counting c{3, {0, 0, 1, 2, 2}, {0, 0, 1, 2}};
  three_stages() { c.begin_cycle(); }
  void arrive(int in_link, const buffer_header& h) {
    ASSERT_TRUE(c.arrive(in_link, h, true, false));
  }
};

// TERM-4: a stage closes only once this rank is done pushing and every in-link of every
// earlier stage has finished (received == the count of its last buffer) and is drained.
TEST(Counting, StageNeverClosesBeforeEveryEarlierInLinkFinished) {
  three_stages t;
  t.c.close_stages(t.links);
  EXPECT_TRUE(t.links.sent.empty()) << "closed while still pushing";
  t.c.stop_pushing();
  t.c.close_stages(t.links);
  EXPECT_EQ(t.links.sent, (std::vector<int>{0, 1})) << "stage 0 closes at once";
  EXPECT_EQ(t.c.closed_stages(), 1);
  // In-link 0: two data buffers and a last one carrying 3.
  t.arrive(0, data(1, 1));
  t.arrive(0, data(1, 2));
  t.c.close_stages(t.links);
  EXPECT_EQ(t.c.closed_stages(), 1) << "in-link 0 has not finished";
  t.arrive(0, last(1, 3));
  EXPECT_TRUE(t.c.finished(0));
  t.c.close_stages(t.links);
  EXPECT_EQ(t.c.closed_stages(), 1) << "in-link 1 (stage 0) has not finished";
  // In-link 1: only a last buffer (count 1), not yet processed.
  t.links.set_drained(1, false);
  t.arrive(1, last(1, 1));
  t.c.close_stages(t.links);
  EXPECT_EQ(t.c.closed_stages(), 1) << "in-link 1 finished but not drained";
  t.links.set_drained(1, true);
  t.c.close_stages(t.links);
  EXPECT_EQ(t.c.closed_stages(), 2);
  EXPECT_EQ(t.links.sent, (std::vector<int>{0, 1, 2}));
  EXPECT_FALSE(t.c.everything_received());
  // Stage 2 waits for stage 1's in-link 2 only, not for stage 2's own in-link 3.
  t.arrive(2, last(1, 1));
  t.c.close_stages(t.links);
  EXPECT_EQ(t.c.closed_stages(), 3);
  EXPECT_EQ(t.links.sent, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(t.c.everything_received()) << "in-link 3 has not finished";
  t.arrive(3, last(1, 1));
  EXPECT_TRUE(t.c.everything_received());
}

// The last buffer's count is one more than the link's data buffers this cycle.
TEST(Counting, LastBufferCarriesTheLinksCount) {
  three_stages t;
  for (int k = 0; k < 4; ++k) EXPECT_EQ(t.c.next_seq(0), static_cast<std::uint32_t>(k + 1));
  EXPECT_EQ(t.c.next_seq(2), 1u);
  t.c.stop_pushing();
  t.c.close_stages(t.links);
  EXPECT_EQ(t.links.count(0), 5u);
  EXPECT_EQ(t.links.count(1), 1u) << "a link that sent nothing sends a last buffer of count 1";
  EXPECT_TRUE(t.c.closed(0));
  EXPECT_FALSE(t.c.closed(2));
}

// TERM-4: finished compares counts, whatever the order: a last buffer that arrives before
// data buffers of the link (counted by seq, not position) finishes the link only once
// they are all in.
TEST(Counting, LastBufferArrivingBeforeData) {
  three_stages t;
  t.arrive(2, last(1, 3));
  EXPECT_FALSE(t.c.finished(2));
  t.arrive(2, data(1, 1));
  EXPECT_FALSE(t.c.finished(2));
  t.arrive(2, data(1, 2));
  EXPECT_TRUE(t.c.finished(2));
}

// A link without a free buffer holds its stage open; the stage's other links are not sent
// twice, and the next call completes it.
TEST(Counting, ClosingWaitsForAFreeBuffer) {
  three_stages t;
  t.links.set_free(1, false);
  t.c.stop_pushing();
  t.c.close_stages(t.links);
  EXPECT_EQ(t.links.sent, (std::vector<int>{0}));
  EXPECT_EQ(t.c.closed_stages(), 0);
  t.c.close_stages(t.links);
  EXPECT_EQ(t.links.sent, (std::vector<int>{0}));
  t.links.set_free(1, true);
  t.c.close_stages(t.links);
  EXPECT_EQ(t.links.sent, (std::vector<int>{0, 1}));
  EXPECT_EQ(t.c.closed_stages(), 1);
}

// TERM-8: counts across cycles. A buffer stamped with the next epoch, one that arrives while
// this rank is not active, and one behind a held buffer are all held, uncounted; begin
// admits those of the new cycle in arrival order, and sequence numbers restart.
TEST(Counting, BufferOfTheNextCycleIsHeldUntilBegin) {
  three_stages t;  // epoch 1
  EXPECT_EQ(t.c.epoch(), 1u);
  EXPECT_FALSE(t.c.arrive(0, data(2, 1), true, false)) << "next cycle's buffer counted";
  EXPECT_FALSE(t.c.arrive(0, last(1, 1), true, true)) << "overtook a held buffer";
  EXPECT_FALSE(t.c.arrive(1, last(1, 1), false, false)) << "counted while not active";
  EXPECT_FALSE(t.c.finished(0));
  EXPECT_FALSE(t.c.finished(1));
  EXPECT_EQ(t.c.next_seq(0), 1u);
  t.c.begin_cycle();  // epoch 2
  t.links.new_cycle();
  EXPECT_EQ(t.c.next_seq(0), 1u) << "sequence numbers restart each cycle";
  EXPECT_TRUE(t.c.admit_held(0, data(2, 1)));
  EXPECT_FALSE(t.c.admit_held(0, data(3, 1))) << "a later cycle stays held";
  EXPECT_FALSE(t.c.finished(0));
  t.arrive(0, last(2, 2));
  EXPECT_TRUE(t.c.finished(0)) << "the held buffer counts in the new cycle";
}

// Everything restarts at begin: counts, closed links, closed stages, done pushing.
TEST(Counting, BeginCycleStartsOver) {
  three_stages t;
  t.c.stop_pushing();
  t.arrive(0, last(1, 1));
  t.arrive(1, last(1, 1));
  t.arrive(2, last(1, 1));
  t.arrive(3, last(1, 1));
  t.c.close_stages(t.links);
  EXPECT_TRUE(t.c.everything_received());
  t.c.begin_cycle();
  t.links.new_cycle();
  EXPECT_FALSE(t.c.done_pushing());
  EXPECT_EQ(t.c.closed_stages(), 0);
  EXPECT_FALSE(t.c.closed(0));
  EXPECT_FALSE(t.c.finished(0));
  EXPECT_FALSE(t.c.everything_received());
}

// A rank without links (a plan of one rank) finishes as soon as it stops pushing.
TEST(Counting, NoLinks) {
  fake_links links(0, 0);
  stage_counting c(2, {}, {});
  c.begin_cycle();
  c.close_stages(links);
  EXPECT_FALSE(c.everything_received());
  c.stop_pushing();
  c.close_stages(links);
  EXPECT_EQ(c.closed_stages(), 2);
  EXPECT_TRUE(c.everything_received());
}

TEST(Counting, BadLayoutThrows) {
  EXPECT_THROW(stage_counting(2, {1, 0}, {}), convoy::error);  // out-links out of order
  EXPECT_THROW(stage_counting(2, {0, 2}, {}), convoy::error);  // no stage 2
  EXPECT_THROW(stage_counting(2, {}, {-1}), convoy::error);
}

}  // namespace
