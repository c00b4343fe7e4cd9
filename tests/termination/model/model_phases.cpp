// The phases of one model-based sequence: random calls in every state, the steady check,
// the drain to COMPLETE (termination and exactly-once), and destruction in every state.
#include <algorithm>
#include <exception>
#include <numeric>

#include "model_runner.hpp"

namespace convoy_test::model {

namespace t = convoy::termination;

run_result model_runner::run() {
  try {
    build();
    const int steps = uniform(1, 300);
    for (int i = 0; i < steps && !failed(); ++i) random_step();
    if (!failed() && uniform(0, 9) != 0) {
      drain();
      stats_.drained = true;
    }
    if (!failed()) finish();
  } catch (const std::exception& e) {
    fail(std::string("exception: ") + e.what());
  }
  run_result res = stats_;
  res.ok = !failed();
  res.calls = trace_.size();
  res.items = items_;
  res.n_ranks = p_;
  if (!res.ok)
    res.failure = "seed " + std::to_string(seed_) + " (" + setup_.label + "): " + failure_ +
                  "\nlast calls (replay the whole trace with --seeds " + std::to_string(seed_) +
                  ".." + std::to_string(seed_) + " --trace):\n" + trace_text(60);
  return res;
}

bool model_runner::all_at(int cycle) const {
  for (int r = 0; r < p_; ++r) {
    const rank_model& m = model_->at(r);
    if (m.cycle != cycle || (m.st != state::complete && m.st != state::dormant)) return false;
  }
  return true;
}

void model_runner::random_step() {
  const int w = uniform(0, 99);
  if (w < 12) return do_deliver(uniform(1, 8));
  if (w < 14) return do_deliver(1 << 20);
  if (w < 16 && setup_.options.steady) {
    const int c = model_->at(0).cycle;
    bool steady = c >= 0;
    for (int r = 0; r < p_; ++r)
      steady = steady && model_->at(r).st == state::working && model_->at(r).cycle == c;
    if (steady) return steady_check();
  }
  rank_step(uniform(0, p_ - 1));
}

void model_runner::pull_burst(int r, int n, bool rigid) {
  for (int k = 0; k < n && !failed(); ++k) {
    const int rc = do_pull(r, rigid);
    if (rc == t::error_elastic) {
      rigid = false;
      continue;
    }
    if (rc != 1) return;
    if (uniform(0, 11) == 0) do_unpull(r);
  }
}

// Any call, legal or not, except a successful collective one outside the plan (a begin
// of an unplanned cycle).
void model_runner::misuse(int r) {
  const rank_model& m = model_->at(r);
  switch (uniform(0, 8)) {
    case 0:
      do_push(r, random_dest(), uniform(0, 9) == 0);
      break;
    case 1:
      do_epush(r, random_dest(), random_epush_bytes(), uniform(0, 9) == 0);
      break;
    case 2:
      do_pull(r, uniform(0, 1) == 1);
      break;
    case 3:
      do_unpull(r);
      break;
    case 4:
      do_advance(r, uniform(0, 1) == 1);
      break;
    case 5:
      do_flush(r);
      break;
    case 6:
      if (m.st != state::complete) do_reset(r);  // legal in COMPLETE: not a misuse
      break;
    default: {
      const bool next_exists = m.cycle + 1 < static_cast<int>(planned_.size());
      if (m.st == state::dormant && !next_exists)
        do_begin(r, bad_begin_bytes());
      else if (m.st == state::dormant)
        do_begin(r, uniform(0, 1) ? planned_bytes(m.cycle + 1) : bad_begin_bytes());
      else
        do_begin(r, uniform(0, 1) ? planned_bytes(m.cycle) : bad_begin_bytes());
    }
  }
}

void model_runner::rank_step(int r) {
  const rank_model& m = model_->at(r);
  const int w = uniform(0, 99);
  const bool rigid = elastic() ? uniform(0, 9) < 4 : uniform(0, 9) != 0;
  switch (m.st) {
    case state::dormant:
      if (w < 60 && m.cycle + 1 < static_cast<int>(planned_.size()))
        return static_cast<void>(do_begin(r, planned_bytes(m.cycle + 1)));
      return misuse(r);
    case state::working:
      if (w < 32) {
        for (int k = uniform(1, 16); k > 0 && !failed(); --k)
          if (do_push(r, random_dest(), uniform(0, 29) == 0) == 0) break;
        return;
      }
      if (w < 40)
        return static_cast<void>(
            do_epush(r, random_dest(), random_epush_bytes(), uniform(0, 19) == 0));
      if (w < 60) return pull_burst(r, uniform(1, 16), rigid);
      if (w < 65) return static_cast<void>(do_unpull(r));
      if (w < 77) return static_cast<void>(do_advance(r, false));
      if (w < 80) return static_cast<void>(do_advance(r, true));
      if (w < 84) return static_cast<void>(do_flush(r));
      return misuse(r);
    case state::endgame:
    case state::cleanup:
      if (w < 35) return pull_burst(r, uniform(1, 16), rigid);
      if (w < 42) return static_cast<void>(do_unpull(r));
      if (w < 75) return static_cast<void>(do_advance(r, true));
      if (w < 80) return static_cast<void>(do_flush(r));
      return misuse(r);
    case state::complete:
      if (w < 40) return static_cast<void>(do_reset(r));
      return misuse(r);
  }
}

// Steady engines (TERM-44): while every rank keeps calling advance(false) and pull, every
// pushed item is delivered, nobody entering the endgame.
void model_runner::steady_check() {
  const int c = model_->at(0).cycle;
  record('-', -1, 2, 0, 0, 0);
  ++stats_.steady_checks;
  const int max_rounds = 2000;
  std::vector<int> order(static_cast<std::size_t>(p_));
  std::iota(order.begin(), order.end(), 0);
  for (int round = 0; round < max_rounds && !failed(); ++round) {
    if (model_->owed(c) == 0) return;
    std::shuffle(order.begin(), order.end(), rng_);
    for (int r : order) {
      pull_burst(r, 64, !elastic());
      do_advance(r, false);
      do_deliver(uniform(0, 8));
    }
  }
  fail("steady: " + std::to_string(model_->owed(c)) + " items pushed in cycle " +
       std::to_string(c) + " not delivered after " + std::to_string(max_rounds) +
       " rounds of advance(false) and pull on every rank (TERM-44)");
}

void model_runner::drain_rank(int r, int target) {
  const rank_model& m = model_->at(r);
  if (m.cycle == target && (m.st == state::complete || m.st == state::dormant)) return;
  if (m.st == state::complete) return static_cast<void>(do_reset(r));
  if (m.st == state::dormant) return static_cast<void>(do_begin(r, planned_bytes(m.cycle + 1)));
  auto& quota = quota_[static_cast<std::size_t>(r)];
  if (m.st == state::working) {
    if (quota_cycle_[static_cast<std::size_t>(r)] != m.cycle) {
      quota = uniform(0, 24);
      quota_cycle_[static_cast<std::size_t>(r)] = m.cycle;
    }
    for (int k = uniform(1, 8); k > 0 && quota > 0 && !failed(); --k) {
      const int dest = uniform(0, p_ - 1);
      const int rc = elastic() && uniform(0, 1)
                         ? do_epush(r, dest,
                                    static_cast<std::size_t>(
                                        uniform(0, static_cast<int>(model_->max_item_bytes()))),
                                    false)
                         : do_push(r, dest, false);
      if (rc != 1) break;
      --quota;
    }
  }
  pull_burst(r, uniform(0, 32), !elastic() || uniform(0, 3) == 0);
  if (failed()) return;
  do_advance(r, m.st != state::working || quota == 0);
}

// Every rank runs Maley & DeVinney 2019, Figure 3 to COMPLETE of the latest cycle any rank began
// (ranks behind reset and begin the planned cycles in between): TERM-40..43.
void model_runner::drain() {
  int target = 0;
  for (int r = 0; r < p_; ++r) target = std::max(target, model_->at(r).cycle);
  record('-', -1, 1, 0, 0, 0);
  std::vector<int> order(static_cast<std::size_t>(p_));
  std::iota(order.begin(), order.end(), 0);
  const int max_rounds = 20000;
  for (int round = 0; round < max_rounds && !failed(); ++round) {
    if (all_at(target)) return;
    std::shuffle(order.begin(), order.end(), rng_);
    for (int r : order) {
      drain_rank(r, target);
      do_deliver(uniform(0, 6));
    }
  }
  if (failed()) return;
  std::string states;
  for (int r = 0; r < p_; ++r)
    states += " r" + std::to_string(r) + ":" + state_name(model_->at(r).st) + "/c" +
              std::to_string(model_->at(r).cycle);
  fail("no termination after " + std::to_string(max_rounds) +
       " rounds of push, pull and advance(true) on every rank:" + states);
}

// Collective destruction: after a drain, everyone resets (or not) and the engines are
// destroyed one by one with calls on the others in between; otherwise the engines are
// destroyed in whatever state they are in (the C++ engine's destructor must handle it).
void model_runner::finish() {
  record('-', -1, 3, 0, 0, 0);
  std::vector<int> order(static_cast<std::size_t>(p_));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng_);
  const int target = model_->at(0).cycle;
  if (!all_at(target)) {
    for (int r : order) do_destroy(r);
    return;
  }
  if (uniform(0, 1) == 1)
    for (int r = 0; r < p_ && !failed(); ++r)
      if (model_->at(r).st == state::complete) do_reset(r);
  for (std::size_t i = 0; i < order.size() && !failed(); ++i) {
    do_destroy(order[i]);
    for (std::size_t j = i + 1; j < order.size() && uniform(0, 2) == 0; ++j) {
      const int r = order[j];
      // Calls that are no collective: they must fail or do nothing.
      switch (uniform(0, 4)) {
        case 0:
          do_pull(r, true);
          break;
        case 1:
          do_unpull(r);
          break;
        case 2:
          do_advance(r, true);
          break;
        case 3:
          do_push(r, uniform(0, p_ - 1), false);
          break;
        default:
          do_begin(r, bad_begin_bytes());
          break;
      }
    }
  }
}

}  // namespace convoy_test::model
