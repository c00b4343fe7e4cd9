// The watchdog's board over MPI (TERM-15). Each rank's slot is [sequence][record]:
// the owner writes its record between two increments of the sequence (odd while writing),
// a reader gets the sequence and the record, then the sequence again, and keeps the copy
// when both are equal and even. Reads are passive-target gets (no atomics) inside
// one MPI_Win_lock_all epoch opened at construction, so no rank waits for another to call
// MPI — as far as the MPI library completes one-sided operations without the target
// (shared memory on a node, RDMA networks).
#include "status_window.hpp"

#include <atomic>
#include <convoy/aggregation/detail/rma_window.hpp>
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

namespace convoy::termination::detail {

namespace {

static_assert(std::is_trivially_copyable_v<termination::rank_status>);

constexpr MPI_Aint seq_offset = 0;
constexpr MPI_Aint record_offset = 8;
constexpr MPI_Aint slot_bytes = record_offset + sizeof(termination::rank_status);
constexpr int read_tries = 8;

}  // namespace

status_window::status_window(MPI_Comm comm) {
  // A duplicate that returns errors: MPI may be unable to make the window (AGG-161).
  CONVOY_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  try {
    CONVOY_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    CONVOY_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    CONVOY_MPI_CHECK(MPI_Comm_size(comm_, &size_));
    void* mem = nullptr;
    win_ = aggregation::detail::allocate_window(comm_, slot_bytes, &mem);
    base_ = static_cast<std::byte*>(mem);
    std::memset(base_, 0, slot_bytes);
    termination::rank_status none;  // rank -1: nothing published yet
    std::memcpy(base_ + record_offset, &none, sizeof none);
    CONVOY_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));
    CONVOY_MPI_CHECK(MPI_Win_sync(win_));
    CONVOY_MPI_CHECK(MPI_Barrier(comm_));  // every slot initialized before anyone reads
  } catch (...) {
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
    MPI_Comm_free(&comm_);
    throw;
  }
}

status_window::~status_window() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  MPI_Comm_free(&comm_);
}

void status_window::publish(const termination::rank_status& s) noexcept {
  std::atomic_ref<std::uint64_t> seq(*reinterpret_cast<std::uint64_t*>(base_ + seq_offset));
  const std::uint64_t n = seq.load(std::memory_order_relaxed);
  seq.store(n + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(base_ + record_offset, &s, sizeof s);
  std::atomic_thread_fence(std::memory_order_release);
  seq.store(n + 2, std::memory_order_relaxed);
  MPI_Win_sync(win_);
}

std::vector<termination::rank_status> status_window::read_all() {
  const auto n = static_cast<std::size_t>(size_);
  std::vector<std::byte> slots(n * static_cast<std::size_t>(slot_bytes - seq_offset));
  std::vector<std::uint64_t> again(n);
  std::vector<termination::rank_status> out(n);
  std::vector<bool> done(n, false);
  const int record_bytes = static_cast<int>(slot_bytes - seq_offset);
  for (int attempt = 0; attempt < read_tries; ++attempt) {
    for (int r = 0; r < size_; ++r) {
      if (done[static_cast<std::size_t>(r)]) continue;
      std::byte* into = slots.data() + static_cast<std::size_t>(r) * record_bytes;
      CONVOY_MPI_CHECK(
          MPI_Get(into, record_bytes, MPI_BYTE, r, seq_offset, record_bytes, MPI_BYTE, win_));
    }
    CONVOY_MPI_CHECK(MPI_Win_flush_all(win_));
    for (int r = 0; r < size_; ++r)
      if (!done[static_cast<std::size_t>(r)])
        CONVOY_MPI_CHECK(MPI_Get(&again[static_cast<std::size_t>(r)], 1, MPI_UINT64_T, r,
                                 seq_offset, 1, MPI_UINT64_T, win_));
    CONVOY_MPI_CHECK(MPI_Win_flush_all(win_));
    bool all = true;
    for (std::size_t r = 0; r < n; ++r) {
      if (done[r]) continue;
      const std::byte* from = slots.data() + r * static_cast<std::size_t>(record_bytes);
      std::uint64_t seq = 0;
      std::memcpy(&seq, from, sizeof seq);
      std::memcpy(&out[r], from + (record_offset - seq_offset), sizeof out[r]);
      // A slot being written keeps its last copy after the tries: a diagnosis is a hint.
      done[r] = seq % 2 == 0 && seq == again[r];
      all = all && done[r];
    }
    if (all) break;
  }
  return out;
}

void status_window::print(const std::string& text) noexcept {
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

void status_window::abort() noexcept { MPI_Abort(MPI_COMM_WORLD, 3); }

std::shared_ptr<termination::status_board> make_status_board(MPI_Comm comm, double seconds) {
  if (seconds <= 0) return nullptr;
  try {
    return std::make_shared<status_window>(comm);
  } catch (const convoy::error& e) {  // agreed on every rank (AGG-161)
    base::notice_once(comm, "convoy.watchdog_messages",
                      std::string("convoy: ") + e.what() +
                          ", so the watchdog's board uses point-to-point messages");
    return std::make_shared<status_messages>(comm, seconds);
  }
}

}  // namespace convoy::termination::detail
