#pragma once
/// @file
/// Usage errors reported once per job (CAPI-9), with point-to-point messages only (no
/// one-sided window, which MPI cannot make everywhere): PE 0 prints the reports it meets;
/// every other PE sends its report's line to PE 0 the first time it meets that code on
/// that conveyor, and PE 0 prints the first line of each (conveyor, code) when it next
/// drains — in any façade call that reports, constructs, begins, resets or frees, every
/// 64th advance, and at MPI_Finalize, where the job agrees on the number of lines sent and
/// PE 0 waits for those still on their way. A PE that exits without MPI_Finalize prints
/// the lines it sent itself, so that none is lost.
#include <cstdint>
#include <string>

namespace convoy::facade {

/// Called by every constructor on every PE (collective over MPI_COMM_WORLD, as the
/// construction is), before it builds: makes the board the first time (a duplicate of
/// MPI_COMM_WORLD), numbers the construction (the same number on every PE) and drains.
/// Never throws; without a board every PE prints its own reports.
void open_reports() noexcept;

/// Ties the conveyor `c` (built by the construction open_reports() numbered last) to that
/// number, which names it in the reports. Local.
void name_conveyor(const void* c) noexcept;

/// Reports `line` (no newline) for `code` on the conveyor `c`: printed now on PE 0 unless
/// printed before for (c, code); sent to PE 0 from any other PE; printed here when there
/// is no board or MPI is finalized. Local, never blocks.
void report(const void* c, int code, const std::string& line) noexcept;

/// PE 0 prints the lines that have arrived (others: completes sends). Local, cheap when
/// nothing has arrived; drain_reports_sometimes() does it every 64th call.
void drain_reports() noexcept;
void drain_reports_sometimes() noexcept;

}  // namespace convoy::facade
