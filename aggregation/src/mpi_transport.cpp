#include <algorithm>
#include <chrono>
#include <convoy/aggregation/mpi_transport.hpp>
#include <convoy/base/error.hpp>
#include <cstddef>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <utility>

namespace convoy::aggregation {

namespace {

constexpr const char* who = "mpi_transport";

// Credits one data message can carry in the header's transport bits (AGG-61).
constexpr std::uint32_t max_piggyback = transport_flag_mask >> transport_flag_shift;

int data_tag(int stage) { return 2 * stage; }
int credit_tag(int stage) { return 2 * stage + 1; }

/// MPI_Testsome over `reqs`; returns how many completed (their positions in indices).
/// A failed communication is reported with its own error code, not MPI_ERR_IN_STATUS.
int testsome(std::vector<MPI_Request>& reqs, std::vector<int>& indices,
             std::vector<MPI_Status>& statuses, const char* call) {
  if (reqs.empty()) return 0;
  int count = 0;
  const int rc = MPI_Testsome(static_cast<int>(reqs.size()), reqs.data(), &count, indices.data(),
                              statuses.data());
  if (rc == MPI_ERR_IN_STATUS) {
    for (int i = 0; i < count; ++i)
      if (statuses[static_cast<std::size_t>(i)].MPI_ERROR != MPI_SUCCESS)
        convoy::detail::throw_mpi_error(call, statuses[static_cast<std::size_t>(i)].MPI_ERROR,
                                        __FILE__, __LINE__);
  }
  if (rc != MPI_SUCCESS) convoy::detail::throw_mpi_error(call, rc, __FILE__, __LINE__);
  return count == MPI_UNDEFINED ? 0 : count;
}

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
      block_bytes = links * n * detail::slice_bytes(layout.capacity_bytes);
    }
    // One grab of the same size everywhere: [0] the bytes, [1] some rank failed.
    unsigned long long mine[2] = {block_bytes, failure ? 1ull : 0ull}, all[2] = {0, 0};
    CONVOY_MPI_CHECK(MPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm_));
    if (failure) std::rethrow_exception(failure);
    if (all[1] != 0)
      throw convoy::error("mpi_transport: open() failed on another rank (bad layout there)");
    block_bytes = static_cast<std::size_t>(all[0]);
  }

  layout_ = layout;
  n_ = layout.n_buffers;
  window_ = std::max(n_, credit_window_);  // AGG-67
  const auto n = static_cast<std::size_t>(n_);
  const std::size_t n_out = layout.out_links.size(), n_in = layout.in_links.size();
  out_.init(static_cast<int>(n_out), n_, layout.capacity_bytes, serve_out, window_);
  in_.init(static_cast<int>(n_in), n_, layout.capacity_bytes, serve_in);
  if (memory_) {
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

void mpi_transport::post(int out_link, std::byte* buffer, std::size_t bytes) {
  if (!opened_) throw convoy::error("mpi_transport: post() before open()");
  out_.post(out_link, buffer, bytes, who);
  send_ready(out_link);
}

void mpi_transport::send_ready(int out_link) {
  const link& k = layout_.out_links[static_cast<std::size_t>(out_link)];
  const int reverse = reverse_of_out_[static_cast<std::size_t>(out_link)];
  for (int s = out_.next_sendable(out_link); s >= 0; s = out_.next_sendable(out_link)) {
    std::byte* b = out_.buffer(out_link, s);
    // AGG-61: what we owe the peer on this stage rides in the header's transport bits.
    std::uint32_t flags = 0;
    std::memcpy(&flags, b + offsetof(buffer_header, flags), sizeof flags);
    flags &= ~transport_flag_mask;
    if (reverse >= 0 && credits_.owed(reverse) > 0) {
      const int k_credits = credits_.take(reverse, static_cast<int>(max_piggyback));
      flags |= static_cast<std::uint32_t>(k_credits) << transport_flag_shift;
      counters_.credits_piggybacked += static_cast<std::uint64_t>(k_credits);
    }
    std::memcpy(b + offsetof(buffer_header, flags), &flags, sizeof flags);
    const auto bytes = out_.bytes(out_link, s);
    CONVOY_MPI_CHECK(
        MPI_Isend(b, static_cast<int>(bytes), MPI_BYTE, k.peer, data_tag(k.stage), comm_,
                  &req_[static_cast<std::size_t>(out_link) * static_cast<std::size_t>(n_) +
                        static_cast<std::size_t>(s)]));
    ++n_send_active_;
    ++counters_.data_sent;
    counters_.data_bytes_sent += bytes;
  }
}

void mpi_transport::post_receive(int in_link, int slot) {
  const link& k = layout_.in_links[static_cast<std::size_t>(in_link)];
  MPI_Request& req =
      req_[recv_base() + static_cast<std::size_t>(in_link) * static_cast<std::size_t>(n_) +
           static_cast<std::size_t>(slot)];
  CONVOY_MPI_CHECK(MPI_Irecv(in_.buffer(in_link, slot), static_cast<int>(in_.capacity_bytes()),
                             MPI_BYTE, k.peer, data_tag(k.stage), comm_, &req));
  // Receives of one (source, tag, communicator) match messages in the order they were
  // posted (MPI non-overtaking), so the order of expect() is the link's send order.
  in_.expect(in_link, slot);
}

bool mpi_transport::poll(received& out) {
  if (!opened_) return false;
  if (in_.poll(out)) return true;
  test_all();
  flush_urgent();
  return in_.poll(out);
}

void mpi_transport::release(const received& r) {
  if (!opened_) throw convoy::error("mpi_transport: release() before open()");
  in_.release(r, who);
  post_receive(r.in_link, in_.take_free(r.in_link));
  credits_.released(r.in_link);  // goes back by piggyback, or at poll()/progress() (AGG-61, 62)
}

void mpi_transport::send_credits(int in_link) {
  const auto l = static_cast<std::size_t>(in_link);
  const link& k = layout_.in_links[l];
  const int n = credits_.take(in_link, credits_.owed(in_link));
  credit_send_buf_[l] = n;
  CONVOY_MPI_CHECK(MPI_Isend(&credit_send_buf_[l], 1, MPI_INT32_T, k.peer, credit_tag(k.stage),
                             comm_, &req_[credit_send_base() + l]));
  ++n_credit_send_active_;
  ++counters_.credit_messages_sent;
  counters_.credits_in_messages += static_cast<std::uint64_t>(n);
}

void mpi_transport::data_arrived(int in_link, int slot, const MPI_Status& status) {
  int bytes = 0;
  CONVOY_MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &bytes));
  std::byte* b = in_.buffer(in_link, slot);
  ++counters_.data_received;
  credits_.arrived(in_link);
  if (static_cast<std::size_t>(bytes) >= sizeof(buffer_header)) {
    std::uint32_t flags = 0;
    std::memcpy(&flags, b + offsetof(buffer_header, flags), sizeof flags);
    const auto k = static_cast<int>((flags & transport_flag_mask) >> transport_flag_shift);
    if (k > 0) {
      flags &= ~transport_flag_mask;
      std::memcpy(b + offsetof(buffer_header, flags), &flags, sizeof flags);
      const int out_link = reverse_of_in_[static_cast<std::size_t>(in_link)];
      if (out_link < 0)
        throw convoy::error("mpi_transport: in-link " + std::to_string(in_link) +
                            " carried credits for an out-link this transport does not serve "
                            "(the peer's layout does not match this one)");
      out_.add_credits(out_link, k, who);
      send_ready(out_link);
    }
  }
  in_.arrived(in_link, slot, static_cast<std::size_t>(bytes));
}

void mpi_transport::credits_arrived(int out_link) {
  const auto l = static_cast<std::size_t>(out_link);
  const link& k = layout_.out_links[l];
  ++counters_.credit_messages_received;
  out_.add_credits(out_link, credit_recv_buf_[l], who);
  CONVOY_MPI_CHECK(MPI_Irecv(&credit_recv_buf_[l], 1, MPI_INT32_T, k.peer, credit_tag(k.stage),
                             comm_, &req_[credit_recv_base() + l]));
  send_ready(out_link);
}

void mpi_transport::test_all() {
  ++counters_.tests;
  const int count = testsome(req_, indices_, statuses_, "MPI_Testsome");
  if (count == 0) ++counters_.tests_empty;
  const std::size_t n = static_cast<std::size_t>(n_);
  const std::size_t rb = recv_base(), crb = credit_recv_base(), csb = credit_send_base();
  for (int i = 0; i < count; ++i) {
    const auto idx = static_cast<std::size_t>(indices_[static_cast<std::size_t>(i)]);
    if (idx < rb) {
      out_.send_done(static_cast<int>(idx / n), static_cast<int>(idx % n));
      --n_send_active_;
    } else if (idx < crb) {
      data_arrived(static_cast<int>((idx - rb) / n), static_cast<int>((idx - rb) % n),
                   statuses_[static_cast<std::size_t>(i)]);
    } else if (idx < csb) {
      credits_arrived(static_cast<int>(idx - crb));
    } else {
      --n_credit_send_active_;
      // A link that owes more than the message carried is listed again when urgent.
      if (credits_.urgent(static_cast<int>(idx - csb)))
        credits_.relist(static_cast<int>(idx - csb));
    }
  }
}

void mpi_transport::flush_urgent() {
  credits_.take_urgent(urgent_);
  for (const int l : urgent_) {
    if (credits_.owed(l) == 0) continue;  // a piggyback took them
    if (req_[credit_send_base() + static_cast<std::size_t>(l)] != MPI_REQUEST_NULL) {
      credits_.relist(l);  // the previous credit message is still in flight
      continue;
    }
    send_credits(l);
  }
}

void mpi_transport::flush_all_owed() {
  for (std::size_t l = 0; l < n_in_; ++l)
    if (credits_.owed(static_cast<int>(l)) > 0 && req_[credit_send_base() + l] == MPI_REQUEST_NULL)
      send_credits(static_cast<int>(l));
}

void mpi_transport::progress() {
  if (!opened_) return;
  test_all();
  flush_urgent();
}

bool mpi_transport::idle() const noexcept {
  return out_.n_queued() == 0 && n_send_active_ == 0 && n_credit_send_active_ == 0;
}

}  // namespace convoy::aggregation
