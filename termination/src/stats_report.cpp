// CONVOY_STATS: one JSON document per job, rewritten by rank 0 at each conveyor's
// destruction (docs/stats-format.md, API-30). Per-rank rows travel as JSON text (one
// MPI_Gather of lengths, one MPI_Gatherv of bytes), off every hot path.
#include "stats_report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <convoy/aggregation/node_map.hpp>
#include <convoy/base/error.hpp>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace convoy::termination::detail {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// The per-rank scalar counters of a row, reduced over ranks.
const char* const scalar_names[] = {"pushes",           "pulls",
                                    "advances",         "advance_seconds",
                                    "cycle_seconds",    "memory_high_water",
                                    "credit_stalls",    "items_forwarded",
                                    "buffers_sent",     "bytes_sent",
                                    "buffers_received", "begins",
                                    "unpulls",          "collectives",
                                    "combined",         "combine_stops"};

// Who writes the document: rank 0's process, named by host, process id and start time
// (clock ticks after boot). A program can hold convoy twice (the C++ components linked
// statically and libconvey.so); both copies name the same process and extend one document,
// where a document of another job is replaced.
struct writer_process {
  std::string job;
  double start_seconds = 0;  ///< the process's start on CLOCK_BOOTTIME
};

double boot_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_BOOTTIME, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

writer_process read_writer_process() {
  writer_process w;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string start_ticks;
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (std::getline(stat, line)) {
    // Field 22 (starttime) counts from the field after the command's closing parenthesis.
    std::istringstream rest(line.substr(line.rfind(')') + 1));
    std::string field;
    for (int k = 3; k <= 22 && rest >> field; ++k)
      if (k == 22) start_ticks = field;
  }
  const long hz = ::sysconf(_SC_CLK_TCK);
  if (!start_ticks.empty() && hz > 0)
    w.start_seconds = std::stod(start_ticks) / static_cast<double>(hz);
  else
    w.start_seconds = boot_seconds();
  w.job = std::string(host) + ':' + std::to_string(::getpid()) + ':' + start_ticks;
  return w;
}

const writer_process& writer() {
  static const writer_process w = read_writer_process();
  return w;
}

std::mutex document_lock;  // one writer per copy of convoy at a time

// Rank 0 prints each distinct failure once per job (a document that cannot be written
// fails again at every later destruction).
void print_once(int rank, const std::string& what) noexcept {
  static std::vector<std::string> printed;
  if (rank != 0) return;
  try {
    if (std::find(printed.begin(), printed.end(), what) != printed.end()) return;
    printed.push_back(what);
    std::cerr << "convoy: " << what << '\n';
  } catch (...) {  // nothing more to report with
  }
}

std::string directory_problem(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(fs::path(path), ec)) return "is a directory, not a file";
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec)) return "directory '" + dir.string() + "' does not exist";
  if (::access(dir.c_str(), W_OK) != 0) return "directory '" + dir.string() + "' is not writable";
  return {};
}

// The node of every rank of `comm`: topology discovery's (emulated nodes), else the
// shared-memory groups numbered by their lowest rank's order.
std::vector<int> node_of_ranks(MPI_Comm comm, const base::settings& s) {
  aggregation::node_map nodes = aggregation::discover_node_map(comm, s);
  if (!nodes.empty()) return nodes;
  int rank = 0, size = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  CONVOY_MPI_CHECK(MPI_Comm_size(comm, &size));
  MPI_Comm shared = MPI_COMM_NULL;
  CONVOY_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
  int leader = rank;
  CONVOY_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shared));
  MPI_Comm_free(&shared);
  std::vector<int> leaders(static_cast<std::size_t>(size));
  CONVOY_MPI_CHECK(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm));
  std::vector<int> order;  // leaders in rank order of first appearance
  for (int l : leaders)
    if (std::find(order.begin(), order.end(), l) == order.end()) order.push_back(l);
  for (int& l : leaders)
    l = static_cast<int>(std::find(order.begin(), order.end(), l) - order.begin());
  return leaders;
}

json link_row(const termination::link_stats& l, const std::vector<int>& nodes) {
  return {{"peer", l.peer},
          {"peer_node", nodes.at(static_cast<std::size_t>(l.peer))},
          {"items_sent", l.items_sent},
          {"bytes_sent", l.bytes_sent},
          {"buffers_full", l.buffers_full},
          {"buffers_partial", l.buffers_partial},
          {"credit_stalls", l.credit_stalls},
          {"items_received", l.items_received},
          {"bytes_received", l.bytes_received},
          {"buffers_received", l.buffers_received},
          {"combined", l.combined},
          {"combine_stops", l.combine_stops},
          {"combine_ns_per_record", l.combine_ns_per_record},
          {"combine_saved_ns", l.combine_saved_ns}};
}

json rank_row(int rank, const stats_entry& e, const std::vector<int>& nodes) {
  const termination::engine_stats& s = e.life;
  json stages = json::array();
  for (std::size_t k = 0; k < s.stages.size(); ++k) {
    const auto& st = s.stages[k];
    json links = json::array();
    for (const auto& l : st.links) links.push_back(link_row(l, nodes));
    stages.push_back({{"stage", k},
                      {"dimension", k < e.stage_dimension.size() ? e.stage_dimension[k] : -1},
                      {"items", st.items},
                      {"buffers", st.buffers},
                      {"bytes", st.bytes},
                      {"links", std::move(links)}});
  }
  return {{"rank", rank},
          {"node", nodes.at(static_cast<std::size_t>(rank))},
          {"pushes", s.pushes},
          {"pulls", s.pulls},
          {"advances", s.advances},
          {"advance_seconds", s.advance_seconds},
          {"cycle_seconds", s.cycle_seconds},
          {"memory_high_water", s.memory_high_water},
          {"credit_stalls", s.credit_stalls},
          {"items_forwarded", s.items_forwarded},
          {"buffers_sent", s.buffers_sent},
          {"bytes_sent", s.bytes_sent},
          {"buffers_received", s.buffers_received},
          {"begins", s.begins},
          {"unpulls", s.unpulls},
          {"collectives", s.collectives},
          {"combined", s.combined},
          {"combine_stops", s.combine_stops},
          {"combine_record_ns", s.combine_record_ns},
          {"combine_use_ns", s.combine_use_ns},
          {"stages", std::move(stages)}};
}

// min, (lower) median, max and sum of `name` over the rows.
json reduce(const json& rows, const char* name) {
  std::vector<json> v;
  for (const auto& r : rows) v.push_back(r.at(name));
  std::sort(v.begin(), v.end());
  json sum = 0;
  if (!v.empty() && v.front().is_number_float()) {
    double t = 0;
    for (const auto& x : v) t += x.get<double>();
    sum = t;
  } else {
    std::uint64_t t = 0;
    for (const auto& x : v) t += x.get<std::uint64_t>();
    sum = t;
  }
  if (v.empty()) return {{"min", 0}, {"median", 0}, {"max", 0}, {"sum", 0}};
  return {{"min", v.front()}, {"median", v[(v.size() - 1) / 2]}, {"max", v.back()}, {"sum", sum}};
}

json conveyor_json(const stats_entry& e, json rows) {
  json reduced = json::object();
  for (const char* n : scalar_names) reduced[n] = reduce(rows, n);
  return {{"index", 0},
          {"created_seconds", e.created_seconds},
          {"api", e.api},
          {"kind", e.kind},
          {"mesh", e.mesh},
          {"stage_dimension", e.stage_dimension},
          {"item_bytes", e.item_bytes},
          {"buffer_bytes", e.buffer_bytes},
          {"n_buffers", e.n_buffers},
          {"cycles", e.life.begins},
          {"reduced", std::move(reduced)},
          {"per_rank", std::move(rows)}};
}

// The conveyors of the document at `path` if this process wrote it, else none.
json conveyors_of_this_job(const std::string& path, std::size_t ranks) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return json::array();
  const json old = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!old.is_object() || old.value("job", std::string()) != writer().job ||
      old.value("ranks", std::size_t{0}) != ranks || !old.contains("conveyors") ||
      !old["conveyors"].is_array())
    return json::array();
  return old["conveyors"];
}

// Rank 0: adds the conveyor to the document and rewrites it whole (temporary file, rename).
void write_document(const std::string& path, const std::vector<int>& nodes, json conveyor) {
  const std::lock_guard<std::mutex> hold(document_lock);
  json conveyors = conveyors_of_this_job(path, nodes.size());
  conveyors.push_back(std::move(conveyor));
  std::stable_sort(conveyors.begin(), conveyors.end(), [](const json& a, const json& b) {
    return a.value("created_seconds", 0.0) < b.value("created_seconds", 0.0);
  });
  std::size_t index = 0;
  for (json& c : conveyors) c["index"] = index++;
  int n_nodes = 0;
  for (int n : nodes) n_nodes = std::max(n_nodes, n + 1);
  const json doc = {{"format", "convoy-stats"},
                    {"version", 1},
                    {"job", writer().job},
                    {"ranks", nodes.size()},
                    {"nodes", n_nodes},
                    {"rank_node", nodes},
                    {"conveyors", std::move(conveyors)}};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << doc.dump(1) << '\n';
    out.close();
    if (!out) throw error("CONVOY_STATS='" + path + "': cannot write '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw error("CONVOY_STATS='" + path + "': cannot replace it: " + why);
  }
}

}  // namespace

double open_stats_report(MPI_Comm comm, const base::settings& s) {
  if (!s.stats_path) return 0;
  int rank = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::string problem = rank == 0 ? directory_problem(*s.stats_path) : std::string();
  int n = static_cast<int>(problem.size());
  CONVOY_MPI_CHECK(MPI_Bcast(&n, 1, MPI_INT, 0, comm));
  problem.resize(static_cast<std::size_t>(n));
  CONVOY_MPI_CHECK(MPI_Bcast(problem.data(), n, MPI_CHAR, 0, comm));
  if (n > 0) throw error("CONVOY_STATS='" + *s.stats_path + "': " + problem);
  return boot_seconds() - writer().start_seconds;
}

void record_stats(MPI_Comm comm, const base::settings& s, const stats_entry& e) noexcept {
  if (!s.stats_path) return;
  int rank = 0;
  try {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    int size = 0;
    CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    CONVOY_MPI_CHECK(MPI_Comm_size(comm, &size));
    const std::vector<int> nodes = node_of_ranks(comm, s);
    const std::string row = rank_row(rank, e, nodes).dump();
    int len = static_cast<int>(row.size());
    std::vector<int> lens(rank == 0 ? static_cast<std::size_t>(size) : 0);
    CONVOY_MPI_CHECK(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm));
    std::vector<int> at(lens.size());
    std::string all;
    if (rank == 0) {
      std::size_t total = 0;
      for (std::size_t r = 0; r < lens.size(); ++r) {
        at[r] = static_cast<int>(total);
        total += static_cast<std::size_t>(lens[r]);
      }
      all.resize(total);
    }
    CONVOY_MPI_CHECK(MPI_Gatherv(row.data(), len, MPI_CHAR, all.data(), lens.data(), at.data(),
                                 MPI_CHAR, 0, comm));
    if (rank != 0) return;
    json rows = json::array();
    for (std::size_t r = 0; r < lens.size(); ++r)
      rows.push_back(json::parse(
          all.substr(static_cast<std::size_t>(at[r]), static_cast<std::size_t>(lens[r]))));
    write_document(*s.stats_path, nodes, conveyor_json(e, std::move(rows)));
  } catch (const std::exception& ex) {
    print_once(rank, ex.what());
  } catch (...) {
    print_once(rank, "CONVOY_STATS: unknown failure");
  }
}

}  // namespace convoy::termination::detail
