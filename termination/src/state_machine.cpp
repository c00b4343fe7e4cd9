// The conveyor state machine (Maley & DeVinney 2019, sec. 3.2; termination/README.md, TERM-9,
// TERM-10).
#include <convoy/termination/state_machine.hpp>

namespace convoy::termination {

const char* to_string(state s) noexcept {
  switch (s) {
    case state::dormant:
      return "DORMANT";
    case state::working:
      return "WORKING";
    case state::endgame:
      return "ENDGAME";
    case state::cleanup:
      return "CLEANUP";
    case state::complete:
      return "COMPLETE";
  }
  return "?";
}

const char* error_string(int code) noexcept {
  switch (code) {
    case error_state:
      return "operation not legal in the conveyor's current state";
    case error_rank:
      return "destination rank out of range";
    case error_size:
      return "item size invalid or too large for a buffer";
    case error_argument:
      return "invalid argument (null pointer)";
    case error_unpull:
      return "nothing to unpull: no successful pull since the last pull or advance";
    case error_elastic:
      return "elastic/rigid mismatch (elastic call on a rigid conveyor, or item size differs from "
             "begin's)";
    case error_transport:
      return "transport failure";
    case error_alloc:
      return "out of memory";
    case error_mode:
      return "wrong kind of send: push on a broadcast conveyor, or broadcast on a point-to-point "
             "one";
    default:
      return code >= 0 ? "no error" : "unknown error";
  }
}

// Maley & DeVinney 2019, sec. 3.2, state by state.
verdict rule(state now, call c) noexcept {
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

std::optional<int> refusal(state now, call c) noexcept {
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

int conveyor_state::after_advance(bool done_pushing, bool all_delivered,
                                  bool nothing_to_pull) noexcept {
  if (!done_pushing) return ok;  // WORKING stays WORKING
  if (!all_delivered) {
    now_ = state::endgame;
    return ok;
  }
  now_ = nothing_to_pull ? state::complete : state::cleanup;
  return nothing_to_pull ? done : near;
}

}  // namespace convoy::termination
