#pragma once
/// @file
/// convoy-sim's output: a readable table and one JSON document (tools/sim/README.md
/// "Output").
#include <ostream>
#include <string>

#include "sim_run.hpp"

namespace convoy::sim {

/// Table I's quantities for a run (Wesolowski et al. 2014, sec. IV.C): z items over the network, g
/// items per full buffer, N = max hops, e = header bytes, m = record bytes (payload + tag).
struct table1_bounds {
  double z = 0, g = 0, n = 0, e = 0, m_min = 0, m_max = 0;
  double messages_lo = 0, messages_hi = 0;  ///< z/g, N·z/g
  double bytes_lo = 0, bytes_hi = 0;        ///< z(m+e/g), N·z(m+e/g)
};
[[nodiscard]] table1_bounds table1(const run_config& c, const run_result& r);

void print_table(std::ostream& out, const run_config& c, const run_result& r);
/// The JSON document: keys ranks, items, messages, bytes_injected, predicted_seconds,
/// memory_bytes_per_rank, wall_seconds, and the breakdowns (README "Output").
[[nodiscard]] std::string to_json_text(const run_config& c, const run_result& r, long peak_rss_kib);

}  // namespace convoy::sim
