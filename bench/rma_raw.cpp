// bench-rma-raw: what one-sided operations cost on this MPI: rank 0
// times N rounds of each operation against rank 1 (same window flavour as
// aggregation::detail::rma_window), beside an 8-byte MPI_Send/MPI_Recv round trip and an
// MPI_Barrier (all ranks).
// One RESULT line per operation with the median over --reps batches of the time per op.
#include <mpi.h>

#include <algorithm>
#include <convoy/aggregation/detail/rma_window.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "harness.hpp"

namespace {

template <class Op>
double per_op(int n, Op op) {
  const double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) op();
  return (MPI_Wtime() - t0) / n;
}

int run(int argc, char** argv) {
  int me = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const auto parsed = convoy::bench::parse_options(
      argc, argv, "bench-rma-raw", "raw one-sided operation costs, rank 0 -> 1", me == 0);
  if (parsed.exit_code >= 0) return parsed.exit_code;
  const auto& opt = parsed.opt;
  const int n = 10000;
  {
    convoy::aggregation::detail::rma_window w(MPI_COMM_WORLD, 4096);
    const int target = p > 1 ? 1 : 0;
    std::vector<std::pair<std::string, std::vector<double>>> ops = {{"fetch_and_op+flush", {}},
                                                                    {"compare_and_swap+flush", {}},
                                                                    {"put8+flush", {}},
                                                                    {"put4096+flush", {}},
                                                                    {"accumulate+flush", {}},
                                                                    {"send_recv_8B_round_trip", {}},
                                                                    {"barrier", {}}};
    std::vector<std::byte> src(4096);
    for (int rep = 0; rep < opt.reps; ++rep) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (me == 0) {
        std::uint64_t one = 1;
        ops[0].second.push_back(per_op(n, [&] { static_cast<void>(w.fetch_add(target, 0, 1)); }));
        ops[1].second.push_back(
            per_op(n, [&] { static_cast<void>(w.compare_swap(target, 8, 0, 0)); }));
        ops[2].second.push_back(per_op(n, [&] { w.put(target, 64, src.data(), 8); }));
        ops[3].second.push_back(per_op(n, [&] { w.put(target, 0, src.data(), 4096); }));
        ops[4].second.push_back(per_op(n, [&] { w.add_words(target, 16, &one, 1); }));
      }
      MPI_Barrier(MPI_COMM_WORLD);
      std::uint64_t x = 0;
      if (p > 1 && me < 2) {
        const double t = per_op(n, [&] {
          if (me == 0) {
            MPI_Send(&x, 1, MPI_UINT64_T, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&x, 1, MPI_UINT64_T, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else {
            MPI_Recv(&x, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&x, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD);
          }
        });
        if (me == 0) ops[5].second.push_back(t);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      const double tb = per_op(n, [] { MPI_Barrier(MPI_COMM_WORLD); });
      if (me == 0) ops[6].second.push_back(tb);
    }
    if (me == 0)
      for (auto& [name, t] : ops) {
        if (t.empty()) continue;
        std::sort(t.begin(), t.end());
        std::printf("RESULT kernel=rma_raw op=%s ranks=%d ops=%d reps=%d us_per_op=%.3f\n",
                    name.c_str(), p, n, opt.reps, 1e6 * t[t.size() / 2]);
      }
  }
  return 0;
}

}  // namespace

// An exception (a window MPI refuses, say) is one message and status 2 (program_main).
int main(int argc, char** argv) {
  return convoy::bench::program_main(argc, argv, "bench-rma-raw", run);
}
