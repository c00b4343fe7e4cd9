#pragma once
/// @file
/// convoy-topo's two reports of a machine and the mesh laid on it: aligned tables for
/// people, one JSON document for scripts (every string escaped by nlohmann-json, so host
/// names and specs read back exactly). Pure, no MPI.
#include <convoy/topology/machine.hpp>
#include <convoy/topology/mesh.hpp>
#include <string>

namespace convoy::tools {

/// Nodes, mesh dimensions, holes and every rank's place, coordinates and line peers.
[[nodiscard]] std::string text_report(const topology::machine& m, const topology::mesh& g,
                                      const std::string& spec);

/// {"ranks", "spec", "emulated", "source", "dims": [{name, size}], "buffers_per_rank",
///  "coords", "holes", "peers", "nodes": [{host, sockets, cores, ranks}],
///  "places": [{rank, node, socket, numa, core, local_rank, host}]}.
[[nodiscard]] std::string json_report(const topology::machine& m, const topology::mesh& g,
                                      const std::string& spec);

}  // namespace convoy::tools
