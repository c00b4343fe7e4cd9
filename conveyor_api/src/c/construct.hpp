#pragma once
/// @file
/// What the constructors of convey.h and biconvey.h share (internal): bale's argument
/// rules for tensor layouts, the generic choice under max_bytes, and the wrapper that
/// turns a failure into NULL and one message (CAPI-8).
#include <convoy/base/collective.hpp>
#include <convoy/termination/layout_choice.hpp>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>

#include "facade.hpp"
#include "reports.hpp"

namespace convoy::facade {

/// Runs `build` (collective), returning its pointer. A failure returns nullptr and prints
/// its message once for all PEs, the lowest failing PE's (all fail alike on invalid
/// arguments or settings), unless QUIET (CAPI-8). Numbers the construction for the
/// conveyor's usage errors, printed once per job (reports.hpp, CAPI-9).
template <class F>
auto construct(const char* who, std::uint64_t options, F&& build) noexcept -> decltype(build()) {
  const bool quiet = (options & convey_opt_QUIET) != 0;
  std::string why;
  if (!ensure_mpi(why)) {
    if (!quiet) print_once(std::string(who) + ": " + why);
    return nullptr;
  }
  open_reports();
  decltype(build()) c = nullptr;
  try {
    c = build();
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
    why = "unknown exception";
  }
  try {  // every PE learns the lowest failing PE's message (BASE-3); PE 0 prints it
    convoy::base::raise_if_any_failed(MPI_COMM_WORLD, c ? nullptr : &why);
  } catch (const std::exception& e) {
    if (!quiet && world_rank() == 0) print_once(std::string(who) + ": " + e.what());
  }
  if (c) name_conveyor(c);
  return c;
}

/// bale's argument rules for the explicit tensor constructors. Throws convoy::error.
layout_plan tensor_layout(std::size_t capacity, int order, std::size_t n_local,
                          std::size_t n_buffers);

/// choose_and_build over MPI_COMM_WORLD with `build` (which builds a candidate, dropping
/// the previous one first, and returns its max_memory_bytes); with ALERT, PE 0 prints the
/// choice's note.
layout_plan choose(const layout_request& r, std::uint64_t options,
                   const std::function<std::size_t(const layout_plan&)>& build);

}  // namespace convoy::facade
