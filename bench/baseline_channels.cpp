// The two MPI baselines the kinds are measured against (bench/README.md "Kinds"): naive,
// one MPI_Isend per item, and alltoallv, one bulk exchange at the end.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "channels.hpp"

namespace convoy::bench {

// ---------------------------------------------------------------------------------------
// naive_channel

namespace {
constexpr int end_tag = 1;  // items travel with tag 0 (naive_channel::push)
}  // namespace

naive_channel::naive_channel(MPI_Comm comm, const kind_spec&, const options& opt)
    : window_(std::max(1, opt.naive_window)) {
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &n_ranks_);
}

naive_channel::~naive_channel() {
  for (auto& r : recv_req_) {
    if (r == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  if (!send_req_.empty())
    MPI_Waitall(static_cast<int>(send_req_.size()), send_req_.data(), MPI_STATUSES_IGNORE);
  if (!end_req_.empty())
    MPI_Waitall(static_cast<int>(end_req_.size()), end_req_.data(), MPI_STATUSES_IGNORE);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void naive_channel::begin(std::size_t item_bytes) {
  if (item_bytes_ != item_bytes) {
    if (!recv_req_.empty()) throw std::runtime_error("naive channel: item size changed");
    item_bytes_ = slot_bytes_ = item_bytes;
    const auto w = static_cast<std::size_t>(window_);
    send_buf_.assign(w * slot_bytes_, std::byte{});
    recv_buf_.assign(w * slot_bytes_, std::byte{});
    send_req_.assign(w, MPI_REQUEST_NULL);
    recv_req_.assign(w, MPI_REQUEST_NULL);
    done_idx_.assign(w, 0);
    free_.clear();
    for (int s = window_ - 1; s >= 0; --s) free_.push_back(s);
    for (int s = 0; s < window_; ++s)
      check_mpi(MPI_Irecv(recv_buf_.data() + static_cast<std::size_t>(s) * slot_bytes_,
                          static_cast<int>(slot_bytes_), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                          comm_, &recv_req_[static_cast<std::size_t>(s)]),
                "MPI_Irecv");
  }
  ends_ = 0;
  end_sent_ = false;
  current_ = -1;
  redeliver_ = false;
  wire_ = 0;
  self_.clear();
  self_head_ = 0;
}

bool naive_channel::reclaim() {
  int n = 0;
  check_mpi(MPI_Testsome(window_, send_req_.data(), &n, done_idx_.data(), MPI_STATUSES_IGNORE),
            "MPI_Testsome");
  for (int i = 0; i < n && n != MPI_UNDEFINED; ++i)
    free_.push_back(done_idx_[static_cast<std::size_t>(i)]);
  return !free_.empty();
}

void naive_channel::repost_current() {
  if (current_ >= 0 && !redeliver_) {
    const auto s = static_cast<std::size_t>(current_);
    check_mpi(MPI_Irecv(recv_buf_.data() + s * slot_bytes_, static_cast<int>(slot_bytes_), MPI_BYTE,
                        MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &recv_req_[s]),
              "MPI_Irecv");
    current_ = -1;
  } else if (current_ == -2 && !redeliver_) {
    current_ = -1;
  }
}

const std::byte* naive_channel::pull(int& from) {
  if (redeliver_) {
    redeliver_ = false;
    from = current_from_;
    return current_ == -2 ? self_.data() + self_head_ - item_bytes_
                          : recv_buf_.data() + static_cast<std::size_t>(current_) * slot_bytes_;
  }
  repost_current();
  if (self_head_ != 0 && self_head_ == self_.size()) {
    self_.clear();
    self_head_ = 0;
  }
  if (self_head_ < self_.size()) {
    const std::byte* p = self_.data() + self_head_;
    self_head_ += item_bytes_;
    self_peak_ = std::max(self_peak_, self_.capacity());
    current_ = -2;
    from = current_from_ = rank_;
    return p;
  }
  for (;;) {
    int flag = 0;
    MPI_Status st;
    const auto h = static_cast<std::size_t>(head_);
    check_mpi(MPI_Test(&recv_req_[h], &flag, &st), "MPI_Test");
    if (!flag) return nullptr;
    head_ = (head_ + 1) % window_;
    current_ = static_cast<int>(h);
    if (st.MPI_TAG == end_tag) {
      ++ends_;
      repost_current();
      continue;
    }
    from = current_from_ = st.MPI_SOURCE;
    return recv_buf_.data() + h * slot_bytes_;
  }
}

bool naive_channel::unpull() {
  if (current_ == -1 || redeliver_) return false;
  redeliver_ = true;
  return true;
}

bool naive_channel::advance(bool done) {
  repost_current();
  reclaim();
  if (!done) return true;
  if (!end_sent_) {
    // Sent after every item: MPI's non-overtaking order makes it arrive last.
    end_req_.assign(static_cast<std::size_t>(n_ranks_), MPI_REQUEST_NULL);
    for (int r = 0; r < n_ranks_; ++r)
      if (r != rank_)
        check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, r, end_tag, comm_,
                            &end_req_[static_cast<std::size_t>(r)]),
                  "MPI_Isend");
    end_sent_ = true;
  }
  if (ends_ < n_ranks_ - 1 || self_head_ < self_.size() || redeliver_) return true;
  int flag = 0;
  check_mpi(MPI_Testall(window_, send_req_.data(), &flag, MPI_STATUSES_IGNORE), "MPI_Testall");
  if (!flag) return true;
  check_mpi(
      MPI_Testall(static_cast<int>(end_req_.size()), end_req_.data(), &flag, MPI_STATUSES_IGNORE),
      "MPI_Testall");
  if (!flag) return true;
  free_.clear();
  for (int s = window_ - 1; s >= 0; --s) free_.push_back(s);
  return false;
}

void naive_channel::reset() {
  repost_current();
  self_.clear();
  self_head_ = 0;
}

// ---------------------------------------------------------------------------------------
// alltoallv_channel

alltoallv_channel::alltoallv_channel(MPI_Comm comm, const kind_spec&, const options&) {
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &n_ranks_);
  buckets_.resize(static_cast<std::size_t>(n_ranks_));
  recv_end_.assign(static_cast<std::size_t>(n_ranks_) + 1, 0);
}

alltoallv_channel::~alltoallv_channel() {
  if (item_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&item_type_);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void alltoallv_channel::begin(std::size_t item_bytes) {
  if (item_bytes != item_bytes_) {
    if (item_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&item_type_);
    check_mpi(MPI_Type_contiguous(static_cast<int>(item_bytes), MPI_BYTE, &item_type_),
              "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&item_type_), "MPI_Type_commit");
    item_bytes_ = item_bytes;
  }
  for (auto& b : buckets_) b.clear();
  exchanged_ = redeliver_ = false;
  n_recv_ = next_ = 0;
  from_ = 0;
  wire_ = 0;
}

bool alltoallv_channel::advance(bool done) {
  if (!done) return true;
  if (!exchanged_) {
    const auto p = static_cast<std::size_t>(n_ranks_);
    std::vector<int> scount(p), sdispl(p), rcount(p), rdispl(p);
    std::size_t total = 0, held = 0;
    for (std::size_t r = 0; r < p; ++r) {
      scount[r] = static_cast<int>(buckets_[r].size() / item_bytes_);
      sdispl[r] = static_cast<int>(total);
      total += static_cast<std::size_t>(scount[r]);
      held += buckets_[r].capacity();
      if (static_cast<int>(r) != rank_) wire_ += buckets_[r].size();
    }
    check_mpi(MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, comm_),
              "MPI_Alltoall");
    std::size_t rtotal = 0;
    for (std::size_t r = 0; r < p; ++r) {
      rdispl[r] = static_cast<int>(rtotal);
      rtotal += static_cast<std::size_t>(rcount[r]);
      recv_end_[r + 1] = rtotal;
    }
    send_.resize(total * item_bytes_);
    for (std::size_t r = 0; r < p; ++r)
      if (!buckets_[r].empty())
        std::memcpy(send_.data() + static_cast<std::size_t>(sdispl[r]) * item_bytes_,
                    buckets_[r].data(), buckets_[r].size());
    recv_.resize(rtotal * item_bytes_);
    check_mpi(MPI_Alltoallv(send_.data(), scount.data(), sdispl.data(), item_type_, recv_.data(),
                            rcount.data(), rdispl.data(), item_type_, comm_),
              "MPI_Alltoallv");
    peak_ = std::max(peak_, held + send_.capacity() + recv_.capacity());
    n_recv_ = rtotal;
    exchanged_ = true;
    return true;
  }
  return next_ < n_recv_ || redeliver_;
}

void alltoallv_channel::reset() {
  for (auto& b : buckets_) b.clear();
}
}  // namespace convoy::bench
