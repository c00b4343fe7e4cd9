#pragma once
// CONVOY_STATS (internal): each conveyor's counters, gathered to rank 0 when it is destroyed
// and written as one JSON document per job (docs/stats-format.md; API-30).
#include <mpi.h>

#include <convoy/base/settings.hpp>
#include <convoy/termination/conveyor_engine.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace convoy::termination::detail {

/// What the document says about one conveyor besides its counters.
struct stats_entry {
  double created_seconds = 0;        ///< rank 0's process age at construction: the order
  std::string api;                   ///< "cpp", "convey", "biconvey"
  std::string kind;                  ///< "mesh", "tensor", "bulk", or the C kind name
  std::vector<int> mesh;             ///< dimension sizes in dimension order; empty if not a mesh
  std::vector<int> stage_dimension;  ///< per stage, -1 if not a mesh
  std::size_t item_bytes = 0;        ///< 0: elastic
  std::size_t buffer_bytes = 0;
  int n_buffers = 0;
  termination::engine_stats life;  ///< this rank's lifetime counters
};

/// Collective over `comm` when `s` has CONVOY_STATS: rank 0 checks that the document can be
/// written there (the directory exists and is writable, the path is not a directory) and
/// every rank learns its verdict. Returns the seconds since this process started (rank 0's
/// value orders the document); throws convoy::error "CONVOY_STATS='<path>': ..." on every
/// rank otherwise.
double open_stats_report(MPI_Comm comm, const base::settings& s);

/// Collective over `comm`: gathers every rank's row of `e` to rank 0, which adds the
/// conveyor to the job's document and rewrites the file (a temporary file, then rename).
/// Never throws: a failure is printed once, by rank 0.
void record_stats(MPI_Comm comm, const base::settings& s, const stats_entry& e) noexcept;

}  // namespace convoy::termination::detail
