// pagerank: PageRank-style accumulation on a power-law graph, where many edges point at a
// few hot vertices, so that updates of one vertex meet on the way and are folded there
// (combining in transit). Written three times — the conveyor loop over a
// combining_conveyor<uint64_t, uint64_t>, the same loop over a plain conveyor (combining
// off), and coroutine tasks with a combinable dist_array update — and each checked against a
// serial computation of the whole graph on every rank. Rank 0 prints the conveyor loop's
// time with combining on and off (the slowest rank's, iterations only, each loop's second
// run).
//
// Usage: example_pagerank [vertices per rank, default 4096]
//
// Ranks are fixed-point integers (units of 2^-40), so sums are exact in any order of
// combining; damping 85/100, each vertex's share split over its edges with the remainder
// going to its first edges, so no mass is lost. The graph is regenerated from (seed, v):
// out-degrees and targets are log-uniform (P(k) ~ 1/k, a Zipf law of exponent 1), and the
// target ranks are spread over the owners by an affine map, so hot vertices sit on every rank.
#include <cmath>
#include <convoy/async/dist_array.hpp>
#include <convoy/conveyor_api/combining_conveyor.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <cstdio>
#include <cstdlib>
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

// ---- the conveyor loop: updates (local index, share) per owner -------------------------
// One update per edge, the same loop whether combining is on; `send(index, share, owner)`
// pushes one, `drain(add)` hands what arrived to add(index, share).
struct update {
  std::uint64_t local, share;
};

// Combining on: updates of one owner and index folded on the way (a sum).
struct combining_updates {
  combining_conveyor<std::uint64_t, std::uint64_t> c{MPI_COMM_WORLD};
  bool send(std::uint64_t local, std::uint64_t s, int owner) { return c.push(local, s, owner); }
  template <class F>
  void drain(F& add) {
    for (auto got = c.pull_batch(); !got.empty(); got = c.pull_batch())
      for (std::size_t k = 0; k < got.size(); ++k) {
        const auto [local, s] = got[k];
        add(local, s);
      }
  }
};

// Combining off: every update travels on its own. Both pull a delivered buffer at a time.
struct plain_updates {
  conveyor<update> c{MPI_COMM_WORLD};
  bool send(std::uint64_t local, std::uint64_t s, int owner) { return c.push({local, s}, owner); }
  template <class F>
  void drain(F& add) {
    for (auto got = c.pull_batch(); !got.empty(); got = c.pull_batch())
      for (std::size_t k = 0; k < got.size(); ++k) {
        const update u = got.item(k);
        add(u.local, u.share);
      }
  }
};

// The iterations over `u`; `seconds`: their time on the slowest rank.
template <class Updates>
std::vector<std::uint64_t> pagerank_loop(Updates& u, const graph& g, std::uint64_t per_rank, int me,
                                         double& seconds) {
  const std::uint64_t first = per_rank * static_cast<std::uint64_t>(me);
  std::vector<std::uint64_t> rank(per_rank, k_one / g.n), next(per_rank);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int it = 0; it < k_iterations; ++it) {
    next.assign(per_rank, g.base());
    u.c.begin();
    std::uint64_t l = 0, j = 0;  // the next edge to push: vertex first + l, edge j
    auto add = [&](std::uint64_t local, std::uint64_t s) { next[local] += s; };
    while (u.c.advance(l == per_rank)) {
      for (; l < per_rank; ++l, j = 0) {
        const std::uint64_t v = first + l, d = g.degree(v);
        for (; j < d; ++j) {
          const std::uint64_t t = g.target(v, j);
          if (!u.send(t % per_rank, graph::share(rank[l], d, j), static_cast<int>(t / per_rank)))
            break;
        }
        if (j < d) break;  // path full: advance, then go on from this edge
      }
      u.drain(add);
    }
    u.c.reset();
    rank.swap(next);
  }
  const double mine = MPI_Wtime() - t0;
  MPI_Allreduce(&mine, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
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
  const unsigned long long asked = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 0;
  if (argc > 2 || (argc > 1 && (asked == 0 || asked > (1ull << 24)))) {
    if (me == 0) std::fprintf(stderr, "usage: example_pagerank [vertices per rank, 1 to 2^24]\n");
    MPI_Finalize();
    return 2;
  }
  const std::uint64_t per_rank = asked ? asked : 1u << 12;
  const graph g(per_rank * static_cast<std::uint64_t>(p));
  const std::vector<std::uint64_t> want = pagerank_serial(g);
  double on_seconds = 0, off_seconds = 0, tasks_combined = 0;
  combining_updates on;
  plain_updates off;
  // Once each untimed first: connections, buffers and pages are then warm for both.
  (void)pagerank_loop(on, g, per_rank, me, on_seconds);
  (void)pagerank_loop(off, g, per_rank, me, off_seconds);
  const std::vector<std::uint64_t> loop = pagerank_loop(on, g, per_rank, me, on_seconds);
  const std::vector<std::uint64_t> plain = pagerank_loop(off, g, per_rank, me, off_seconds);
  const std::vector<std::uint64_t> tasks = pagerank_tasks(g, per_rank, tasks_combined);
  bool ok = true;
  const std::uint64_t first = per_rank * static_cast<std::uint64_t>(me);
  for (std::uint64_t l = 0; l < per_rank; ++l)
    ok = ok && loop[l] == want[first + l] && plain[l] == want[first + l] &&
         tasks[l] == want[first + l];
  const auto st = on.c.stats(true);
  const double loop_combined = mean_over_ranks(
      static_cast<double>(st.combined) / static_cast<double>(st.pushes ? st.pushes : 1), p);
  tasks_combined = mean_over_ranks(tasks_combined, p);
  if (me == 0)
    std::printf(
        "pagerank: %llu vertices, %d iterations; updates combined on the way: "
        "%.3f (conveyor loop), %.3f (tasks); conveyor loop %.4f s with combining, %.4f s "
        "without (%.2fx)\n",
        static_cast<unsigned long long>(g.n), k_iterations, loop_combined, tasks_combined,
        on_seconds, off_seconds, on_seconds > 0 ? off_seconds / on_seconds : 0.0);
  const int rc = example::verdict("pagerank", ok);
  MPI_Finalize();
  return rc;
}
