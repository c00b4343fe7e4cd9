#pragma once
/// @file
/// A measured run's stats document (CONVOY_STATS, format "convoy-stats" version 1), as
/// convoy-sim --from-stats reads it (tools/sim/README.md "Replaying a measured run"): the
/// fields the replay uses, validated. Unknown fields are ignored.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace convoy::sim {

/// What one rank sent on one link over the conveyor's lifetime (all cycles).
struct measured_link {
  int stage = 0;
  int peer = 0;
  int peer_node = 0;
  std::uint64_t items_sent = 0, bytes_sent = 0, buffers_full = 0, buffers_partial = 0;
};

struct measured_rank {
  int rank = 0;
  int node = 0;
  std::uint64_t pushes = 0, pulls = 0;
  double advance_seconds = 0;  ///< inside advance, all cycles
  double cycle_seconds = 0;    ///< begin to the end state, all cycles
  std::vector<measured_link> links;
};

struct measured_conveyor {
  int index = 0;
  std::string api, kind;
  std::vector<int> mesh;             ///< dimension sizes, in dimension order
  std::vector<int> stage_dimension;  ///< the dimension each stage routes along
  std::size_t item_bytes = 0, buffer_bytes = 0;
  int n_buffers = 0;
  std::uint64_t cycles = 0;
  std::vector<measured_rank> per_rank;  ///< indexed by rank
  [[nodiscard]] std::uint64_t pushes() const noexcept;
};

struct measured_run {
  std::string name;  ///< the file, for messages
  int ranks = 0;
  int nodes = 0;
  std::vector<int> rank_node;
  std::vector<measured_conveyor> conveyors;
};

/// Parses and validates a stats document. Throws convoy::error naming `name` and the
/// field ("stats file 'x': conveyors[0].per_rank[1].pushes: missing") on a field that is
/// missing, of the wrong type or out of range, on another format or version, and on
/// counts that contradict each other (a rank listed twice, a peer outside the job, a
/// peer_node that is not rank_node[peer]).
[[nodiscard]] measured_run parse_stats(const std::string& text, const std::string& name);
[[nodiscard]] measured_run load_stats(const std::string& path);

/// The conveyor to replay: `index` if >= 0 (convoy::error if the document has none of that
/// index), else the one with the most pushes (the first of them).
[[nodiscard]] const measured_conveyor& choose_conveyor(const measured_run& run, int index);

}  // namespace convoy::sim
