#pragma once
// convoy-plot --timeline: the trace files of one conveyor (termination/README.md, TERM-17)
// merged into one Chrome trace-event file and drawn as a per-link timeline with gnuplot.
#include <string>

namespace convoy::tools {

struct timeline_options {
  std::string dir;     ///< where CONVOY_TRACE wrote convoy-trace.<conveyor>.<rank>.json
  int conveyor = -1;   ///< which conveyor; -1: the highest index found
  std::string output;  ///< the PNG; empty: <dir>/convoy-trace.<conveyor>.png
  std::string script;  ///< write the gnuplot script here instead of running gnuplot
  std::string title;
};

/// Reads every rank's file of the conveyor, writes <dir>/convoy-trace.<conveyor>.json (all
/// ranks' events in one file, for Perfetto), then the PNG: one row per rank (its advance
/// calls lightly shaded, stages closed marked) and one per out-link (buffers sent: filled
/// when full, open when partial, triangles for last buffers; credit stalls shaded), time in
/// milliseconds on x. Returns the exit code (0, 1: gnuplot or a file failed, 2: bad input)
/// after printing one line.
int draw_timeline(const timeline_options& o);

/// Feeds `text` to gnuplot. Returns false (after printing why) if it cannot start or fails.
bool run_gnuplot(const std::string& text);

}  // namespace convoy::tools
