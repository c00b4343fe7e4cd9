// The watchdog's diagnosis (TERM-15): from the records every rank published to the likely
// causes of a hang, in words a person can act on. Pure, apart from the local board.
#include <algorithm>
#include <chrono>
#include <convoy/termination/state_machine.hpp>
#include <convoy/termination/watchdog.hpp>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace convoy::termination {

namespace {

const char* state_name(std::int32_t s) noexcept { return to_string(static_cast<state>(s)); }

bool in_cycle(const rank_status& r) noexcept { return in_cycle(static_cast<state>(r.state)); }

std::string seconds_since(std::int64_t then_ms, std::int64_t now_ms) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << static_cast<double>(std::max<std::int64_t>(0, now_ms - then_ms)) / 1000.0 << " s";
  return out.str();
}

std::string count(std::uint64_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

std::string cause_text(const culprit& c, const rank_status& r, const rank_status& me,
                       std::int64_t now_ms) {
  const std::string who = "rank " + std::to_string(c.rank);
  switch (c.kind) {
    case culprit_kind::not_begun:
      return who + " has not begun cycle " + std::to_string(me.epoch) + " (it is " +
             state_name(r.state) + " in cycle " + std::to_string(r.epoch) + ")";
    case culprit_kind::stopped_advancing:
      return who + " has not called advance for " + seconds_since(r.last_advance_ms, now_ms) +
             " (" + state_name(r.state) + (r.said_done ? ", said done" : ", not done") + ")";
    case culprit_kind::not_pulling:
      return who + " holds " + count(r.unpulled, "unpulled item") + " and has not pulled for " +
             seconds_since(r.last_pull_ms, now_ms) + ": the ranks sending to it wait for room";
    case culprit_kind::not_done:
      break;
  }
  return who + " has not called convey_advance(c, done=1) (C++: advance(true)); it last advanced " +
         seconds_since(r.last_advance_ms, now_ms) + " ago, made progress " +
         seconds_since(r.last_progress_ms, now_ms) + " ago";
}

// "waits for rank 3's count on stage 0 (2 buffers received, no last buffer yet)".
std::string termination_text(const rank_status& r) {
  if (!in_cycle(r)) return "";
  std::string t;
  if (!r.said_done) return "stage 0 stays open until it says done";
  if (r.closing_stage >= 0)
    t = "cannot close stage " + std::to_string(r.closing_stage);
  else
    t = "every stage closed";
  if (r.wait_peer >= 0) {
    t += "; waits for rank " + std::to_string(r.wait_peer) + "'s count on stage " +
         std::to_string(r.wait_stage) + " (" + count(r.wait_received, "buffer") + " received, ";
    t += r.wait_expected == rank_status::unknown ? std::string("its last buffer not yet come)")
                                                 : "of " + std::to_string(r.wait_expected) + ")";
    if (r.unfinished > 1) t += " and " + count(r.unfinished - 1, "more in-link");
  }
  return t;
}

std::string links_text(const rank_status& r) {
  std::string t;
  const auto n = std::min<std::uint32_t>(r.n_links, rank_status::max_links);
  for (std::uint32_t i = 0; i < n; ++i) {
    const link_status& l = r.links[i];
    if (!t.empty()) t += "; ";
    if (l.out != 0) {
      t += "to rank " + std::to_string(l.peer) + " (stage " + std::to_string(l.stage) + "): ";
      if (l.buffers) t += "no free buffer (waits for credit)";
      if (l.buffers && l.items) t += ", ";
      if (l.items) t += count(l.items, "item") + " not sent";
    } else {
      t += "from rank " + std::to_string(l.peer) + " (stage " + std::to_string(l.stage) +
           "): " + count(l.buffers, "buffer") + " held";
      if (l.items) t += ", " + count(l.items, "item");
    }
  }
  return t;
}

}  // namespace

void local_board::publish(const rank_status& s) noexcept {
  const std::lock_guard<std::mutex> hold(lock_);
  if (s.rank >= 0 && static_cast<std::size_t>(s.rank) < records_.size())
    records_[static_cast<std::size_t>(s.rank)] = s;
}

std::vector<rank_status> local_board::read_all() {
  const std::lock_guard<std::mutex> hold(lock_);
  return records_;
}

void local_board::print(const std::string& text) noexcept {
  const std::lock_guard<std::mutex> hold(lock_);
  try {
    printed_.push_back(text);
  } catch (...) {  // a diagnosis lost to memory exhaustion is not worth a crash
  }
}

std::vector<std::string> local_board::printed() const {
  const std::lock_guard<std::mutex> hold(lock_);
  return printed_;
}

std::int64_t wall_clock_ms() noexcept {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<culprit> find_culprits(const std::vector<rank_status>& all, int reporter,
                                   std::int64_t now_ms, double timeout_seconds) {
  std::vector<culprit> found;
  if (reporter < 0 || static_cast<std::size_t>(reporter) >= all.size()) return found;
  const rank_status& me = all[static_cast<std::size_t>(reporter)];
  // The stall is timed from the reporter's last progress, which can come a moment before the
  // culprit's last advance or pull: measured against the whole timeout, a rank that stopped
  // then would miss it by milliseconds. A running rank advances every few milliseconds, so
  // half the timeout tells the two apart without that race.
  const auto quiet_ms = static_cast<std::int64_t>(timeout_seconds * 500.0);
  for (const rank_status& r : all) {
    if (r.rank < 0 || r.epoch > me.epoch) continue;  // ahead of the reporter: not holding it
    if (!in_cycle(r)) {
      // DORMANT or COMPLETE in an earlier cycle; in this one it has finished.
      if (r.epoch < me.epoch) found.push_back({r.rank, culprit_kind::not_begun});
    } else if (now_ms - r.last_advance_ms >= quiet_ms) {
      found.push_back({r.rank, culprit_kind::stopped_advancing});
    } else if (r.unpulled > 0 && now_ms - r.last_pull_ms >= quiet_ms) {
      found.push_back({r.rank, culprit_kind::not_pulling});
    } else if (r.epoch < me.epoch) {
      found.push_back({r.rank, culprit_kind::not_begun});
    }
  }
  // A rank that has not said done holds the others up only if nothing else explains the
  // stall: ranks pushing into a full path have not said done either.
  if (found.empty())
    for (const rank_status& r : all)
      if (r.rank >= 0 && r.epoch == me.epoch && r.state == static_cast<int>(state::working) &&
          !r.said_done)
        found.push_back({r.rank, culprit_kind::not_done});
  return found;
}

std::int64_t last_progress_anywhere(const std::vector<rank_status>& all) noexcept {
  std::int64_t latest = 0;
  for (const rank_status& r : all)
    if (r.rank >= 0) latest = std::max(latest, r.last_progress_ms);
  return latest;
}

bool is_printer(const std::vector<rank_status>& all, int me, std::int64_t stall_began_ms,
                std::int64_t now_ms, double timeout_seconds) {
  if (me < 0 || static_cast<std::size_t>(me) >= all.size()) return false;
  const auto half_ms = static_cast<std::int64_t>(timeout_seconds * 500.0);
  const std::uint32_t epoch = all[static_cast<std::size_t>(me)].epoch;
  for (const rank_status& r : all) {
    if (r.rank < 0) continue;
    if (r.diagnosed_ms >= stall_began_ms) return false;
    if (r.rank < me && r.epoch == epoch && in_cycle(r) && now_ms - r.last_advance_ms < half_ms &&
        now_ms - r.last_progress_ms >= half_ms)
      return false;
  }
  return true;
}

std::string diagnose(const std::vector<rank_status>& all, int reporter, std::int64_t now_ms,
                     double timeout_seconds) {
  std::ostringstream out;
  if (reporter < 0 || static_cast<std::size_t>(reporter) >= all.size()) return "";
  const rank_status& me = all[static_cast<std::size_t>(reporter)];
  out << "convoy watchdog: rank " << reporter << " has made no progress for "
      << seconds_since(me.last_progress_ms, now_ms) << " in cycle " << me.epoch
      << " of a conveyor over " << all.size() << " ranks (CONVOY_WATCHDOG=" << timeout_seconds
      << ")\n";
  const auto causes = find_culprits(all, reporter, now_ms, timeout_seconds);
  out << "  likely cause:";
  if (causes.empty()) out << " none found: every rank advances, pulls and has said done";
  out << '\n';
  for (const culprit& c : causes)
    out << "    " << cause_text(c, all[static_cast<std::size_t>(c.rank)], me, now_ms) << '\n';
  std::string not_done;
  for (const rank_status& r : all)
    if (r.rank >= 0 && r.epoch == me.epoch && in_cycle(r) && !r.said_done)
      not_done.append(" ").append(std::to_string(r.rank));
  out << "  not said done:" << (not_done.empty() ? " none" : not_done) << '\n';
  // One line per rank; past 16 ranks only the culprits and the reporter.
  for (const rank_status& r : all) {
    if (r.rank < 0) continue;
    const bool named = std::any_of(causes.begin(), causes.end(),
                                   [&](const culprit& c) { return c.rank == r.rank; });
    if (all.size() > 16 && !named && r.rank != reporter) continue;
    out << "  rank " << r.rank << ": " << state_name(r.state) << " cycle " << r.epoch
        << (r.said_done ? ", said done" : ", not done") << ", last advance "
        << seconds_since(r.last_advance_ms, now_ms) << " ago, last progress "
        << seconds_since(r.last_progress_ms, now_ms) << " ago, last pull "
        << seconds_since(r.last_pull_ms, now_ms) << " ago, ";
    if (r.elastic)
      out << "unpulled items not counted (elastic), ";
    else
      out << count(r.unpulled, "unpulled item") << ", ";
    out << count(r.credits_owed, "credit") << " owed";
    if (r.sending) out << ", buffers waiting to leave";
    const std::string term = termination_text(r);
    if (!term.empty()) out << "; " << term;
    const std::string links = links_text(r);
    if (!links.empty()) out << "; waiting on links: " << links;
    out << '\n';
  }
  return out.str();
}

}  // namespace convoy::termination
