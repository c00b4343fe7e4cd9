/// @file
/// convoy-demo: the README's main job (tools/quickstart demo). Runs histogram and
/// index-gather on every rank of the job with the auto topology and prints a short table:
/// kind, items/s per rank, memory per rank, verified. Takes the benchmark options
/// (default: 10^6 8-byte items per rank, best of 3 after a warm-up cycle).
#include "histogram.hpp"
#include "index_gather.hpp"

using namespace convoy::bench;

int main(int argc, char** argv) {
  init_mpi(argc, argv);
  int status = 0;
  {
    const job j = describe_job(MPI_COMM_WORLD);
    try {
      // Demo defaults first; the command line may override them.
      std::string flags[] = {"--items", "1e6", "--sizes", "8", "--reps", "3", "--kinds", "mesh"};
#if CONVOY_BENCH_HAVE_CONVEY
      flags[7] += ",convey";
#endif
      flags[7] += ",alltoallv";
      std::vector<char*> args{argv[0]};
      for (auto& f : flags) args.push_back(f.data());
      for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
      options opt = parse_options(static_cast<int>(args.size()), args.data(), "convoy-demo",
                                  "histogram and index-gather with the auto topology");
      if (j.rank == 0) {
        std::printf(
            "convoy demo: %d ranks on %d node(s), %llu items of %zu bytes per rank, "
            "median of %d\n",
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
      if (j.rank == 0) std::fprintf(stderr, "convoy-demo: %s\n", e.what());
      status = 2;
    }
  }
  finalize_mpi();
  return status;
}
