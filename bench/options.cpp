// Command line of the MPI benchmark programs (bench/README.md lists the options), with CLI11.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <convoy/base/settings.hpp>
#include <cstdlib>
#include <sstream>

#include "bench_common.hpp"
#include "cli_checks.hpp"
#include "cli_exit.hpp"

namespace convoy::bench {

namespace {

// A count (tools::parse_count: 1e7, 64k, 16Ki, ...).
std::uint64_t parse_count(const std::string& flag, const std::string& text) {
  std::uint64_t v = 0;
  if (!tools::parse_count(text, v))
    throw CLI::ValidationError(flag, "'" + text + "': expected a count such as 1e7, 64k or 16Ki");
  return v;
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
         piece.rfind("tensor", 0) == 0 || piece.rfind("mesh", 0) == 0 ||
         piece.rfind("combine", 0) == 0;
}

// "simple,mesh:node,core,mesh-1d" -> simple, mesh:node,core, mesh-1d: a piece that starts
// no kind continues the mesh spec before it (of mesh:<spec> or combine:<spec>).
std::vector<std::string> split_kinds(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string piece;
  while (std::getline(in, piece, ',')) {
    if (piece.empty()) continue;
    if (!out.empty() && !is_kind_start(piece) &&
        (out.back().rfind("mesh:", 0) == 0 || out.back().rfind("combine:", 0) == 0))
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

// 10000000 -> "1e7", 2000000 -> "2e6", 1234 -> "1234": a default as the help shows it.
std::string count_text(std::uint64_t v) {
  int zeros = 0;
  for (; v >= 10 && v % 10 == 0; v /= 10) ++zeros;
  return std::to_string(v) + (zeros >= 3 ? "e" + std::to_string(zeros) : std::string(zeros, '0'));
}

template <class T>
std::string joined(const std::vector<T>& v) {
  std::ostringstream s;
  for (std::size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  return s.str();
}

// An option in the range of the library's setting `l` (a power of two where `l` says so),
// with the setting's message.
template <class Set>
void limited_option(CLI::App& app, const std::string& flag, const convoy::base::setting_limit& l,
                    Set set, const std::string& help) {
  app.add_option_function<std::string>(
         flag,
         [=](const std::string& s) {
           const std::uint64_t v = parse_count(flag, s);
           if (v < l.min || v > l.max || (l.power_of_two && (v & (v - 1)) != 0))
             throw CLI::ValidationError(flag, "'" + s + "': must be " +
                                                  (l.power_of_two ? "a power of two"
                                                   : l.bytes      ? "a byte count"
                                                                  : "a count") +
                                                  " from " + convoy::base::range_text(l));
           set(v);
         },
         help)
      ->type_name("N");
}

// The buffers and groups of the conveyors under test, in the library's own ranges
// (base::setting_limits), as its settings have them.
void add_buffer_options(CLI::App& app, options& o) {
  const auto& buffer = convoy::base::limit_of("CONVOY_BUFFER_BYTES");
  const auto& convey_buffer = convoy::base::limit_of("CONVEY_BUFFER_SIZE");
  const auto& n_buffers = convoy::base::limit_of("CONVOY_N_BUFFERS");
  const auto& cache = convoy::base::limit_of("CONVOY_COMBINE_CACHE");
  limited_option(
      app, "--capacity", buffer,
      [&o](std::uint64_t v) { o.buffer_bytes = static_cast<std::size_t>(v); },
      "bytes per buffer, C++ API kinds (default: library)");
  limited_option(
      app, "--n-buffers", n_buffers, [&o](std::uint64_t v) { o.n_buffers = static_cast<int>(v); },
      "buffers per link, C++ API kinds (default: library)");
  limited_option(
      app, "--combine-cache", cache,
      [&o](std::uint64_t v) { o.combine_cache = static_cast<std::size_t>(v); },
      "kind combine: hold-back cache entries per lane that leaves the node, a power of two, "
      "0 for none (default: CONVOY_COMBINE_CACHE, else " +
          convoy::base::combine_cache_default_text() + ")");
  limited_option(
      app, "--convey-capacity", convey_buffer,
      [&o](std::uint64_t v) { o.convey_capacity = static_cast<std::size_t>(v); },
      "buffer bytes of convey.h kinds (default CONVEY_BUFFER_SIZE, else 10000)");
  limited_option(
      app, "--convey-buffers", n_buffers,
      [&o](std::uint64_t v) { o.convey_buffers = static_cast<int>(v); },
      "buffers per link of tensor kinds, a power of two (default 1)");
  count_option(
      app, "--n-local", 1, 1ULL << 31,
      [&o](std::uint64_t v) { o.convey_n_local = static_cast<std::size_t>(v); },
      "local group of tensor kinds (default ranks per node, emulated nodes included)");
}

// The help of each option names the default of this program (`o` holds its defaults).
void add_options(CLI::App& app, options& o, bool write_here) {
  constexpr std::uint64_t below_2_32 = (1ULL << 32) - 1;
  count_option(
      app, "--items", 0, below_2_32, [&o](std::uint64_t v) { o.items = v; },
      "items pushed per rank per cycle (default " + count_text(o.items) +
          "; counts take 1e7, 64k, 16Ki)");
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
         "item sizes in bytes (bench-large-items: KiB), comma separated (default " +
             joined(o.sizes) + ")")
      ->type_name("LIST");
  app.add_option_function<std::string>(
         "--kinds", [&o](const std::string& s) { o.kinds = split_kinds(s); },
         "kinds to run (default " + (o.kinds.empty() ? "all built" : joined(o.kinds)) +
             "): naive, alltoallv, simple, tensor1, tensor2, tensor3, convey, mesh, mesh-1d, "
             "mesh:<spec>, combine, combine:<spec>")
      ->type_name("LIST");
  count_option(
      app, "--reps", 1, 1000000, [&o](std::uint64_t v) { o.reps = static_cast<int>(v); },
      "timed cycles; the median is reported (default " + std::to_string(o.reps) + ")");
  count_option(
      app, "--warmup", 0, 1000000, [&o](std::uint64_t v) { o.warmup = static_cast<int>(v); },
      "untimed cycles first (default " + std::to_string(o.warmup) + ")");
  count_option(
      app, "--table", 1, below_2_32, [&o](std::uint64_t v) { o.table = v; },
      "table entries per rank (histogram, index-gather; default " + count_text(o.table) + ")");
  app.add_option("--skew", o.skew,
                 "Zipf exponent of the histogram's keys over the whole table; 0: uniform "
                 "(default " +
                     std::to_string(o.skew).substr(0, 3) + ")")
      ->check(CLI::Range(0.0, 100.0))
      ->type_name("S");
  count_option(
      app, "--seed", 0, 1ULL << 48, [&o](std::uint64_t v) { o.seed = v; },
      "random stream (default 1)");
  app.add_option("--mesh", o.mesh, "mesh spec of kind 'mesh' (default auto)")->type_name("SPEC");
  add_buffer_options(app, o);
  count_option(
      app, "--window", 1, 1 << 20, [&o](std::uint64_t v) { o.naive_window = static_cast<int>(v); },
      "outstanding requests of kind naive (default 256)");
  app.add_option("--json", o.json, "also write the results with their context as JSON")
      ->check(tools::writable_file(write_here))
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
  add_options(app, p.opt, print);
  p.exit_code = tools::parse_command_line(app, argc, argv, print);
  // The rank that prints (rank 0) also checks the output file alone: every rank takes
  // its outcome, so that none runs while another has stopped.
  int mpi_up = 0;
  MPI_Initialized(&mpi_up);
  if (mpi_up) MPI_Bcast(&p.exit_code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return p;
}

}  // namespace convoy::bench
