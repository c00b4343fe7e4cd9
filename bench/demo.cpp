/// @file
/// convoy-demo: the README's main job (tools/quickstart demo). Runs histogram and
/// index-gather on every rank of the job with the auto topology and prints a short table:
/// kind, items/s per rank, memory per rank, verified. Takes the benchmark options
/// (default: 10^6 8-byte items per rank, the median of 3 timed cycles after a warm-up one).
#include "histogram.hpp"
#include "index_gather.hpp"

using namespace convoy::bench;

int main(int argc, char** argv) {
  init_mpi(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Demo defaults; the command line may override them.
  options defaults;
  defaults.items = 1'000'000;
  defaults.sizes = {8};
  defaults.reps = 3;
  defaults.kinds = {"mesh"};
#if CONVOY_BENCH_HAVE_CONVEY
  defaults.kinds.emplace_back("convey");
#endif
  defaults.kinds.emplace_back("alltoallv");
  const parsed_options p =
      parse_options(argc, argv, "convoy-demo",
                    "convoy-demo: histogram and index-gather with the auto topology (default: "
                    "1e6 8-byte items per rank, kinds mesh, convey, alltoallv, median of 3)",
                    rank == 0, defaults);
  if (p.exit_code >= 0) {
    finalize_mpi();
    return p.exit_code;
  }
  int status = 0;
  try {
    const options& opt = p.opt;
    const job j = describe_job(MPI_COMM_WORLD);
    for (const auto& kind : opt.kinds) (void)parse_kind(kind, opt, j);
    if (j.rank == 0) {
      std::printf(
          "convoy demo: %d ranks on %d node(s), %llu items of %zu bytes per rank, median of %d\n",
          j.n_ranks, j.n_nodes, static_cast<unsigned long long>(opt.items), opt.sizes.front(),
          opt.reps);
      std::fflush(stdout);
    }
    std::vector<result_row> rows;
    for (std::size_t size : opt.sizes)
      for (const auto& kind : opt.kinds) {
        rows.push_back(run_one<histogram_kernel>(j, opt, kind, size));
        rows.push_back(run_one<index_gather_kernel>(j, opt, kind, size));
      }
    for (const auto& r : rows)
      if (!r.error.empty() || !r.verified) status = 1;
    print_table(rows, j, stdout);
    if (!opt.json.empty() && j.rank == 0) write_json(opt.json, rows, j, argc, argv);
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "convoy-demo: %s\n", e.what());
    status = 2;
  }
  finalize_mpi();
  return status;
}
