// bench-sparse-rounds: sparse, low-load traffic (the "sparse,
// low-load" case of Dinan & Flajslik 2014): many rounds in which every rank sends 1-100 8-byte
// items to each of 3 random ranks. Kinds: `conveyor` (convoy::conveyor<uint64_t>, one begin..reset
// per round; the transport is CONVOY_TRANSPORT: shm, rma, mpi) and `append` (one push per
// destination, a barrier, the local view, reset). The time of a round is the slowest
// rank's; the median over --reps rounds is reported. Every round is verified (BENCH-21).
#include <mpi.h>

#include <algorithm>
#include <convoy/aggregation/append_buffer.hpp>
#include <convoy/conveyor_api/conveyor.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "harness.hpp"

namespace {

using convoy::bench::cycle_measure;
using convoy::bench::mix64;
using convoy::bench::result_row;

constexpr int fan_out = 3;

/// Round `round` of source `src`: its destinations and item counts (pure function).
struct round_plan {
  std::uint64_t seed = 1, round = 0;
  int p = 1;
  [[nodiscard]] int dest(int src, int k) const {
    return static_cast<int>(mix64(seed ^ (round << 40) ^ (static_cast<std::uint64_t>(src) << 8) ^
                                  static_cast<std::uint64_t>(k)) %
                            static_cast<std::uint64_t>(p));
  }
  [[nodiscard]] std::uint64_t count(int src, int k) const {
    return 1 + mix64(seed + round * 31 + static_cast<std::uint64_t>(src) * 1009 +
                     static_cast<std::uint64_t>(k)) %
                   100;
  }
  [[nodiscard]] std::uint64_t item(int src, int k, std::uint64_t i) const {
    return mix64((round << 48) ^ (static_cast<std::uint64_t>(src) << 24) ^
                 (static_cast<std::uint64_t>(k) << 16) ^ i);
  }
  /// Items and their sum that `me` must receive in this round.
  void expected(int me, std::uint64_t& n, std::uint64_t& sum) const {
    n = sum = 0;
    for (int s = 0; s < p; ++s)
      for (int k = 0; k < fan_out; ++k)
        if (dest(s, k) == me)
          for (std::uint64_t i = 0; i < count(s, k); ++i) {
            ++n;
            sum += item(s, k, i);
          }
  }
};

/// One round over a conveyor: this rank's time and verdict.
cycle_measure round_conveyor(const round_plan& plan, convoy::conveyor<std::uint64_t>& c, int me) {
  std::uint64_t n = 0, sum = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  c.begin();
  int k = 0;
  std::uint64_t i = 0;
  while (c.advance(k == fan_out)) {
    while (k < fan_out) {
      if (i == plan.count(me, k)) {
        ++k;
        i = 0;
        continue;
      }
      if (!c.push(plan.item(me, k, i), plan.dest(me, k))) break;
      ++i;
    }
    while (auto d = c.pull()) {
      ++n;
      sum += d->item;
    }
  }
  c.reset();
  const double t = MPI_Wtime() - t0;
  std::uint64_t want_n = 0, want_sum = 0;
  plan.expected(me, want_n, want_sum);
  return {.seconds = t, .verified = n == want_n && sum == want_sum};
}

/// One round over one-sided append.
cycle_measure round_append(const round_plan& plan, convoy::aggregation::append_buffer& buf,
                           int me) {
  std::vector<std::vector<std::uint64_t>> out(fan_out);
  for (int k = 0; k < fan_out; ++k)
    for (std::uint64_t i = 0; i < plan.count(me, k); ++i)
      out[static_cast<std::size_t>(k)].push_back(plan.item(me, k, i));
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  bool ok = true;
  for (int k = 0; k < fan_out; ++k) {
    const auto& v = out[static_cast<std::size_t>(k)];
    const std::size_t bytes = v.size() * sizeof(std::uint64_t);
    ok = ok &&
         buf.push(plan.dest(me, k), {reinterpret_cast<const std::byte*>(v.data()), bytes}) == bytes;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const auto view = buf.local_view();
  std::uint64_t n = view.bytes / 8, sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t x = 0;
    std::memcpy(&x, view.data + 8 * i, 8);
    sum += x;
  }
  buf.reset();
  const double t = MPI_Wtime() - t0;
  std::uint64_t want_n = 0, want_sum = 0;
  plan.expected(me, want_n, want_sum);
  return {.seconds = t, .verified = ok && view.complete && n == want_n && sum == want_sum};
}

/// One row: --warmup + --reps verified rounds of `kind`.
result_row run_kind(const convoy::bench::options& opt, const convoy::bench::job& j,
                    const std::string& kind, std::size_t /*size*/, std::string& /*extra*/) {
  round_plan plan{opt.seed, 0, j.n_ranks};
  std::unique_ptr<convoy::conveyor<std::uint64_t>> conv;
  std::unique_ptr<convoy::aggregation::append_buffer> buf;
  std::size_t memory = 0;
  if (kind == "conveyor") {
    convoy::conveyor_options co;
    co.buffer_bytes = opt.buffer_bytes;
    co.n_buffers = opt.n_buffers;
    conv = std::make_unique<convoy::conveyor<std::uint64_t>>(MPI_COMM_WORLD, co);
  } else if (kind == "append") {
    // At most every rank's 3 x 100 items land on one rank.
    memory = static_cast<std::size_t>(j.n_ranks) * fan_out * 100 * 8;
    buf = std::make_unique<convoy::aggregation::append_buffer>(MPI_COMM_WORLD, memory);
  } else {
    throw std::runtime_error("unknown kind " + kind + " (conveyor, append)");
  }
  std::vector<cycle_measure> rounds;
  for (int r = 0; r < opt.warmup + opt.reps; ++r) {
    plan.round = static_cast<std::uint64_t>(r);
    cycle_measure m = conv ? round_conveyor(plan, *conv, j.rank) : round_append(plan, *buf, j.rank);
    for (int k = 0; k < fan_out; ++k) m.items += plan.count(j.rank, k);
    if (r >= opt.warmup) rounds.push_back(m);
  }
  if (conv) memory = conv->max_memory_bytes();
  return convoy::bench::program_row("sparse_rounds", kind, sizeof(std::uint64_t),
                                    sizeof(std::uint64_t), rounds, memory, j);
}

}  // namespace

int main(int argc, char** argv) {
  return convoy::bench::run_program(
      argc, argv, "bench-sparse-rounds",
      "rounds of 1-100 items to 3 random ranks; --reps rounds; kinds conveyor, append",
      {"conveyor", "append"}, false, run_kind);
}
