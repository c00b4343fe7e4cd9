#pragma once
/// @file
/// The benchmark programs' results as JSON (bench/README.md "Output"): one document per
/// run, `{"context": {...}, "results": [row, ...]}`. The bench harness writes it
/// (`--json FILE`); convoy-tune, convoy-plot and convoy-compare read it. This file is the
/// one definition of that schema: both sides go through to_json_text / from_json_text.
///
/// Pure C++ (no MPI), so that the tools read results without a launcher.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace convoy::bench {

/// One configuration's outcome (kernel x kind x item size), identical on every rank.
struct result_row {
  std::string kernel, impl, kind;
  std::size_t item_bytes = 0;
  int ranks = 1, nodes = 1;
  std::uint64_t items_per_rank = 0;
  int reps = 0;
  double seconds = 0, seconds_min = 0, seconds_max = 0;  ///< median, fastest, slowest cycle
  double items_per_s_per_rank = 0;
  double node_bw_bytes_per_s = 0;    ///< item bytes pushed per node per second
  double header_bytes_per_item = 0;  ///< NaN: the library does not count its bytes ("na")
  std::size_t buffers_per_rank = 0;
  std::size_t buffer_bytes = 0;  ///< bytes per buffer (0: grows with the data)
  std::size_t memory_bytes_per_rank = 0;
  std::size_t n_local = 0;  ///< local group of a tensor kind (0: not a tensor kind)
  double skew = 0;          ///< Zipf exponent of the keys (--skew; 0: uniform)
  /// Bytes one cycle sent to ranks of other nodes (emulated ones included), headers
  /// included, summed over the ranks; negative: the kind does not count them.
  double offnode_bytes = -1;
  /// The links' bound on items/s per rank: the busiest node's off-node payload bytes over
  /// its link rate (CONVOY_LINK_RATES, set by tools/cluster); 0: no rate known.
  double wire_bound_items_per_s_per_rank = 0;
  bool verified = false;
  std::string error;  ///< non-empty: the configuration could not run

  friend bool operator==(const result_row&, const result_row&) = default;
};

/// Where and how a run was made (style.md "Benchmarks": results carry their context).
struct run_context {
  std::string date;  ///< UTC, ISO 8601
  std::string host, git, impl, mpi, command;
  int ranks = 1, nodes = 1, ranks_per_node = 1;
  std::string emulate_nodes;  ///< CONVOY_EMULATE_NODES as given ("" when unset)
  std::string transport;      ///< CONVOY_TRANSPORT as given ("" when unset)
  std::string btl;            ///< OpenMPI's btl selection (OMPI_MCA_btl; "" when unset)
  std::string cluster;        ///< tools/cluster's SHAPE@RATE (CONVOY_CLUSTER; "" elsewhere)

  friend bool operator==(const run_context&, const run_context&) = default;
};

struct run_results {
  run_context context;
  std::vector<result_row> rows;

  friend bool operator==(const run_results&, const run_results&) = default;
};

/// The JSON document of `r` (indented, one line per row field group). Any text (host
/// names, commands, error messages) is escaped, so from_json_text gives it back exactly.
[[nodiscard]] std::string to_json_text(const run_results& r);

/// Parses a document written by to_json_text. `origin` names the input in messages.
/// Fields a row lacks take their defaults; a row without kernel or kind, or a document
/// that is not JSON, throws std::runtime_error "<origin>: ...".
[[nodiscard]] run_results from_json_text(std::string_view text, const std::string& origin);

/// Reads and parses a file (from_json_text). @throws std::runtime_error naming the path.
[[nodiscard]] run_results read_results_file(const std::string& path);

/// Writes to_json_text(r) to `path`. @throws std::runtime_error naming the path.
void write_results_file(const std::string& path, const run_results& r);

/// Canonical description of the run's network configuration, e.g. "np4 2x2 (a)", used to
/// group rows in tables: ranks, emulated node shape, and (a) convoy's default transport or
/// (b) CONVOY_TRANSPORT=mpi (bench/README.md, "Configurations").
[[nodiscard]] std::string configuration_label(const run_context& c);

/// A short name of the MPI library from the first line of MPI_Get_library_version (the
/// context's `mpi`), for tables that set MPIs side by side: "Open MPI v4.1.4, package: ..."
/// gives "Open MPI 4.1.4", "MPICH Version:\t4.0.2" gives "MPICH 4.0.2"; the text up to its
/// first comma, "Version:" dropped, blanks collapsed, "v" before the version number
/// dropped. Empty text gives "unknown MPI".
[[nodiscard]] std::string mpi_label(std::string_view version);

}  // namespace convoy::bench
