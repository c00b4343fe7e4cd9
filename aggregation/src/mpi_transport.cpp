// mpi_transport's messages: data buffers out (with piggybacked credits, AGG-61) and in,
// credit messages both ways, and the one MPI_Testsome that finds every completion (AGG-65).
// Set-up and tear-down are in mpi_transport_setup.cpp.
#include <convoy/aggregation/mpi_transport.hpp>
#include <convoy/base/error.hpp>
#include <cstddef>
#include <cstring>
#include <string>

#include "mpi_transport_wire.hpp"

namespace convoy::aggregation {

namespace {

using detail::mpi_wire::credit_tag;
using detail::mpi_wire::data_tag;
using detail::mpi_wire::who;

// Credits one data message can carry in the header's transport bits (AGG-61).
constexpr std::uint32_t max_piggyback = transport_flag_mask >> transport_flag_shift;

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
  CONVOY_MPI_CHECK(MPI_Irecv(in_.buffer(in_link, slot), static_cast<int>(in_.buffer_bytes()),
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
