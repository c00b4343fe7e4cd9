#pragma once
// One cycle of 16-byte records through a conveyor (convoy::untyped_conveyor or
// convoy::termination::bulk_engine: begin, then advance / push / pull until done), every pulled record
// checked against the sender's plan; shared by the bulk_engine and compression tests.
#include <gtest/gtest.h>

#include <convoy/termination/engine.hpp>
#include <convoy/termination/state_machine.hpp>
#include <convoy_test/mpi.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

namespace convoy_test {

struct record {
  std::uint32_t source, k;
  std::uint64_t constant;  // the same in every item: what the standard codec squeezes out
};
inline constexpr std::uint64_t record_constant = 0x0123456789abcdefULL;

// Begins `c` and runs it to done: this rank pushes n records, record i to rank i % p with
// k = i / p; every pulled record must have the record's size, name its sender as source,
// carry k in FIFO order per source and the constant intact. next[s] counts the records from
// s (sized to the world here). Leaves `c` done, not reset.
template <class Conveyor>
void push_pull_records(Conveyor& c, std::uint32_t n, std::vector<std::uint32_t>& next) {
  namespace term = convoy::termination;
  const int me = world_rank(), p = world_size();
  const auto up = static_cast<std::uint32_t>(p);
  next.assign(static_cast<std::size_t>(p), 0);
  ASSERT_EQ(c.begin(sizeof(record)), 1);
  std::uint32_t i = 0;
  std::uint64_t rounds = 0;
  int rc = 0;
  while ((rc = c.advance(i == n)) != term::done) {
    ASSERT_GE(rc, 0);
    ASSERT_LT(++rounds, 10'000'000u);
    for (; i < n; ++i) {
      const record r{static_cast<std::uint32_t>(me), i / up, record_constant};
      const int got = c.push(&r, static_cast<int>(i % up));
      ASSERT_GE(got, 0);
      if (got == 0) break;
    }
    term::item_view v;
    while (c.pull(v) > 0) {
      record r{};
      ASSERT_EQ(v.bytes, sizeof r);
      std::memcpy(&r, v.data, sizeof r);
      ASSERT_EQ(r.source, static_cast<std::uint32_t>(v.from));
      EXPECT_EQ(r.k, next[static_cast<std::size_t>(v.from)]++) << "FIFO per pair";
      EXPECT_EQ(r.constant, record_constant);
    }
  }
}

// Exactly once: this rank received from every source what push_pull_records(c, n) sent it.
inline void expect_records_from_all(const std::vector<std::uint32_t>& next, std::uint32_t n) {
  const auto up = static_cast<std::uint32_t>(world_size());
  const std::uint32_t want = n / up + (static_cast<std::uint32_t>(world_rank()) < n % up);
  for (std::size_t s = 0; s < next.size(); ++s) EXPECT_EQ(next[s], want) << "from " << s;
}

}  // namespace convoy_test
