// The watchdog's board without one-sided MPI (TERM-61, status_window.hpp): queries and
// answers on a duplicate of the conveyor's communicator. A query is an empty message with
// tag `query_tag`; the answer is the answerer's record with tag `answer_tag`. Nothing here
// blocks: sends are eager-sized and completed later, receives are probed first.
#include <algorithm>
#include <chrono>
#include <convoy/base/error.hpp>
#include <convoy/termination/state_machine.hpp>
#include <cstdio>
#include <thread>
#include <vector>

#include "status_window.hpp"

namespace convoy::termination::detail {

namespace {

constexpr int query_tag = 1;
constexpr int answer_tag = 2;
constexpr int record_bytes = static_cast<int>(sizeof(termination::rank_status));

}  // namespace

status_messages::status_messages(MPI_Comm comm, double seconds)
    : timeout_ms_(static_cast<std::int64_t>(seconds * 1000.0)), wait_ms_(answer_wait_ms(seconds)) {
  CONVOY_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  try {
    CONVOY_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    CONVOY_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    CONVOY_MPI_CHECK(MPI_Comm_size(comm_, &size_));
    // Every pair's connection made now, collectively: made lazily by a first query, it can
    // take a rank that calls MPI seldom (a slow rank, once per advance) several calls to
    // accept, longer than the reader waits for its answer.
    std::vector<char> out(static_cast<std::size_t>(size_)), in(out.size());
    CONVOY_MPI_CHECK(MPI_Alltoall(out.data(), 1, MPI_CHAR, in.data(), 1, MPI_CHAR, comm_));
  } catch (...) {
    MPI_Comm_free(&comm_);
    throw;
  }
  const auto n = static_cast<std::size_t>(size_);
  known_.resize(n);
  asked_ms_.assign(n, 0);
  queries_.assign(n, MPI_REQUEST_NULL);
}

status_messages::~status_messages() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  // Sends are small (eager): they complete without their receivers. Unanswered queries and
  // unread answers are dropped with the communicator.
  for (MPI_Request& q : queries_)
    if (q != MPI_REQUEST_NULL) MPI_Wait(&q, MPI_STATUS_IGNORE);
  for (auto& a : answers_) MPI_Wait(&a->request, MPI_STATUS_IGNORE);
  MPI_Comm_free(&comm_);
}

void status_messages::reap() noexcept {
  std::erase_if(answers_, [](const std::unique_ptr<answer>& a) {
    int done = 0;
    return MPI_Test(&a->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done != 0;
  });
  for (MPI_Request& q : queries_) {
    int done = 0;
    if (q != MPI_REQUEST_NULL) MPI_Test(&q, &done, MPI_STATUS_IGNORE);
  }
}

void status_messages::serve() {
  for (;;) {
    int flag = 0;
    MPI_Status st;
    CONVOY_MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &st));
    if (!flag) break;
    if (st.MPI_TAG == query_tag) {
      CONVOY_MPI_CHECK(
          MPI_Recv(nullptr, 0, MPI_BYTE, st.MPI_SOURCE, query_tag, comm_, MPI_STATUS_IGNORE));
      auto a = std::make_unique<answer>();
      a->record = mine_;
      CONVOY_MPI_CHECK(MPI_Isend(&a->record, record_bytes, MPI_BYTE, st.MPI_SOURCE, answer_tag,
                                 comm_, &a->request));
      answers_.push_back(std::move(a));
    } else {
      termination::rank_status got;
      CONVOY_MPI_CHECK(MPI_Recv(&got, record_bytes, MPI_BYTE, st.MPI_SOURCE, answer_tag, comm_,
                                MPI_STATUS_IGNORE));
      const auto from = static_cast<std::size_t>(st.MPI_SOURCE);
      known_[from] = got;
      asked_ms_[from] = 0;
    }
  }
  reap();
}

void status_messages::ask_all(std::int64_t now) {
  for (int r = 0; r < size_; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (r == rank_ || asked_ms_[i] != 0 || queries_[i] != MPI_REQUEST_NULL) continue;
    asked_ms_[i] = now;
    CONVOY_MPI_CHECK(MPI_Isend(nullptr, 0, MPI_BYTE, r, query_tag, comm_, &queries_[i]));
  }
}

void status_messages::publish(const termination::rank_status& s) noexcept {
  mine_ = s;
  try {
    serve();
    // Half a timeout without progress inside a cycle: ask now, so that by the read a
    // rank that does not answer has been silent for half a timeout.
    const std::int64_t now = termination::wall_clock_ms();
    if (termination::in_cycle(static_cast<termination::state>(s.state)) &&
        now - s.last_progress_ms >= timeout_ms_ / 2)
      ask_all(now);
  } catch (...) {  // the next read reports what fails; publishing never throws
  }
}

std::vector<termination::rank_status> status_messages::read_all() {
  const std::int64_t now = termination::wall_clock_ms();
  ask_all(now);
  const auto waiting = [&] {
    for (int r = 0; r < size_; ++r)
      if (r != rank_ && asked_ms_[static_cast<std::size_t>(r)] != 0) return true;
    return false;
  };
  serve();
  while (waiting() && termination::wall_clock_ms() - now < wait_ms_) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    serve();
  }
  std::vector<termination::rank_status> all = known_;
  all[static_cast<std::size_t>(rank_)] = mine_;
  for (int r = 0; r < size_; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (r == rank_ || asked_ms_[i] == 0) continue;
    // Silent through the wait while advancing ranks answer within a publish period.
    describe_silent(all[i], r, asked_ms_[i], mine_);
  }
  return all;
}

void status_messages::print(const std::string& text) noexcept { print_diagnosis(text); }

void status_messages::abort() noexcept { abort_job(); }

}  // namespace convoy::termination::detail
