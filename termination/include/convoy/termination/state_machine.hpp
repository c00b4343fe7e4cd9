#pragma once
/// @file
/// The conveyor state machine (Maley & DeVinney 2019, sec. 3.2): the five states, which call is
/// legal in each, and the transitions (termination/README.md, TERM-9 and TERM-10), with the return
/// codes the engine's calls use. The table decides, for every kind and for the conveyors over
/// them, both whether a call does its work and what it returns when it does not: callers
/// start with
///
///     if (const auto rc = state_.refuse(call::push)) return *rc;
///
/// and write no state test and no state code of their own.
#include <optional>

namespace convoy::termination {

enum class state : int { dormant = 0, working, endgame, cleanup, complete };
[[nodiscard]] const char* to_string(state s) noexcept;
/// Inside a begin/reset cycle and not yet COMPLETE: WORKING, ENDGAME or CLEANUP.
[[nodiscard]] constexpr bool in_cycle(state s) noexcept {
  return s != state::dormant && s != state::complete;
}

/// Values returned by advance() (same numbers as bale's convey_DONE/OK/NEAR).
enum status : int { done = 0, ok = 1, near = 2 };

/// Negative return codes. Each has a message (error_string).
enum engine_error : int {
  error_state = -1,      ///< operation not legal in the current state
  error_rank = -2,       ///< destination rank out of range
  error_size = -3,       ///< item size invalid (0 for rigid items, too large, mismatch)
  error_argument = -4,   ///< null pointer or invalid argument
  error_unpull = -5,     ///< nothing to unpull (no pull since the last pull/advance)
  error_elastic = -6,    ///< elastic call on a rigid engine, or rigid size mismatch
  error_transport = -7,  ///< the transport failed (MPI error); message in last_message()
  error_alloc = -8,      ///< out of memory
  /// push on a broadcast engine, or broadcast on a point-to-point one (BCAST-4)
  error_mode = -9,
};
[[nodiscard]] const char* error_string(int code) noexcept;

/// The calls whose legality depends on the state. `advance` is advance(false),
/// `advance_done` advance(true); `configure` changes a setting between cycles (a codec),
/// `destroy` frees the conveyor.
enum class call {
  begin,
  push,
  pull,
  unpull,
  advance,
  advance_done,
  flush,
  reset,
  configure,
  destroy
};

/// What a call may do in the current state (TERM-9).
enum class verdict {
  proceed,  ///< legal: do the work
  fail,     ///< legal, does nothing, returns 0 (pull, unpull, advance in COMPLETE)
  no_op,    ///< legal, nothing to do, returns 1 (reset in DORMANT)
  illegal,  ///< misuse: returns error_state and changes nothing
};

/// The one table (TERM-9): what call `c` may do in state `now` (Maley & DeVinney 2019,
/// sec. 3.2, state by state). Inline, so that a call's legal case costs a compare or two.
[[nodiscard]] constexpr verdict rule(state now, call c) noexcept {
  if (c == call::destroy)  // DORMANT or COMPLETE: nothing in flight
    return now == state::dormant || now == state::complete ? verdict::proceed : verdict::illegal;
  if (c == call::configure) return now == state::dormant ? verdict::proceed : verdict::illegal;
  switch (now) {
    case state::dormant:  // begin, reset (does nothing), free
      if (c == call::begin) return verdict::proceed;
      return c == call::reset ? verdict::no_op : verdict::illegal;
    case state::working:  // push, pull, unpull, advance
      return c == call::begin || c == call::reset ? verdict::illegal : verdict::proceed;
    case state::endgame:  // pull, unpull, advance(true); flush still sends what waits
    case state::cleanup:
      if (c == call::pull || c == call::unpull || c == call::advance_done) return verdict::proceed;
      return c == call::flush && now == state::endgame ? verdict::proceed : verdict::illegal;
    case state::complete:  // only push and begin are illegal; pull, unpull, advance fail
      if (c == call::push || c == call::begin || c == call::flush) return verdict::illegal;
      return c == call::reset ? verdict::proceed : verdict::fail;
  }
  return verdict::illegal;
}
/// The table's verdict as the call's code: nothing when the call must do its work, else
/// what it returns without doing any: error_state (illegal), 0 (fail: pull and unpull find
/// nothing, advance is `done`), 1 (no_op: reset in DORMANT).
[[nodiscard]] constexpr std::optional<int> refusal(state now, call c) noexcept {
  switch (rule(now, c)) {
    case verdict::proceed:
      return std::nullopt;
    case verdict::fail:  // pull and unpull: nothing (0); advance: done (also 0)
      static_assert(done == 0);
      return 0;
    case verdict::no_op:
      return 1;
    case verdict::illegal:
      break;
  }
  return error_state;
}
/// The conveyors' reading of advance(done) in state `s` (bale; Maley & DeVinney 2019,
/// sec. 3.2): once a rank has called advance(true), a later advance(false) counts as
/// advance(true) rather than being rejected, since a rank that stopped advancing could
/// deadlock the others. The engines take `done` as given (an advance(false) after done is
/// error_state); the C façade and the biconveyors pass what this returns.
[[nodiscard]] constexpr bool done_pushing(state s, bool done) noexcept {
  return done || (s != state::working && s != state::dormant);
}
/// The call advance(done) is for the table.
[[nodiscard]] constexpr call advance_call(bool done) noexcept {
  return done ? call::advance_done : call::advance;
}

/// One rank's conveyor state: the one table of legal calls (TERM-9) and the transitions,
/// used by every engine kind (streaming, bulk, elastic) and by the conveyors built over
/// engines (biconveyors). The C façade reads its engine's.
class conveyor_state {
 public:
  [[nodiscard]] state current() const noexcept { return now_; }
  [[nodiscard]] verdict check(call c) const noexcept { return rule(now_, c); }
  /// refusal() in the current state: `if (const auto rc = refuse(c)) return *rc;`.
  [[nodiscard]] std::optional<int> refuse(call c) const noexcept { return refusal(now_, c); }
  /// done_pushing() in the current state.
  [[nodiscard]] bool done_pushing(bool done) const noexcept {
    return termination::done_pushing(now_, done);
  }

  /// DORMANT -> WORKING. Precondition: check(call::begin) == verdict::proceed.
  void begin() noexcept { now_ = state::working; }
  /// The transition at the end of an advance that did its work (TERM-10): whether this rank
  /// has called advance(true), whether all traffic of the cycle has reached it and left it
  /// (every stage closed, every in-link finished, nothing in flight), and whether nothing
  /// is left to pull. Returns advance's status: ok (WORKING or ENDGAME), near (CLEANUP),
  /// done (COMPLETE).
  int after_advance(bool done_pushing, bool all_delivered, bool nothing_to_pull) noexcept;
  /// COMPLETE -> DORMANT. Precondition: check(call::reset) == verdict::proceed.
  void reset() noexcept { now_ = state::dormant; }

 private:
  state now_ = state::dormant;
};

}  // namespace convoy::termination
