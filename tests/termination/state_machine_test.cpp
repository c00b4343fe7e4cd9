// The conveyor state machine alone (termination/README.md TERM-9, TERM-10): every call in
// every state against a table written from Maley & DeVinney 2019, sec. 3.2, and the
// transitions.
#include <gtest/gtest.h>

#include <convoy/termination/state_machine.hpp>
#include <cstddef>
#include <optional>
#include <string>

namespace {

using convoy::termination::call;
using convoy::termination::conveyor_state;
using convoy::termination::state;
using convoy::termination::verdict;
namespace t = convoy::termination;

// Drives a fresh state machine into `s` through legal transitions only.
conveyor_state reach(state s) {
  conveyor_state m;
  if (s == state::dormant) return m;
  m.begin();
  if (s == state::endgame) (void)m.after_advance(true, false, false);
  if (s == state::cleanup) (void)m.after_advance(true, true, false);
  if (s == state::complete) (void)m.after_advance(true, true, true);
  return m;
}

// TERM-9. Maley & DeVinney 2019, sec. 3.2: DORMANT allows begin and reset (which does
// nothing); WORKING push, pull, unpull, advance; ENDGAME and CLEANUP pull, unpull,
// advance(true) (and flush in ENDGAME: what waits in a lane may still go); COMPLETE
// everything but push and begin, with pull and unpull failing and advance returning done.
TEST(StateMachine, EveryCallInEveryState) {
  const verdict P = verdict::proceed, F = verdict::fail, N = verdict::no_op, X = verdict::illegal;
  const call calls[] = {call::begin, call::push,  call::pull,      call::unpull, call::advance,
                        call::advance_done, call::flush, call::reset, call::configure,
                        call::destroy};
  struct row {
    state s;
    verdict v[10];
  };
  // configure (a codec) only between cycles; destroy when nothing is in flight.
  const row table[] = {
      {state::dormant, {P, X, X, X, X, X, X, N, P, P}},
      {state::working, {X, P, P, P, P, P, P, X, X, X}},
      {state::endgame, {X, X, P, P, X, P, P, X, X, X}},
      {state::cleanup, {X, X, P, P, X, P, X, X, X, X}},
      {state::complete, {X, X, F, F, F, F, X, P, X, P}},
  };
  for (const row& r : table) {
    const conveyor_state m = reach(r.s);
    ASSERT_EQ(m.current(), r.s);
    for (int c = 0; c < 10; ++c)
      EXPECT_EQ(m.check(calls[c]), r.v[c])
          << t::to_string(r.s) << " call " << c << " (begin, push, pull, unpull, advance, "
          << "advance(true), flush, reset, configure, destroy)";
  }
}

// TERM-10: advance's return value names the state it leads to.
TEST(StateMachine, AdvanceTransitions) {
  conveyor_state m = reach(state::working);
  EXPECT_EQ(m.after_advance(false, false, false), t::ok);
  EXPECT_EQ(m.current(), state::working) << "advance(false) stays WORKING";
  EXPECT_EQ(m.after_advance(false, true, true), t::ok);
  EXPECT_EQ(m.current(), state::working) << "not done pushing: WORKING whatever arrived";
  EXPECT_EQ(m.after_advance(true, false, false), t::ok);
  EXPECT_EQ(m.current(), state::endgame);
  EXPECT_EQ(m.after_advance(true, true, false), t::near);
  EXPECT_EQ(m.current(), state::cleanup);
  EXPECT_EQ(m.after_advance(true, true, true), t::done);
  EXPECT_EQ(m.current(), state::complete);
  m.reset();
  EXPECT_EQ(m.current(), state::dormant);
  // WORKING straight to COMPLETE when everything is already in and pulled.
  m.begin();
  EXPECT_EQ(m.after_advance(true, true, true), t::done);
  EXPECT_EQ(m.current(), state::complete);
  // And to CLEANUP.
  m = reach(state::working);
  EXPECT_EQ(m.after_advance(true, true, false), t::near);
  EXPECT_EQ(m.current(), state::cleanup);
}

// TERM-9: the code each call returns without doing its work, in every state, written out
// from Maley & DeVinney 2019, sec. 3.2 and bale's convey.h (misuse -1; pull, unpull and
// advance in COMPLETE 0, advance's 0 being `done`; reset in DORMANT 1); '-' where the call
// must do its work. One table for every kind: the callers return this and nothing else.
TEST(StateMachine, RefusalIsTheCallsCode) {
  const call calls[] = {call::begin, call::push,  call::pull,      call::unpull, call::advance,
                        call::advance_done, call::flush, call::reset, call::configure,
                        call::destroy};
  const char* const table[] = {
      // begin push pull unpull adv adv(t) flush reset conf destroy
      "- X X X X X X 1 - -",  // DORMANT
      "X - - - - - - X X X",  // WORKING
      "X X - - X - - X X X",  // ENDGAME
      "X X - - X - X X X X",  // CLEANUP
      "X X 0 0 0 0 X - X -",  // COMPLETE
  };
  const state states[] = {state::dormant, state::working, state::endgame, state::cleanup,
                          state::complete};
  for (int r = 0; r < 5; ++r) {
    const conveyor_state m = reach(states[r]);
    for (int c = 0; c < 10; ++c) {
      const char want = table[r][static_cast<std::size_t>(2 * c)];
      const std::optional<int> got = m.refuse(calls[c]);
      EXPECT_EQ(got, t::refusal(states[r], calls[c]));
      if (want == '-') {
        EXPECT_FALSE(got.has_value()) << t::to_string(states[r]) << " call " << c;
      } else {
        ASSERT_TRUE(got.has_value()) << t::to_string(states[r]) << " call " << c;
        EXPECT_EQ(*got, want == 'X' ? t::error_state : want - '0')
            << t::to_string(states[r]) << " call " << c;
      }
    }
  }
  EXPECT_EQ(t::advance_call(true), call::advance_done);
  EXPECT_EQ(t::advance_call(false), call::advance);
}

// The conveyors' reading of advance(false) after advance(true): true from ENDGAME on, as
// given in DORMANT (misuse either way) and WORKING.
TEST(StateMachine, DoneStaysDoneForConveyors) {
  for (const state s : {state::dormant, state::working}) {
    EXPECT_FALSE(reach(s).done_pushing(false)) << t::to_string(s);
    EXPECT_TRUE(reach(s).done_pushing(true)) << t::to_string(s);
  }
  for (const state s : {state::endgame, state::cleanup, state::complete}) {
    EXPECT_TRUE(reach(s).done_pushing(false)) << t::to_string(s);
    EXPECT_TRUE(t::done_pushing(s, false)) << t::to_string(s);
  }
}

TEST(StateMachine, NamesAndMessages) {
  EXPECT_EQ(std::string(t::to_string(state::dormant)), "DORMANT");
  EXPECT_EQ(std::string(t::to_string(state::complete)), "COMPLETE");
  for (int code = t::error_alloc; code <= t::error_state; ++code)
    EXPECT_NE(std::string(t::error_string(code)), "unknown error") << code;
  EXPECT_EQ(std::string(t::error_string(-99)), "unknown error");
  EXPECT_EQ(std::string(t::error_string(1)), "no error");
}

}  // namespace
