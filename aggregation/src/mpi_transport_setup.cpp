// mpi_transport's set-up and tear-down: the communicator's duplicate (AGG-69), open() —
// checks, the buffer block (AGG-11), the links' pairing for piggybacked credits — and a
// destruction that settles every credit first. The messages are in mpi_transport.cpp.
#include <algorithm>
#include <chrono>
#include <convoy/aggregation/mpi_transport.hpp>
#include <convoy/base/error.hpp>
#include <cstddef>
#include <exception>
#include <string>
#include <thread>
#include <utility>

#include "mpi_transport_wire.hpp"

namespace convoy::aggregation {

namespace {

using detail::mpi_wire::credit_tag;
using detail::mpi_wire::who;

}  // namespace

mpi_transport::mpi_transport(MPI_Comm comm, std::shared_ptr<buffer_source> memory,
                             int credit_window)
    : memory_(std::move(memory)), credit_window_(credit_window) {
  if (comm == MPI_COMM_NULL) throw convoy::error("mpi_transport: communicator is MPI_COMM_NULL");
  dup_ = detail::pooled_dup(comm);  // AGG-69: an MPI_Allreduce, a new duplicate only at first
  comm_ = dup_.get();
}

mpi_transport::~mpi_transport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // After MPI_Finalize the block's source (often MPI-based) cannot be called collectively
  // any more: leave the block to the process's end.
  if (finalized || comm_ == MPI_COMM_NULL) return;
  // Settle every credit before the communicator goes: a credit still in flight when it is
  // freed would be matched by the next communicator that reuses its context id (crosstalk
  // between conveyors created one after another). Destruction is collective and follows
  // termination, so every peer has released our buffers and returns what it owes (owed
  // credits that were waiting for a piggyback go now); the wait is bounded in case the
  // engine was abandoned mid-cycle.
  if (opened_) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!settled() && std::chrono::steady_clock::now() < deadline) {
      try {
        flush_all_owed();
        progress();
      } catch (...) {
        break;
      }
      std::this_thread::yield();
    }
  }
  // Receives are ours alone: cancel them. Sends should all be complete (the precondition
  // is idle()); give a late one a bounded chance, then free its request and leak its
  // buffer, since MPI may still read it.
  const std::size_t sends = recv_base(), cr = credit_recv_base(), cs = credit_send_base();
  for (std::size_t i = 0; i < req_.size(); ++i) {
    const bool receive = (i >= sends && i < cr) || (i >= cr && i < cs);
    if (receive && req_[i] != MPI_REQUEST_NULL) {
      MPI_Cancel(&req_[i]);
      MPI_Wait(&req_[i], MPI_STATUS_IGNORE);
    }
  }
  for (int attempt = 0; attempt < 10000 && (n_send_active_ > 0 || n_credit_send_active_ > 0);
       ++attempt) {
    try {
      test_all();
    } catch (...) {
      break;
    }
    std::this_thread::yield();
  }
  bool leaked_credit_buffer = false, leaked_send_buffer = false;
  for (std::size_t i = 0; i < req_.size(); ++i) {
    if (req_[i] == MPI_REQUEST_NULL) continue;
    MPI_Request_free(&req_[i]);
    if (i < sends) {
      out_.forget(static_cast<int>(i / static_cast<std::size_t>(n_)),
                  static_cast<int>(i % static_cast<std::size_t>(n_)));
      leaked_send_buffer = true;
    } else if (i >= cs) {
      leaked_credit_buffer = true;
    }
  }
  if (leaked_credit_buffer) static_cast<void>(credit_send_buf_.release());
  // AGG-69: a settled transport with nothing pending hands its duplicate to the next one on
  // the same communicator (its peers settled too: each waited for the credits of the
  // others); otherwise the duplicate is freed.
  dup_.end(!opened_ || (settled() && !leaked_send_buffer && !leaked_credit_buffer &&
                        n_send_active_ == 0 && n_credit_send_active_ == 0));
  comm_ = MPI_COMM_NULL;
  // The block goes back last, after every receive was cancelled and every send completed
  // (AGG-11). A send abandoned above may still read its slice: then the whole block is left
  // allocated, as an own buffer would be.
  if (block_.grabbed && !leaked_send_buffer) memory_->release(block_.grabbed);
}

bool mpi_transport::settled() const noexcept {
  if (n_credit_send_active_ > 0) return false;
  for (std::size_t l = 0; l < n_in_; ++l)
    if (in_.served(static_cast<int>(l)) && credits_.owed(static_cast<int>(l)) > 0) return false;
  for (std::size_t l = 0; l < n_out_; ++l)
    if (out_.served(static_cast<int>(l)) &&
        (out_.credits(static_cast<int>(l)) < window_ || out_.has_queued(static_cast<int>(l))))
      return false;
  return true;
}

void mpi_transport::open(const link_layout& layout) {
  open(layout, std::vector<bool>(layout.out_links.size(), true),
       std::vector<bool>(layout.in_links.size(), true));
}

void mpi_transport::check_open(const link_layout& layout, const std::vector<bool>& serve_out,
                               const std::vector<bool>& serve_in) const {
  detail::validate_layout(layout, who);
  int rank = 0, size = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm_, &rank));
  CONVOY_MPI_CHECK(MPI_Comm_size(comm_, &size));
  detail::check_layout_rank(layout, rank, size, who);
  if (serve_out.size() != layout.out_links.size() || serve_in.size() != layout.in_links.size())
    throw convoy::error("mpi_transport: serve_out/serve_in must have one flag per link");
  void* attr = nullptr;
  int flag = 0;
  CONVOY_MPI_CHECK(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &attr, &flag));
  const int tag_ub = flag ? *static_cast<int*>(attr) : 32767;
  for (const auto* links : {&layout.out_links, &layout.in_links})
    for (const link& l : *links)
      if (l.stage > (tag_ub - 1) / 2)
        throw convoy::error("mpi_transport: stage " + std::to_string(l.stage) + " needs tag " +
                            std::to_string(2 * static_cast<long long>(l.stage) + 1) +
                            " beyond MPI_TAG_UB " + std::to_string(tag_ub));
}

void mpi_transport::open(const link_layout& layout, std::vector<bool> serve_out,
                         std::vector<bool> serve_in, std::exception_ptr failed_before) {
  if (opened_) throw convoy::error("mpi_transport: open() called twice");
  const std::size_t block_bytes =
      agree_on_open(layout, serve_out, serve_in, std::move(failed_before));

  layout_ = layout;
  n_ = layout.n_buffers;
  window_ = std::max(n_, credit_window_);  // AGG-67
  const auto n = static_cast<std::size_t>(n_);
  const std::size_t n_out = layout.out_links.size(), n_in = layout.in_links.size();
  out_.init(static_cast<int>(n_out), n_, layout.buffer_bytes, serve_out, window_);
  in_.init(static_cast<int>(n_in), n_, layout.buffer_bytes, serve_in);
  if (memory_) take_block(block_bytes);
  n_out_ = n_out;
  n_in_ = n_in;
  credits_.init(static_cast<int>(n_in), window_);
  pair_links();
  req_.assign(n_out * n + n_in * n + n_out + n_in, MPI_REQUEST_NULL);
  credit_recv_buf_.assign(n_out, 0);
  credit_send_buf_ = std::make_unique<std::int32_t[]>(n_in);
  urgent_.reserve(n_in);
  indices_.assign(req_.size() + 1, 0);
  statuses_.assign(req_.size() + 1, MPI_Status{});
  opened_ = true;

  for (std::size_t l = 0; l < n_in; ++l) {
    if (!serve_in[l]) continue;
    in_.allocate(static_cast<int>(l));
    for (int s = 0; s < n_; ++s)
      post_receive(static_cast<int>(l), in_.take_free(static_cast<int>(l)));
  }
  for (std::size_t l = 0; l < n_out; ++l) {
    if (!serve_out[l]) continue;
    const link& k = layout.out_links[l];
    CONVOY_MPI_CHECK(MPI_Irecv(&credit_recv_buf_[l], 1, MPI_INT32_T, k.peer, credit_tag(k.stage),
                               comm_, &req_[credit_recv_base() + l]));
  }
}

std::size_t mpi_transport::agree_on_open(const link_layout& layout,
                                         const std::vector<bool>& serve_out,
                                         const std::vector<bool>& serve_in,
                                         std::exception_ptr failed_before) const {
  // With a buffer source open() is collective (AGG-11): every rank takes part in the size
  // agreement even when its own checks failed, and then all of them throw together.
  std::exception_ptr failure = std::move(failed_before);
  if (failure && !memory_) std::rethrow_exception(failure);
  if (!failure) {
    try {
      check_open(layout, serve_out, serve_in);
    } catch (...) {
      if (!memory_) throw;
      failure = std::current_exception();
    }
  }
  std::size_t block_bytes = 0;
  if (memory_) {
    if (!failure) {
      const auto n = static_cast<std::size_t>(layout.n_buffers);
      std::size_t links = 0;
      for (const auto* serve : {&serve_out, &serve_in})
        for (const bool b : *serve) links += b ? 1 : 0;
      block_bytes = links * n * detail::slice_bytes(layout.buffer_bytes);
    }
    // One grab of the same size everywhere: [0] the bytes, [1] some rank failed.
    unsigned long long mine[2] = {block_bytes, failure ? 1ull : 0ull}, all[2] = {0, 0};
    CONVOY_MPI_CHECK(MPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm_));
    if (failure) std::rethrow_exception(failure);
    if (all[1] != 0)
      throw convoy::error("mpi_transport: open() failed on another rank (bad layout there)");
    block_bytes = static_cast<std::size_t>(all[0]);
  }
  return block_bytes;
}

void mpi_transport::take_block(std::size_t block_bytes) {
  // Grabbed by every rank (collective source), also by one that serves no link; if the
  // source fails anywhere, every rank gives its block back and throws.
  std::exception_ptr grab_failure;
  try {
    block_ = detail::grab_block(*memory_, block_bytes, who);
  } catch (...) {
    grab_failure = std::current_exception();
  }
  int mine = grab_failure ? 1 : 0, any = 0;
  CONVOY_MPI_CHECK(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm_));
  if (any) {
    if (block_.grabbed) memory_->release(block_.grabbed);
    block_ = {};
    if (grab_failure) std::rethrow_exception(grab_failure);
    throw convoy::error("mpi_transport: the buffer source failed on another rank");
  }
  if (block_.aligned) {
    out_.use_block(block_.aligned);
    in_.use_block(block_.aligned + out_.block_bytes());
  }
}

void mpi_transport::pair_links() {
  // (stage, peer) -> served out-link; an in-link's reverse is the out-link with its key.
  std::vector<std::pair<std::pair<int, int>, int>> outs;
  for (std::size_t l = 0; l < n_out_; ++l)
    if (out_.served(static_cast<int>(l)))
      outs.push_back(
          {{layout_.out_links[l].stage, layout_.out_links[l].peer}, static_cast<int>(l)});
  std::sort(outs.begin(), outs.end());
  reverse_of_out_.assign(n_out_, -1);
  reverse_of_in_.assign(n_in_, -1);
  for (std::size_t l = 0; l < n_in_; ++l) {
    if (!in_.served(static_cast<int>(l))) continue;
    const std::pair<int, int> key{layout_.in_links[l].stage, layout_.in_links[l].peer};
    const auto it = std::lower_bound(outs.begin(), outs.end(), std::pair{key, -1});
    if (it == outs.end() || it->first != key) continue;
    reverse_of_in_[l] = it->second;
    reverse_of_out_[static_cast<std::size_t>(it->second)] = static_cast<int>(l);
  }
}

}  // namespace convoy::aggregation
