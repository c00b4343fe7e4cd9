#include "harness.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

#ifndef CONVOY_BENCH_IMPL
#define CONVOY_BENCH_IMPL "convoy"
#endif
#ifndef CONVOY_BENCH_GIT
#define CONVOY_BENCH_GIT "unknown"
#endif

#if CONVOY_BENCH_BALE_MPI
// bale's MPI build keeps its rank and size in globals that xmpi_init sets.
extern "C" int xmpi_init(int argc, char* argv[]);
#endif

namespace convoy::bench {

namespace {

std::uint64_t parse_count(const std::string& flag, const std::string& text) {
  // Accepts 10000000, 1e7, 10M, 64k, 16Ki.
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  std::string suffix = end ? std::string(end) : std::string();
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
    throw std::runtime_error(flag + " '" + text + "': expected a count such as 1e7, 64k or 16Ki");
  return static_cast<std::uint64_t>(std::llround(v * mult));
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

// Text safe inside a JSON string (our messages have no control characters but quotes).
std::string json_text(std::string s) {
  for (auto& c : s)
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) c = '\'';
  return s;
}

void usage(std::FILE* f, const char* program, const char* help) {
  std::fprintf(
      f,
      "usage: %s [options]\n  %s\n"
      "options:\n"
      "  --items N        items pushed per rank per cycle (default 1e7)\n"
      "  --sizes LIST     item sizes in bytes (default 8,16,32,128)\n"
      "  --kinds LIST     kinds to run (default all built): naive, alltoallv, simple,\n"
      "                   tensor1, tensor2, tensor3, convey, mesh, mesh-1d, mesh:<spec>\n"
      "  --reps R         timed cycles; the median is reported (default 1)\n"
      "  --warmup W       untimed cycles first (default 1)\n"
      "  --table T        table entries per rank (histogram, index-gather; 1e5)\n"
      "  --seed S\n"
      "  --capacity B     bytes per buffer, C++ API kinds (default: library)\n"
      "  --n-buffers K    buffers per link, C++ API kinds (default: library)\n"
      "  --mesh SPEC      mesh of kind 'mesh' (default auto)\n"
      "  --convey-capacity B  buffer bytes of convey.h kinds (CONVEY_BUFFER_SIZE or 10000)\n"
      "  --convey-buffers K   buffers per link of tensor kinds (default 1)\n"
      "  --n-local N      local group of tensor kinds (default ranks per node)\n"
      "  --window W       outstanding requests of kind naive (default 256)\n"
      "  --json FILE      also write the results with their context as JSON\n"
      "  --print-table    also print a short table\n",
      program, help);
}

}  // namespace

options parse_options(int argc, char** argv, const char* program, const char* help) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      if (rank == 0) usage(stdout, program, help);
      finalize_mpi();
      std::exit(0);
    } else if (a == "--items") {
      o.items = parse_count(a, value());
    } else if (a == "--sizes") {
      o.sizes.clear();
      for (const auto& s : split(value(), ',')) o.sizes.push_back(parse_count(a, s));
      for (auto s : o.sizes)
        if (s == 0 || s > 65536) throw std::runtime_error("--sizes: sizes must be 1..65536");
    } else if (a == "--kinds") {
      o.kinds = split(value(), ',');
    } else if (a == "--reps") {
      o.reps = static_cast<int>(parse_count(a, value()));
      if (o.reps < 1) throw std::runtime_error("--reps must be >= 1");
    } else if (a == "--warmup") {
      o.warmup = static_cast<int>(parse_count(a, value()));
    } else if (a == "--table") {
      o.table = parse_count(a, value());
      if (o.table == 0 || o.table >= (1ULL << 32))
        throw std::runtime_error("--table must be 1..2^32-1");
    } else if (a == "--seed") {
      o.seed = parse_count(a, value());
    } else if (a == "--capacity") {
      o.capacity_bytes = parse_count(a, value());
    } else if (a == "--n-buffers") {
      o.n_buffers = static_cast<int>(parse_count(a, value()));
    } else if (a == "--mesh") {
      o.mesh = value();
    } else if (a == "--convey-capacity") {
      o.convey_capacity = parse_count(a, value());
    } else if (a == "--convey-buffers") {
      o.convey_buffers = static_cast<int>(parse_count(a, value()));
    } else if (a == "--n-local") {
      o.convey_n_local = parse_count(a, value());
    } else if (a == "--window") {
      o.naive_window = static_cast<int>(parse_count(a, value()));
    } else if (a == "--json") {
      o.json = value();
    } else if (a == "--print-table") {
      o.table_output = true;
    } else {
      throw std::runtime_error("unknown option '" + a + "' (try --help)");
    }
  }
  if (o.items >= (1ULL << 32)) throw std::runtime_error("--items must be below 2^32");
  return o;
}

job describe_job(MPI_Comm comm) {
  job j;
  j.comm = comm;
  MPI_Comm_rank(comm, &j.rank);
  MPI_Comm_size(comm, &j.n_ranks);
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_rank = 0;
  MPI_Comm_size(node, &j.ranks_per_node);
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_free(&node);
  int leader = node_rank == 0;
  MPI_Allreduce(&leader, &j.n_nodes, 1, MPI_INT, MPI_SUM, comm);
  j.impl = CONVOY_BENCH_IMPL;
  return j;
}

result_row collect(const std::vector<cycle_measure>& cycles, std::size_t memory,
                   std::size_t buffers, const job& j) {
  result_row r;
  const auto n = cycles.size();
  std::vector<double> local(n), worst(n);
  bool ok = true;
  double items = 0, wire = 0, payload = 0;
  for (std::size_t i = 0; i < n; ++i) {
    local[i] = cycles[i].seconds;
    ok = ok && cycles[i].verified;
    items += static_cast<double>(cycles[i].items);
    wire += static_cast<double>(cycles[i].wire);
    payload += static_cast<double>(cycles[i].payload);
  }
  // Time of a cycle = the slowest rank's (style.md "Benchmarks").
  MPI_Allreduce(local.data(), worst.data(), static_cast<int>(n), MPI_DOUBLE, MPI_MAX, j.comm);
  int v = ok, all_v = 0;
  MPI_Allreduce(&v, &all_v, 1, MPI_INT, MPI_LAND, j.comm);
  double sums[3] = {items, wire, payload}, tot[3] = {};
  MPI_Allreduce(sums, tot, 3, MPI_DOUBLE, MPI_SUM, j.comm);
  unsigned long long mb[2] = {memory, buffers}, mx[2] = {};
  MPI_Allreduce(mb, mx, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, j.comm);

  std::vector<double> sorted = worst;
  std::sort(sorted.begin(), sorted.end());
  r.reps = static_cast<int>(n);
  r.seconds = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  r.seconds_min = sorted.front();
  r.seconds_max = sorted.back();
  const double items_per_rank = tot[0] / static_cast<double>(n) / j.n_ranks;
  r.items_per_s_per_rank = r.seconds > 0 ? items_per_rank / r.seconds : 0;
  // A library that does not count its bytes (bale's MPI build reports 0) gets NaN: "na".
  r.header_bytes_per_item =
      tot[0] > 0 && (tot[1] > 0 || tot[2] == 0) ? (tot[1] - tot[2]) / tot[0] : std::nan("");
  r.memory_bytes_per_rank = mx[0];
  r.buffers_per_rank = mx[1];
  r.verified = all_v != 0;
  return r;
}

std::string result_line(const result_row& r, const job& j) {
  char buf[1024];
  if (!r.error.empty()) {
    std::snprintf(buf, sizeof buf,
                  "RESULT kernel=%s impl=%s kind=%s item_bytes=%zu ranks=%d nodes=%d "
                  "error=\"%s\" verified=0",
                  r.kernel.c_str(), j.impl.c_str(), r.kind.c_str(), r.item_bytes, r.ranks, r.nodes,
                  r.error.c_str());
    return buf;
  }
  // Injection bandwidth per node (seed 000 sec. 5): payload bytes pushed by the ranks of
  // a node / time from begin to reset.
  char header[32] = "na";
  if (!std::isnan(r.header_bytes_per_item))
    std::snprintf(header, sizeof header, "%.3f", r.header_bytes_per_item);
  const double node_bw = r.items_per_s_per_rank * static_cast<double>(r.item_bytes) *
                         static_cast<double>(j.ranks_per_node);
  std::snprintf(buf, sizeof buf,
                "RESULT kernel=%s impl=%s kind=%s item_bytes=%zu ranks=%d nodes=%d "
                "items_per_rank=%llu reps=%d seconds=%.6f seconds_min=%.6f seconds_max=%.6f "
                "items_per_s_per_rank=%.6g node_bw_bytes_per_s=%.6g header_bytes_per_item=%s "
                "buffers_per_rank=%zu buffer_bytes=%zu memory_bytes_per_rank=%zu verified=%d",
                r.kernel.c_str(), j.impl.c_str(), r.kind.c_str(), r.item_bytes, r.ranks, r.nodes,
                static_cast<unsigned long long>(r.items_per_rank), r.reps, r.seconds, r.seconds_min,
                r.seconds_max, r.items_per_s_per_rank, node_bw, header, r.buffers_per_rank,
                r.buffer_bytes, r.memory_bytes_per_rank, r.verified ? 1 : 0);
  return buf;
}

void print_table(const std::vector<result_row>& rows, const job& j, std::FILE* out) {
  if (j.rank != 0) return;
  std::fprintf(out, "%-13s %-10s %6s %16s %14s %9s\n", "kernel", "kind", "bytes",
               "items/s per rank", "memory/rank", "verified");
  for (const auto& r : rows) {
    if (!r.error.empty()) {
      std::fprintf(out, "%-13s %-10s %6zu  error: %s\n", r.kernel.c_str(), r.kind.c_str(),
                   r.item_bytes, r.error.c_str());
      continue;
    }
    char mem[32];
    const double m = static_cast<double>(r.memory_bytes_per_rank);
    if (m >= 1048576.0)
      std::snprintf(mem, sizeof mem, "%.1f MiB", m / 1048576.0);
    else
      std::snprintf(mem, sizeof mem, "%.1f KiB", m / 1024.0);
    std::fprintf(out, "%-13s %-10s %6zu %14.2f M %14s %9s\n", r.kernel.c_str(), r.kind.c_str(),
                 r.item_bytes, r.items_per_s_per_rank / 1e6, mem, r.verified ? "yes" : "NO");
  }
  std::fflush(out);
}

void write_json(const std::string& path, const std::vector<result_row>& rows, const job& j,
                int argc, char** argv) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("--json: cannot write '" + path + "'");
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(mpi, &len);
  std::string mpi_line(mpi, static_cast<std::size_t>(len));
  if (auto nl = mpi_line.find('\n'); nl != std::string::npos) mpi_line.resize(nl);
  for (auto& c : mpi_line)
    if (c == '"' || c == '\\') c = ' ';
  std::string cmd;
  for (int i = 0; i < argc; ++i) cmd += std::string(i ? " " : "") + argv[i];
  for (auto& c : cmd)
    if (c == '"' || c == '\\') c = ' ';
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  f << "{\n  \"context\": {\"date\": \"" << date << "\", \"host\": \"" << host << "\", \"git\": \""
    << CONVOY_BENCH_GIT << "\", \"impl\": \"" << j.impl << "\", \"mpi\": \"" << mpi_line
    << "\", \"ranks\": " << j.n_ranks << ", \"nodes\": " << j.n_nodes
    << ", \"ranks_per_node\": " << j.ranks_per_node << ", \"command\": \"" << cmd
    << "\"},\n  \"results\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    f << (i ? ",\n" : "\n") << "    {\"kernel\": \"" << r.kernel << "\", \"kind\": \"" << r.kind
      << "\", \"item_bytes\": " << r.item_bytes << ", \"items_per_rank\": " << r.items_per_rank
      << ", \"reps\": " << r.reps << ", \"seconds\": " << r.seconds
      << ", \"items_per_s_per_rank\": " << r.items_per_s_per_rank << ", \"node_bw_bytes_per_s\": "
      << r.items_per_s_per_rank * static_cast<double>(r.item_bytes) * j.ranks_per_node
      << ", \"header_bytes_per_item\": "
      << (std::isnan(r.header_bytes_per_item) ? std::string("null")
                                              : std::to_string(r.header_bytes_per_item))
      << ", \"buffers_per_rank\": " << r.buffers_per_rank
      << ", \"buffer_bytes\": " << r.buffer_bytes
      << ", \"memory_bytes_per_rank\": " << r.memory_bytes_per_rank
      << ", \"verified\": " << (r.verified ? "true" : "false") << ", \"error\": \""
      << json_text(r.error) << "\"}";
  }
  f << "\n  ]\n}\n";
}

void init_mpi(int& argc, char**& argv) {
#if CONVOY_BENCH_BALE_MPI
  argc = xmpi_init(argc, argv);
#else
  MPI_Init(&argc, &argv);
#endif
}

void finalize_mpi() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}

}  // namespace convoy::bench
