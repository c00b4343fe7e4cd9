#pragma once
// Driving several `traffic` objects (transport_driver.hpp) to completion; shared by the
// MPI, RMA, shared-memory and hybrid transport tests.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "transport_driver.hpp"

namespace convoy_test {

// Every rank sends `per_link` buffers on each out-link and expects as many on each in-link.
inline void plan_uniform(traffic& t, const convoy::aggregation::link_layout& l,
                         std::uint32_t per_link) {
  for (std::size_t i = 0; i < l.out_links.size(); ++i) t.set_send(static_cast<int>(i), per_link);
  for (std::size_t i = 0; i < l.in_links.size(); ++i) t.set_expect(static_cast<int>(i), per_link);
}

// Steps every traffic until all are done on this rank. False after 60 s (hang guard).
inline bool drive(std::vector<std::unique_ptr<traffic>>& ts) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    for (auto& t : ts) {
      t->step();
      all = all && t->done();
    }
    if (all) return true;
    std::this_thread::yield();
  }
  return false;
}

inline void expect_no_errors(const std::vector<std::unique_ptr<traffic>>& ts) {
  for (const auto& t : ts)
    for (const auto& e : t->errors()) ADD_FAILURE() << e;
}

// What one exchange sends: the traffic's tag and seed, the share of received buffers the
// receivers hold back (released later, out of order), and the buffers sent on every link.
struct exchange_spec {
  std::uint32_t tag = 0;
  std::uint64_t seed = 0;
  int hold_percent = 0;
  std::uint32_t per_link = 0;
};

// One traffic over the opened transport `t`, planned uniformly on every link of `lay`,
// driven to completion; the traffic's own checks (FIFO, exactly once, contents) must report
// nothing.
inline void exchange(convoy::aggregation::transport& t, const convoy::aggregation::link_layout& lay,
                     const exchange_spec& spec) {
  std::vector<std::unique_ptr<traffic>> ts;
  ts.push_back(std::make_unique<traffic>(t, lay, spec.tag, spec.seed));
  ts[0]->set_hold_percent(spec.hold_percent);
  plan_uniform(*ts[0], lay, spec.per_link);
  EXPECT_TRUE(drive(ts));
  expect_no_errors(ts);
}

// Transports with their traffic; the transports are declared first so that they outlive the
// traffic that refers to them.
struct transport_fleet {
  std::vector<std::unique_ptr<convoy::aggregation::transport>> transports;
  std::vector<std::unique_ptr<traffic>> traffics;
};

// `n` transports alive and exchanging at once (no crosstalk): transport i comes from
// make_transport(), is opened on layout_of(i) and carries one traffic of tag i and seed
// 100 i + rank, `per_link` buffers on every link, receivers holding `hold_percent`. All are
// driven together and checked as exchange() checks one; the fleet is returned for the
// caller's own checks (and to be destroyed when the caller chooses).
template <class MakeTransport, class LayoutOf>
transport_fleet many_at_once(int n, MakeTransport make_transport, LayoutOf layout_of,
                             int hold_percent, std::uint32_t per_link) {
  transport_fleet f;
  for (int i = 0; i < n; ++i) {
    const convoy::aggregation::link_layout lay = layout_of(i);
    f.transports.push_back(make_transport());
    f.transports.back()->open(lay);
    f.traffics.push_back(std::make_unique<traffic>(*f.transports.back(), lay,
                                                   static_cast<std::uint32_t>(i),
                                                   static_cast<std::uint64_t>(i * 100 + lay.rank)));
    f.traffics.back()->set_hold_percent(hold_percent);
    plan_uniform(*f.traffics.back(), lay, per_link);
  }
  EXPECT_TRUE(drive(f.traffics));
  expect_no_errors(f.traffics);
  return f;
}

// Posts on `out_link` of `t` as long as acquire() gives a buffer: stops once the link has
// stayed blocked for 20 000 progress rounds (every send had the chance to complete) or
// after 10 s. Returns how many buffers were posted.
inline int post_until_blocked(convoy::aggregation::transport& t, traffic& tr, int out_link) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int posted = 0, blocked_spins = 0;
  while (std::chrono::steady_clock::now() < deadline && blocked_spins < 20000) {
    if (std::byte* b = t.acquire(out_link)) {
      tr.post_one(out_link, b);
      ++posted;
      blocked_spins = 0;
    } else {
      ++blocked_spins;
    }
    t.progress();
    std::this_thread::yield();
  }
  return posted;
}

}  // namespace convoy_test
