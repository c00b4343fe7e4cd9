// Error codes and messages of the C façade: bale's codes (CAPI-2), the engine's codes
// translated to them, and the report of each code once per conveyor and job (CAPI-9).
#include <string>

#include "facade.hpp"
#include "reports.hpp"

namespace convoy::facade {

int to_convey(int rc) noexcept {
  if (rc >= 0) return rc;
  namespace term = convoy::termination;
  switch (rc) {
    case term::error_state:
      return convey_error_STATE;
    case term::error_rank:
      return convey_error_RANGE;
    case term::error_size:
      return convey_error_OFLO;
    case term::error_argument:  // a null item (checked by the engine under RECKLESS)
      return convey_error_NULL;
    case term::error_unpull:
      return convey_FAIL;
    case term::error_elastic:
      return convey_error_RIGID;
    case term::error_transport:
      return convey_error_COMMS;
    case term::error_alloc:
      return convey_error_ALLOC;
    case term::error_mode:  // push on a broadcast conveyor, broadcast on another
      return convey_error_USAGE;
    default:
      return convey_error_INTERNAL;
  }
}

}  // namespace convoy::facade

std::optional<int> conveyor::refuse(const char* where, convoy::termination::call c) noexcept {
  const std::optional<int> rc = convoy::termination::refusal(now(), c);
  if (rc && *rc < 0) return panic(where, convoy::facade::to_convey(*rc));
  return rc;  // 0 and 1 mean the same in bale's codes (FAIL or DONE, OK)
}

int conveyor::panic(const char* where, int code, const char* detail) noexcept {
  if (code >= 0) return code;
  const unsigned bit = static_cast<unsigned>(-code);
  if (bit < 64) {
    if (suppressed >> bit & 1u) return code;
    suppressed |= std::uint64_t{1} << bit;
  }
  if (options & convey_opt_QUIET) return code;
  try {
    std::string line = "convey: " + std::string(where) + " on PE " + std::to_string(core.rank()) +
                       ": " + convey_error_string(this, code) + " (" + kind + " conveyor, state " +
                       convoy::termination::to_string(now()) + ")";
    if (detail) line += std::string(": ") + detail;
    convoy::facade::report(this, code, line);  // once per job (CAPI-9)
  } catch (...) {
  }
  return code;
}

extern "C" const char* convey_error_string(convey_t* c, int error) {
  (void)c;
  switch (error) {
    case convey_OK:
      return "success";
    case convey_NEAR:
      return "success (convey_NEAR: nothing more will arrive)";
    case 0:
      return "ordinary failure (convey_FAIL / convey_DONE)";
    case convey_error_STATE:
      return "operation is illegal in the conveyor's current state";
    case convey_error_USAGE:
      return "misuse of the conveyor API (the contract was violated)";
    case convey_error_NULL:
      return "conveyor or a required pointer is NULL";
    case convey_error_RANGE:
      return "PE number is out of range";
    case convey_error_TEAM:
      return "collective operation called with the wrong communicator";
    case convey_error_COMMS:
      return "communication (MPI) failed";
    case convey_error_ALLOC:
      return "memory allocation failed";
    case convey_error_RIGID:
      return "elastic operation on a conveyor that is not elastic";
    case convey_error_MISFIT:
      return "the next item has the wrong size for a rigid pull (use convey_epull)";
    case convey_error_OFLO:
      return "item is too large for this conveyor";
    case convey_error_ZERO:
      return "item size is zero";
    case convey_error_TOOBIG:
      return "buffer capacity is too large";
    case convey_error_NOFUNC:
      return "a required function pointer is NULL";
    case convey_error_INTERNAL:
      return "internal error in the conveyor library";
    default:
      return "unknown error";
  }
}
