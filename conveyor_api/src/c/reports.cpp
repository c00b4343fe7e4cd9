// Usage errors reported once per job (reports.hpp, CAPI-9).
#include "reports.hpp"

#include <mpi.h>

#include <algorithm>
#include <convoy/base/comm_cache.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <utility>
#include <vector>

#include "facade.hpp"

namespace convoy::facade {

namespace {

constexpr int line_tag = 7;
constexpr std::size_t header_bytes = 12;  // [int64 conveyor number][int32 code]

void print_line(const std::string& line) noexcept {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

std::mutex g_mutex;                            // guards everything below and the board's members
std::int64_t g_constructions = 0;              // the last construction's number
std::map<const void*, std::int64_t> g_number;  // conveyor -> its construction's number
std::vector<std::string> g_unconfirmed;        // lines sent to PE 0 before MPI_Finalize

// A PE other than 0 that exits without MPI_Finalize prints the lines it sent: PE 0 may
// never have drained them. (A program whose MPI the façade owns finalizes at exit.)
void print_unconfirmed_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || owns_mpi()) return;
  const std::lock_guard<std::mutex> hold(g_mutex);
  for (const std::string& line : g_unconfirmed) print_line(line);
  g_unconfirmed.clear();
}

class report_board {
 public:
  report_board() {
    if (MPI_Comm_dup(MPI_COMM_WORLD, &comm_) != MPI_SUCCESS) throw std::bad_alloc();
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &me_);
    if (me_ != 0) std::atexit(print_unconfirmed_at_exit);
  }
  // At MPI_Finalize on every PE (base::comm_cache): the lines still on their way reach PE 0.
  ~report_board() {
    const std::lock_guard<std::mutex> hold(g_mutex);
    for (auto& s : sends_) MPI_Wait(&s.first, MPI_STATUS_IGNORE);
    std::int64_t total = 0;
    MPI_Reduce(&sent_, &total, 1, MPI_INT64_T, MPI_SUM, 0, comm_);
    while (me_ == 0 && received_ < total) take(true);
    g_unconfirmed.clear();
    MPI_Comm_free(&comm_);
  }
  report_board(const report_board&) = delete;
  report_board& operator=(const report_board&) = delete;

  // Under g_mutex.
  void report(std::int64_t number, int code, const std::string& line) {
    if (!claimed_.insert({number, code}).second) return;
    if (me_ == 0) {
      print_line(line);
      return;
    }
    std::vector<char> msg(header_bytes + line.size());
    const auto c32 = static_cast<std::int32_t>(code);
    std::memcpy(msg.data(), &number, 8);
    std::memcpy(msg.data() + 8, &c32, 4);
    std::memcpy(msg.data() + header_bytes, line.data(), line.size());
    sends_.emplace_back(MPI_REQUEST_NULL, std::move(msg));
    auto& s = sends_.back();
    if (MPI_Isend(s.second.data(), static_cast<int>(s.second.size()), MPI_BYTE, 0, line_tag, comm_,
                  &s.first) != MPI_SUCCESS) {
      sends_.pop_back();
      print_line(line);  // never lost
      return;
    }
    ++sent_;
    g_unconfirmed.push_back(line);
  }

  // Under g_mutex.
  void drain() {
    if (me_ == 0) {
      while (take(false)) {
      }
      return;
    }
    std::erase_if(sends_, [](auto& s) {
      int done = 0;
      return MPI_Test(&s.first, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done != 0;
    });
  }

 private:
  // PE 0: receives one line (waiting for it if `wait`) and prints it if it is the first of
  // its (conveyor, code). False if none had arrived.
  bool take(bool wait) {
    MPI_Status st;
    int flag = 1;
    if (wait) {
      if (MPI_Probe(MPI_ANY_SOURCE, line_tag, comm_, &st) != MPI_SUCCESS) return false;
    } else if (MPI_Iprobe(MPI_ANY_SOURCE, line_tag, comm_, &flag, &st) != MPI_SUCCESS || !flag) {
      return false;
    }
    int bytes = 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    std::vector<char> msg(static_cast<std::size_t>(std::max(bytes, 0)));
    MPI_Recv(msg.data(), bytes, MPI_BYTE, st.MPI_SOURCE, line_tag, comm_, MPI_STATUS_IGNORE);
    ++received_;
    if (msg.size() < header_bytes) return true;
    std::int64_t number = 0;
    std::int32_t code = 0;
    std::memcpy(&number, msg.data(), 8);
    std::memcpy(&code, msg.data() + 8, 4);
    if (claimed_.insert({number, code}).second)
      print_line(std::string(msg.data() + header_bytes, msg.size() - header_bytes));
    return true;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int me_ = 0;
  std::set<std::pair<std::int64_t, int>> claimed_;  // PE 0: printed; others: sent
  std::vector<std::pair<MPI_Request, std::vector<char>>> sends_;
  std::int64_t sent_ = 0;
  std::int64_t received_ = 0;
};

constexpr const char* board_key = "convoy.facade.reports";

std::shared_ptr<report_board> the_board() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return nullptr;
  return base::comm_cached_as<report_board>(MPI_COMM_WORLD, board_key);
}

unsigned g_advances = 0;

}  // namespace

void open_reports() noexcept {
  try {
    {
      const std::lock_guard<std::mutex> hold(g_mutex);
      ++g_constructions;
    }
    if (!base::comm_cached(MPI_COMM_WORLD, board_key))
      base::comm_cache(MPI_COMM_WORLD, board_key, std::make_shared<report_board>());
    drain_reports();
  } catch (...) {  // no board: every PE prints its own reports
  }
}

void name_conveyor(const void* c) noexcept {
  try {
    const std::lock_guard<std::mutex> hold(g_mutex);
    g_number[c] = g_constructions;  // a freed conveyor's address may come back: renamed
  } catch (...) {
  }
}

void report(const void* c, int code, const std::string& line) noexcept {
  try {
    const auto board = the_board();
    const std::lock_guard<std::mutex> hold(g_mutex);
    if (!board) {
      print_line(line);
      return;
    }
    std::int64_t number = 0;
    if (auto it = g_number.find(c); it != g_number.end()) number = it->second;
    board->drain();
    board->report(number, code, line);
  } catch (...) {
    print_line(line);
  }
}

void drain_reports() noexcept {
  try {
    if (const auto board = the_board()) {
      const std::lock_guard<std::mutex> hold(g_mutex);
      board->drain();
    }
  } catch (...) {
  }
}

void drain_reports_sometimes() noexcept {
  if ((++g_advances & 63U) == 0) drain_reports();
}

}  // namespace convoy::facade
