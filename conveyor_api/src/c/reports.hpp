#pragma once
/// @file
/// Usage errors reported once per job (CAPI-9): the PEs that meet the same error on the same
/// conveyor claim it in a job-wide flag, and only the first to claim it prints. Usage errors
/// happen in calls that are not collective, so the claim is one-sided: an MPI_Fetch_and_op
/// on a small window of PE 0, made by the first construction of a conveyor (collective over
/// MPI_COMM_WORLD) and freed at MPI_Finalize.
#include <cstdint>

namespace convoy::facade {

/// Called by every constructor on every PE (collective over MPI_COMM_WORLD, as the
/// construction is), before it builds: makes the window the first time, and numbers the
/// construction (the same number on every PE). Never throws; without a window (it could
/// not be made) every PE prints its own reports.
void open_reports() noexcept;

/// Ties the conveyor `c` (built by the construction open_reports() numbered last) to that
/// number, which names it in the claims. Local.
void name_conveyor(const void* c) noexcept;

/// True if this PE is the first of the job to report `code` on the conveyor `c` (or MPI
/// cannot tell: no window, MPI finalized). Local on the caller's side; PE 0's MPI library
/// completes the operation (progress while PE 0 is in any MPI call, or at once in shared
/// memory).
[[nodiscard]] bool claim_report(const void* c, int code) noexcept;

}  // namespace convoy::facade
