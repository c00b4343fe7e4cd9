// The shared harness of the benchmark programs: the job (its ranks and nodes, emulated or
// real), MPI's start and end, and the check of the kinds asked for. What a run reports is
// in report.cpp.
#include "harness.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#ifndef CONVOY_BENCH_IMPL
#define CONVOY_BENCH_IMPL "convoy"
#endif

#if CONVOY_BENCH_BALE_MPI
// bale's MPI build keeps its rank and size in globals that xmpi_init sets.
extern "C" int xmpi_init(int argc, char* argv[]);
#endif

namespace convoy::bench {

namespace {

// CONVOY_EMULATE_NODES "4,2,3" -> node sizes. The benchmark programs must also build
// against another convey.h library, so they read the variable themselves, with the
// meaning convoy gives it (topology/README.md): nodes of these sizes, block placement, or
// round-robin placement with CONVOY_EMULATE_MAP=cyclic.
std::vector<int> emulated_sizes(const std::string& text, int n_ranks) {
  std::vector<int> sizes;
  long sum = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, end - start);
    char* stop = nullptr;
    const long v = std::strtol(part.c_str(), &stop, 10);
    if (part.empty() || *stop != '\0' || v < 1 || v > n_ranks)
      throw std::runtime_error("CONVOY_EMULATE_NODES='" + text +
                               "': expected node sizes such as 2,2 (positive integers)");
    sizes.push_back(static_cast<int>(v));
    sum += v;
    start = end + 1;
  }
  if (sum != n_ranks)
    throw std::runtime_error("CONVOY_EMULATE_NODES='" + text + "': the sizes add up to " +
                             std::to_string(sum) + ", the job has " + std::to_string(n_ranks) +
                             " ranks");
  return sizes;
}

// The emulated node of every rank (topology's placement rules).
int emulated_node_of(const std::vector<int>& sizes, int rank, bool cyclic) {
  std::vector<int> room = sizes;
  int node = 0;
  for (int r = 0;; ++r) {
    if (!cyclic) {
      while (room[static_cast<std::size_t>(node)] == 0) ++node;
    } else {
      while (room[static_cast<std::size_t>(node)] == 0)
        node = (node + 1) % static_cast<int>(sizes.size());
    }
    if (r == rank) return node;
    --room[static_cast<std::size_t>(node)];
    if (cyclic) node = (node + 1) % static_cast<int>(sizes.size());
  }
}

}  // namespace

job describe_job(MPI_Comm comm) {
  job j;
  j.comm = comm;
  MPI_Comm_rank(comm, &j.rank);
  MPI_Comm_size(comm, &j.n_ranks);
  j.impl = CONVOY_BENCH_IMPL;
  // Rank 0's environment, as convoy's settings do.
  std::string emulate;
  if (const char* e = std::getenv("CONVOY_EMULATE_NODES")) emulate = e;
  std::string map;
  if (const char* e = std::getenv("CONVOY_EMULATE_MAP")) map = e;
  for (std::string* s : {&emulate, &map}) {
    unsigned long len = s->size();
    MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG, 0, comm);
    s->resize(len);
    MPI_Bcast(s->data(), static_cast<int>(len), MPI_CHAR, 0, comm);
  }
  int min_size = 0, max_size = 0;
  if (!emulate.empty()) {
    const std::vector<int> sizes = emulated_sizes(emulate, j.n_ranks);
    j.emulate_nodes = emulate;
    j.n_nodes = static_cast<int>(sizes.size());
    j.ranks_per_node =
        sizes[static_cast<std::size_t>(emulated_node_of(sizes, j.rank, map == "cyclic"))];
    for (int r = 0; r < j.n_ranks; ++r)
      j.rank_node.push_back(emulated_node_of(sizes, r, map == "cyclic"));
    min_size = *std::min_element(sizes.begin(), sizes.end());
    max_size = *std::max_element(sizes.begin(), sizes.end());
  } else {
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_rank = 0;
    MPI_Comm_size(node, &j.ranks_per_node);
    MPI_Comm_rank(node, &node_rank);
    // A node is numbered by the order of its lowest rank.
    int lowest = j.rank;
    MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    std::vector<int> lowest_of(static_cast<std::size_t>(j.n_ranks));
    MPI_Allgather(&lowest, 1, MPI_INT, lowest_of.data(), 1, MPI_INT, comm);
    std::vector<int> id_of(static_cast<std::size_t>(j.n_ranks), 0);
    int next = 0;
    for (int r = 0; r < j.n_ranks; ++r) {
      const auto l = static_cast<std::size_t>(lowest_of[static_cast<std::size_t>(r)]);
      if (l == static_cast<std::size_t>(r)) id_of[l] = next++;  // l <= r: numbered already
      j.rank_node.push_back(id_of[l]);
    }
    int leader = node_rank == 0;
    MPI_Allreduce(&leader, &j.n_nodes, 1, MPI_INT, MPI_SUM, comm);
    MPI_Allreduce(&j.ranks_per_node, &min_size, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(&j.ranks_per_node, &max_size, 1, MPI_INT, MPI_MAX, comm);
  }
  j.uniform_ranks_per_node = min_size == max_size && j.n_ranks % min_size == 0 ? min_size : 1;
  return j;
}

std::string transport_field(const std::string& kind) {
  const char* t = std::getenv("CONVOY_TRANSPORT");
  return std::string(" transport=") + (kind == "conveyor" ? (t ? t : "auto") : "-");
}

void check_memory(const char* option, std::uint64_t value, std::uint64_t bytes_per_rank,
                  const job& j) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(j.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 1;
  MPI_Comm_size(node, &local);
  MPI_Comm_free(&node);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const double have = pages > 0 && page > 0 ? static_cast<double>(pages) * page : 0;
  const double need = static_cast<double>(bytes_per_rank) * local;
  // The worst machine of the job decides, and every rank says the same.
  const double mine[2] = {have > 0 ? need / have : 0, static_cast<double>(local)};
  double worst[2] = {};
  MPI_Allreduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, j.comm);
  if (worst[0] <= 1.0) return;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  char text[256];
  std::snprintf(text, sizeof text,
                "%s %llu: %.1f GiB per rank; with up to %d ranks on a machine that is %.0f%% of "
                "its memory (this one has %.1f GiB)",
                option, static_cast<unsigned long long>(value), bytes_per_rank / gib,
                static_cast<int>(worst[1]), 100.0 * worst[0], have / gib);
  throw std::runtime_error(text);
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

void check_kinds(const std::vector<std::string>& kinds, const std::vector<std::string>& known) {
  for (const std::string& k : kinds) {
    if (std::find(known.begin(), known.end(), k) != known.end()) continue;
    std::string what = "unknown kind '";
    what += k;
    what += "' (kinds:";
    for (const std::string& n : known) {
      what += ' ';
      what += n;
    }
    what += ')';
    throw std::runtime_error(what);
  }
}

}  // namespace convoy::bench
