#pragma once
// A 64-bit mixing function (SplitMix64's finaliser) for tests that regenerate their draws
// on every rank: draw k of rank r is mix(f(r, k)), so any rank can compute the oracle.
#include <cstdint>

namespace convoy_test {

inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace convoy_test
