#pragma once
/// @file
/// Every environment setting of convoy (CONVOY_*) and of bale's conveyors (CONVEY_*),
/// parsed and validated in one place. `convoy-topo --settings` prints them.
///
/// An unset variable is std::nullopt: the component that uses the setting applies its own
/// default (documented in describe()). A set but invalid value throws convoy::error naming
/// the variable and quoting the value, e.g.
///   "CONVOY_N_BUFFERS='3': must be a power of two between 1 and 1024".
#include <mpi.h>

#include <convoy/topology/mesh_spec.hpp>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace convoy::topology {

/// Where the ranks of an emulated run go (CONVOY_EMULATE_MAP).
enum class placement {
  block,  ///< rank order fills node 0, then node 1, ... (mpirun --map-by core)
  cyclic  ///< rank r goes to the next node with room, round-robin (mpirun --map-by node)
};

/// "block" or "cyclic".
[[nodiscard]] const char* placement_name(placement p) noexcept;

/// Which transport moves engine buffers (CONVOY_TRANSPORT); the aggregation component
/// maps it onto its transport_kind (aggregation/hybrid_transport.hpp).
enum class transport_choice {
  automatic,     ///< "auto": shared memory between ranks of a node, MPI between nodes
  mpi,           ///< "mpi": MPI point-to-point for every link
  shm,           ///< "shm": shared memory on the node, MPI off it (as auto, even alone)
  shm_zero_copy  ///< "shm-zero-copy": as shm, items written straight into the receiver's ring
};

/// "auto", "mpi", "shm" or "shm-zero-copy".
[[nodiscard]] const char* transport_choice_name(transport_choice t) noexcept;

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
  /// CONVOY_TUNE_FILE: path of a tuning file (read by a later component).
  std::optional<std::string> tune_file;
  /// CONVOY_TRANSPORT: auto | mpi | shm.
  std::optional<transport_choice> transport;
  /// CONVEY_NLOCAL (bale): ranks per local group of tensor conveyors, >= 1.
  std::optional<int> convey_nlocal;
  /// CONVEY_BUFFER_SIZE (bale): conveyor buffer size in bytes.
  std::optional<std::size_t> convey_buffer_size;

  /// The names of every variable above, in the order describe() lists them.
  [[nodiscard]] static const std::vector<std::string>& variable_names();

  /// Parses this process's environment. Not collective.
  /// @throws convoy::error naming the first invalid variable and its value.
  [[nodiscard]] static settings from_env();

  /// Collective over `comm`: rank 0's environment, parsed identically on every rank, so all
  /// ranks get the same settings or all throw the same convoy::error.
  [[nodiscard]] static settings from_env(MPI_Comm comm);

  /// Parses a name -> value map (names not in variable_names() are ignored). Pure; used by
  /// from_env and by tests. @throws convoy::error as from_env.
  [[nodiscard]] static settings from_values(const std::map<std::string, std::string>& values);

  /// The mesh spec to use: CONVOY_MESH parsed, or auto.
  [[nodiscard]] mesh_spec mesh_or_auto() const;

  /// One line per variable: name, value (or "(unset)" and the default), meaning.
  [[nodiscard]] std::string describe() const;
};

/// Parses a byte count: decimal digits with an optional suffix k/K (x1000), Ki (x1024),
/// M (x10^6), Mi (x2^20). @throws convoy::error "<name>='<text>': ..." on anything else,
/// zero, or overflow.
[[nodiscard]] std::size_t parse_bytes(const std::string& name, const std::string& text);

/// Parses "4,2,3" (positive integers, comma separated). @throws convoy::error naming
/// `name` and quoting `text`.
[[nodiscard]] std::vector<int> parse_int_list(const std::string& name, const std::string& text);

}  // namespace convoy::topology
