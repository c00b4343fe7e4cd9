#pragma once
// Driving several `traffic` objects (transport_driver.hpp) to completion; shared by the
// MPI and shared-memory transport tests.
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

}  // namespace convoy_test
