// What a benchmark run reports (bench/README.md "Output"): a configuration's row from its
// timed cycles (the maximum over ranks), the wire bound of shaped links, the RESULT line,
// the table and the JSON file with its context.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "harness.hpp"

#ifndef CONVOY_BENCH_GIT
#define CONVOY_BENCH_GIT "unknown"
#endif

namespace convoy::bench {

namespace {

double link_rate_bits(const std::string& text) {
  // A tc rate (1gbit, 250mbit, 100kbit) or a number of bits per second; 0 if neither.
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || v <= 0) return 0;
  const std::string unit(end);
  if (unit.empty() || unit == "bit") return v;
  if (unit == "kbit") return v * 1e3;
  if (unit == "mbit") return v * 1e6;
  if (unit == "gbit") return v * 1e9;
  return 0;
}

double node_link_rate_bits() {
  const char* rates = std::getenv("CONVOY_LINK_RATES");
  if (!rates || !*rates) return 0;
  std::vector<std::string> list;
  std::string item;
  for (const char* p = rates;; ++p) {
    if (*p == ',' || *p == '\0') {
      list.push_back(item);
      item.clear();
      if (*p == '\0') break;
    } else {
      item += *p;
    }
  }
  if (list.size() == 1) return link_rate_bits(list.front());
  // One rate per node: tools/cluster names node i's host "<cluster>-node<i>".
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const char* tail = std::strstr(host, "-node");
  if (!tail) return 0;
  const auto i = static_cast<std::size_t>(std::strtoul(tail + 5, nullptr, 10));
  return i < list.size() ? link_rate_bits(list[i]) : 0;
}

double wire_bound(double payload_per_cycle, double items_per_rank, const job& j) {
  // Collective. Each node's off-node payload: its ranks' payload to other ranks, the share
  // (P - K) / (P - 1) of it leaving the node when destinations are uniform; over its rate.
  const auto nodes = static_cast<std::size_t>(std::max(j.n_nodes, 1));
  std::vector<double> mine(2 * nodes, 0.0), all(2 * nodes, 0.0);
  const auto node = static_cast<std::size_t>(
      j.rank_node.empty() ? 0 : j.rank_node[static_cast<std::size_t>(j.rank)]);
  if (node < nodes) {
    mine[node] = payload_per_cycle;
    mine[nodes + node] = node_link_rate_bits();
  }
  MPI_Allreduce(mine.data(), all.data(), static_cast<int>(2 * nodes), MPI_DOUBLE, MPI_SUM, j.comm);
  const double p = j.n_ranks;
  double slowest = 0;
  for (std::size_t n = 0; n < nodes; ++n) {
    double k = 0;
    for (const int rn : j.rank_node) k += static_cast<std::size_t>(rn) == n ? 1 : 0;
    if (k <= 0 || p <= 1) continue;
    const double rate = all[nodes + n] / k / 8.0;  // bytes/s: every rank of it added its rate
    if (rate <= 0) return 0;
    slowest = std::max(slowest, all[n] * (p - k) / (p - 1) / rate);
  }
  return slowest > 0 ? items_per_rank / slowest : 0;
}

}  // namespace

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
  double offnode = 0;
  for (const cycle_measure& c : cycles) offnode += static_cast<double>(c.offnode);
  double sums[4] = {items, wire, payload, offnode}, tot[4] = {};
  MPI_Allreduce(sums, tot, 4, MPI_DOUBLE, MPI_SUM, j.comm);
  unsigned long long mb[2] = {memory, buffers}, mx[2] = {};
  MPI_Allreduce(mb, mx, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, j.comm);

  std::vector<double> sorted = worst;
  std::sort(sorted.begin(), sorted.end());
  r.reps = static_cast<int>(n);
  r.seconds = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  r.seconds_min = sorted.front();
  r.seconds_max = sorted.back();
  const double items_per_rank = tot[0] / static_cast<double>(n) / j.n_ranks;
  r.items_per_rank = static_cast<std::uint64_t>(std::llround(items_per_rank));
  r.items_per_s_per_rank = r.seconds > 0 ? items_per_rank / r.seconds : 0;
  // A library that does not count its bytes (bale's MPI build reports 0) gets NaN: "na".
  r.header_bytes_per_item =
      tot[0] > 0 && (tot[1] > 0 || tot[2] == 0) ? (tot[1] - tot[2]) / tot[0] : std::nan("");
  // A kind that does not count them reports -1 on every rank (and every cycle).
  r.offnode_bytes = n > 0 && cycles.front().offnode >= 0 ? tot[3] / static_cast<double>(n) : -1;
  r.memory_bytes_per_rank = mx[0];
  r.buffers_per_rank = mx[1];
  r.verified = all_v != 0;
  r.wire_bound_items_per_s_per_rank =
      wire_bound(payload / static_cast<double>(std::max<std::size_t>(n, 1)), items_per_rank, j);
  return r;
}

std::string result_line(const result_row& r) {
  char buf[1024];
  if (!r.error.empty()) {
    // One line, one quoted field: the exact message is in the JSON rows.
    std::string message = r.error;
    for (auto& c : message)
      if (c == '"' || static_cast<unsigned char>(c) < 0x20) c = c == '"' ? '\'' : ' ';
    std::snprintf(buf, sizeof buf,
                  "RESULT kernel=%s impl=%s kind=%s item_bytes=%zu ranks=%d nodes=%d "
                  "error=\"%s\" verified=0",
                  r.kernel.c_str(), r.impl.c_str(), r.kind.c_str(), r.item_bytes, r.ranks, r.nodes,
                  message.c_str());
    return buf;
  }
  char header[32] = "na";
  if (!std::isnan(r.header_bytes_per_item))
    std::snprintf(header, sizeof header, "%.3f", r.header_bytes_per_item);
  std::snprintf(buf, sizeof buf,
                "RESULT kernel=%s impl=%s kind=%s item_bytes=%zu ranks=%d nodes=%d "
                "items_per_rank=%llu reps=%d seconds=%.6f seconds_min=%.6f seconds_max=%.6f "
                "items_per_s_per_rank=%.6g node_bw_bytes_per_s=%.6g header_bytes_per_item=%s "
                "buffers_per_rank=%zu buffer_bytes=%zu memory_bytes_per_rank=%zu verified=%d",
                r.kernel.c_str(), r.impl.c_str(), r.kind.c_str(), r.item_bytes, r.ranks, r.nodes,
                static_cast<unsigned long long>(r.items_per_rank), r.reps, r.seconds, r.seconds_min,
                r.seconds_max, r.items_per_s_per_rank, r.node_bw_bytes_per_s, header,
                r.buffers_per_rank, r.buffer_bytes, r.memory_bytes_per_rank, r.verified ? 1 : 0);
  std::string line = buf;
  if (r.n_local) line += " n_local=" + std::to_string(r.n_local);
  if (r.skew > 0) {
    std::snprintf(buf, sizeof buf, " skew=%g", r.skew);
    line += buf;
  }
  if (r.offnode_bytes >= 0) {
    std::snprintf(buf, sizeof buf, " offnode_bytes=%.0f", r.offnode_bytes);
    line += buf;
  }
  if (r.wire_bound_items_per_s_per_rank > 0) {
    std::snprintf(buf, sizeof buf, " wire_bound=%.6g wire_fraction=%.3f",
                  r.wire_bound_items_per_s_per_rank,
                  r.items_per_s_per_rank / r.wire_bound_items_per_s_per_rank);
    line += buf;
  }
  return line;
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
  run_results out;
  run_context& c = out.context;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  c.host = host;
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(mpi, &len);
  c.mpi.assign(mpi, static_cast<std::size_t>(len));
  // The first line, without the terminating NUL that some MPIs count in len.
  if (auto end = c.mpi.find_first_of(std::string("\n\0", 2)); end != std::string::npos)
    c.mpi.resize(end);
  for (int i = 0; i < argc; ++i) c.command += std::string(i ? " " : "") + argv[i];
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  c.date = date;
  c.git = CONVOY_BENCH_GIT;
  c.impl = j.impl;
  c.ranks = j.n_ranks;
  c.nodes = j.n_nodes;
  c.ranks_per_node = j.ranks_per_node;
  c.emulate_nodes = j.emulate_nodes;
  if (const char* t = std::getenv("CONVOY_TRANSPORT")) c.transport = t;
  // mpirun passes --mca btl as OMPI_MCA_btl to every process.
  if (const char* b = std::getenv("OMPI_MCA_btl")) c.btl = b;
  if (const char* cl = std::getenv("CONVOY_CLUSTER")) c.cluster = cl;
  out.rows = rows;
  try {
    write_results_file(path, out);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--json: ") + e.what());
  }
}

void print_result(const result_row& r, const std::string& extra, const options& opt, const job& j) {
  if (j.rank != 0 || opt.quiet) return;
  std::printf("%s%s\n", result_line(r).c_str(), extra.c_str());
  std::fflush(stdout);
}

void finish_rows(const std::vector<result_row>& rows, const options& opt, const job& j, int argc,
                 char** argv) {
  if (opt.table_output) print_table(rows, j, stdout);
  if (!opt.json.empty() && j.rank == 0) write_json(opt.json, rows, j, argc, argv);
}

result_row program_row(const char* kernel, const std::string& kind, std::size_t item_bytes,
                       std::size_t pushed_bytes, const std::vector<cycle_measure>& cycles,
                       std::size_t memory, const job& j) {
  result_row row = collect(cycles, memory, 0, j);
  row.kernel = kernel;
  row.impl = j.impl;
  row.kind = kind;
  row.item_bytes = item_bytes;
  row.ranks = j.n_ranks;
  row.nodes = j.n_nodes;
  row.header_bytes_per_item = std::nan("");  // not counted
  row.node_bw_bytes_per_s = row.items_per_s_per_rank * static_cast<double>(pushed_bytes) *
                            static_cast<double>(j.ranks_per_node);
  return row;
}

}  // namespace convoy::bench
