#pragma once
// Private to base/: the single list of every variable convoy reads (README BASE-4).
#include <convoy/base/settings.hpp>
#include <string>
#include <vector>

namespace convoy::base::detail {

struct variable {
  std::string name;
  std::string default_text;
  std::string meaning;
};

/// In the order of settings' fields and of describe().
inline const std::vector<variable>& variables() {
  static const std::vector<variable> list = {
      {"CONVOY_MESH", "auto", "virtual mesh: auto | shape 8x4x2 | levels node,socket,numa,core"},
      {"CONVOY_EMULATE_NODES", "real nodes", "pretend nodes of these sizes, e.g. 4,2,3"},
      {"CONVOY_EMULATE_TOPOLOGY", "one package, a core per rank",
       "hwloc synthetic topology of every pretend node, e.g. \"pack:2 core:2\""},
      {"CONVOY_EMULATE_MAP", "block", "ranks over pretend nodes: block (rank order) | cyclic"},
      {"CONVOY_BUFFER_BYTES", std::to_string(default_buffer_bytes),
       "bytes per engine buffer, 64 bytes to 1 GiB (suffix k=1000, Ki=1024)"},
      {"CONVOY_N_BUFFERS", std::to_string(default_n_buffers), "buffers per link, a power of two"},
      {"CONVOY_TUNE_FILE", "~/.config/convoy/tune.conf if it exists",
       "path of a tuning file (key=value lines, written by convoy-tune)"},
      {"CONVOY_TRANSPORT", "auto",
       "buffer transport: auto (shared memory on a node) | mpi | shm | shm-zero-copy | rma"},
      {"CONVOY_LARGE", "auto",
       "channel of elastic items above a buffer: auto | two-sided | rendezvous (RMA get)"},
      {"CONVOY_WATCHDOG", "0 (off)",
       "seconds without progress in a cycle before a hang diagnosis is printed"},
      {"CONVOY_WATCHDOG_ABORT", "0", "1: abort the job after the watchdog's diagnosis"},
      {"CONVOY_STATS", "(none)",
       "path of the JSON counters document written at each conveyor's destruction"},
      {"CONVOY_TRACE", "(off)",
       "directory of per-rank timelines (Chrome trace JSON), written when a conveyor is freed"},
      {"CONVOY_TRACE_EVENTS", std::to_string(default_trace_events),
       "trace events kept per rank and conveyor, a power of two (oldest overwritten)"},
      {"CONVOY_COMBINE_CACHE", combine_cache_default_text(),
       "entries of the hold-back cache in front of each combining lane that leaves the node "
       "(power of two; 0: none)"},
      {"CONVOY_COMBINE_MIN_HIT", "64",
       "folds per 1024 records examined a combining buffer needs to keep its lane combining"},
      {"CONVOY_COMBINE_SAVED_NS", "0 (measured per lane)",
       "what a record folded away is worth (ns), against the time combining's passes take"},
      {"CONVEY_NLOCAL", "gcd of the node sizes", "bale: ranks per local group of tensor conveyors"},
      {"CONVEY_BUFFER_SIZE", "conveyor default",
       "bale: conveyor buffer bytes, 64 bytes to 1 GiB (suffix k=1000)"},
  };
  return list;
}

}  // namespace convoy::base::detail
