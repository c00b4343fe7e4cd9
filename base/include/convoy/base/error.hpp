#pragma once
/// @file
/// The one exception type of convoy's C++ API, and the MPI check macro.
///
/// base/ lies below every component, so the error type every layer throws lives here, in
/// namespace convoy (users catch convoy::error whichever component threw it).
/// Hot paths (push, pull, advance) never throw; set-up and collective calls throw
/// convoy::error with a message naming the problem (and the MPI error code and text when
/// MPI reported it).
#include <mpi.h>

#include <stdexcept>
#include <string>

namespace convoy {

class error : public std::runtime_error {
 public:
  explicit error(const std::string& what, int mpi_code = MPI_SUCCESS)
      : std::runtime_error(what), mpi_code_(mpi_code) {}
  /// The MPI error code that caused this error, or MPI_SUCCESS when MPI was not involved.
  [[nodiscard]] int mpi_code() const noexcept { return mpi_code_; }

 private:
  int mpi_code_;
};

namespace detail {
/// Throws convoy::error("<call> failed: <MPI error string>") for a failed MPI call.
[[noreturn]] void throw_mpi_error(const char* call, int code, const char* file, int line);
}  // namespace detail

}  // namespace convoy

/// Evaluates an MPI call once; throws convoy::error naming the call and MPI's text if it
/// did not return MPI_SUCCESS. Use on communicators with MPI_ERRORS_RETURN (all of ours).
#define CONVOY_MPI_CHECK(call)                                                      \
  do {                                                                              \
    const int convoy_mpi_rc_ = (call);                                              \
    if (convoy_mpi_rc_ != MPI_SUCCESS)                                              \
      ::convoy::detail::throw_mpi_error(#call, convoy_mpi_rc_, __FILE__, __LINE__); \
  } while (0)
