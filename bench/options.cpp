// Command line of the MPI benchmark programs (bench/README.md lists the options), with CLI11.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "bench_common.hpp"
#include "cli_exit.hpp"

namespace convoy::bench {

namespace {

// Accepts 10000000, 1e7, 10M, 64k, 16Ki, 1Mi.
std::uint64_t parse_count(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  const std::string suffix = end ? std::string(end) : std::string();
  double mult = 1;
  if (suffix == "k" || suffix == "K")
    mult = 1e3;
  else if (suffix == "M")
    mult = 1e6;
  else if (suffix == "G")
    mult = 1e9;
  else if (suffix == "Ki")
    mult = 1024;
  else if (suffix == "Mi")
    mult = 1024.0 * 1024;
  else if (!suffix.empty())
    mult = -1;
  if (errno || end == text.c_str() || mult < 0 || !(v >= 0) || v * mult > 1e15)
    throw CLI::ValidationError(flag, "'" + text + "': expected a count such as 1e7, 64k or 16Ki");
  return static_cast<std::uint64_t>(std::llround(v * mult));
}

std::uint64_t count_in(const std::string& flag, const std::string& text, std::uint64_t lo,
                       std::uint64_t hi) {
  const std::uint64_t v = parse_count(flag, text);
  if (v < lo || v > hi)
    throw CLI::ValidationError(
        flag, "'" + text + "': must be " + std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

bool is_kind_start(const std::string& piece) {
  return piece == "naive" || piece == "alltoallv" || piece == "simple" || piece == "convey" ||
         piece.rfind("tensor", 0) == 0 || piece.rfind("mesh", 0) == 0;
}

// "simple,mesh:node,core,mesh-1d" -> simple, mesh:node,core, mesh-1d: a piece that starts
// no kind continues the mesh spec before it.
std::vector<std::string> split_kinds(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string piece;
  while (std::getline(in, piece, ',')) {
    if (piece.empty()) continue;
    if (!out.empty() && !is_kind_start(piece) && out.back().rfind("mesh:", 0) == 0)
      out.back() += "," + piece;
    else
      out.push_back(piece);
  }
  return out;
}

// An option whose value is a count (1e7, 64k, 16Ki) in [lo, hi], stored by `set`.
template <class Set>
void count_option(CLI::App& app, const std::string& flag, std::uint64_t lo, std::uint64_t hi,
                  Set set, const std::string& help) {
  app.add_option_function<std::string>(
         flag, [=](const std::string& s) { set(count_in(flag, s, lo, hi)); }, help)
      ->type_name("N");
}

void add_options(CLI::App& app, options& o) {
  constexpr std::uint64_t below_2_32 = (1ULL << 32) - 1;
  count_option(
      app, "--items", 0, below_2_32, [&o](std::uint64_t v) { o.items = v; },
      "items pushed per rank per cycle (default 1e7; counts take 1e7, 64k, 16Ki)");
  app.add_option_function<std::string>(
         "--sizes",
         [&o](const std::string& s) {
           o.sizes.clear();
           std::istringstream in(s);
           std::string part;
           while (std::getline(in, part, ','))
             o.sizes.push_back(static_cast<std::size_t>(count_in("--sizes", part, 1, 1 << 22)));
           if (o.sizes.empty()) throw CLI::ValidationError("--sizes", "needs at least one size");
         },
         "item sizes in bytes (bench-large-items: KiB), comma separated (default 8,16,32,128)")
      ->type_name("LIST");
  app.add_option_function<std::string>(
         "--kinds", [&o](const std::string& s) { o.kinds = split_kinds(s); },
         "kinds to run (default all built): naive, alltoallv, simple, tensor1, tensor2, "
         "tensor3, convey, mesh, mesh-1d, mesh:<spec>")
      ->type_name("LIST");
  count_option(
      app, "--reps", 1, 1000000, [&o](std::uint64_t v) { o.reps = static_cast<int>(v); },
      "timed cycles; the median is reported (default 1)");
  count_option(
      app, "--warmup", 0, 1000000, [&o](std::uint64_t v) { o.warmup = static_cast<int>(v); },
      "untimed cycles first (default 1)");
  count_option(
      app, "--table", 1, below_2_32, [&o](std::uint64_t v) { o.table = v; },
      "table entries per rank (histogram, index-gather; default 1e5)");
  count_option(
      app, "--seed", 0, 1ULL << 48, [&o](std::uint64_t v) { o.seed = v; },
      "random stream (default 1)");
  count_option(
      app, "--capacity", 1, 1ULL << 31,
      [&o](std::uint64_t v) { o.capacity_bytes = static_cast<std::size_t>(v); },
      "bytes per buffer, C++ API kinds (default: library)");
  count_option(
      app, "--n-buffers", 1, 1024, [&o](std::uint64_t v) { o.n_buffers = static_cast<int>(v); },
      "buffers per link, C++ API kinds (default: library)");
  app.add_option("--mesh", o.mesh, "mesh spec of kind 'mesh' (default auto)")->type_name("SPEC");
  count_option(
      app, "--convey-capacity", 1, 1ULL << 31,
      [&o](std::uint64_t v) { o.convey_capacity = static_cast<std::size_t>(v); },
      "buffer bytes of convey.h kinds (default CONVEY_BUFFER_SIZE, else 10000)");
  count_option(
      app, "--convey-buffers", 1, 1024,
      [&o](std::uint64_t v) { o.convey_buffers = static_cast<int>(v); },
      "buffers per link of tensor kinds (default 1)");
  count_option(
      app, "--n-local", 1, 1ULL << 31,
      [&o](std::uint64_t v) { o.convey_n_local = static_cast<std::size_t>(v); },
      "local group of tensor kinds (default ranks per node, emulated nodes included)");
  count_option(
      app, "--window", 1, 1 << 20, [&o](std::uint64_t v) { o.naive_window = static_cast<int>(v); },
      "outstanding requests of kind naive (default 256)");
  app.add_option("--json", o.json, "also write the results with their context as JSON")
      ->type_name("FILE");
  app.add_flag("--print-table", o.table_output, "also print a short table");
}

}  // namespace

parsed_options parse_options(int argc, char** argv, const char* program, const char* help,
                             bool print, const options& defaults) {
  parsed_options p;
  p.opt = defaults;
  // Named as invoked (bench-histogram, bench-histogram-ext, convoy-demo).
  std::string name = argc > 0 && argv[0] ? argv[0] : program;
  name = name.substr(name.rfind('/') + 1);
  CLI::App app{help, name};
  app.footer("bench/README.md describes the method, the kinds and the output.");
  add_options(app, p.opt);
  p.exit_code = tools::parse_command_line(app, argc, argv, print);
  return p;
}

}  // namespace convoy::bench
