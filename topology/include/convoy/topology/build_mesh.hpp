#pragma once
/// @file
/// Laying a virtual mesh onto a machine (Wesolowski et al. 2014, sec. V.C: match the virtual
/// topology to the physical one, intranode dimension last). Invariants 5-11 of topology/README.md.
#include <mpi.h>

#include <convoy/base/mesh_spec.hpp>
#include <convoy/base/settings.hpp>
#include <convoy/topology/machine.hpp>
#include <convoy/topology/mesh.hpp>

namespace convoy::topology {

/// Pure, no MPI. Builds the mesh that `spec` asks for over the ranks of `m`.
///
/// - automatic: levels node, socket, core.
/// - levels: one dimension per named level. A level that the spec skips is merged into the
///   next named level below it (socket,core numbers sockets across all nodes; node,core
///   numbers cores across a node's sockets), Wesolowski et al. 2014, sec. V.C. A rank's coordinate
///   in a dimension is the index of its value among the distinct values present within its parent
///   (the dimensions before it), so ragged nodes and sockets leave holes. The core level numbers
///   cores when the ranks of a socket sit on distinct known cores, else it numbers the ranks
///   themselves in rank order (unbound or oversubscribed ranks). Dimensions of size 1 are dropped;
///   if all are, the innermost named one is kept.
/// - cartesian: mesh::cartesian(shape) over rank order, dimensions d0, d1, ...
///
/// @throws convoy::error "mesh spec '<spec>': ..." if a shape's product is not the rank
///   count, or named levels leave two ranks at the same coordinates (e.g. `node` with two
///   ranks on a node).
[[nodiscard]] mesh build_mesh(const machine& m, const base::mesh_spec& spec);

/// Collective over `comm`: discover(comm, s), then build_mesh with rank 0's
/// s.mesh_text() (CONVOY_MESH, else the tuning file's mesh, else auto). Identical on all ranks; any
/// failure throws the same convoy::error on every rank (TOPO-4).
[[nodiscard]] mesh discover_mesh(MPI_Comm comm, const base::settings& s);
/// discover_mesh(comm, base::settings::from_env(comm)).
[[nodiscard]] mesh discover_mesh(MPI_Comm comm);

}  // namespace convoy::topology
