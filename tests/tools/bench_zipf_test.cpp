// bench/zipf.hpp (bench-histogram --skew): the Zipf sampler against the exact
// probabilities (chi-square), its cost in uniforms, the regenerability of a counter-based
// stream (drawn as bench/histogram.hpp draws it), and the key spread's bijectivity.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <set>
#include <vector>

#include "../../bench/zipf.hpp"

namespace {

using convoy::bench::key_spread;
using convoy::bench::zipf_sampler;

// splitmix64's finalizer, as bench_common.hpp's mix64.
std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The uniforms of draw `i`: a counter-based stream, so that a draw is a function of i.
struct stream {
  std::uint64_t base;
  std::uint64_t j = 0;
  double operator()() {
    return static_cast<double>(mix64(base + 0x9e3779b97f4a7c15ull * j++) >> 11) * 0x1.0p-53;
  }
};

// Chi-square of `draws` samples against P(k) ~ k^-s on [1, n], bins with expected count
// below 5 merged into one; returns (statistic, degrees of freedom).
std::pair<double, int> chi_square(std::uint64_t n, double s, int draws, double& uniforms) {
  zipf_sampler z(n, s);
  std::vector<double> want(n + 1, 0.0);
  double norm = 0;
  for (std::uint64_t k = 1; k <= n; ++k) norm += want[k] = std::pow(static_cast<double>(k), -s);
  std::vector<long> got(n + 1, 0);
  std::uint64_t used = 0;
  for (int i = 0; i < draws; ++i) {
    stream u{mix64(static_cast<std::uint64_t>(i) ^ 0xabcdef)};
    const std::uint64_t k = z(u);
    used += u.j;
    EXPECT_GE(k, 1u);
    EXPECT_LE(k, n);
    ++got[k];
  }
  uniforms = static_cast<double>(used) / draws;
  double chi = 0, rest_want = 0, rest_got = 0;
  int bins = 0;
  for (std::uint64_t k = 1; k <= n; ++k) {
    const double e = want[k] / norm * draws;
    if (e < 5) {
      rest_want += e;
      rest_got += static_cast<double>(got[k]);
      continue;
    }
    chi += (got[k] - e) * (got[k] - e) / e;
    ++bins;
  }
  if (rest_want > 0) {
    chi += (rest_got - rest_want) * (rest_got - rest_want) / rest_want;
    ++bins;
  }
  return {chi, bins - 1};
}

TEST(Zipf, MatchesTheExactDistribution) {
  for (double s : {0.3, 0.5, 0.8, 1.0, 1.2, 1.5, 2.5}) {
    double uniforms = 0;
    const auto [chi, dof] = chi_square(1000, s, 1000000, uniforms);
    // 6 standard deviations above the mean of a chi-square with `dof` degrees of freedom.
    EXPECT_LT(chi, dof + 6 * std::sqrt(2.0 * dof)) << "s = " << s << ", dof " << dof;
    EXPECT_LT(uniforms, 1.3) << "s = " << s;
    std::printf("s=%.1f chi2=%.0f dof=%d uniforms/draw=%.3f\n", s, chi, dof, uniforms);
  }
}

TEST(Zipf, EdgesOfTheSupport) {
  double uniforms = 0;
  const auto [chi, dof] = chi_square(2, 1.0, 200000, uniforms);  // P = 2/3, 1/3
  EXPECT_LT(chi, dof + 6 * std::sqrt(2.0 * dof));
  zipf_sampler one(1, 1.0);
  stream u{1};
  for (int i = 0; i < 100; ++i) EXPECT_EQ(one(u), 1u);
}

TEST(Zipf, LargeSupportHotKeysHaveTheirShare) {
  // 8e6 keys (np 8 x 1e6), s = 1: P(1) = 1 / H_n.
  const std::uint64_t n = 8000000;
  zipf_sampler z(n, 1.0);
  double harmonic = 0;
  for (std::uint64_t k = 1; k <= n; ++k) harmonic += 1.0 / static_cast<double>(k);
  long ones = 0, draws = 2000000;
  for (long i = 0; i < draws; ++i) {
    stream u{mix64(static_cast<std::uint64_t>(i))};
    ones += z(u) == 1;
  }
  const double want = draws / harmonic;
  EXPECT_NEAR(static_cast<double>(ones), want, 6 * std::sqrt(want));
}

TEST(Zipf, DrawsAreRegenerable) {
  zipf_sampler z(1000000, 1.1);
  for (std::uint64_t i = 0; i < 1000; ++i) {
    stream a{mix64(i)}, b{mix64(i)};
    EXPECT_EQ(z(a), z(b));
  }
}

TEST(KeySpread, IsABijectionThatSeparatesNeighbours) {
  for (std::uint64_t n : {1u, 2u, 3u, 10u, 97u, 1000u, 4096u, 1000000u}) {
    key_spread f(n, 12345);
    std::set<std::uint64_t> seen;
    const std::uint64_t m = std::min<std::uint64_t>(n, 200000);
    for (std::uint64_t k = 1; k <= m; ++k) {
      const std::uint64_t g = f(k);
      EXPECT_LT(g, n);
      seen.insert(g);
    }
    EXPECT_EQ(seen.size(), m) << n;
  }
  // With 4 owners of 250 000 keys each, the 8 hottest ranks do not share one owner.
  key_spread f(1000000);
  std::set<std::uint64_t> owners;
  for (std::uint64_t k = 1; k <= 8; ++k) owners.insert(f(k) / 250000);
  EXPECT_GE(owners.size(), 3u);
}

}  // namespace
