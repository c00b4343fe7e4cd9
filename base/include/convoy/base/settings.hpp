#pragma once
/// @file
/// Every environment setting of convoy (CONVOY_*) and of bale's conveyors (CONVEY_*), and
/// the tuning file, parsed and validated in one place (base/README.md BASE-4..BASE-9).
/// `convoy-topo --settings` prints them.
///
/// An unset variable is std::nullopt: the component that uses the setting applies its own
/// default (documented in describe(), the defaults below). A set but invalid value throws
/// convoy::error naming the variable and quoting the value, e.g.
///   "CONVOY_N_BUFFERS='3': must be a power of two from 1 to 1024".
#include <mpi.h>

#include <convoy/base/mesh_spec.hpp>
#include <convoy/base/tuning.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace convoy::base {

/// The built-in values of the settings that have one (describe() shows them).
inline constexpr std::size_t default_buffer_bytes = 16384;
inline constexpr int default_n_buffers = 2;
/// Events kept per rank and conveyor by the trace recorder (CONVOY_TRACE_EVENTS).
inline constexpr std::size_t default_trace_events = std::size_t{1} << 16;
/// The hold-back caches when no size is set (CONVOY_COMBINE_CACHE unset, TERM-27): each
/// link that leaves the node gets up to this many entries, a rank's caches within the
/// budget's bytes in all.
inline constexpr std::size_t default_combine_cache_entries = 16384;
inline constexpr std::size_t default_combine_cache_budget = std::size_t{4} << 20;
/// "up to 16384 within 4 MiB per rank": the default above, as describe() shows it.
[[nodiscard]] std::string combine_cache_default_text();

/// A buffer's bounds, in bytes, header included: what CONVOY_BUFFER_BYTES and
/// CONVEY_BUFFER_SIZE accept, and the engine's largest (termination::engine).
inline constexpr std::size_t min_buffer_bytes = 64;
inline constexpr std::size_t max_buffer_bytes = std::size_t{1} << 30;

/// The range of a numeric setting. The parsers enforce it, their messages and
/// docs/cluster.md state it as range_text() gives it (a test compares them), so what is
/// documented is what is enforced.
struct setting_limit {
  std::string_view name;  ///< the environment variable
  std::uint64_t min;
  std::uint64_t max;
  bool bytes;         ///< a byte count: shown with binary units ("64 to 1 GiB")
  bool power_of_two;  ///< only powers of two in the range
};
inline constexpr setting_limit setting_limits[] = {
    {"CONVOY_BUFFER_BYTES", min_buffer_bytes, max_buffer_bytes, true, false},
    {"CONVOY_N_BUFFERS", 1, 1024, false, true},
    {"CONVOY_TRACE_EVENTS", 16, std::uint64_t{1} << 24, false, true},
    {"CONVOY_COMBINE_CACHE", 0, std::uint64_t{1} << 24, false, false},
    {"CONVOY_COMBINE_MIN_HIT", 0, 1024, false, false},
    {"CONVOY_COMBINE_SAVED_NS", 0, 1000000000, false, false},
    {"CONVEY_BUFFER_SIZE", min_buffer_bytes, max_buffer_bytes, true, false},
};
/// The limit of the variable `name`; @throws convoy::error if it has none.
[[nodiscard]] const setting_limit& limit_of(std::string_view name);
/// "64 to 1 GiB", "1 to 1024", "16 to 16777216".
[[nodiscard]] std::string range_text(const setting_limit& l);

/// Where the ranks of an emulated run go (CONVOY_EMULATE_MAP).
enum class placement {
  block,  ///< rank order fills node 0, then node 1, ... (mpirun --map-by core)
  cyclic  ///< rank r goes to the next node with room, round-robin (mpirun --map-by node)
};

/// "block" or "cyclic".
[[nodiscard]] const char* placement_name(placement p) noexcept;

/// Which transport moves engine buffers (CONVOY_TRANSPORT; aggregation::make_transport
/// builds it). The only representation of this setting.
enum class transport_kind {
  automatic,      ///< "auto": shared memory between ranks of a node if any node holds more
                  ///< than one rank, MPI between nodes; MPI alone otherwise
  mpi,            ///< "mpi": MPI point-to-point for every link
  shm,            ///< "shm": shared memory on the node, MPI off it (as auto, even alone)
  shm_zero_copy,  ///< "shm-zero-copy": as shm, items written straight into the receiver's ring
  rma             ///< "rma": MPI-3 one-sided puts into one receive ring per rank and stage
};

/// "auto", "mpi", "shm", "shm-zero-copy" or "rma".
[[nodiscard]] const char* transport_kind_name(transport_kind t) noexcept;

/// Which channel carries the bytes of elastic items larger than a buffer (CONVOY_LARGE;
/// aggregation::make_large_channel builds it). The only representation of this setting.
enum class large_kind {
  automatic,  ///< "auto": the faster on this machine by measurement (aggregation/README.md)
  two_sided,  ///< "two-sided": MPI_Isend/MPI_Irecv in chunks (aggregation::mpi_large_channel)
  rendezvous  ///< "rendezvous": the receiver gets the bytes from the sender's exposed
              ///< buffer (aggregation::rma_large_channel; MP_Lite SHMEM notes)
};

/// "auto", "two-sided" or "rendezvous".
[[nodiscard]] const char* large_kind_name(large_kind k) noexcept;

/// The hwloc synthetic description CONVOY_EMULATE_TOPOLOGY stands for: hwloc 2 wants one
/// ending with PUs, and "pack:2 core:2" means one PU per core, so " pu:1" is appended when
/// the last level is not pu.
[[nodiscard]] std::string synthetic_with_pus(std::string_view desc);

struct settings {
  /// CONVOY_MESH: mesh spec (see mesh_spec.hpp), default auto. Held as text so that
  /// describe() shows it as given; from_* has already checked that it parses.
  std::optional<std::string> mesh;
  /// CONVOY_EMULATE_NODES, e.g. "4,2,3": ranks split into pretend nodes of these sizes.
  std::optional<std::vector<int>> emulate_nodes;
  /// CONVOY_EMULATE_TOPOLOGY: hwloc synthetic description of every pretend node.
  std::optional<std::string> emulate_topology;
  /// CONVOY_EMULATE_MAP: block (default) or cyclic.
  std::optional<placement> emulate_map;
  /// CONVOY_BUFFER_BYTES: capacity of one engine buffer in bytes.
  std::optional<std::size_t> buffer_bytes;
  /// CONVOY_N_BUFFERS: buffers per link, a power of two.
  std::optional<int> n_buffers;
  /// CONVOY_TUNE_FILE: path of the tuning file (default ~/.config/convoy/tune.conf).
  std::optional<std::string> tune_file;
  /// CONVOY_TRANSPORT: auto | mpi | shm | shm-zero-copy | rma.
  std::optional<transport_kind> transport;
  /// CONVOY_LARGE: auto | two-sided | rendezvous.
  std::optional<large_kind> large;
  /// CONVOY_WATCHDOG: seconds a rank may spend in a conveyor cycle without progress before
  /// convoy prints a diagnosis of the hang (termination/README.md, TERM-15); 0: off.
  std::optional<double> watchdog_seconds;
  /// CONVOY_WATCHDOG_ABORT: 1 aborts the job (MPI_Abort) after the diagnosis; 0 keeps running.
  std::optional<bool> watchdog_abort;
  /// CONVOY_STATS: path of the counters document written at each conveyor's destruction
  /// (docs/stats-format.md); unset: none. Never empty.
  std::optional<std::string> stats_path;
  /// CONVOY_TRACE: directory where every rank writes a timeline of each conveyor's events
  /// when the conveyor is freed (termination/README.md, TERM-17); unset: no tracing.
  std::optional<std::string> trace_dir;
  /// CONVOY_TRACE_EVENTS: events kept per rank and conveyor (the oldest are overwritten), a
  /// power of two between 16 and 2^24.
  std::optional<std::size_t> trace_events;
  /// CONVOY_COMBINE_CACHE: entries of the hold-back cache in front of each combining lane
  /// that leaves the node (termination/README.md, TERM-27), 0 (none) to 2^24; rounded down to
  /// a power of two. Unset: the conveyor's default budget.
  std::optional<std::size_t> combine_cache;
  /// CONVOY_COMBINE_MIN_HIT: folds per 1 024 records examined a combining buffer needs, or its lane
  /// appends plainly for the next 1, 2, 4 … 64 buffers (termination/README.md, TERM-24);
  /// 0 to 1024.
  std::optional<std::uint32_t> combine_min_hit;
  /// CONVOY_COMBINE_SAVED_NS: what a record folded away is worth, nanoseconds, against the
  /// time the fold passes take (termination/README.md, TERM-28); 0 to 10^9, 0: measured.
  std::optional<std::uint32_t> combine_saved_ns;
  /// CONVEY_NLOCAL (bale): ranks per local group of tensor conveyors, >= 1.
  std::optional<int> convey_nlocal;
  /// CONVEY_BUFFER_SIZE (bale): conveyor buffer size in bytes.
  std::optional<std::size_t> convey_buffer_size;
  /// The tuning file's values (tuning.hpp); empty unless read by from_env(comm).
  base::tuning tuning;

  /// The names of every variable above, in the order describe() lists them.
  [[nodiscard]] static const std::vector<std::string>& variable_names();

  /// Parses this process's environment; reads no tuning file. Not collective.
  /// @throws convoy::error naming the first invalid variable and its value.
  [[nodiscard]] static settings from_env();

  /// Collective over `comm`: the settings every component uses (BASE-6, BASE-7). Rank 0
  /// reads its environment and the tuning file (CONVOY_TUNE_FILE, else
  /// $HOME/.config/convoy/tune.conf if it exists) and broadcasts what it read; every rank
  /// parses the same text, so all ranks return equal settings or all throw the same
  /// convoy::error. No other rank opens the file. Cost: two MPI_Bcast.
  /// @throws convoy::error for an invalid variable, a named tuning file that cannot be read,
  ///   or a malformed tuning file ("tuning file <path>:<line>: ...").
  [[nodiscard]] static settings from_env(MPI_Comm comm);

  /// Parses a name -> value map (names not in variable_names() are ignored). Pure; used by
  /// from_env and by tests. @throws convoy::error as from_env.
  [[nodiscard]] static settings from_values(const std::map<std::string, std::string>& values);

  /// The mesh spec text to use: CONVOY_MESH, else the tuning file's mesh, else "auto".
  [[nodiscard]] std::string mesh_text() const;
  /// mesh_text() parsed.
  [[nodiscard]] mesh_spec mesh_or_auto() const;
  /// CONVOY_BUFFER_BYTES, else the tuning file's buffer_bytes, else default_buffer_bytes.
  [[nodiscard]] std::size_t buffer_bytes_or_default() const;
  /// CONVOY_N_BUFFERS, else the tuning file's n_buffers, else default_n_buffers.
  [[nodiscard]] int n_buffers_or_default() const;
  /// CONVOY_TRANSPORT, else automatic.
  [[nodiscard]] transport_kind transport_or_auto() const noexcept {
    return transport.value_or(transport_kind::automatic);
  }
  /// CONVOY_LARGE, else automatic.
  [[nodiscard]] large_kind large_or_auto() const noexcept {
    return large.value_or(large_kind::automatic);
  }

  /// CONVOY_WATCHDOG, else 0 (off).
  [[nodiscard]] double watchdog_seconds_or_off() const noexcept {
    return watchdog_seconds.value_or(0.0);
  }

  /// One line per variable: name, value (or "(unset)" and the default), meaning; then the
  /// tuning file's entries, if one was read.
  [[nodiscard]] std::string describe() const;
};

/// Parses a byte count: decimal digits with an optional suffix k/K (x1000), Ki (x1024),
/// M (x10^6), Mi (x2^20), within `range` (a buffer's, by default). @throws convoy::error
/// "<name>='<text>': ..." on anything else or outside the range, naming it.
[[nodiscard]] std::size_t parse_bytes(const std::string& name, const std::string& text,
                                      const setting_limit& range = limit_of("CONVOY_BUFFER_BYTES"));

/// Parses a buffer count per link: a power of two in 1..1024 (CONVOY_N_BUFFERS and the
/// tuning file's n_buffers). @throws convoy::error "<name>='<text>': ...".
[[nodiscard]] int parse_n_buffers(const std::string& name, const std::string& text);

/// Parses a duration in seconds: a decimal number >= 0 and at most a week ("60", "1.5"; 0
/// means off). @throws convoy::error "<name>='<text>': ..." on anything else.
[[nodiscard]] double parse_seconds(const std::string& name, const std::string& text);

/// Parses an event count: a power of two between 16 and 2^24 (CONVOY_TRACE_EVENTS).
/// @throws convoy::error "<name>='<text>': ...".
[[nodiscard]] std::size_t parse_trace_events(const std::string& name, const std::string& text);

/// Parses a combining cache size: an integer from 0 to 2^24 (CONVOY_COMBINE_CACHE).
/// @throws convoy::error "<name>='<text>': ...".
[[nodiscard]] std::size_t parse_combine_cache(const std::string& name, const std::string& text);

/// Parses a combining gate's bar: an integer from 0 to 1024 (CONVOY_COMBINE_MIN_HIT).
[[nodiscard]] std::uint32_t parse_combine_min_hit(const std::string& name, const std::string& text);

/// Parses a saved record's worth: an integer from 0 to 10^9 ns (CONVOY_COMBINE_SAVED_NS).
[[nodiscard]] std::uint32_t parse_combine_saved_ns(const std::string& name,
                                                   const std::string& text);

/// Parses "4,2,3" (positive integers, comma separated). @throws convoy::error naming
/// `name` and quoting `text`.
[[nodiscard]] std::vector<int> parse_int_list(const std::string& name, const std::string& text);

}  // namespace convoy::base
