// convoy-tune: measures the histogram kernel (bench-histogram) at the job size you launch
// and writes the fastest choices as the defaults of convey_new() and the C++ API
// (docs/cluster.md, "Tuning a new machine"):
//
//   buffer_bytes=N      # C++ API (kind mesh): bytes per buffer
//   n_buffers=K           #   buffers per link
//   mesh=SPEC             #   mesh shape
//   kind=tensor2          # the fastest convey.h kind (convey_new's choice)
//   tensor2.buffer_bytes=N   # that kind's own best buffer size
//   tensor2.n_buffers=K        # and buffers per link (tensor kinds)
//
// to $CONVOY_TUNE_FILE if set, else ~/.config/convoy/tune.conf (or -o FILE). Readers
// ignore keys they do not know (base/README.md: the tuning file). Explicit options and
// CONVOY_* variables still win over the file.
//
// The search is coordinate descent, as the control system of Wesolowski et al. 2014
// (sec. V.E) converges (bale's `make tune` sweeps buffer sizes): C++ API buffer size,
// buffers per link, mesh shape, then buffer size again around the winner; then every convey.h kind
// over buffer sizes, and the tensor kinds over buffers per link. Mesh candidates are parsed with
// convoy's mesh spec parser (topology/mesh_spec.hpp); shapes must cover the rank count.
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <convoy/base/error.hpp>
#include <convoy/base/mesh_spec.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "bench_runner.hpp"
#include "cli_checks.hpp"
#include "cli_exit.hpp"
#include "tune_search.hpp"

namespace {

using convoy::tools::tune::best;
using convoy::tools::tune::options;
using convoy::tools::tune::planned_runs;
using convoy::tools::tune::tune_kinds;
using convoy::tools::tune::tune_mesh;
using convoy::tools::tune::tuner;
using convoy::tools::tune::tuning_text;

// auto, node,core, node,socket,core, the 1-D mesh and every 2-D and 3-D factorization
// of the rank count with sides >= 2.
std::vector<std::string> mesh_candidates(int ranks) {
  std::vector<std::string> out{"auto", "node,core", "node,socket,core", std::to_string(ranks)};
  for (int a = 2; a <= ranks / 2; ++a) {
    if (ranks % a) continue;
    const int b = ranks / a;
    out.push_back(std::to_string(a) + "x" + std::to_string(b));
    for (int c = 2; c <= b / 2; ++c)
      if (b % c == 0)
        out.push_back(std::to_string(a) + "x" + std::to_string(c) + "x" + std::to_string(b / c));
  }
  return out;
}

// A spec the tuner can try at `ranks`: it parses, and a shape covers exactly the ranks.
std::string checked_mesh(const std::string& spec, int ranks) {
  const convoy::base::mesh_spec m = convoy::base::parse_mesh_spec(spec);
  if (m.form == convoy::base::mesh_spec::kind::cartesian) {
    long long cells = 1;
    for (int s : m.shape) cells *= s;
    if (cells != ranks)
      throw convoy::error("mesh spec '" + spec + "': " + std::to_string(cells) + " cells for " +
                          std::to_string(ranks) + " ranks");
  }
  return convoy::base::to_string(m);
}
std::string find_bench(const std::string& given) {
  if (!given.empty()) return given;
  const std::string here = convoy::tools::own_directory();
  for (const std::string& c : {here + "/../bench/bench-histogram", here + "/bench-histogram"})
    if (access(c.c_str(), X_OK) == 0) return c;
  return "bench-histogram";  // on PATH
}

// The launcher of the MPI this program was built against (FindMPI's MPIEXEC_EXECUTABLE)
// with its family's options for more ranks than cores: Open MPI's mpirun needs them;
// Hydra (MPICH and its derivatives) oversubscribes and leaves ranks unbound by default.
std::string default_launcher(const std::string& ranks) {
  std::string launcher = CONVOY_TUNE_MPIEXEC;
  if (launcher.empty()) launcher = "mpiexec";
#ifdef OPEN_MPI
  return launcher + " -np " + ranks + " --oversubscribe --mca mpi_yield_when_idle 1 --bind-to none";
#else
  return launcher + " -n " + ranks;
#endif
}

void add_options(CLI::App& app, options& o) {
  app.add_option("-l,--launcher", o.launcher,
                 "command prefix that launches the job, e.g. \"srun -n 4096\" (default: " +
                     default_launcher("RANKS") + ")");
  app.add_option("-n,--ranks", o.ranks,
                 "ranks of the job (default: nproc); mesh candidates "
                 "are factorized for it, give it with -l too")
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("-N,--items", o.items, "items per rank per measurement (default 2e6)")
      ->check(convoy::tools::count_in(1, (std::uint64_t{1} << 32) - 1));
  app.add_option("-r,--reps", o.reps, "timed cycles per measurement; median (default 3)")
      ->check(CLI::Range(1, 1000));
  app.add_option("-s,--size", o.item_bytes, "item size in bytes to tune for (default 8)")
      ->check(CLI::Range(8, 65536));
  app.add_option("-c,--capacities", o.capacities, "buffer sizes (default 4096 ... 262144)")
      ->delimiter(',')
      ->check(CLI::Range(std::size_t{64}, std::size_t{1} << 30));
  app.add_option("-b,--buffers", o.buffers, "buffers per link, powers of two (default 1,2,4)")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](std::string& v) {
            std::uint64_t k = 0;
            return convoy::tools::parse_count(v, k) && k >= 1 && k <= 1024 && (k & (k - 1)) == 0
                       ? std::string()
                       : "'" + v + "' is not a power of two 1..1024";
          },
          "POWER OF 2", "power of two"));
  app.add_option("-m,--mesh", o.meshes,
                 "a mesh spec to try (repeat -m; default: auto, node,core, node,socket,core, "
                 "the 1-D mesh and every 2-D and 3-D factorization of the rank count)");
  app.add_option("-K,--kinds", o.kinds,
                 "convey.h kinds to tune (default simple,tensor1,tensor2,tensor3; 'none' to skip)")
      ->delimiter(',')
      ->check(CLI::IsMember({"simple", "tensor1", "tensor2", "tensor3", "none"}));
  app.add_option("-B,--bench", o.bench,
                 "path of bench-histogram (default: beside this tool's "
                 "build, else on PATH)");
  app.add_option("-o,--output", o.output,
                 "tuning file to write (default $CONVOY_TUNE_FILE, else "
                 "~/.config/convoy/tune.conf)");
  app.add_flag("-k,--dry-run", o.dry_run, "print the choice, write nothing");
}

// Everything the options decide before the first run, each checked: the mesh candidates,
// the command that runs a measurement (launcher words, then the benchmark), the file to
// write (its directory created). Throws with the option and the problem.
void prepare(options& o, std::vector<std::string>& base, std::vector<std::string>& meshes,
             std::string& target) {
  if (o.ranks == 0) o.ranks = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  for (const auto& m : o.meshes.empty() ? mesh_candidates(o.ranks) : o.meshes) {
    std::string c;
    try {
      c = checked_mesh(m, o.ranks);
    } catch (const convoy::error& e) {
      throw std::invalid_argument(std::string("--mesh: ") + e.what());
    }
    if (std::find(meshes.begin(), meshes.end(), c) == meshes.end()) meshes.push_back(c);
  }
  if (std::find(o.kinds.begin(), o.kinds.end(), "none") != o.kinds.end()) {
    if (o.kinds.size() > 1) throw std::invalid_argument("--kinds: 'none' goes alone");
    o.kinds.clear();
  }
  if (o.launcher.empty()) {
    o.launcher = default_launcher(std::to_string(o.ranks));
    if (geteuid() == 0) {
      setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
      setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    }
  }
  try {
    base = convoy::tools::split_words(o.launcher);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("--launcher '" + o.launcher + "': " + e.what());
  }
  if (base.empty()) throw std::invalid_argument("--launcher is empty");
  if (convoy::tools::find_program(base.front()).empty())
    throw std::invalid_argument("--launcher: '" + base.front() + "' is not an executable program" +
                                (base.front().find('/') == std::string::npos ? " on PATH" : ""));
  const std::string bench = find_bench(o.bench);
  if (convoy::tools::find_program(bench).empty())
    throw std::invalid_argument(
        o.bench.empty() ? "--bench: bench-histogram is neither beside convoy-tune nor on PATH"
                        : "--bench: '" + o.bench + "' is not an executable program");
  base.push_back(bench);
  if (o.dry_run) return;
  target = o.output;
  if (target.empty()) {
    const char* env = std::getenv("CONVOY_TUNE_FILE");
    const char* home = std::getenv("HOME");
    target = env && *env ? env : std::string(home ? home : ".") + "/.config/convoy/tune.conf";
  }
  // The default's directory is made if missing (~/.config/convoy); a given file's must exist.
  const auto dir = std::filesystem::path(target).parent_path();
  std::error_code ec;
  if (o.output.empty() && !dir.empty()) std::filesystem::create_directories(dir, ec);
  const std::string why = convoy::tools::why_not_writable(target);
  if (!why.empty())
    throw std::invalid_argument((o.output.empty() ? "tuning file: " : "--output: ") + why);
}

}  // namespace

// Errors are reported and turned into exit codes below; CLI11 throws while the options are
// declared only for a mistake in this table.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  options o;
  CLI::App app{
      "convoy-tune: measure bench-histogram over buffer sizes, buffers per link, mesh "
      "shapes and convey.h kinds; write the fastest as convoy's tuning file",
      "convoy-tune"};
  add_options(app, o);
  if (const int code = convoy::tools::parse_command_line(app, argc, argv); code >= 0) return code;
  std::vector<std::string> base, meshes;
  std::string target;
  try {
    prepare(o, base, meshes, target);
  } catch (const std::exception& e) {  // a bad option: nothing has run
    std::cerr << "convoy-tune: " << e.what() << "\n";
    return 2;
  }
  try {
    const std::string log = std::filesystem::temp_directory_path() /
                            ("convoy-tune-" + std::to_string(getpid()) + ".log");
    std::cerr << "convoy-tune: " << o.launcher << " " << base.back() << " (item " << o.item_bytes
              << " bytes, " << o.items << " items per rank, median of " << o.reps << ")\n";
    tuner t(o, base, log, planned_runs(o, meshes.size()));
    const best m = tune_mesh(t, o, meshes);
    const auto kinds = o.kinds.empty() ? std::map<std::string, best>{} : tune_kinds(t, o);
    if (m.rate <= 0 && kinds.empty()) {
      std::cerr << "convoy-tune: every measurement failed; the programs said:\n"
                << std::ifstream(log).rdbuf();
      std::filesystem::remove(log);
      return 1;
    }
    std::filesystem::remove(log);
    const std::string text = tuning_text(o, m, kinds);
    if (o.dry_run) {
      std::cout << text;
      return 0;
    }
    std::ofstream out(target);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + target);
    std::cerr << "convoy-tune: wrote " << target << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "convoy-tune: " << e.what() << "\n";
    return 1;
  }
}
