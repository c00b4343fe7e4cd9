// Large items by rendezvous (seed 002, "Passing the messages": the receiver matches the
// header and pulls the data from the source with a get, then posts recv_done so that the
// source may free its buffer; aggregation/README.md, AGG-120..127). The header is the
// engine's ticket, in order with the small items; the data stays in the sender's buffer,
// attached to a dynamic window, until the receiver's atomic on its release counter.
#include <algorithm>
#include <climits>
#include <convoy/aggregation/rma_large_channel.hpp>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <utility>

namespace convoy::aggregation {

namespace {
constexpr std::align_val_t k_align{64};
constexpr std::size_t k_line = rma_large_channel::control_bytes;

// A dynamic window's displacements are absolute addresses (MPI-3 sec. 11.2.4).
MPI_Aint address(const std::byte* p) {
  MPI_Aint a = 0;
  MPI_Get_address(p, &a);
  return a;
}

std::byte* align_up(std::byte* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  return p + ((k_line - a % k_line) % k_line);
}
}  // namespace

rma_large_channel::rma_large_channel(MPI_Comm comm, options o)
    : bound_(o.max_item_bytes), chunk_(o.chunk_bytes), memory_(std::move(o.memory)) {
  if (comm == MPI_COMM_NULL) throw error("rma_large_channel: MPI_COMM_NULL");
  if (chunk_ == 0 || chunk_ > static_cast<std::size_t>(INT_MAX))
    throw error("rma_large_channel: chunk_bytes " + std::to_string(chunk_) +
                " is not between 1 and INT_MAX");
  if (memory_ && bound_ > 0) grab_from_source(comm);  // collective: every rank or none
  int rc = MPI_Comm_dup(comm, &comm_);
  if (rc == MPI_SUCCESS) {
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &n_ranks_);
    // Alone, every item is to self and is copied (AGG-120): no window. (OpenMPI 4.1.4 has
    // no one-sided component for a dynamic window over the `self` BTL alone.)
    if (n_ranks_ > 1) rc = MPI_Win_create_dynamic(MPI_INFO_NULL, comm_, &win_);
  }
  if (rc == MPI_SUCCESS && win_ != MPI_WIN_NULL) {
    MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
    rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
  }
  if (rc == MPI_SUCCESS && out_.data && win_ != MPI_WIN_NULL) {
    rc = MPI_Win_attach(win_, out_.data, k_line + out_.capacity);
    attached_ = rc == MPI_SUCCESS;
  }
  if (rc != MPI_SUCCESS) {
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    free_buffer(in_);
    free_buffer(out_);
    convoy::detail::throw_mpi_error("rma_large_channel: window set-up", rc, __FILE__, __LINE__);
  }
}

rma_large_channel::~rma_large_channel() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // the window went with MPI; the buffers are leaked, not freed under it
  // Our gets read the senders' buffers, which stay attached until every rank is here.
  if (receiving_) MPI_Waitall(static_cast<int>(recv_reqs_.size()), recv_reqs_.data(),
                              MPI_STATUSES_IGNORE);
  if (win_ != MPI_WIN_NULL) {
    MPI_Win_unlock_all(win_);
    if (attached_) MPI_Win_detach(win_, out_.data);
    MPI_Win_free(&win_);  // collective: no rank reads our buffer after this
  }
  MPI_Comm_free(&comm_);
  free_buffer(in_);
  free_buffer(out_);
}

void rma_large_channel::grab_from_source(MPI_Comm comm) {
  // Outgoing first, incoming second: released in the reverse order (LIFO).
  std::byte* out = memory_->grab(bound_ + 2 * k_line);
  std::byte* in = out ? memory_->grab(bound_) : nullptr;
  int ok = out && in ? 1 : 0;
  CONVOY_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm));
  if (!ok) {
    if (in) memory_->release(in);
    if (out) memory_->release(out);
    throw std::bad_alloc();
  }
  out_ = buffer{out, align_up(out), bound_, false};
  std::memset(out_.data, 0, k_line);
  in_ = buffer{in, in, bound_, false};
}

void rma_large_channel::free_buffer(buffer& b) noexcept {
  if (b.block) {
    if (b.own)
      ::operator delete(b.block, k_align);
    else
      memory_->release(b.block);
  }
  b = buffer{};
}

void rma_large_channel::check_bytes(std::size_t bytes) const {
  if (bytes > bound_)
    throw error("large item of " + std::to_string(bytes) + " bytes exceeds the bound " +
                std::to_string(bound_));
}

// Only while no send is in flight: no receiver reads the buffer or its counter now.
void rma_large_channel::grow_out(std::size_t bytes) {
  check_bytes(bytes);
  if (out_.data && out_.capacity >= bytes) return;
  if (!out_.own && out_.data)  // a source's block holds the bound: cannot be too small
    throw error("large_channel: buffer source block smaller than the item");
  auto* block = static_cast<std::byte*>(::operator new(k_line + bytes, k_align));
  if (attached_) {
    CONVOY_MPI_CHECK(MPI_Win_detach(win_, out_.data));
    attached_ = false;
  }
  free_buffer(out_);
  out_ = buffer{block, block, bytes, true};
  // The counter moves with the buffer: every item started so far was released (by others
  // through it, or by this rank's own copies).
  const std::uint64_t remote = started_ - self_released_;
  std::memcpy(out_.data, &remote, sizeof remote);
  if (win_ != MPI_WIN_NULL) {
    CONVOY_MPI_CHECK(MPI_Win_attach(win_, out_.data, k_line + bytes));
    attached_ = true;
  }
}

void rma_large_channel::grow_in(std::size_t bytes) {
  check_bytes(bytes);
  if (in_.capacity >= bytes && (in_.data || bytes == 0)) return;
  if (!in_.own) throw error("large_channel: buffer source block smaller than the item");
  free_buffer(in_);
  auto* block = static_cast<std::byte*>(::operator new(std::max<std::size_t>(bytes, 1), k_align));
  in_ = buffer{block, block, bytes, true};
}

// Released items: those other ranks fetched (the counter, written only by their atomics)
// and those this rank took from itself by a copy.
std::uint64_t rma_large_channel::read_released() {
  std::uint64_t ignored = 0, released = self_released_;
  if (win_ == MPI_WIN_NULL) return released;
  std::uint64_t remote = 0;
  CONVOY_MPI_CHECK(MPI_Fetch_and_op(&ignored, &remote, MPI_UINT64_T, rank_, address(out_.data),
                                    MPI_NO_OP, win_));
  CONVOY_MPI_CHECK(MPI_Win_flush(rank_, win_));
  return released + remote;
}

bool rma_large_channel::send_ready() {
  if (!sending_) return true;
  if (read_released() == started_) sending_ = false;  // AGG-121: the receiver has fetched
  return !sending_;
}

std::uint64_t rma_large_channel::stage_send(const void* data, std::size_t bytes, int dest) {
  if (sending_) throw error("large_channel: stage_send while a send is in flight");
  if (dest < 0 || dest >= n_ranks_)
    throw error("large_channel: destination rank " + std::to_string(dest) + " outside [0, " +
                std::to_string(n_ranks_) + ")");
  grow_out(bytes);
  if (bytes) std::memcpy(out_.data + k_line, data, bytes);
  // Our stores are visible to the receiver's gets once the ticket reaches it (the ticket
  // leaves after this; MPI-3 sec. 11.4, unified model).
  if (win_ != MPI_WIN_NULL) CONVOY_MPI_CHECK(MPI_Win_sync(win_));
  staged_ = true;
  send_to_ = dest;
  send_bytes_ = bytes;
  return static_cast<std::uint64_t>(address(out_.data));
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
  check_bytes(bytes);
  if (descriptor == 0) throw error("large_channel: a rendezvous ticket without a descriptor");
  grow_in(bytes);
  receiving_ = true;
  recv_from_ = from;
  recv_bytes_ = bytes;
  recv_where_ = descriptor;
  if (from == rank_) {  // our own buffer: a copy, released by our own count
    recv_reqs_.clear();
    if (bytes) std::memcpy(in_.data, out_.data + k_line, bytes);
    return;
  }
  // AGG-122: chunks of at most chunk_bytes, so every count fits MPI's int.
  const std::size_t n = (bytes + chunk_ - 1) / chunk_;
  recv_reqs_.assign(n, MPI_REQUEST_NULL);
  const auto base = static_cast<MPI_Aint>(descriptor + k_line);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t off = k * chunk_;
    const auto count = static_cast<int>(std::min(chunk_, bytes - off));
    CONVOY_MPI_CHECK(MPI_Rget(in_.data + off, count, MPI_BYTE, from,
                              base + static_cast<MPI_Aint>(off), count, MPI_BYTE, win_,
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
  // seed 002's recv_done: the sender may reuse its buffer once this is complete there.
  const std::uint64_t one = 1;
  CONVOY_MPI_CHECK(MPI_Accumulate(&one, 1, MPI_UINT64_T, recv_from_,
                                  static_cast<MPI_Aint>(recv_where_), 1, MPI_UINT64_T, MPI_SUM,
                                  win_));
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
  return (out_.data ? out_.capacity + k_line : 0) + in_.capacity;
}

}  // namespace convoy::aggregation
