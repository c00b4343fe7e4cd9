// The MPI large-item channel (Maley & DeVinney 2019, sec. 4.4.1, "the MPI code for monster items"):
// nonblocking in both directions, chunked below MPI's int counts. The receive is started
// by the receiver when it meets the item's ticket and completes in later tests, so a pull
// never waits for the bytes (aggregation/README.md, AGG-52..57).
#include <algorithm>
#include <climits>
#include <convoy/aggregation/large_channel.hpp>
#include <convoy/aggregation/node_map.hpp>
#include <convoy/aggregation/rma_large_channel.hpp>
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <utility>

namespace convoy::aggregation {

namespace {
constexpr int k_tag = 0;  // the channel's own communicator carries nothing else
}  // namespace

mpi_large_channel::mpi_large_channel(MPI_Comm comm, options o)
    : bound_(o.max_item_bytes), chunk_(o.chunk_bytes), memory_(std::move(o.memory)) {
  if (comm == MPI_COMM_NULL) throw error("mpi_large_channel: MPI_COMM_NULL");
  if (chunk_ == 0 || chunk_ > static_cast<std::size_t>(INT_MAX))
    throw error("mpi_large_channel: chunk_bytes " + std::to_string(chunk_) +
                " is not between 1 and INT_MAX");
  CONVOY_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  if (memory_ && bound_ > 0) {
    // Outgoing first, incoming second: released in the reverse order (LIFO).
    std::byte* out = memory_->grab(bound_);
    std::byte* in = out ? memory_->grab(bound_) : nullptr;
    if (!out || !in) {
      if (in) memory_->release(in);
      if (out) memory_->release(out);
      MPI_Comm_free(&comm_);
      throw std::bad_alloc();
    }
    out_.adopt(*memory_, out, bound_);
    in_.adopt(*memory_, in, bound_);
  }
}

mpi_large_channel::~mpi_large_channel() {
  // A send in flight completes as soon as its receiver has taken it, which every complete
  // conveyor guarantees; after an abandoned run, give it a bounded chance, then leak its
  // buffer rather than free it under MPI (as mpi_transport does).
  for (int i = 0; sending_ && i < 10000; ++i) {
    int flag = 0;
    MPI_Testall(static_cast<int>(send_reqs_.size()), send_reqs_.data(), &flag, MPI_STATUSES_IGNORE);
    if (flag)
      sending_ = false;
    else
      std::this_thread::yield();
  }
  if (sending_) {
    for (MPI_Request& r : send_reqs_)
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    out_.leak();
  }
  if (receiving_) {
    for (MPI_Request& r : recv_reqs_)
      if (r != MPI_REQUEST_NULL) {
        MPI_Cancel(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      }
  }
  in_.free();  // in_ then out_: LIFO for a source
  out_.free();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void mpi_large_channel::post(std::vector<MPI_Request>& reqs, std::byte* base, std::size_t bytes,
                             int peer, bool send) {
  const std::size_t n = bytes == 0 ? 1 : (bytes + chunk_ - 1) / chunk_;
  reqs.assign(n, MPI_REQUEST_NULL);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t off = k * chunk_;
    const auto count = static_cast<int>(std::min(chunk_, bytes - off));
    if (send)
      CONVOY_MPI_CHECK(MPI_Isend(base + off, count, MPI_BYTE, peer, k_tag, comm_, &reqs[k]));
    else
      CONVOY_MPI_CHECK(MPI_Irecv(base + off, count, MPI_BYTE, peer, k_tag, comm_, &reqs[k]));
  }
}

bool mpi_large_channel::send_ready() {
  if (!sending_) return true;
  int flag = 0;
  CONVOY_MPI_CHECK(MPI_Testall(static_cast<int>(send_reqs_.size()), send_reqs_.data(), &flag,
                               MPI_STATUSES_IGNORE));
  if (flag) sending_ = false;
  return !sending_;
}

std::uint64_t mpi_large_channel::stage_send(const void* data, std::size_t bytes, int dest) {
  if (sending_) throw error("large_channel: stage_send while a send is in flight");
  out_.fit(bytes, bound_);
  if (bytes) std::memcpy(out_.data(), data, bytes);
  staged_ = true;
  send_to_ = dest;
  send_bytes_ = bytes;
  return 0;  // MPI matches the chunks by order: no descriptor
}

void mpi_large_channel::start_send() {
  if (!staged_) throw error("large_channel: start_send with no item staged");
  // A zero-byte item still sends one empty message, so each ticket matches one item.
  post(send_reqs_, out_.data(), send_bytes_, send_to_, true);
  staged_ = false;
  sending_ = true;
  stats_.messages += send_reqs_.size();
  if (send_to_ != rank_) {
    ++stats_.sent;
    stats_.sent_bytes += send_bytes_;
  }
}

void mpi_large_channel::start_receive(int from, std::size_t bytes, std::uint64_t /*descriptor*/) {
  if (receiving_) throw error("large_channel: start_receive while a receive is active");
  in_.fit(bytes, bound_);
  post(recv_reqs_, in_.data(), bytes, from, false);
  receiving_ = true;
  recv_from_ = from;
  recv_bytes_ = bytes;
}

bool mpi_large_channel::receive_done() {
  if (!receiving_) return false;
  int flag = 0;
  CONVOY_MPI_CHECK(MPI_Testall(static_cast<int>(recv_reqs_.size()), recv_reqs_.data(), &flag,
                               MPI_STATUSES_IGNORE));
  if (!flag) return false;
  receiving_ = false;
  if (recv_from_ != rank_) {
    ++stats_.received;
    stats_.received_bytes += recv_bytes_;
  }
  return true;
}

void mpi_large_channel::progress() {
  (void)send_ready();
  if (receiving_) {
    // Moves the transfer on; completed requests become MPI_REQUEST_NULL, so the next
    // receive_done() finds them complete and takes the item.
    int flag = 0;
    CONVOY_MPI_CHECK(MPI_Testall(static_cast<int>(recv_reqs_.size()), recv_reqs_.data(), &flag,
                                 MPI_STATUSES_IGNORE));
  }
}

std::size_t mpi_large_channel::memory_bytes() const noexcept {
  return out_.capacity() + in_.capacity();
}

base::large_kind resolve_large_kind(MPI_Comm comm, base::large_kind kind, bool buffer_source) {
  if (kind != base::large_kind::automatic) return kind;
  if (buffer_source) return base::large_kind::two_sided;
  int n = 0;
  CONVOY_MPI_CHECK(MPI_Comm_size(comm, &n));
  // The real shared-memory groups (AGG-68: split once per communicator); every rank sees
  // the same largest group.
  const bool one_node = shared_node_group(comm, {})->largest == n;
  return one_node ? base::large_kind::rendezvous : base::large_kind::two_sided;
}

std::unique_ptr<large_channel> make_large_channel(MPI_Comm comm, base::large_kind kind,
                                                  mpi_large_channel::options o) {
  if (resolve_large_kind(comm, kind, o.memory != nullptr) == base::large_kind::rendezvous) {
    if (kind == base::large_kind::rendezvous) {
      try {
        return std::make_unique<rma_large_channel>(comm, std::move(o));
      } catch (const convoy::error& e) {  // agreed on every rank (AGG-161)
        throw convoy::error(std::string("CONVOY_LARGE=rendezvous: ") + e.what() +
                            " (use CONVOY_LARGE=auto or two-sided)");
      }
    }
    try {  // chosen by auto: two-sided where MPI makes no window (agreed, AGG-161)
      return std::make_unique<rma_large_channel>(comm, o);
    } catch (const convoy::error& e) {
      base::notice_once(comm, "convoy.large_windows",
                        std::string("convoy: ") + e.what() +
                            ", so large items use the two-sided channel");
    }
  }
  return std::make_unique<mpi_large_channel>(comm, std::move(o));
}

}  // namespace convoy::aggregation
