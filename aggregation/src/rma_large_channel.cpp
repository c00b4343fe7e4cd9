// Large items by rendezvous (MP_Lite SHMEM notes, "Passing the messages": the receiver matches the
// header and pulls the data from the source with a get, then posts recv_done so that the
// source may free its buffer; aggregation/README.md, AGG-120..127). The header is the
// engine's ticket, in order with the small items; the data stays in the sender's part of
// the window until the receiver's atomic on its release counter.
#include <algorithm>
#include <climits>
#include <convoy/aggregation/detail/rma_window.hpp>
#include <convoy/aggregation/node_map.hpp>
#include <convoy/aggregation/rma_large_channel.hpp>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <utility>

namespace convoy::aggregation {

namespace {
constexpr std::size_t k_line = rma_large_channel::control_bytes;
constexpr MPI_Aint k_counter = 0;  // the release counter's displacement
}  // namespace

rma_large_channel::rma_large_channel(MPI_Comm comm, options o)
    : bound_(o.max_item_bytes), chunk_(o.chunk_bytes), memory_(std::move(o.memory)) {
  if (comm == MPI_COMM_NULL) throw error("rma_large_channel: MPI_COMM_NULL");
  if (chunk_ == 0 || chunk_ > static_cast<std::size_t>(INT_MAX))
    throw error("rma_large_channel: chunk_bytes " + std::to_string(chunk_) +
                " is not between 1 and INT_MAX");
  if (memory_ && bound_ > 0) grab_from_source(comm);  // collective: every rank or none
  CONVOY_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  try {
    make_window();
  } catch (...) {
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
    MPI_Comm_free(&comm_);
    throw;  // in_ goes back to its source with the members
  }
}

// detail::allocate_window (AGG-117): the shared-memory component when every rank shares a
// node, MPI_Win_allocate otherwise. Only the control line is zeroed: the item room's pages
// are touched by items alone.
void rma_large_channel::make_window() {
  CONVOY_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  CONVOY_MPI_CHECK(MPI_Comm_size(comm_, &n_ranks_));
  const auto size = static_cast<MPI_Aint>(k_line + bound_);
  void* base = nullptr;
  win_ = detail::allocate_window(comm_, size, &base);
  base_ = static_cast<std::byte*>(base);
  std::memset(base_, 0, k_line);
  CONVOY_MPI_CHECK(MPI_Barrier(comm_));  // no counter is touched before it is zero
  CONVOY_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));
}

rma_large_channel::~rma_large_channel() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {  // the window went with MPI; a source may need MPI to take a block back
    if (in_.borrowed()) in_.leak();
    return;
  }
  // Our gets read the senders' windows, which stay until every rank is here.
  if (receiving_)
    MPI_Waitall(static_cast<int>(recv_reqs_.size()), recv_reqs_.data(), MPI_STATUSES_IGNORE);
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);  // collective: no rank reads our buffer after this
  MPI_Comm_free(&comm_);
}

void rma_large_channel::grab_from_source(MPI_Comm comm) {
  std::byte* in = memory_->grab(bound_);
  int ok = in ? 1 : 0;
  CONVOY_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm));
  if (!ok) {
    if (in) memory_->release(in);
    throw std::bad_alloc();
  }
  in_.adopt(*memory_, in, bound_);
}

// Released items: those other ranks fetched (the counter, written only by their atomics)
// and those this rank took from itself by a copy.
std::uint64_t rma_large_channel::read_released() {
  std::uint64_t ignored = 0, remote = 0;
  CONVOY_MPI_CHECK(
      MPI_Fetch_and_op(&ignored, &remote, MPI_UINT64_T, rank_, k_counter, MPI_NO_OP, win_));
  CONVOY_MPI_CHECK(MPI_Win_flush(rank_, win_));
  return self_released_ + remote;
}

bool rma_large_channel::send_ready() {
  if (!sending_) return true;
  if (read_released() == started_) sending_ = false;  // AGG-121: the receiver has fetched
  return !sending_;
}

std::uint64_t rma_large_channel::stage_send(const void* data, std::size_t bytes, int dest) {
  if (sending_) throw error("large_channel: stage_send while a send is in flight");
  detail::check_large_item(bytes, bound_);
  if (dest < 0 || dest >= n_ranks_)
    throw error("large_channel: destination rank " + std::to_string(dest) + " outside [0, " +
                std::to_string(n_ranks_) + ")");
  if (bytes) std::memcpy(base_ + k_line, data, bytes);
  // Our stores are visible to the receiver's gets once the ticket reaches it (the ticket
  // leaves after this; MPI-3 sec. 11.4, unified model).
  CONVOY_MPI_CHECK(MPI_Win_sync(win_));
  staged_ = true;
  send_to_ = dest;
  send_bytes_ = bytes;
  return k_line;  // where the item lies in the sender's window
}

void rma_large_channel::start_send() {
  if (!staged_) throw error("large_channel: start_send with no item staged");
  staged_ = false;
  sending_ = true;
  ++started_;
  if (send_to_ != rank_) {
    ++stats_.sent;
    stats_.sent_bytes += send_bytes_;
  }
}

void rma_large_channel::start_receive(int from, std::size_t bytes, std::uint64_t descriptor) {
  if (receiving_) throw error("large_channel: start_receive while a receive is active");
  if (from < 0 || from >= n_ranks_)
    throw error("large_channel: source rank " + std::to_string(from) + " outside [0, " +
                std::to_string(n_ranks_) + ")");
  detail::check_large_item(bytes, bound_);
  if (descriptor != k_line)
    throw error("large_channel: a rendezvous ticket with descriptor " + std::to_string(descriptor) +
                " (two-sided sender?)");
  in_.fit(bytes, bound_);
  receiving_ = true;
  recv_from_ = from;
  recv_bytes_ = bytes;
  recv_reqs_.clear();
  if (from == rank_) {  // our own window: a copy, released by our own count
    if (bytes) std::memcpy(in_.data(), base_ + k_line, bytes);
    return;
  }
  // AGG-122: chunks of at most chunk_bytes, so every count fits MPI's int.
  const std::size_t n = (bytes + chunk_ - 1) / chunk_;
  recv_reqs_.assign(n, MPI_REQUEST_NULL);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t off = k * chunk_;
    const auto count = static_cast<int>(std::min(chunk_, bytes - off));
    CONVOY_MPI_CHECK(MPI_Rget(in_.data() + off, count, MPI_BYTE, from,
                              static_cast<MPI_Aint>(descriptor + off), count, MPI_BYTE, win_,
                              &recv_reqs_[k]));
  }
  stats_.messages += n;
}

bool rma_large_channel::receive_done() {
  if (!receiving_) return false;
  int flag = 0;
  CONVOY_MPI_CHECK(MPI_Testall(static_cast<int>(recv_reqs_.size()), recv_reqs_.data(), &flag,
                               MPI_STATUSES_IGNORE));
  if (!flag) return false;  // AGG-123: not yet, never a wait
  receiving_ = false;
  if (recv_from_ == rank_) {
    ++self_released_;
    return true;
  }
  // MP_Lite's recv_done: the sender may reuse its buffer once this is complete there.
  const std::uint64_t one = 1;
  CONVOY_MPI_CHECK(
      MPI_Accumulate(&one, 1, MPI_UINT64_T, recv_from_, k_counter, 1, MPI_UINT64_T, MPI_SUM, win_));
  CONVOY_MPI_CHECK(MPI_Win_flush(recv_from_, win_));
  ++stats_.received;
  stats_.received_bytes += recv_bytes_;
  return true;
}

void rma_large_channel::progress() {
  (void)send_ready();
  if (receiving_) {
    // Moves the gets on; completed requests become MPI_REQUEST_NULL, and the next
    // receive_done() releases the sender's buffer and takes the item.
    int flag = 0;
    CONVOY_MPI_CHECK(MPI_Testall(static_cast<int>(recv_reqs_.size()), recv_reqs_.data(), &flag,
                                 MPI_STATUSES_IGNORE));
  }
}

std::size_t rma_large_channel::memory_bytes() const noexcept {
  return k_line + bound_ + in_.capacity();
}

}  // namespace convoy::aggregation
