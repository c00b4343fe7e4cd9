// The counters of convoy/convey_ext.h (CAPI-110..113): the C++ core's engine_stats
// (termination/conveyor_engine.hpp) copied into the extensible C structs.
#include <convoy/convey_ext.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>

#include "facade.hpp"

namespace term = convoy::termination;

namespace {

// Copies the first min(out->size, sizeof(T)) bytes of `full` into *out and sets its size.
// USAGE when the caller's struct is shorter than its first version (size and one field).
template <class T>
int fill(T* out, T full, std::size_t first_version) {
  if (out->size < first_version) return convey_error_USAGE;
  const std::size_t n = std::min(out->size, sizeof(T));
  full.size = n;
  std::memcpy(static_cast<void*>(out), &full, n);
  return convey_OK;
}

// The core's counters; nullopt-like failure returned as false on an exception.
bool stats_of(convey_t* c, bool cumulative, term::engine_stats& s) noexcept {
  try {
    s = c->core.stats(cumulative);
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace

extern "C" {

int convoy_convey_n_stages(convey_t* c) {
  if (!c) return convey_error_NULL;
  term::engine_stats s;
  if (!stats_of(c, true, s)) return convey_error_ALLOC;
  return static_cast<int>(s.stages.size());
}

int convoy_convey_n_links(convey_t* c, int stage) {
  if (!c) return convey_error_NULL;
  term::engine_stats s;
  if (!stats_of(c, true, s)) return convey_error_ALLOC;
  if (stage < 0 || static_cast<std::size_t>(stage) >= s.stages.size()) return convey_error_RANGE;
  return static_cast<int>(s.stages[static_cast<std::size_t>(stage)].links.size());
}

int convoy_convey_link_stats(convey_t* c, int stage, int link, int cumulative,
                             convoy_link_stats_t* out) {
  if (!c || !out) return convey_error_NULL;
  if (out->size < offsetof(convoy_link_stats_t, items_sent)) return convey_error_USAGE;
  term::engine_stats s;
  if (!stats_of(c, cumulative != 0, s)) return convey_error_ALLOC;
  if (stage < 0 || static_cast<std::size_t>(stage) >= s.stages.size()) return convey_error_RANGE;
  const auto& links = s.stages[static_cast<std::size_t>(stage)].links;
  if (link < 0 || static_cast<std::size_t>(link) >= links.size()) return convey_error_RANGE;
  const term::link_stats& l = links[static_cast<std::size_t>(link)];
  convoy_link_stats_t r{};
  r.peer = l.peer;
  r.items_sent = l.items_sent;
  r.bytes_sent = l.bytes_sent;
  r.buffers_full = l.buffers_full;
  r.buffers_partial = l.buffers_partial;
  r.credit_stalls = l.credit_stalls;
  r.items_received = l.items_received;
  r.bytes_received = l.bytes_received;
  r.buffers_received = l.buffers_received;
  r.combined = l.combined;
  r.combine_stops = l.combine_stops;
  r.combine_ns_per_record = l.combine_ns_per_record;
  r.combine_saved_ns = l.combine_saved_ns;
  return fill(out, r, offsetof(convoy_link_stats_t, items_sent));
}

int convoy_convey_pe_stats(convey_t* c, int cumulative, convoy_pe_stats_t* out) {
  if (!c || !out) return convey_error_NULL;
  if (out->size < offsetof(convoy_pe_stats_t, pushes)) return convey_error_USAGE;
  term::engine_stats s;
  if (!stats_of(c, cumulative != 0, s)) return convey_error_ALLOC;
  convoy_pe_stats_t r{};
  r.begins = s.begins;
  r.pushes = s.pushes;  // the user's, as convey_statistic counts them (the core's counters)
  r.pulls = s.pulls;
  r.advances = s.advances;
  r.items_forwarded = s.items_forwarded;
  r.credit_stalls = s.credit_stalls;
  r.buffers_sent = s.buffers_sent;
  r.bytes_sent = s.bytes_sent;
  r.buffers_received = s.buffers_received;
  r.memory_high_water = s.memory_high_water;
  r.advance_seconds = s.advance_seconds;
  r.cycle_seconds = s.cycle_seconds;
  r.combined = s.combined;
  r.combine_stops = s.combine_stops;
  r.combine_record_ns = s.combine_record_ns;
  r.combine_use_ns = s.combine_use_ns;
  return fill(out, r, offsetof(convoy_pe_stats_t, pushes));
}

}  // extern "C"
