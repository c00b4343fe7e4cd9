// The watchdog's board over one-sided MPI (TERM-15, status_window.hpp). Each rank's slot is
// [head][record][tail]: the owner sets the head to n + 1, writes the record, then sets the
// tail to n + 1; a copy whose head and tail agree is whole. Node slots live in a shared-
// memory window and are read with loads, tail first and head last, so a write that began
// during the copy is seen. Off-node slots are read with MPI_Rget inside one lock_all epoch
// opened at construction; a get completes when MPI says so, which for some libraries is
// only when the target calls MPI, so a pending get makes its rank silent, not the reader
// blocked.
#include "status_window.hpp"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <convoy/aggregation/detail/rma_window.hpp>
#include <convoy/aggregation/node_map.hpp>
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <convoy/termination/state_machine.hpp>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>

namespace convoy::termination::detail {

namespace {

static_assert(std::is_trivially_copyable_v<termination::rank_status>);

constexpr std::size_t head_offset = 0;
constexpr std::size_t record_offset = 8;
constexpr std::size_t tail_offset = record_offset + sizeof(termination::rank_status);
constexpr std::size_t slot_bytes = tail_offset + 8;
constexpr int read_tries = 8;
constexpr int read_tries_most = 100000;

std::atomic_ref<std::uint64_t> counter(std::byte* slot, std::size_t offset) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(slot + offset));
}

void write_slot(std::byte* slot, const termination::rank_status& s) noexcept {
  const std::uint64_t n = counter(slot, tail_offset).load(std::memory_order_relaxed) + 1;
  counter(slot, head_offset).store(n, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(slot + record_offset, &s, sizeof s);
  counter(slot, tail_offset).store(n, std::memory_order_release);
}

// A whole copy of a node slot, or false while it is being written.
bool load_slot(std::byte* slot, termination::rank_status& out) noexcept {
  const std::uint64_t tail = counter(slot, tail_offset).load(std::memory_order_acquire);
  termination::rank_status copy;
  std::memcpy(&copy, slot + record_offset, sizeof copy);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (counter(slot, head_offset).load(std::memory_order_relaxed) != tail) return false;
  out = copy;
  return true;
}

// The record of a copied slot (a get's landing place), or false when torn.
bool whole_copy(const std::byte* slot, termination::rank_status& out) noexcept {
  std::uint64_t head = 0, tail = 0;
  std::memcpy(&head, slot + head_offset, sizeof head);
  std::memcpy(&tail, slot + tail_offset, sizeof tail);
  if (head != tail) return false;
  std::memcpy(&out, slot + record_offset, sizeof out);
  return true;
}

}  // namespace

void describe_silent(termination::rank_status& s, int rank, std::int64_t asked_ms,
                     const termination::rank_status& mine) noexcept {
  if (s.rank < 0) {  // never answered: in the reader's cycle, nothing said
    s = termination::rank_status{};
    s.rank = rank;
    s.state = mine.state;
    s.epoch = mine.epoch;
    s.last_advance_ms = s.last_progress_ms = s.last_pull_ms =
        std::min(asked_ms, mine.last_progress_ms);
  }
  s.last_advance_ms = std::min(s.last_advance_ms, asked_ms);
  s.last_progress_ms = std::min(s.last_progress_ms, asked_ms);
}

std::int64_t answer_wait_ms(double seconds) noexcept {
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(seconds * 250.0), 1, 1000);
}

void print_diagnosis(const std::string& text) noexcept {
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

void abort_job() noexcept {
  struct stat st {};
  unsigned long request = 0;  // how to ask for the bytes the reader has not taken yet
  if (fstat(STDERR_FILENO, &st) == 0) {
    if (S_ISFIFO(st.st_mode)) request = FIONREAD;  // in the pipe (asked at either end)
#ifdef TIOCOUTQ
    if (S_ISSOCK(st.st_mode)) request = TIOCOUTQ;  // SIOCOUTQ: sent, not yet read
#endif
  }
  if (request != 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    int unread = 0;
    while (ioctl(STDERR_FILENO, request, &unread) == 0 && unread > 0 &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  MPI_Abort(MPI_COMM_WORLD, 3);
}

status_window::status_window(MPI_Comm comm, double seconds)
    : timeout_ms_(static_cast<std::int64_t>(seconds * 1000.0)), wait_ms_(answer_wait_ms(seconds)) {
  // A duplicate that returns errors: MPI may be unable to make the windows (AGG-161).
  CONVOY_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  try {
    CONVOY_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    CONVOY_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    CONVOY_MPI_CHECK(MPI_Comm_size(comm_, &size_));
    const auto n = static_cast<std::size_t>(size_);
    near_.assign(n, nullptr);
    far_.resize(n);
    known_.resize(n);
    far_slots_.resize(n * slot_bytes);
    node_ = aggregation::shared_node_group(comm, {});  // ranks of `comm` are those of comm_
    open_node_window();
    open_far_window();
    CONVOY_MPI_CHECK(MPI_Barrier(comm_));  // every slot initialized before anyone reads
  } catch (...) {
    free_windows();
    throw;
  }
}

void status_window::open_node_window() {
  // Agreed by every rank when the group was made: all throw, or none.
  if (!node_->shared_windows) throw convoy::error(node_->shared_windows_failure);
  void* mem = nullptr;
  node_win_ = aggregation::detail::allocate_window(node_->comm, slot_bytes, &mem);
  std::memset(mem, 0, slot_bytes);
  write_slot(static_cast<std::byte*>(mem), termination::rank_status{});  // rank -1: nothing yet
  CONVOY_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, node_win_));
  CONVOY_MPI_CHECK(MPI_Win_sync(node_win_));
  for (int i = 0; i < node_->size; ++i) {
    MPI_Aint size = 0;
    int disp = 0;
    void* slot = nullptr;
    CONVOY_MPI_CHECK(MPI_Win_shared_query(node_win_, i, &size, &disp, &slot));
    near_[static_cast<std::size_t>(node_->parent_rank[static_cast<std::size_t>(i)])] =
        static_cast<std::byte*>(slot);
  }
}

void status_window::open_far_window() {
  if (node_->size == size_) return;  // one node: every slot is a load away
  void* mem = nullptr;
  far_win_ = aggregation::detail::allocate_window(comm_, slot_bytes, &mem);
  far_base_ = static_cast<std::byte*>(mem);
  std::memset(far_base_, 0, slot_bytes);
  write_slot(far_base_, termination::rank_status{});
  CONVOY_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, far_win_));
  CONVOY_MPI_CHECK(MPI_Win_sync(far_win_));
  // Every pair's connection made now, while every rank is here to progress it: made by a
  // reader's first get, it can take a rank that calls MPI seldom more calls than the
  // reader waits for its answer (ranks that are not mesh peers have no connection yet).
  std::uint64_t word = 0;
  for (int r = 0; r < size_; ++r)
    if (near_[static_cast<std::size_t>(r)] == nullptr)
      CONVOY_MPI_CHECK(MPI_Get(&word, 1, MPI_UINT64_T, r, 0, 1, MPI_UINT64_T, far_win_));
  CONVOY_MPI_CHECK(MPI_Win_flush_all(far_win_));
}

void status_window::free_windows() noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (far_read& f : far_)  // complete once every rank is here (the destructor's collective)
    if (f.request != MPI_REQUEST_NULL) MPI_Wait(&f.request, MPI_STATUS_IGNORE);
  for (MPI_Win* w : {&far_win_, &node_win_}) {
    if (*w == MPI_WIN_NULL) continue;
    MPI_Win_unlock_all(*w);
    MPI_Win_free(w);
  }
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

status_window::~status_window() { free_windows(); }

void status_window::publish(const termination::rank_status& s) noexcept {
  mine_ = s;
  write_slot(near_[static_cast<std::size_t>(rank_)], s);
  MPI_Win_sync(node_win_);
  if (far_win_ == MPI_WIN_NULL) return;
  write_slot(far_base_, s);
  MPI_Win_sync(far_win_);
  // Gets from other nodes that wait for this rank's MPI progress are served now, with the
  // record just written: served by the engine's earlier MPI calls in this advance, they
  // would carry the previous record, as old as this rank's pause between advances.
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);
  try {
    // Half a timeout without progress inside a cycle: ask the other nodes now, so that by
    // the read a rank whose get is still pending has not called MPI for half a timeout.
    const std::int64_t now = termination::wall_clock_ms();
    poll_far(termination::in_cycle(static_cast<termination::state>(s.state)) &&
                 now - s.last_progress_ms >= timeout_ms_ / 2,
             now);
  } catch (...) {  // the next read reports what fails; publishing never throws
  }
}

bool status_window::poll_far(bool ask, std::int64_t now) {
  if (!ask && pending_ == 0) return false;  // most publishes: nothing asked, nothing to take
  bool waiting = false;
  for (int r = 0; r < size_; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (near_[i] != nullptr) continue;
    if (far_[i].asked_ms == 0 && ask) ask_far(r, now);
    if (far_[i].asked_ms != 0 && !take_far(r)) waiting = true;
  }
  return waiting;
}

void status_window::ask_far(int r, std::int64_t now) {
  far_read& f = far_[static_cast<std::size_t>(r)];
  std::byte* into = far_slots_.data() + static_cast<std::size_t>(r) * slot_bytes;
  constexpr int bytes = static_cast<int>(slot_bytes);
  CONVOY_MPI_CHECK(MPI_Rget(into, bytes, MPI_BYTE, r, 0, bytes, MPI_BYTE, far_win_, &f.request));
  if (f.asked_ms == 0) ++pending_;
  f.asked_ms = now;
}

bool status_window::take_far(int r) {
  far_read& f = far_[static_cast<std::size_t>(r)];
  int done = 0;
  CONVOY_MPI_CHECK(MPI_Test(&f.request, &done, MPI_STATUS_IGNORE));
  if (!done) return false;
  const auto i = static_cast<std::size_t>(r);
  if (whole_copy(far_slots_.data() + i * slot_bytes, known_[i])) {
    f.asked_ms = 0;
    --pending_;
  } else {
    ask_far(r, f.asked_ms);  // torn by a write: again, still silent since the first ask
  }
  return f.asked_ms == 0;
}

std::vector<termination::rank_status> status_window::read_all() {
  const std::int64_t now = termination::wall_clock_ms();
  for (int r = 0; r < size_; ++r) {
    const auto i = static_cast<std::size_t>(r);
    // A slot being written is read again until whole: the writer's copy is short, but ranks
    // that stall together decide together (same last progress, same timeout), so a read
    // often meets the write of the very record it needs — giving up after a few tries kept
    // a copy as old as the last read, or none, and let two ranks print one stall. Past
    // read_tries the reader yields; past read_tries_most it keeps its last copy.
    for (int t = 0; near_[i] && !load_slot(near_[i], known_[i]); ++t) {
      if (t >= read_tries) std::this_thread::yield();
      if (t >= read_tries_most) break;
    }
  }
  // Off-node answers, for a bounded time; a get still pending leaves its rank silent.
  for (bool ask = true; poll_far(ask, now); ask = false) {
    if (termination::wall_clock_ms() - now >= wait_ms_) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::vector<termination::rank_status> all = known_;
  all[static_cast<std::size_t>(rank_)] = mine_;
  for (int r = 0; r < size_; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (r != rank_ && far_[i].asked_ms != 0) describe_silent(all[i], r, far_[i].asked_ms, mine_);
  }
  return all;
}

void status_window::print(const std::string& text) noexcept { print_diagnosis(text); }

void status_window::abort() noexcept { abort_job(); }

std::shared_ptr<termination::status_board> make_status_board(MPI_Comm comm, double seconds) {
  if (seconds <= 0) return nullptr;
  try {
    return std::make_shared<status_window>(comm, seconds);
  } catch (const convoy::error& e) {  // agreed on every rank (AGG-161)
    base::notice_once(comm, "convoy.watchdog_messages",
                      std::string("convoy: ") + e.what() +
                          ", so the watchdog's board uses point-to-point messages");
    return std::make_shared<status_messages>(comm, seconds);
  }
}

}  // namespace convoy::termination::detail
