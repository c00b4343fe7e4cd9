// Usage errors reported once per job (reports.hpp, CAPI-9).
#include "reports.hpp"

#include <mpi.h>

#include <convoy/base/comm_cache.hpp>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

namespace convoy::facade {

namespace {

// PE 0 holds one 64-bit flag per (conveyor slot, code): the number of the last conveyor
// whose error of that code was claimed, plus 1. A claim raises it with MPI_MAX and prints
// only if the value before was lower, so each conveyor's error is printed once however
// many PEs meet it; conveyors 64 constructions apart share a slot (the younger wins).
constexpr int n_conveyor_slots = 64;
constexpr int n_codes = 16;  // bale's codes -1..-14 and one for any other
constexpr int n_flags = n_conveyor_slots * n_codes;

class report_window {
 public:
  report_window() {
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const MPI_Aint bytes = me == 0 ? MPI_Aint{n_flags} * 8 : 0;
    void* base = nullptr;
    if (MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win_) != MPI_SUCCESS) {
      win_ = MPI_WIN_NULL;
      return;
    }
    if (me == 0) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win_);
      std::memset(base, 0, static_cast<std::size_t>(bytes));
      MPI_Win_unlock(0, win_);
    }
    MPI_Barrier(MPI_COMM_WORLD);  // zeroed before any claim
  }
  ~report_window() {
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
  }
  report_window(const report_window&) = delete;
  report_window& operator=(const report_window&) = delete;

  [[nodiscard]] bool claim(int flag, std::int64_t value) noexcept {
    if (win_ == MPI_WIN_NULL) return true;
    std::int64_t before = 0;
    if (MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win_) != MPI_SUCCESS) return true;
    const int rc = MPI_Fetch_and_op(&value, &before, MPI_INT64_T, 0, flag, MPI_MAX, win_);
    MPI_Win_unlock(0, win_);
    return rc != MPI_SUCCESS || before < value;
  }

 private:
  MPI_Win win_ = MPI_WIN_NULL;
};

constexpr const char* window_key = "convoy.facade.reports";

std::mutex g_mutex;
std::int64_t g_constructions = 0;              // the last construction's number
std::map<const void*, std::int64_t> g_number;  // conveyor -> its construction's number

}  // namespace

void open_reports() noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    ++g_constructions;
    if (!base::comm_cached(MPI_COMM_WORLD, window_key))
      base::comm_cache(MPI_COMM_WORLD, window_key, std::make_shared<report_window>());
  } catch (...) {  // no window: every PE prints its own reports
  }
}

void name_conveyor(const void* c) noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_number[c] = g_constructions;  // a freed conveyor's address may come back: renamed
  } catch (...) {
  }
}

bool claim_report(const void* c, int code) noexcept {
  try {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return true;
    std::int64_t number = 0;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      if (auto it = g_number.find(c); it != g_number.end()) number = it->second;
    }
    const auto w = base::comm_cached_as<report_window>(MPI_COMM_WORLD, window_key);
    if (!w) return true;
    const int slot = static_cast<int>(number % n_conveyor_slots);
    const int code_index = code < 0 && code > -n_codes ? -code : 0;
    return w->claim(slot * n_codes + code_index, number + 1);
  } catch (...) {
    return true;
  }
}

}  // namespace convoy::facade
