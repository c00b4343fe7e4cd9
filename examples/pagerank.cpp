// pagerank: PageRank-style accumulation on a power-law graph, where many edges point at a
// few hot vertices, so that updates of one vertex meet on the way and are folded there
// (combining in transit). Written twice — the conveyor loop over a
// combining_conveyor<uint64_t, uint64_t> and coroutine tasks with a combinable dist_array
// update — and both checked against a serial computation of the whole graph on every rank.
//
// Ranks are fixed-point integers (units of 2^-40), so sums are exact in any order of
// combining; damping 85/100, each vertex's share split over its edges with the remainder
// going to its first edges, so no mass is lost. The graph is regenerated from (seed, v):
// out-degrees and targets are log-uniform (P(k) ~ 1/k, a Zipf law of exponent 1), and the
// target ranks are spread over the owners by an affine map, so hot vertices sit on every rank.
#include <cmath>
#include <convoy/async/dist_array.hpp>
#include <convoy/conveyor_api/combining_conveyor.hpp>
#include <cstdio>
#include <vector>

#include "example_util.hpp"

using namespace convoy;
using example::mix;

namespace {

constexpr std::uint64_t k_seed = 0x5EEDull;
constexpr std::uint64_t k_one = 1ull << 40;  // rank 1.0
constexpr std::uint64_t k_max_degree = 32;
constexpr int k_iterations = 5;

// A log-uniform draw in [1, n]: floor((n + 1)^u), P(k) = log((k + 1) / k) / log(n + 1).
std::uint64_t log_uniform(std::uint64_t n, std::uint64_t bits) {
  const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;
  const auto k = static_cast<std::uint64_t>(std::exp(u * std::log(static_cast<double>(n) + 1)));
  return k < 1 ? 1 : (k > n ? n : k);
}

// The graph over n vertices, regenerated from (seed, v) wherever an edge is needed.
struct graph {
  std::uint64_t n;
  std::uint64_t spread;  // odd multiplier for the affine spread of target ranks

  explicit graph(std::uint64_t vertices) : n(vertices), spread(2654435761ull % vertices | 1) {}
  [[nodiscard]] std::uint64_t degree(std::uint64_t v) const {
    return log_uniform(k_max_degree, mix(k_seed ^ (v << 8)));
  }
  [[nodiscard]] std::uint64_t target(std::uint64_t v, std::uint64_t j) const {
    const std::uint64_t k = log_uniform(n, mix(mix(k_seed + v) + j));  // 1 = hottest
    return (spread * (k - 1) + 7) % n;
  }
  // What a vertex of rank r and degree d sends along its edge j: its damped rank split
  // over its edges, the remainder to the first ones (no mass lost to rounding).
  [[nodiscard]] static std::uint64_t share(std::uint64_t r, std::uint64_t d, std::uint64_t j) {
    const std::uint64_t out = r / 100 * 85 + r % 100 * 85 / 100;  // floor(0.85 r)
    return out / d + (j < out % d ? 1 : 0);
  }
  // The undamped part every vertex starts an iteration with.
  [[nodiscard]] std::uint64_t base() const { return (k_one / 100 * 15) / n; }
};

// ---- the serial oracle: every vertex, every iteration ----------------------------------
std::vector<std::uint64_t> pagerank_serial(const graph& g) {
  std::vector<std::uint64_t> rank(g.n, k_one / g.n), next(g.n);
  for (int it = 0; it < k_iterations; ++it) {
    next.assign(g.n, g.base());
    for (std::uint64_t v = 0; v < g.n; ++v) {
      const std::uint64_t d = g.degree(v);
      for (std::uint64_t j = 0; j < d; ++j) next[g.target(v, j)] += graph::share(rank[v], d, j);
    }
    rank.swap(next);
  }
  return rank;
}

// ---- the conveyor loop: updates (local index, share) combined per owner and index -------
std::vector<std::uint64_t> pagerank_loop(const graph& g, std::uint64_t per_rank, int me,
                                         double& combined) {
  combining_conveyor<std::uint64_t, std::uint64_t> c(MPI_COMM_WORLD);  // sums
  const std::uint64_t first = per_rank * static_cast<std::uint64_t>(me);
  std::vector<std::uint64_t> rank(per_rank, k_one / g.n), next(per_rank);
  for (int it = 0; it < k_iterations; ++it) {
    next.assign(per_rank, g.base());
    c.begin();
    std::uint64_t l = 0, j = 0;  // the next edge to push: vertex first + l, edge j
    const auto add = [&](std::uint64_t local, std::uint64_t s) { next[local] += s; };
    while (c.advance(l == per_rank, add)) {
      for (; l < per_rank; ++l, j = 0) {
        const std::uint64_t v = first + l, d = g.degree(v);
        for (; j < d; ++j) {
          const std::uint64_t t = g.target(v, j);
          if (!c.push(t % per_rank, graph::share(rank[l], d, j), static_cast<int>(t / per_rank)))
            break;
        }
        if (j < d) break;  // path full: advance, then go on from this edge
      }
    }
    c.reset();
    rank.swap(next);
  }
  const auto st = c.stats(true);
  combined = static_cast<double>(st.combined) / static_cast<double>(st.pushes ? st.pushes : 1);
  return rank;
}

// ---- coroutine tasks: one per local vertex, a combinable update per edge ----------------
std::vector<std::uint64_t> pagerank_tasks(const graph& g, std::uint64_t per_rank,
                                          double& combined) {
  async::runtime rt(MPI_COMM_WORLD);
  async::dist_array<std::uint64_t> next(rt, g.n);
  auto add =
      next.define_update([](std::uint64_t& x, std::uint64_t s) { x += s; }, async::combinable);
  std::vector<std::uint64_t> rank(per_rank, k_one / g.n);
  for (int it = 0; it < k_iterations; ++it) {
    for (auto& x : next.local()) x = g.base();
    rt.run_each(per_rank, [&](std::size_t l) -> async::task<> {
      const std::uint64_t v = next.first() + l, d = g.degree(v);
      for (std::uint64_t j = 0; j < d; ++j)
        next.update(g.target(v, j), add, graph::share(rank[l], d, j));
      co_return;
    });
    rank.assign(next.local().begin(), next.local().end());
  }
  const auto st = rt.stats();
  combined =
      static_cast<double>(st.combined) / static_cast<double>(st.combinable ? st.combinable : 1);
  return rank;
}

double mean_over_ranks(double x, int p) {
  double s = 0;
  MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return s / p;
}

}  // namespace

// An exception from the library ends the example with its message (std::terminate).
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  MPI_Init(&argc, &argv);
  int me = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const std::uint64_t per_rank = 1u << 12;
  const graph g(per_rank * static_cast<std::uint64_t>(p));
  const std::vector<std::uint64_t> want = pagerank_serial(g);
  double loop_combined = 0, tasks_combined = 0;
  const std::vector<std::uint64_t> loop = pagerank_loop(g, per_rank, me, loop_combined);
  const std::vector<std::uint64_t> tasks = pagerank_tasks(g, per_rank, tasks_combined);
  bool ok = true;
  const std::uint64_t first = per_rank * static_cast<std::uint64_t>(me);
  for (std::uint64_t l = 0; l < per_rank; ++l)
    ok = ok && loop[l] == want[first + l] && tasks[l] == want[first + l];
  loop_combined = mean_over_ranks(loop_combined, p);
  tasks_combined = mean_over_ranks(tasks_combined, p);
  if (me == 0)
    std::printf(
        "pagerank: %llu vertices, %d iterations; updates combined on the way: "
        "%.3f (conveyor loop), %.3f (tasks)\n",
        static_cast<unsigned long long>(g.n), k_iterations, loop_combined, tasks_combined);
  const int rc = example::verdict("pagerank", ok);
  MPI_Finalize();
  return rc;
}
