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
