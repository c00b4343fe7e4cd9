// One phase of the coroutine runtime: start tasks (at most max_tasks in flight), resume
// them as replies arrive, serve other ranks' requests, and end through the conveyors' own
// termination (Maley & DeVinney 2019, sec. 3.3 for two conveyors, as in bale's index-gather: the
// reply conveyor is done once the request conveyor is complete and no reply is held).
#include <algorithm>
#include <string>

#include "runtime_impl.hpp"

namespace convoy::async {

namespace {

// Every rank must have defined the same remote functions in the same order: the count
// and a hash of their signatures agree, or every rank throws the same error.
// `combiner_values` is the value size of each combinable update, in order: they count too.
void check_definitions(MPI_Comm comm, const std::vector<detail::handler_entry>& handlers,
                       const std::vector<std::size_t>& combiner_values) {
  std::uint64_t fp = detail::mix_signature(0, handlers.size());
  for (const auto& h : handlers) fp = detail::mix_signature(fp, h.signature);
  fp = detail::mix_signature(fp, combiner_values.size());
  for (const std::size_t b : combiner_values) fp = detail::mix_signature(fp, b);
  // One reduction: the maxima of x and ~x equal x and ~x on every rank iff all agree.
  const std::uint64_t n = handlers.size();
  const std::uint64_t mine[4] = {fp, ~fp, n, ~n};
  std::uint64_t agreed[4] = {0, 0, 0, 0};
  CONVOY_MPI_CHECK(MPI_Allreduce(mine, agreed, 4, MPI_UINT64_T, MPI_MAX, comm));
  if (agreed[0] != fp || agreed[1] != ~fp || agreed[2] != n || agreed[3] != ~n)
    throw convoy::error(
        "convoy::async: the ranks define different remote functions or combinable updates (" +
        std::to_string(~agreed[3]) + " to " + std::to_string(agreed[2]) +
        " per rank, or different argument/result types): define the same functions in the "
        "same order on every rank before the phase");
}

// The lowest failing rank's message, on every rank ("" if none failed); a rank whose error
// is only a failed call's consequence (`secondary`) counts after every rank with a cause.
// Collective.
std::string agree_on_error(MPI_Comm comm, int rank, int n_ranks, const std::string& mine,
                           bool secondary) {
  const long long n = n_ranks;
  const long long candidate = mine.empty() ? 2 * n : (secondary ? n : 0) + rank;
  long long best = 2 * n;
  CONVOY_MPI_CHECK(MPI_Allreduce(&candidate, &best, 1, MPI_LONG_LONG, MPI_MIN, comm));
  if (best == 2 * n) return {};
  const int lowest = static_cast<int>(best % n);
  int len = rank == lowest ? static_cast<int>(mine.size()) : 0;
  CONVOY_MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, lowest, comm));
  std::string text = rank == lowest ? mine : std::string(static_cast<std::size_t>(len), ' ');
  CONVOY_MPI_CHECK(MPI_Bcast(text.data(), len, MPI_CHAR, lowest, comm));
  return text;
}

}  // namespace

// The phase's records, sized for the largest arguments and result defined, and both
// conveyors begun (collective: the definitions are checked to agree first).
void runtime::impl::open_phase() {
  impl& m = *this;
  std::vector<std::size_t> value_sizes;
  for (const auto& c : m.combiners) value_sizes.push_back(c.entry.value_bytes);
  check_definitions(m.comm, m.handlers, value_sizes);
  std::size_t max_args = 0, max_result = 0;
  for (const auto& h : m.handlers) {
    max_args = std::max(max_args, h.args_bytes);
    max_result = std::max(max_result, h.result_bytes);
  }
  m.id_bytes = m.handlers.size() <= 1 ? 0 : (m.handlers.size() <= 256 ? 1 : 2);
  m.request_bytes = k_token_bytes + m.id_bytes + max_args;
  m.reply_bytes = k_token_bytes + max_result;
  m.request_record.assign(m.request_bytes + 8, std::byte{0});
  m.reply_record.assign(m.reply_bytes + 8, std::byte{0});
  m.held_record.assign(m.reply_bytes + 8, std::byte{0});
  m.serve_ctx = {};
  m.serve_ctx.requests = m.requests;
  m.serve_ctx.replies = m.replies;
  m.serve_ctx.id_bytes = m.id_bytes;
  m.serve_ctx.reply_bytes = m.reply_bytes;
  m.serve_ctx.reply_record = m.reply_record.data();
  m.check(m.requests->begin(m.request_bytes), "begin", *m.requests);
  m.check(m.replies->begin(m.reply_bytes), "begin", *m.replies);
  m.start_combiners();
  m.first_error.clear();
  m.first_error_secondary = false;
  m.held = {};
  m.pending.clear();
  m.running = true;
}

void runtime::run_phase(spawner& s) {
  auto& m = *impl_;
  if (m.running) throw convoy::error("convoy::async: a phase is already running");
  m.open_phase();
  hot_.requests = m.requests;
  hot_.handlers = m.handlers.data();
  hot_.n_handlers = static_cast<std::uint32_t>(m.handlers.size());
  hot_.request_bytes = m.request_bytes;
  hot_.id_bytes = m.id_bytes;
  hot_.since_serve = 0;
  hot_.self_posted = false;
  hot_.calls_waiting = false;
  hot_.combiners = m.combiner_engines.data();
  hot_.n_combiners = static_cast<std::uint32_t>(m.combiner_engines.size());
  hot_.open = true;
  ++stats_.phases;
  try {
    for (;;) {
      // Answer other ranks first (their tasks wait on it), then resume the tasks whose
      // replies came, then start new ones while the cap and the paths allow.
      m.serve();
      m.collect(true);
      while (!m.ready.empty()) {
        const auto h = m.ready.front();
        m.ready.pop_front();
        h.resume();
      }
      if (m.send_pending()) start_roots(s);
      const bool can_start =
          m.pending.empty() && (!m.new_roots.empty() || (m.first_error.empty() && s.next < s.n &&
                                                         hot_.root.in_flight < options_.max_tasks));
      if (!can_start) m.flush_idle(stats_);
      const bool local_done = hot_.root.in_flight == 0 && m.new_roots.empty() &&
                              (s.next >= s.n || !m.first_error.empty());
      const int rq = m.requests->advance(local_done);
      m.check(rq, "advance", *m.requests);
      // Combinable updates (combine.cpp): complete once every one of them is applied.
      const bool combined = m.combiners.empty() || m.advance_combiners(local_done);
      if (rq != termination::done) {
        if (m.replies_in_play()) m.advance_replies(false);
        continue;
      }
      const int rp = m.replies->advance(!m.held.has);
      m.check(rp, "advance", *m.replies);
      if (rp == termination::done && combined) break;
    }
  } catch (...) {
    // A transport failure: nothing collective can follow on this rank.
    m.running = false;
    hot_.open = false;
    hot_.n_combiners = 0;
    throw;
  }
  m.running = false;
  hot_.open = false;
  hot_.n_combiners = 0;
  if (hot_.busy_slots != 0) {  // a failed phase: calls that were never answered
    hot_.slots.clear();
    hot_.free_slot = detail::k_no_slot;
    hot_.busy_slots = 0;
  }
  m.check(m.replies->reset(), "reset", *m.replies);
  m.check(m.requests->reset(), "reset", *m.requests);
  m.finish_combiners(stats_);
  const std::string failed =
      agree_on_error(m.comm, rank_, n_ranks_, m.first_error, m.first_error_secondary);
  if (!failed.empty()) throw convoy::error("convoy::async phase failed: " + failed);
}

void runtime::start_roots(spawner& s) {
  auto& m = *impl_;
  detail::root_link& root = hot_.root;
  while (!m.new_roots.empty()) {
    const auto h = m.new_roots.front();
    m.new_roots.pop_front();
    ++root.in_flight;
    ++stats_.tasks;
    h.resume();
  }
  // A call that found its path full holds every later request of this rank behind it:
  // a task started now would only queue its call too, so none starts until the path
  // has taken the waiting calls (send_pending) — then new calls take the inline push.
  // The limit drops to 0 as soon as that happens (queue_call) or a task fails (note_error).
  root.limit = m.first_error.empty() && !hot_.calls_waiting ? options_.max_tasks : 0;
  const std::size_t first = s.next;
  std::size_t failed = 0;
  try {
    s.start(s.object, s, root);
  } catch (const std::exception& e) {
    failed = 1;
    m.note_error("creating task " + std::to_string(s.next - 1) + " on rank " +
                 std::to_string(rank_) + " threw: " + e.what());
  }
  stats_.tasks += s.next - first - failed;
  stats_.peak_tasks = std::max<std::uint64_t>(stats_.peak_tasks, root.peak);
}

}  // namespace convoy::async
