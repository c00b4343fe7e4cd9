// bench-key-exchange: the key exchange of a parallel bucket sort (NAS IS; Dinan & Flajslik 2014,
// sec. 4, Listings 4-5): every rank sends a bucket of 8-byte keys to every rank (itself included),
// bucket sizes drawn so that a quarter of the pairs are empty and the others average
// `--sizes` bytes * 4/3. Kinds (bench/README.md, "Other programs"; BENCH-20..23):
//   alltoallv  MPI_Alltoall of the counts, then MPI_Alltoallv of the keys
//   append     one-sided append (aggregation::append_buffer): one push per non-empty
//              bucket (a 8-byte header and the keys), a barrier, the local view, reset
//   conveyor   convoy::conveyor<uint64_t>: every key pushed and pulled (begin..reset)
// Every cycle is verified: per (source, destination) the count and a hash-sum of the keys.
#include <mpi.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
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
using convoy::bench::job;
using convoy::bench::mix64;
using convoy::bench::options;
using convoy::bench::result_row;

/// The bucket sizes and keys of one cycle: a pure function of (seed, cycle, source,
/// destination), so every rank knows every count without communication.
struct key_plan {
  std::uint64_t seed = 1, cycle = 0;
  std::uint64_t max_keys = 1;  ///< non-empty buckets hold 1..max_keys keys

  key_plan(std::uint64_t s, std::size_t bucket_bytes) : seed(s) {
    // Mean over all pairs = 3/4 * (1 + max_keys) / 2 = bucket_bytes / 8.
    const double mean_keys = static_cast<double>(bucket_bytes) / 8.0;
    max_keys = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::llround(8.0 * mean_keys / 3.0 - 1.0)));
  }
  [[nodiscard]] std::uint64_t count(int src, int dst) const {
    const std::uint64_t h = mix64(seed ^ (cycle << 48) ^ (static_cast<std::uint64_t>(src) << 24) ^
                                  static_cast<std::uint64_t>(dst));
    if (h % 4 == 0) return 0;  // some pairs are empty
    return 1 + (h >> 8) % max_keys;
  }
  [[nodiscard]] std::uint64_t key(int src, int dst, std::uint64_t i) const {
    return (static_cast<std::uint64_t>(dst) << 40) |
           (mix64(seed + cycle * 7919 + (static_cast<std::uint64_t>(src) << 32) + i) &
            ((std::uint64_t{1} << 40) - 1));
  }
};

/// What one rank must receive from each source: count and sum of mix64(key).
struct expectation {
  std::vector<std::uint64_t> count, sum;
};

expectation expected_here(const key_plan& plan, int me, int p) {
  expectation e{std::vector<std::uint64_t>(static_cast<std::size_t>(p)),
                std::vector<std::uint64_t>(static_cast<std::size_t>(p))};
  for (int s = 0; s < p; ++s) {
    const auto n = plan.count(s, me);
    e.count[static_cast<std::size_t>(s)] = n;
    for (std::uint64_t i = 0; i < n; ++i)
      e.sum[static_cast<std::size_t>(s)] += mix64(plan.key(s, me, i));
  }
  return e;
}

/// The send side of a cycle: per destination a bucket, laid out as [header][keys] with the
/// header {source, count} (used by append; alltoallv and conveyor skip it).
struct send_buckets {
  std::vector<std::uint64_t> data;  // header + keys per destination
  std::vector<std::size_t> at;      // start of destination d's header
  std::vector<std::uint64_t> n;     // keys per destination
};

send_buckets make_buckets(const key_plan& plan, int me, int p) {
  send_buckets b;
  for (int d = 0; d < p; ++d) {
    b.at.push_back(b.data.size());
    const auto n = plan.count(me, d);
    b.n.push_back(n);
    b.data.push_back((static_cast<std::uint64_t>(me) << 32) | n);
    for (std::uint64_t i = 0; i < n; ++i) b.data.push_back(plan.key(me, d, i));
  }
  return b;
}

bool check_source(const expectation& e, int src, const std::uint64_t* keys, std::uint64_t n,
                  int me) {
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (keys[i] >> 40 != static_cast<std::uint64_t>(me)) return false;
    sum += mix64(keys[i]);
  }
  return n == e.count[static_cast<std::size_t>(src)] && sum == e.sum[static_cast<std::size_t>(src)];
}

// ---- the three kinds: one cycle each, timed from a barrier to the last rank's end ----

cycle_measure run_alltoallv(const key_plan& plan, const send_buckets& b,
                            std::vector<std::uint64_t>& recv, int me, int p) {
  std::vector<int> scount(static_cast<std::size_t>(p)), sdisp(static_cast<std::size_t>(p)),
      rcount(static_cast<std::size_t>(p)), rdisp(static_cast<std::size_t>(p));
  std::vector<std::uint64_t> keys;  // contiguous keys without headers (untimed)
  for (int d = 0; d < p; ++d) {
    sdisp[static_cast<std::size_t>(d)] = static_cast<int>(keys.size());
    scount[static_cast<std::size_t>(d)] = static_cast<int>(b.n[static_cast<std::size_t>(d)]);
    const auto* k = b.data.data() + b.at[static_cast<std::size_t>(d)] + 1;
    keys.insert(keys.end(), k, k + b.n[static_cast<std::size_t>(d)]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int s = 0; s < p; ++s) {
    rdisp[static_cast<std::size_t>(s)] = total;
    total += rcount[static_cast<std::size_t>(s)];
  }
  MPI_Alltoallv(keys.data(), scount.data(), sdisp.data(), MPI_UINT64_T, recv.data(), rcount.data(),
                rdisp.data(), MPI_UINT64_T, MPI_COMM_WORLD);
  cycle_measure r;
  r.seconds = MPI_Wtime() - t0;
  const expectation e = expected_here(plan, me, p);
  bool ok = true;
  for (int s = 0; s < p; ++s)
    ok = ok && check_source(e, s, recv.data() + rdisp[static_cast<std::size_t>(s)],
                            static_cast<std::uint64_t>(rcount[static_cast<std::size_t>(s)]), me);
  r.verified = ok;
  return r;
}

cycle_measure run_append(const key_plan& plan, const send_buckets& b,
                         convoy::aggregation::append_buffer& buf, int me, int p) {
  std::vector<std::uint64_t> got_n(static_cast<std::size_t>(p)),
      got_sum(static_cast<std::size_t>(p));
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  bool ok = true;
  for (int k = 0; k < p; ++k) {  // Listing 5 of Dinan & Flajslik 2014, destinations rotated from me
    const int d = (me + k) % p;
    const auto n = b.n[static_cast<std::size_t>(d)];
    if (n == 0) continue;
    const auto* rec =
        reinterpret_cast<const std::byte*>(b.data.data() + b.at[static_cast<std::size_t>(d)]);
    const std::size_t bytes = (n + 1) * sizeof(std::uint64_t);
    ok = ok && buf.push(d, {rec, bytes}) == bytes;
  }
  MPI_Barrier(MPI_COMM_WORLD);  // every push complete
  const auto v = buf.local_view();
  const double t1 = MPI_Wtime();
  cycle_measure r;
  ok = ok && v.complete;
  const expectation e = expected_here(plan, me, p);
  std::vector<bool> seen(static_cast<std::size_t>(p), false);
  for (std::size_t at = 0; ok && at + 8 <= v.bytes;) {
    std::uint64_t head = 0;
    std::memcpy(&head, v.data + at, 8);
    const int src = static_cast<int>(head >> 32);
    const std::uint64_t n = head & 0xffffffffu;
    std::vector<std::uint64_t> keys(n);
    std::memcpy(keys.data(), v.data + at + 8, n * 8);
    ok =
        src < p && !seen[static_cast<std::size_t>(src)] && check_source(e, src, keys.data(), n, me);
    if (ok) seen[static_cast<std::size_t>(src)] = true;
    at += 8 * (n + 1);
  }
  for (int s = 0; s < p; ++s)
    ok = ok && (seen[static_cast<std::size_t>(s)] || e.count[static_cast<std::size_t>(s)] == 0);
  r.verified = ok;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t2 = MPI_Wtime();
  buf.reset();  // part of the cost of a cycle: timed with it
  r.seconds = (t1 - t0) + (MPI_Wtime() - t2);
  return r;
}

cycle_measure run_conveyor(const key_plan& plan, const send_buckets& b,
                           convoy::conveyor<std::uint64_t>& c, int me, int p) {
  std::vector<std::uint64_t> n(static_cast<std::size_t>(p)), sum(static_cast<std::size_t>(p));
  bool ok = true;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  c.begin();
  int k = 0;
  std::uint64_t i = 0;
  bool all_pushed = false;
  while (c.advance(all_pushed)) {
    while (k < p) {
      const int d = (me + k) % p;
      const auto* keys = b.data.data() + b.at[static_cast<std::size_t>(d)] + 1;
      if (i < b.n[static_cast<std::size_t>(d)]) {
        if (!c.push(keys[i], d)) break;
        ++i;
      } else {
        ++k;
        i = 0;
      }
    }
    all_pushed = k == p;
    while (auto got = c.pull()) {
      const auto s = static_cast<std::size_t>(got->from);
      ok = ok && got->item >> 40 == static_cast<std::uint64_t>(me);
      ++n[s];
      sum[s] += mix64(got->item);
    }
  }
  c.reset();
  cycle_measure r;
  r.seconds = MPI_Wtime() - t0;
  const expectation e = expected_here(plan, me, p);
  r.verified = ok && n == e.count && sum == e.sum;
  return r;
}

// ---- the program: every (bucket size, kind) as one row of the bench harness ----

/// The channel of one kind, sized for the largest receive of any cycle.
struct kind_state {
  std::unique_ptr<convoy::aggregation::append_buffer> buf;
  std::unique_ptr<convoy::conveyor<std::uint64_t>> conv;
  std::vector<std::uint64_t> recv;
  std::size_t memory = 0;

  kind_state(const std::string& kind, const options& opt, std::uint64_t most) {
    if (kind == "append") {
      buf = std::make_unique<convoy::aggregation::append_buffer>(MPI_COMM_WORLD, most * 8);
      memory = most * 8;
    } else if (kind == "conveyor") {
      convoy::conveyor_options co;
      co.buffer_bytes = opt.buffer_bytes;
      co.n_buffers = opt.n_buffers;
      conv = std::make_unique<convoy::conveyor<std::uint64_t>>(MPI_COMM_WORLD, co);
    } else if (kind == "alltoallv") {
      recv.resize(most);
      memory = most * 8;
    } else {
      throw std::runtime_error("unknown kind " + kind + " (alltoallv, append, conveyor)");
    }
  }
};

/// One row: --warmup + --reps verified cycles of `kind` at average bucket `bucket_bytes`.
/// `extra` gets the fields of the RESULT line that a row has no place for.
result_row run_kind(const options& opt, const job& j, const std::string& kind,
                    std::size_t bucket_bytes, std::string& extra) {
  const int me = j.rank, p = j.n_ranks;
  key_plan plan(opt.seed, bucket_bytes);
  // Room for the largest any rank can receive in any cycle (the same on every rank).
  std::uint64_t most = 0, empty = 0;
  for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
    plan.cycle = static_cast<std::uint64_t>(rep);
    std::uint64_t in = 0;
    for (int s = 0; s < p; ++s) {
      in += plan.count(s, me);
      empty += rep >= opt.warmup && plan.count(me, s) == 0 ? 1 : 0;
    }
    most = std::max(most, in + static_cast<std::uint64_t>(p));  // keys + headers
  }
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  kind_state k(kind, opt, most);
  std::vector<cycle_measure> cycles;
  for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
    plan.cycle = static_cast<std::uint64_t>(rep);
    const send_buckets b = make_buckets(plan, me, p);
    cycle_measure m = kind == "append"     ? run_append(plan, b, *k.buf, me, p)
                      : kind == "conveyor" ? run_conveyor(plan, b, *k.conv, me, p)
                                           : run_alltoallv(plan, b, k.recv, me, p);
    for (const std::uint64_t n : b.n) m.items += n;  // keys this rank pushed
    if (rep >= opt.warmup) cycles.push_back(m);
  }
  if (k.conv) k.memory = k.conv->max_memory_bytes();
  // The x of the key exchange is the average bucket; its items are 8-byte keys.
  result_row row = convoy::bench::program_row("key_exchange", kind, bucket_bytes,
                                              sizeof(std::uint64_t), cycles, k.memory, j);
  unsigned long long mine = empty, all_empty = 0;
  MPI_Allreduce(&mine, &all_empty, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  char text[80];
  std::snprintf(text, sizeof text, " empty_pairs_percent=%.1f",
                100.0 * static_cast<double>(all_empty) / opt.reps / (static_cast<double>(p) * p));
  extra = text;
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  return convoy::bench::run_program(
      argc, argv, "bench-key-exchange",
      "NAS IS key exchange; --sizes = average bucket bytes; kinds alltoallv, append, conveyor",
      {"alltoallv", "append", "conveyor"}, true, run_kind);
}
