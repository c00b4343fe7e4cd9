#pragma once
/// @file
/// Raising an error the same way on every rank (base/README.md BASE-3).
#include <mpi.h>

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <utility>

namespace convoy::base {

/// Collective over `comm`. Each rank passes its local failure message (nullptr: none).
/// Returns on every rank if no rank failed; otherwise every rank throws convoy::error with
/// the message of the lowest failing rank, unchanged, so that a failure every rank sees reads
/// the same everywhere.
void raise_if_any_failed(MPI_Comm comm, const std::string* failure);

/// Collective over `comm`: runs the LOCAL (non-collective) function `f` on every rank and
/// returns its result; if `f` throws on any rank, every rank throws convoy::error carrying
/// the lowest failing rank's message. Never leaves some ranks throwing and others waiting.
/// Collective over `comm`: every rank returns `root`'s `text` (others' are replaced). One
/// MPI_Bcast when the text fits in broadcast_inline_bytes, else two.
void broadcast(MPI_Comm comm, std::string& text, int root = 0);
/// The text broadcast() carries in its first (fixed-size) message.
inline constexpr std::size_t broadcast_inline_bytes = 1016;

/// Prints `line` (and a newline) to stderr on rank 0 of `comm`, the first time this process
/// is asked to print a notice under `key`; later calls with the same key print nothing
/// (BASE-10). Local: no communication. For what a collective step decided the same way on
/// every rank — what MPI cannot do here and what convoy does instead — said once per job.
void notice_once(MPI_Comm comm, const std::string& key, const std::string& line) noexcept;

template <class F>
auto agree(MPI_Comm comm, F&& f) -> decltype(f()) {
  std::optional<decltype(f())> result;
  std::string failure;
  bool failed = false;
  try {
    result.emplace(std::forward<F>(f)());
  } catch (const std::exception& e) {
    failed = true;
    failure = e.what();
  }
  raise_if_any_failed(comm, failed ? &failure : nullptr);
  return std::move(*result);
}

}  // namespace convoy::base
