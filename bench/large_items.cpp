// bench-large-items: elastic items larger than a buffer (the monster items of
// Maley & DeVinney 2019, sec. 4.4.1), each rank sending to the next over convoy::elastic_engine,
// the bytes through the large-item channel of the kind: `two-sided` (mpi_large_channel: chunked
// MPI_Isend/MPI_Irecv) or `rendezvous` (rma_large_channel: the receiver gets the bytes from the
// sender's buffer, MP_Lite SHMEM notes). --sizes are in KiB (32 = 32 KiB; up to 4 GiB); a cycle
// moves min(--items, max(2, 256 MiB / size)) items per rank. Every item is verified: every byte in
// the untimed warm-up cycles, in timed cycles its two stamps and one word per 4 KiB page
// (BENCH-22). The median cycle over --reps is reported, with MiB/s per rank.
#include <mpi.h>

#include <algorithm>
#include <convoy/aggregation/large_channel.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy/termination/elastic_engine.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "harness.hpp"

namespace {

using convoy::bench::cycle_measure;
using convoy::bench::result_row;
namespace term = convoy::termination;

constexpr std::size_t page = 4096;

// Word i of every item from `src` (its pattern); item k differs in its two stamps, the
// first and the last word. Sizes are whole KiB, so an item is whole words.
std::uint64_t word(int src, std::size_t i) {
  return convoy::bench::mix64((static_cast<std::uint64_t>(src) << 40) ^ i);
}

void fill(std::vector<std::byte>& v, int src) {
  for (std::size_t i = 0; i < v.size() / 8; ++i) {
    const std::uint64_t w = word(src, i);
    std::memcpy(v.data() + 8 * i, &w, 8);
  }
}

void stamp(std::vector<std::byte>& v, std::uint64_t k) {
  std::memcpy(v.data(), &k, 8);
  std::memcpy(v.data() + v.size() - 8, &k, 8);
}

// Item k from `src`, `n` bytes: its stamps, and every word or one word per page.
bool check(const std::byte* got, int src, std::size_t n, std::uint64_t k, bool every_byte) {
  std::uint64_t a = 0, b = 0;
  std::memcpy(&a, got, 8);
  std::memcpy(&b, got + n - 8, 8);
  if (a != k || b != k) return false;
  const std::size_t step = every_byte ? 1 : page / 8;
  for (std::size_t i = step; i + 1 < n / 8; i += step) {
    std::uint64_t w = 0;
    std::memcpy(&w, got + 8 * i, 8);
    if (w != word(src, i)) return false;
  }
  return true;
}

struct pair_run {
  convoy::elastic_engine* c;
  int me, to, from;
  std::uint64_t n;
  std::size_t bytes;
  std::vector<std::byte>* mine;
};

// One cycle: n items to the next rank, n from the previous, checked as they come.
cycle_measure cycle(pair_run r, bool every_byte) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  if (r.c->begin(0) != 1) throw std::runtime_error("elastic_engine::begin failed");
  std::uint64_t sent = 0, got = 0;
  bool ok = true;
  int rc = 0;
  while ((rc = r.c->advance(sent == r.n)) != term::done) {
    if (rc < 0) throw std::runtime_error("advance: " + r.c->last_message());
    while (sent < r.n) {
      stamp(*r.mine, sent);  // the channel copied the previous item when it was pushed
      const int p = r.c->epush(r.mine->data(), r.mine->size(), r.to);
      if (p < 0) throw std::runtime_error("epush: " + r.c->last_message());
      if (p == 0) break;
      ++sent;
    }
    term::item_view v;
    int p = 0;
    while ((p = r.c->epull(v)) > 0) {
      ok = ok && v.from == r.from && v.bytes == r.bytes &&
           check(v.data, r.from, r.bytes, got, every_byte);
      ++got;
    }
    if (p < 0) throw std::runtime_error("epull: " + r.c->last_message());
  }
  if (r.c->reset() != 1) throw std::runtime_error("elastic_engine::reset failed");
  const double t = MPI_Wtime() - t0;
  return {.seconds = t, .verified = ok && got == r.n, .items = r.n};
}

result_row run_kind(const convoy::bench::options& opt, const convoy::bench::job& j,
                    const std::string& kind, std::size_t kib, std::string& extra) {
  const std::size_t bytes = kib * 1024;
  convoy::base::large_kind k{};
  if (kind == "two-sided")
    k = convoy::base::large_kind::two_sided;
  else if (kind == "rendezvous")
    k = convoy::base::large_kind::rendezvous;
  else
    throw std::runtime_error("unknown kind '" + kind + "' (two-sided, rendezvous)");
  const std::uint64_t n = std::min<std::uint64_t>(
      opt.items, std::max<std::size_t>(2, (std::size_t{256} << 20) / bytes));
  convoy::conveyor_options o;
  o.buffer_bytes = opt.buffer_bytes;
  o.n_buffers = opt.n_buffers;
  o.kind = convoy::conveyor_kind::elastic;
  o.steady = true;
  auto engine = convoy::make_mpi_engine(MPI_COMM_WORLD, o);
  convoy::elastic_engine c(
      engine.get(),
      convoy::aggregation::make_large_channel(MPI_COMM_WORLD, k, {bytes, 1 << 30, {}}), bytes);
  const int to = (j.rank + 1) % j.n_ranks, from = (j.rank + j.n_ranks - 1) % j.n_ranks;
  std::vector<std::byte> mine(bytes);
  fill(mine, j.rank);
  std::vector<cycle_measure> cycles;
  for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
    const cycle_measure m = cycle({&c, j.rank, to, from, n, bytes, &mine}, rep < opt.warmup);
    if (rep >= opt.warmup) cycles.push_back(m);
    if (!m.verified) cycles.push_back(m);  // a warm-up failure shows in the row too
  }
  result_row row = convoy::bench::program_row("large_items", kind, bytes, bytes, cycles,
                                              c.max_memory_bytes(), j);
  char buf[96];
  std::snprintf(buf, sizeof buf, " items_per_cycle=%llu MiB_per_s_per_rank=%.1f",
                static_cast<unsigned long long>(n),
                row.seconds > 0 ? static_cast<double>(n * bytes) / row.seconds / (1 << 20) : 0.0);
  extra = buf;
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  return convoy::bench::run_program(
      argc, argv, "bench-large-items",
      "large elastic items to the next rank; --sizes in KiB; kinds two-sided, rendezvous",
      {"two-sided", "rendezvous"}, true, run_kind);
}
