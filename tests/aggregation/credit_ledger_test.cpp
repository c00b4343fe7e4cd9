// When a receiver returns credits (aggregation/README.md, AGG-61, AGG-62): the MPI
// transport's policy, tested alone against a model of one link (sender credits, buffers in
// flight, buffers held by the receiver).
#include <gtest/gtest.h>

#include <convoy/aggregation/detail/credit_ledger.hpp>
#include <random>
#include <vector>

namespace {

using convoy::aggregation::detail::credit_ledger;

// AGG-62: owed + unseen + held = n_buffers, always; a link becomes urgent exactly when it
// owes credits and the sender has at most n_buffers / 4 unseen, and is listed once.
TEST(CreditLedger, BalanceAndUrgency) {
  for (const int n : {1, 2, 4, 8}) {
    credit_ledger c;
    c.init(2, n);
    std::vector<int> urgent;
    int held = 0;
    for (int i = 0; i < n; ++i) {
      c.arrived(1);
      ++held;
      EXPECT_EQ(c.owed(1) + c.unseen(1) + held, n);
      EXPECT_FALSE(c.urgent(1)) << "nothing owed yet";
    }
    c.released(1);
    --held;
    EXPECT_TRUE(c.urgent(1)) << "n=" << n << ": the sender holds no credit and one is owed";
    if (n > 1) {
      c.released(1);  // still urgent: listed once all the same
      --held;
    }
    EXPECT_EQ(c.owed(1) + c.unseen(1) + held, n);
    c.take_urgent(urgent);
    EXPECT_EQ(urgent, std::vector<int>{1});
    c.take_urgent(urgent);
    EXPECT_TRUE(urgent.empty());
    EXPECT_EQ(c.unseen(0), n) << "the other link is untouched";
  }
}

// AGG-61: take() never hands back more than is owed, and what it takes is unseen again.
TEST(CreditLedger, TakeMovesOwedToUnseen) {
  credit_ledger c;
  c.init(1, 8);
  for (int i = 0; i < 8; ++i) c.arrived(0);
  for (int i = 0; i < 5; ++i) c.released(0);
  EXPECT_EQ(c.take(0, 3), 3);
  EXPECT_EQ(c.owed(0), 2);
  EXPECT_EQ(c.unseen(0), 3);
  EXPECT_EQ(c.take(0, 100), 2);
  EXPECT_EQ(c.take(0, 100), 0);
  EXPECT_EQ(c.unseen(0), 5);
  EXPECT_FALSE(c.urgent(0));
}

// AGG-62 against a random model: a sender that may send only with a credit, a receiver
// that returns credits only by piggyback (at random) or when the link is listed urgent.
// The link never deadlocks: whenever the sender is blocked and nothing is in flight, the
// receiver holds buffers (it must release) or the link is urgent (a credit message goes).
TEST(CreditLedger, BlockedSenderAlwaysHearsBack) {
  std::mt19937 rng(7);
  for (const int n : {1, 2, 3, 4, 7, 16}) {
    credit_ledger c;
    c.init(1, n);
    int credits = n, in_flight = 0, held = 0, delivered = 0;
    std::vector<int> urgent;
    for (int step = 0; step < 20000; ++step) {
      switch (rng() % 4) {
        case 0:  // the sender sends if it can
          if (credits > 0) --credits, ++in_flight;
          break;
        case 1:  // a buffer arrives
          if (in_flight > 0) --in_flight, ++held, c.arrived(0);
          break;
        case 2:  // the receiver releases one
          if (held > 0) --held, ++delivered, c.released(0);
          break;
        default:  // a data buffer goes the other way and carries what is owed
          if (rng() % 3 == 0) credits += c.take(0, c.owed(0));
          break;
      }
      c.take_urgent(urgent);
      for (const int l : urgent) credits += c.take(l, c.owed(l));  // the credit message
      ASSERT_EQ(c.owed(0) + c.unseen(0) + held, n);
      ASSERT_EQ(c.unseen(0), credits + in_flight);
      if (credits == 0 && in_flight == 0) {
        ASSERT_GT(held, 0) << "blocked with nothing to wait for";
      }
    }
    EXPECT_GT(delivered, 1000) << "n=" << n;
  }
}

}  // namespace
