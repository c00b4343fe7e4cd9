#pragma once
// Traffic patterns and engine options the simulated-engine tests share
// (engine_sim_test.cpp, engine_sim_large_test.cpp).
#include <convoy/termination/engine.hpp>
#include <cstddef>
#include <random>

#include "sim_harness.hpp"

namespace convoy_test {

enum class pattern { uniform, all_to_one, one_to_all, self, nobody, one_sender, imbalance };

inline const char* name(pattern p) {
  switch (p) {
    case pattern::uniform:
      return "uniform";
    case pattern::all_to_one:
      return "all_to_one";
    case pattern::one_to_all:
      return "one_to_all";
    case pattern::self:
      return "self";
    case pattern::nobody:
      return "nobody";
    case pattern::one_sender:
      return "one_sender";
    case pattern::imbalance:
      return "imbalance";
  }
  return "?";
}

// Per rank the destinations of its `per_rank` items (the patterns' own multiples of it).
inline workload make_workload(pattern pat, int p, int per_rank, std::mt19937_64& rng) {
  workload wl(static_cast<std::size_t>(p));
  std::uniform_int_distribution<int> any(0, p - 1);
  for (int r = 0; r < p; ++r) {
    auto& d = wl[static_cast<std::size_t>(r)];
    switch (pat) {
      case pattern::uniform:
        for (int i = 0; i < per_rank; ++i) d.push_back(any(rng));
        break;
      case pattern::all_to_one:
        for (int i = 0; i < per_rank; ++i) d.push_back(p / 2);
        break;
      case pattern::one_to_all:
        if (r == p - 1)
          for (int i = 0; i < per_rank * 4; ++i) d.push_back(i % p);
        break;
      case pattern::self:
        for (int i = 0; i < per_rank; ++i) d.push_back(r);
        break;
      case pattern::nobody:
        break;
      case pattern::one_sender:
        if (r == 0)
          for (int i = 0; i < per_rank * 2; ++i) d.push_back(any(rng));
        break;
      case pattern::imbalance: {
        const int n = r == 1 % p ? per_rank * 16 : (r % 3 == 0 ? 0 : 1);
        for (int i = 0; i < n; ++i) d.push_back(any(rng));
        break;
      }
    }
  }
  return wl;
}

inline convoy::termination::engine_options small_buffers(int n_buffers = 2,
                                                         std::size_t capacity = 256) {
  convoy::termination::engine_options o;
  o.buffer_bytes = capacity;
  o.n_buffers = n_buffers;
  return o;
}

}  // namespace convoy_test
