// The watchdog (termination/README.md, TERM-15): the culprits and the text from published
// records (pure), the one-printer rule, the records the engine publishes (checked against
// what the test pushed and pulled), and a hang on the simulated network diagnosed once.
#include <gtest/gtest.h>

#include <chrono>
#include <convoy/termination/simulation.hpp>
#include <convoy/termination/watchdog.hpp>
#include <convoy_test/plans.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace t = convoy::termination;
using convoy_test::mesh_plan;

constexpr std::int64_t now_ms = 1'000'000;

// A rank in ENDGAME of cycle 1 that said done and advances and pulls now.
t::rank_status waiting_rank(int rank) {
  t::rank_status r;
  r.rank = rank;
  r.state = static_cast<int>(t::state::endgame);
  r.epoch = 1;
  r.said_done = 1;
  r.last_advance_ms = now_ms - 10;
  r.last_progress_ms = now_ms - 3000;
  r.last_pull_ms = now_ms - 3000;
  return r;
}

std::vector<t::rank_status> job(int n) {
  std::vector<t::rank_status> all;
  all.reserve(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) all.push_back(waiting_rank(r));
  return all;
}

TEST(Watchdog, RankThatNeverSaysDone) {  // TERM-15
  auto all = job(5);
  all[3].state = static_cast<int>(t::state::working);
  all[3].said_done = 0;
  EXPECT_EQ(t::find_culprits(all, 0, now_ms, 1.0),
            (std::vector<t::culprit>{{3, t::culprit_kind::not_done}}));
  const std::string text = t::diagnose(all, 0, now_ms, 1.0);
  EXPECT_EQ(text.rfind("convoy watchdog: rank 0 has made no progress for 3.0 s in cycle 1", 0), 0u)
      << text;
  EXPECT_NE(text.find("likely cause:\n    rank 3 has not called convey_advance(c, done=1)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("not said done: 3\n"), std::string::npos) << text;
}

TEST(Watchdog, RankThatStoppedAdvancingComesBeforeNotDone) {  // TERM-15
  auto all = job(6);
  all[5].state = static_cast<int>(t::state::working);
  all[5].said_done = 0;
  all[5].last_advance_ms = now_ms - 41'000;
  EXPECT_EQ(t::find_culprits(all, 1, now_ms, 30.0),
            (std::vector<t::culprit>{{5, t::culprit_kind::stopped_advancing}}));
  EXPECT_NE(t::diagnose(all, 1, now_ms, 30.0).find("rank 5 has not called advance for 41.0 s"),
            std::string::npos);
  // Half the timeout or more is enough: the stall was timed from the reporter's last
  // progress, which may come just before the culprit's last advance (0.99 s of 1 s).
  all[5].last_advance_ms = now_ms - 990;
  EXPECT_EQ(t::find_culprits(all, 1, now_ms, 1.0),
            (std::vector<t::culprit>{{5, t::culprit_kind::stopped_advancing}}));
  // Below half the timeout it is only a rank that has not said done.
  all[5].last_advance_ms = now_ms - 41'000;
  EXPECT_EQ(t::find_culprits(all, 1, now_ms, 90.0),
            (std::vector<t::culprit>{{5, t::culprit_kind::not_done}}));
}

TEST(Watchdog, RankThatDoesNotPullIsBlamedNotThePushers) {  // TERM-15
  auto all = job(4);
  for (auto& r : all) {
    r.state = static_cast<int>(t::state::working);
    r.said_done = 0;
  }
  all[2].unpulled = 812;
  all[2].credits_owed = 6;
  all[0].unpulled = 3;  // pulled recently: not a culprit
  all[0].last_pull_ms = now_ms - 100;
  EXPECT_EQ(t::find_culprits(all, 1, now_ms, 2.0),
            (std::vector<t::culprit>{{2, t::culprit_kind::not_pulling}}));
  const std::string text = t::diagnose(all, 1, now_ms, 2.0);
  EXPECT_NE(text.find("rank 2 holds 812 unpulled items and has not pulled for 3.0 s"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("6 credits owed"), std::string::npos) << text;
  EXPECT_NE(text.find("not said done: 0 1 2 3\n"), std::string::npos) << text;
}

TEST(Watchdog, FinishedRanksAreNotCulpritsLaggardsAre) {  // TERM-15
  auto all = job(4);
  all[1].state = static_cast<int>(t::state::complete);  // finished this cycle
  all[2].state = static_cast<int>(t::state::dormant);   // finished and reset
  all[3].state = static_cast<int>(t::state::dormant);   // still before this cycle's begin
  all[3].epoch = 0;
  all[0].last_advance_ms = now_ms;
  EXPECT_EQ(t::find_culprits(all, 0, now_ms, 1.0),
            (std::vector<t::culprit>{{3, t::culprit_kind::not_begun}}));
  EXPECT_NE(t::diagnose(all, 0, now_ms, 1.0).find("rank 3 has not begun cycle 1"),
            std::string::npos);
  all[3] = {};  // nothing published: skipped
  EXPECT_TRUE(t::find_culprits(all, 0, now_ms, 1.0).empty());
  EXPECT_NE(t::diagnose(all, 0, now_ms, 1.0).find("likely cause: none found"), std::string::npos);
}

TEST(Watchdog, TerminationStageAndLinksInWords) {  // TERM-15
  auto all = job(2);
  all[0].closing_stage = 1;
  all[0].wait_peer = 1;
  all[0].wait_stage = 0;
  all[0].wait_received = 2;
  all[0].unfinished = 3;
  all[0].n_links = 2;
  all[0].links[0] = {1, 0, 0, 40, 2};
  all[0].links[1] = {1, 1, 1, 1, 0};
  const std::string text = t::diagnose(all, 1, now_ms, 1.0);
  EXPECT_NE(text.find("cannot close stage 1; waits for rank 1's count on stage 0 (2 buffers "
                      "received, its last buffer not yet come) and 2 more in-links"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("waiting on links: from rank 1 (stage 0): 2 buffers held, 40 items; to "
                      "rank 1 (stage 1): 1 item not sent"),
            std::string::npos)
      << text;
}

TEST(Watchdog, OnePrinterPerStall) {  // TERM-15
  auto all = job(4);
  for (auto& r : all) r.last_progress_ms = now_ms - 1000;
  // Every rank advances and is stalled: only the lowest prints.
  EXPECT_TRUE(t::is_printer(all, 0, now_ms - 1000, now_ms, 1.0));
  EXPECT_FALSE(t::is_printer(all, 2, now_ms - 1000, now_ms, 1.0));
  // A lower rank that stopped advancing, or made progress lately, will not print.
  all[0].last_advance_ms = now_ms - 800;
  all[1].last_progress_ms = now_ms - 100;
  EXPECT_TRUE(t::is_printer(all, 2, now_ms - 1000, now_ms, 1.0));
  // Once one rank has printed during the stall, nobody else does.
  all[3].diagnosed_ms = now_ms - 500;
  EXPECT_FALSE(t::is_printer(all, 2, now_ms - 1000, now_ms, 1.0));
  // A diagnosis of an earlier stall does not count.
  EXPECT_TRUE(t::is_printer(all, 2, now_ms - 400, now_ms, 1.0));
}

TEST(Watchdog, LastProgressAnywhereIsTheLatestRecord) {  // TERM-15
  auto all = job(4);
  EXPECT_EQ(t::last_progress_anywhere(all), now_ms - 3000);
  all[2].last_progress_ms = now_ms - 400;  // a slow rank that still pushes and advances
  EXPECT_EQ(t::last_progress_anywhere(all), now_ms - 400);
  all[3].rank = -1;  // no record: skipped, whatever it holds
  all[3].last_progress_ms = now_ms;
  EXPECT_EQ(t::last_progress_anywhere(all), now_ms - 400);
  EXPECT_EQ(t::last_progress_anywhere({}), 0);
}

TEST(Watchdog, EngineStatusCountsUnpulledItemsCreditsAndTheMissingCount) {  // TERM-15
  t::engine_options o;
  o.buffer_bytes = 256;
  o.n_buffers = 2;
  t::simulation sim(mesh_plan({3}), o, 7);
  for (int r = 0; r < 3; ++r) ASSERT_EQ(sim.at(r).begin(8), 1);
  for (int src : {0, 2})
    for (std::uint64_t i = 0; i < 10; ++i) ASSERT_EQ(sim.at(src).push(&i, 1), 1);
  ASSERT_EQ(sim.at(0).advance(true), t::ok);  // rank 0 says done: its stage closes
  ASSERT_EQ(sim.at(2).flush(), 1);
  sim.network().deliver_all();
  ASSERT_EQ(sim.at(1).advance(false), t::ok);
  t::rank_status s = sim.at(1).status();
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.state, static_cast<int>(t::state::working));
  EXPECT_EQ(s.epoch, 1u);
  EXPECT_EQ(s.said_done, 0);
  EXPECT_EQ(s.unpulled, 20u);
  // Nothing released yet: every buffer sent to rank 1 is held. Rank 0 sent its data and
  // its last buffer to rank 1 and a last buffer to rank 2; rank 2 its flushed data.
  EXPECT_EQ(sim.at(0).stats().buffers_sent, 3u);
  EXPECT_EQ(s.credits_owed, sim.at(0).stats().buffers_sent - 1 + sim.at(2).stats().buffers_sent);
  ASSERT_EQ(s.n_links, 2u);  // the link holding more first
  EXPECT_EQ(s.links[0].peer, 0);
  EXPECT_EQ(s.links[0].buffers, 2u);
  EXPECT_EQ(s.links[0].items, 10u);
  EXPECT_EQ(s.links[1].peer, 2);
  EXPECT_EQ(s.closing_stage, 0);
  EXPECT_EQ(s.wait_peer, 2);  // rank 0 sent its count, rank 2 has not
  EXPECT_EQ(s.wait_received, 1u);
  EXPECT_EQ(s.wait_expected, t::rank_status::unknown);
  EXPECT_EQ(s.unfinished, 1u);
  t::item_view v;
  for (int i = 0; i < 5; ++i) ASSERT_EQ(sim.at(1).pull(v), 1);
  EXPECT_EQ(sim.at(1).status().unpulled, 15u);
  EXPECT_EQ(sim.at(0).status().said_done, 1);
}

TEST(Watchdog, EngineStatusShowsALinkWaitingForCredit) {  // TERM-15, TERM-5
  t::engine_options o;
  o.buffer_bytes = 256;
  o.n_buffers = 1;
  o.watchdog.seconds = 100;  // on, never due here: the record notes failed buffer opens
  o.watchdog.board = std::make_shared<t::local_board>(2);
  t::simulation sim(mesh_plan({2}), o, 3);
  for (int r = 0; r < 2; ++r) ASSERT_EQ(sim.at(r).begin(8), 1);
  std::uint64_t pushed = 0;
  for (int round = 0; round < 50; ++round) {  // rank 1 never pulls: rank 0 runs out of room
    while (sim.at(0).push(&pushed, 1) == 1) ++pushed;
    ASSERT_EQ(sim.at(0).advance(false), t::ok);
    ASSERT_EQ(sim.at(1).advance(false), t::ok);
    sim.network().deliver_all();
  }
  const t::rank_status s = sim.at(0).status();
  ASSERT_GE(s.n_links, 1u);
  EXPECT_EQ(s.links[0].peer, 1);
  EXPECT_EQ(s.links[0].out, 1);
  EXPECT_EQ(s.links[0].buffers, 1u);  // no free buffer toward rank 1
  EXPECT_EQ(s.sending, 1);            // its full buffer waits for rank 1's
  std::vector<t::rank_status> all{s, sim.at(1).status()};
  EXPECT_NE(t::diagnose(all, 0, t::wall_clock_ms(), 100)
                .find("to rank 1 (stage 0): no free buffer (waits for credit)"),
            std::string::npos);
  // What rank 1 holds is what it can pull now (pull moves no buffer in).
  std::uint64_t pulled = 0;
  t::item_view v;
  while (sim.at(1).pull(v) == 1) ++pulled;
  EXPECT_EQ(all[1].unpulled, pulled);
  EXPECT_GT(pulled, 0u);
  EXPECT_LT(pulled, pushed);
}

// Runs the ranks of `sim` for `seconds`: every rank pulls (but `lazy`) and advances, done
// but `lazy`.
void run_for(t::simulation& sim, int lazy, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    for (int r = 0; r < sim.n_ranks(); ++r) {
      t::item_view v;
      while (sim.at(r).pull(v) == 1) {
      }
      (void)sim.at(r).advance(r != lazy);
    }
    sim.network().deliver_all();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

TEST(Watchdog, SimulatedHangIsDiagnosedOnce) {  // TERM-15
  auto board = std::make_shared<t::local_board>(4);
  t::engine_options o;
  o.watchdog.seconds = 0.2;
  o.watchdog.abort = true;
  o.watchdog.board = board;
  t::simulation sim(mesh_plan({2, 2}), o, 11);
  for (int r = 0; r < 4; ++r) ASSERT_EQ(sim.at(r).begin(8), 1);
  for (int r = 0; r < 4; ++r)
    for (std::uint64_t i = 0; i < 50; ++i) ASSERT_EQ(sim.at(r).push(&i, (r + 1) % 4), 1);
  run_for(sim, 2, 0.8);  // four timeouts: one diagnosis
  const auto printed = board->printed();
  ASSERT_EQ(printed.size(), 2u);  // the diagnosis and the abort notice
  EXPECT_NE(printed[0].find("likely cause:\n    rank 2 has not called convey_advance(c, done=1)"),
            std::string::npos)
      << printed[0];
  EXPECT_EQ(board->aborts(), 1);
}

TEST(Watchdog, ProgressingRunIsNotDiagnosed) {  // TERM-15
  auto board = std::make_shared<t::local_board>(4);
  t::engine_options o;
  o.watchdog.seconds = 0.2;
  o.watchdog.board = board;
  t::simulation sim(mesh_plan({4}), o, 5);
  for (int r = 0; r < 4; ++r) ASSERT_EQ(sim.at(r).begin(8), 1);
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(600);
  std::uint64_t i = 0;
  while (std::chrono::steady_clock::now() < end) {  // every rank pushes, pulls, advances
    for (int r = 0; r < 4; ++r) {
      (void)sim.at(r).push(&i, static_cast<int>(i % 4));
      ++i;
      t::item_view v;
      while (sim.at(r).pull(v) == 1) {
      }
      (void)sim.at(r).advance(false);
    }
    sim.network().deliver_all();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  run_for(sim, -1, 0.05);
  EXPECT_TRUE(board->printed().empty()) << board->printed().front();
  for (int r = 0; r < 4; ++r) EXPECT_EQ(sim.at(r).current_state(), t::state::complete);
}

// Rank 2 pushes one item every 0.1 s, advancing after each, for 1.2 s (six 0.2 s
// timeouts) while the other ranks said done at once and wait: no progress on them for far
// longer than the timeout, but progress somewhere all along, so no diagnosis. Then rank 2
// stops advancing in its cycle without saying done: one diagnosis, naming it.
TEST(Watchdog, SlowRankIsProgressNotAStall) {  // TERM-15
  auto board = std::make_shared<t::local_board>(4);
  t::engine_options o;
  o.watchdog.seconds = 0.2;
  o.watchdog.board = board;
  t::simulation sim(mesh_plan({2, 2}), o, 7);
  for (int r = 0; r < 4; ++r) ASSERT_EQ(sim.at(r).begin(8), 1);
  const auto step = [&](int r, bool done) {
    t::item_view v;
    while (sim.at(r).pull(v) == 1) {
    }
    (void)sim.at(r).advance(done);
  };
  std::uint64_t i = 0;
  auto next_push = std::chrono::steady_clock::now();
  const auto end = next_push + std::chrono::milliseconds(1200);
  while (std::chrono::steady_clock::now() < end) {
    if (std::chrono::steady_clock::now() >= next_push) {
      ASSERT_EQ(sim.at(2).push(&i, static_cast<int>(i % 4)), 1);
      ++i;
      step(2, false);
      next_push += std::chrono::milliseconds(100);
    }
    for (int r = 0; r < 4; ++r)
      if (r != 2) step(r, true);
    sim.network().deliver_all();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_GE(i, 10u);
  EXPECT_TRUE(board->printed().empty()) << board->printed().front();
  // Rank 2 stops: the others now stall everywhere.
  const auto stop = std::chrono::steady_clock::now() + std::chrono::milliseconds(700);
  while (std::chrono::steady_clock::now() < stop) {
    for (int r = 0; r < 4; ++r)
      if (r != 2) step(r, true);
    sim.network().deliver_all();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const auto printed = board->printed();
  ASSERT_EQ(printed.size(), 1u);
  EXPECT_NE(printed[0].find("likely cause:\n    rank 2 has not called advance for"),
            std::string::npos)
      << printed[0];
  run_for(sim, -1, 0.05);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(sim.at(r).current_state(), t::state::complete);
}

}  // namespace
