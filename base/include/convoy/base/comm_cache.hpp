#pragma once
/// @file
/// Values kept with a communicator until it is freed (base/README.md BASE-9): what a
/// collective call learns once about a communicator (its machine, its node communicator)
/// or can hand on to the next call (a window, a duplicate), stored as an MPI attribute.
#include <mpi.h>

#include <memory>
#include <string>

namespace convoy::base {

/// The value kept as `key` with `comm`, or null. Local: no communication.
[[nodiscard]] std::shared_ptr<void> comm_cached(MPI_Comm comm, const std::string& key);

/// As comm_cached, cast to the type it was kept as.
template <class T>
[[nodiscard]] std::shared_ptr<T> comm_cached_as(MPI_Comm comm, const std::string& key) {
  return std::static_pointer_cast<T>(comm_cached(comm, key));
}

/// Keeps `value` as `key` with `comm` (replacing a value kept before), local. The value is
/// dropped when the communicator is freed, or at the start of MPI_Finalize (while MPI still
/// works: a value's deleter may free communicators and windows; values kept with every
/// communicator are dropped then, the last kept first). Not for MPI_COMM_NULL.
///
/// The caller keeps a communicator's entries the same on all of its ranks: it keeps or
/// drops them only inside calls that are collective over `comm`, under keys computed from
/// data every rank holds alike. Then a lookup finds a value on every rank or on none, and
/// a collective call may take a shorter path when it does.
void comm_cache(MPI_Comm comm, const std::string& key, std::shared_ptr<void> value);

/// Drops the value kept as `key` with `comm`, if any, and returns it. Local.
std::shared_ptr<void> comm_uncache(MPI_Comm comm, const std::string& key);

}  // namespace convoy::base
