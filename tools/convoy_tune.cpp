// convoy-tune: measures the histogram kernel (bench-histogram) at the job size you launch
// and writes the fastest choices as the defaults of convey_new() and the C++ API
// (docs/cluster.md, "Tuning a new machine"):
//
//   capacity_bytes=N      # C++ API (kind mesh): bytes per buffer
//   n_buffers=K           #   buffers per link
//   mesh=SPEC             #   mesh shape
//   kind=tensor2          # the fastest convey.h kind (convey_new's choice)
//   tensor2.capacity_bytes=N   # that kind's own best buffer size
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
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <convoy/base/error.hpp>
#include <convoy/base/mesh_spec.hpp>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench_runner.hpp"
#include "cli_checks.hpp"
#include "cli_exit.hpp"

namespace {

struct options {
  std::string launcher;
  int ranks = 0;
  std::string items = "2e6";
  int reps = 3;
  int item_bytes = 8;
  std::vector<std::size_t> capacities{4096, 8192, 16384, 32768, 65536, 131072, 262144};
  std::vector<int> buffers{1, 2, 4};
  std::vector<std::string> meshes;
  std::vector<std::string> kinds{"simple", "tensor1", "tensor2", "tensor3"};
  std::string bench;
  std::string output;
  bool dry_run = false;
};

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

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) out.push_back(part);
  return out;
}

class tuner {
 public:
  tuner(const options& o, std::vector<std::string> base, std::string log, int planned)
      : o_(o), base_(std::move(base)), log_(std::move(log)), planned_(planned) {}

  // Rates (items/s per rank) of `kinds` (comma separated) under `args`; 0 for a failed or
  // unverified kind. Each (kind, args) is measured once.
  std::map<std::string, double> measure(const std::string& kinds,
                                        const std::vector<std::string>& args) {
    std::string tail;
    for (const auto& a : args) tail += " " + a;
    std::map<std::string, double> rates;
    std::string missing;
    for (const auto& k : split_commas(kinds)) {
      if (auto it = seen_.find(k + tail); it != seen_.end())
        rates[k] = it->second;
      else
        missing += (missing.empty() ? "" : ",") + k;
    }
    if (missing.empty()) return rates;
    std::vector<std::string> cmd = base_;
    cmd.insert(cmd.end(), {"--kinds", missing, "--sizes", std::to_string(o_.item_bytes), "--items",
                           o_.items, "--reps", std::to_string(o_.reps)});
    cmd.insert(cmd.end(), args.begin(), args.end());
    progress_.show("run " + std::to_string(++runs_) + " of at most " + std::to_string(planned_) +
                       ": " + missing + tail,
                   true);
    std::map<std::string, double> got;
    for (const auto& r : convoy::tools::run_bench(cmd, log_))
      got[r.kind] = r.verified && r.error.empty() ? r.items_per_s_per_rank : 0;
    progress_.clear();
    std::cerr << "  " << missing << tail << ":";
    for (const auto& k : split_commas(missing)) {
      rates[k] = seen_[k + tail] = got[k];  // absent: the run failed before writing
      std::fprintf(stderr, " %s %.3f M", k.c_str(), got[k] / 1e6);
    }
    std::cerr << "\n";
    return rates;
  }

 private:
  const options& o_;
  std::vector<std::string> base_;
  std::string log_;
  std::map<std::string, double> seen_;  // "kind args" -> rate
  int planned_;                         // runs of the whole search, before repeats are skipped
  int runs_ = 0;
  convoy::tools::progress_line progress_{"convoy-tune: "};
};

// Runs of the search below at most (a repeated (kind, arguments) is measured once).
int planned_runs(const options& o, std::size_t n_meshes) {
  const auto c = static_cast<int>(o.capacities.size());
  const auto b = static_cast<int>(o.buffers.size());
  const int kinds = o.kinds.empty() ? 0 : c + (static_cast<int>(o.kinds.size()) - 1) * b;
  return 2 * c + b + static_cast<int>(n_meshes) + kinds;
}

// Of `given`, the value nearest to `wanted` (the library's default): where the search
// starts, so that it tries only what the command line allows.
template <class T>
T nearest(const std::vector<T>& given, T wanted) {
  T best = given.front();
  for (T v : given)
    if ((v > wanted ? v - wanted : wanted - v) < (best > wanted ? best - wanted : wanted - best))
      best = v;
  return best;
}

struct best {
  double rate = 0;
  std::size_t capacity = 16384;
  int buffers = 2;
  std::string mesh = "auto";
};

best tune_mesh(tuner& t, const options& o, const std::vector<std::string>& meshes) {
  best b;
  b.capacity = nearest(o.capacities, b.capacity);
  b.buffers = nearest(o.buffers, b.buffers);
  b.mesh = meshes.front();
  auto consider = [&](std::size_t cap, int buf, const std::string& mesh) {
    const double r = t.measure("mesh", {"--mesh", mesh, "--capacity", std::to_string(cap),
                                        "--n-buffers", std::to_string(buf)})["mesh"];
    if (r > b.rate) b = {r, cap, buf, mesh};
  };
  std::cerr << "C++ API (kind mesh): buffer size, buffers per link, mesh shape, buffer size\n";
  const best start = b;
  for (auto c : o.capacities) consider(c, start.buffers, start.mesh);
  for (int k : o.buffers) consider(b.capacity, k, b.mesh);
  for (const auto& m : meshes) consider(b.capacity, b.buffers, m);
  for (auto c : o.capacities) consider(c, b.buffers, b.mesh);
  return b;
}

std::map<std::string, best> tune_kinds(tuner& t, const options& o) {
  std::map<std::string, best> bests;
  std::string all;
  for (const auto& k : o.kinds) all += (all.empty() ? "" : ",") + k;
  std::cerr << "convey.h kinds: buffer size, then buffers per link (tensor kinds)\n";
  for (auto c : o.capacities) {
    const auto rates =
        t.measure(all, {"--convey-capacity", std::to_string(c), "--convey-buffers", "1"});
    for (const auto& [kind, r] : rates)
      if (r > bests[kind].rate) bests[kind] = {r, c, 1, ""};
  }
  for (auto& [kind, b] : bests) {
    if (kind == "simple" || b.rate == 0) continue;  // simple has one buffer per destination
    for (int k : o.buffers) {
      const double r = t.measure(kind, {"--convey-capacity", std::to_string(b.capacity),
                                        "--convey-buffers", std::to_string(k)})[kind];
      if (r > b.rate) b = {r, b.capacity, k, ""};
    }
  }
  std::erase_if(bests, [](const auto& kv) { return kv.second.rate <= 0; });
  return bests;
}

std::string tuning_text(const options& o, const best& m, const std::map<std::string, best>& kinds) {
  std::ostringstream s;
  const std::time_t now = std::time(nullptr);
  char date[64], host[256] = {};
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  gethostname(host, sizeof host - 1);
  s << "# written by convoy-tune on " << date << ", host " << host << "\n"
    << "# job: " << o.launcher << "; histogram, " << o.item_bytes << "-byte items, " << o.items
    << " items per rank, median of " << o.reps << "\n";
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.3f", m.rate / 1e6);
  s << "# C++ API (kind mesh): " << rate << " M items/s per rank\n"
    << "capacity_bytes=" << m.capacity << "\nn_buffers=" << m.buffers << "\nmesh=" << m.mesh
    << "\n";
  if (kinds.empty()) return s.str();
  std::string fastest;
  double top = 0;
  for (const auto& [kind, b] : kinds)
    if (b.rate > top) top = b.rate, fastest = kind;
  s << "# convey.h kinds: the fastest (convey_new's choice), then each kind's best\n"
    << "kind=" << fastest << "\n";
  for (const auto& [kind, b] : kinds) {
    std::snprintf(rate, sizeof rate, "%.3f", b.rate / 1e6);
    s << "# " << kind << ": " << rate << " M items/s per rank\n"
      << kind << ".capacity_bytes=" << b.capacity << "\n";
    if (kind != "simple") s << kind << ".n_buffers=" << b.buffers << "\n";
  }
  return s.str();
}

std::string find_bench(const std::string& given) {
  if (!given.empty()) return given;
  const std::string here = convoy::tools::own_directory();
  for (const std::string& c : {here + "/../bench/bench-histogram", here + "/bench-histogram"})
    if (access(c.c_str(), X_OK) == 0) return c;
  return "bench-histogram";  // on PATH
}

void add_options(CLI::App& app, options& o) {
  app.add_option("-l,--launcher", o.launcher,
                 "command prefix that launches the job, e.g. \"srun -n 4096\" (default: "
                 "mpirun -np RANKS --oversubscribe --mca mpi_yield_when_idle 1 --bind-to none)");
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
    o.launcher = "mpirun -np " + std::to_string(o.ranks) +
                 " --oversubscribe --mca mpi_yield_when_idle 1 --bind-to none";
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
