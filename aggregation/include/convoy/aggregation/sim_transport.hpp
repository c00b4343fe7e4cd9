#pragma once
/// @file
/// The in-process simulated transport: P virtual ranks in one process, no MPI
/// (docs/aggregation-reference.md, "Transports", invariants AGG-1–AGG-6 and AGG-30–AGG-33).
#include <convoy/aggregation/transport.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace convoy::aggregation {

namespace detail {
struct sim_state;
}

/// A network of `n_ranks` virtual ranks. Each rank's engine gets a transport from
/// endpoint(); buffers posted on a link wait "in flight" until the driver calls
/// deliver_one(), which moves ONE buffer of a link chosen uniformly at random (seeded)
/// among the links with buffers in flight. So the driver decides when the network moves
/// and the seed decides what moves: the same seed and call sequence give the same run.
///
/// Credit semantics are those of mpi_transport: a link's sender starts with n_buffers
/// credits; a posted buffer without credit waits at the sender (queued) and leaves in the
/// sender's progress() once the receiver has released one of the link's buffers; a send
/// buffer is busy until delivered (MPI: until MPI_Isend completes); a receive buffer is
/// busy from delivery to release. Receive buffers are allocated on the link's first
/// delivery (MPI allocates them at open to pre-post receives).
///
/// Not thread-safe: one thread drives all virtual ranks. Endpoints may outlive the
/// network object (they share its state).
class sim_network {
 public:
  /// Throws convoy::error unless 1 ≤ n_ranks ≤ 2^21.
  sim_network(int n_ranks, std::uint64_t seed);
  ~sim_network();
  sim_network(const sim_network&) = delete;
  sim_network& operator=(const sim_network&) = delete;

  /// The transport of virtual rank `rank`. Its open() registers its links with the
  /// network (not collective: the two ends of a link may open in any order; a buffer
  /// posted before its receiver opened waits in flight). Throws convoy::error if `rank`
  /// is out of range. `memory` (may be null) supplies all the endpoint's link buffers in
  /// one grab at open(), released when the endpoint is destroyed (AGG-11); the grab is this
  /// virtual rank's own need (no collective agreement in one process).
  [[nodiscard]] std::unique_ptr<transport> endpoint(int rank,
                                                    std::shared_ptr<buffer_source> memory = {});

  /// Moves one in-flight buffer (the oldest of a link chosen uniformly among the links
  /// with buffers in flight whose receiver has opened) into a receive buffer of its
  /// receiver. False if there is none. O(1) apart from the copy.
  bool deliver_one();
  /// deliver_one() until it returns false; returns how many it delivered.
  std::size_t deliver_all();
  /// A count that changes whenever something happens at `rank`'s endpoint (AGG-143): a
  /// post, a poll that returned a buffer, a release, a queued buffer leaving in progress(),
  /// a buffer delivered to it or from it (its send done), a credit returned to it. While it
  /// stays the same, the endpoint's books are as they were: a driver may let a rank that
  /// has nothing else to do rest until it changes. 0 for a rank out of range.
  [[nodiscard]] std::uint64_t activity(int rank) const noexcept;
  /// Buffers posted and sent (credit used) but not yet delivered, over all links.
  [[nodiscard]] std::size_t in_flight() const noexcept;
  [[nodiscard]] int n_ranks() const noexcept;

 private:
  std::shared_ptr<detail::sim_state> state_;
};

}  // namespace convoy::aggregation
