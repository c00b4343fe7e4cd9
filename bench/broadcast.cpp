// bench-broadcast: every rank sends --items 8-byte items to every rank (itself included);
// item i of rank r is draw(seed, r, i), drawn into an array before the clock starts. Kinds:
// `broadcaster` (convoy::broadcaster<T>, the mesh's stages node first, its default;
// received items taken by the bulk pull, pull_batch), `broadcaster:batch` (node first, the
// items sent by broadcast_batch, a block at a time), `broadcaster:core-first` (innermost
// dimension first), `broadcaster:pull` (node first, one pull() per item), `allgatherv`
// (MPI_Allgatherv of the same items). Each cycle, timed from begin to reset (allgatherv:
// the call), hands every received item with its root to the same consumer (a count and a
// hash sum per root); verified when every rank holds, for every root, n items whose hash
// sum is the root's (BENCH-30). items_per_s_per_rank counts items received per rank
// (P x --items a cycle).
#include <mpi.h>

#include <convoy/conveyor_api/broadcaster.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "harness.hpp"

namespace {

using convoy::bench::cycle_measure;
using convoy::bench::draw;
using convoy::bench::mix64;
using convoy::bench::result_row;

// What every kind delivers into: per root, items received and the sum of their hashes.
struct tally {
  std::vector<std::uint64_t> count, sum;
  explicit tally(int p)
      : count(static_cast<std::size_t>(p), 0), sum(static_cast<std::size_t>(p), 0) {}
  void take(std::uint64_t item, int root) {
    ++count[static_cast<std::size_t>(root)];
    sum[static_cast<std::size_t>(root)] += mix64(item);
  }
  // Against the oracle: n items from every root and each root's hash sum.
  [[nodiscard]] bool matches(const std::vector<std::uint64_t>& want, std::uint64_t n) const {
    for (std::size_t r = 0; r < want.size(); ++r)
      if (count[r] != n || sum[r] != want[r]) return false;
    return true;
  }
};

// Hash sums of every root's items (every rank regenerates them).
std::vector<std::uint64_t> oracle(const convoy::bench::options& opt, int p) {
  std::vector<std::uint64_t> want(static_cast<std::size_t>(p), 0);
  for (int r = 0; r < p; ++r)
    for (std::uint64_t i = 0; i < opt.items; ++i)
      want[static_cast<std::size_t>(r)] += mix64(draw(opt.seed, r, i));
  return want;
}

cycle_measure broadcaster_cycle(convoy::broadcaster<std::uint64_t>& b,
                                const convoy::bench::options& opt, const convoy::bench::job& j,
                                const std::vector<std::uint64_t>& want, bool one_by_one,
                                bool batch_sends) {
  tally t(j.n_ranks);
  const std::uint64_t n = opt.items;
  std::vector<std::uint64_t> mine(n);
  for (std::uint64_t i = 0; i < n; ++i) mine[i] = draw(opt.seed, j.rank, i);
  MPI_Barrier(j.comm);
  const double t0 = MPI_Wtime();
  b.begin();
  std::uint64_t i = 0;
  while (b.advance(i == n)) {
    if (batch_sends) {
      if (i < n) i += b.broadcast_batch(std::span(mine).subspan(i));
    } else {
      for (; i < n; ++i)
        if (!b.broadcast(mine[i])) break;
    }
    if (one_by_one) {
      while (auto d = b.pull()) t.take(d->item, d->from);
      continue;
    }
    for (auto got = b.pull_batch(); !got.empty(); got = b.pull_batch())
      for (std::size_t k = 0; k < got.size(); ++k) t.take(got.item(k), got.from(k));
  }
  b.reset();
  const double seconds = MPI_Wtime() - t0;
  return {.seconds = seconds,
          .verified = t.matches(want, n),
          .items = n * static_cast<std::uint64_t>(j.n_ranks)};
}

cycle_measure allgatherv_cycle(const convoy::bench::options& opt, const convoy::bench::job& j,
                               const std::vector<std::uint64_t>& want,
                               std::vector<std::uint64_t>& all) {
  const std::uint64_t n = opt.items;
  if (n > static_cast<std::uint64_t>(INT32_MAX) / static_cast<std::uint64_t>(j.n_ranks))
    throw std::runtime_error("allgatherv: --items x ranks is above MPI's int counts");
  std::vector<std::uint64_t> mine(n);
  for (std::uint64_t i = 0; i < n; ++i) mine[i] = draw(opt.seed, j.rank, i);
  std::vector<int> counts(static_cast<std::size_t>(j.n_ranks), static_cast<int>(n)), displs;
  for (int r = 0; r < j.n_ranks; ++r) displs.push_back(r * static_cast<int>(n));
  all.assign(n * static_cast<std::uint64_t>(j.n_ranks), 0);
  tally t(j.n_ranks);
  MPI_Barrier(j.comm);
  const double t0 = MPI_Wtime();
  MPI_Allgatherv(mine.data(), static_cast<int>(n), MPI_UINT64_T, all.data(), counts.data(),
                 displs.data(), MPI_UINT64_T, j.comm);
  for (int r = 0; r < j.n_ranks; ++r)
    for (std::uint64_t i = 0; i < n; ++i) t.take(all[static_cast<std::size_t>(r) * n + i], r);
  const double seconds = MPI_Wtime() - t0;
  return {.seconds = seconds,
          .verified = t.matches(want, n),
          .items = n * static_cast<std::uint64_t>(j.n_ranks)};
}

// The default mesh's dimensions innermost first (core first on node x core).
std::vector<int> core_first(const convoy::conveyor_options& o) {
  const auto n = static_cast<int>(convoy::make_plan(MPI_COMM_WORLD, o)->mesh_sizes().size());
  std::vector<int> order;
  for (int d = n - 1; d >= 0; --d) order.push_back(d);
  return order;
}

result_row run_kind(const convoy::bench::options& opt, const convoy::bench::job& j,
                    const std::string& kind, std::size_t /*size*/, std::string& extra) {
  const std::vector<std::uint64_t> want = oracle(opt, j.n_ranks);
  std::vector<cycle_measure> cycles;
  std::size_t memory = 0;
  if (kind == "allgatherv") {
    std::vector<std::uint64_t> all;
    for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
      const cycle_measure m = allgatherv_cycle(opt, j, want, all);
      if (rep >= opt.warmup || !m.verified) cycles.push_back(m);
    }
    memory = all.size() * sizeof(std::uint64_t);
  } else {
    convoy::conveyor_options o;
    o.mesh = opt.mesh;
    o.buffer_bytes = opt.buffer_bytes;
    o.n_buffers = opt.n_buffers;
    if (kind == "broadcaster:core-first") o.dim_order = core_first(o);
    convoy::broadcaster<std::uint64_t> b(j.comm, o);
    for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
      const cycle_measure m = broadcaster_cycle(b, opt, j, want, kind == "broadcaster:pull",
                                                kind == "broadcaster:batch");
      if (rep >= opt.warmup || !m.verified) cycles.push_back(m);
    }
    memory = b.max_memory_bytes();
    extra = std::string(" order=") + (o.dim_order.empty() ? "node-first" : "core-first");
  }
  return convoy::bench::program_row("broadcast", kind, 8, 8, cycles, memory, j);
}

}  // namespace

int main(int argc, char** argv) {
  return convoy::bench::run_program(
      argc, argv, "bench-broadcast",
      "every rank's --items 8-byte items to every rank; kinds broadcaster (node first, bulk "
      "pull), broadcaster:batch (and bulk sends), broadcaster:core-first, broadcaster:pull "
      "(one pull per item), allgatherv",
      {"broadcaster", "broadcaster:batch", "broadcaster:core-first", "broadcaster:pull",
       "allgatherv"},
      false, run_kind);
}
