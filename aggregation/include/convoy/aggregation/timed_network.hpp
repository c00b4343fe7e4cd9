#pragma once
/// @file
/// The simulated network with time: P virtual ranks in one process, each with a clock, and
/// a discrete-event model of the links (tools/sim/README.md; aggregation/README.md
/// AGG-140, AGG-141). The same engines that run over MPI run over its endpoints; the driver
/// (convoy-sim) steps the rank whose next event is earliest.
///
/// Credit semantics are those of mpi_transport and sim_transport (the shared link books):
/// n_buffers credits per link, a posted buffer without credit waits at the sender and
/// leaves in the sender's progress() once a credit came back.
///
/// Costs (a LogGP-like model, per link class):
///   - post() of a buffer charges `alpha_s` to the sender's clock, poll() of a buffer
///     charges `alpha_s` to the receiver's clock (CPU overhead per message at each end);
///   - the buffer leaves when the sender's injection port is free (per rank for links on
///     the node, per node for off-node links: the node's NIC), occupies the port
///     `beta_s_per_byte * bytes`, and arrives `latency_s` later (never before an earlier
///     buffer of the same link: FIFO);
///   - a release() returns the credit to the sender `latency_s` later.
/// Buffer memory costs what it holds (buffer_memory below): by default every endpoint's
/// buffers are carved from one lazily committed mapping and a buffer's pages are given
/// back when it becomes free; in heap mode a buffer is a heap block that grows with what
/// it holds (AGG-144).
#include <convoy/aggregation/transport.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace convoy::aggregation {

namespace detail {
struct timed_state;
}

/// Where two ranks sit relative to each other.
enum class link_class : std::uint8_t { same_socket = 0, same_node = 1, off_node = 2 };
inline constexpr int n_link_classes = 3;
/// "same_socket", "same_node", "off_node".
[[nodiscard]] const char* link_class_name(link_class c) noexcept;

/// The cost of one message on one link class.
struct link_cost {
  double alpha_s = 0;          ///< CPU overhead per message, at the sender and the receiver
  double latency_s = 0;        ///< wire time of the first byte
  double beta_s_per_byte = 0;  ///< injection time per byte (inverse bandwidth)
  bool operator==(const link_cost&) const = default;
};

/// Counters of the network (over all ranks), per link class and per stage.
struct traffic_counts {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;  ///< headers included
};
struct timed_network_stats {
  traffic_counts per_class[n_link_classes];
  std::vector<traffic_counts> per_stage;
  /// Sum over sent buffers of bytes / buffer_bytes (mean fill = fill_sum / messages).
  double fill_sum = 0;
  /// Most buffers one rank had posted and not yet sent (waiting for credit), at once.
  std::size_t max_queued = 0;
  /// Most buffers in flight (sent, not yet arrived) in the whole network, at once.
  std::size_t max_in_flight = 0;
};

/// Where the endpoints' link buffers live. Both move the same bytes at the same times: the
/// counts, clocks and deliveries of a run do not depend on it (AGG-144).
enum class buffer_memory : int {
  /// Full-capacity buffers carved from a lazily committed mapping (AGG-141): an open
  /// buffer costs at least a page; a delivery copies the bytes to the receiver's buffer.
  pages,
  /// A send buffer is a heap block that starts small and doubles as its lane fills, up to
  /// capacity (layouts with `growable`; others get capacity at once); a delivery hands
  /// the block itself to the receiver, which frees it at release(). An open buffer costs
  /// what it holds, within a factor of two.
  heap,
};

class timed_network {
 public:
  /// `node_of[r]` and `socket_of[r]` (size P, 1 ≤ P ≤ 2^21) place the ranks; costs[c] is
  /// the cost of link class c. Throws convoy::error on sizes that disagree or a negative
  /// cost.
  timed_network(std::vector<int> node_of, std::vector<int> socket_of,
                const link_cost (&costs)[n_link_classes],
                buffer_memory memory = buffer_memory::pages);
  ~timed_network();
  timed_network(const timed_network&) = delete;
  timed_network& operator=(const timed_network&) = delete;

  /// Endpoints of one rank in different planes, 0 <= plane < max_planes.
  static constexpr int max_planes = 64;
  /// The transport of virtual rank `rank` (as sim_network::endpoint, without a
  /// buffer_source: its buffers come from the network's lazy mapping). Every engine of a
  /// rank takes its own `plane` (e.g. request/reply: queries 0, replies 1): the planes'
  /// links are apart, their messages share the rank's clock, ports and NIC (AGG-142).
  [[nodiscard]] std::unique_ptr<transport> endpoint(int rank, int plane = 0);

  /// Room for `n` links (the out-links of every endpoint that will open, all planes), so
  /// that a large simulation builds its link table without a growing table's doubling.
  void reserve_links(std::size_t n);
  /// Every endpoint is open: drops the table that pairs a link's sender with its receiver
  /// (about 40 bytes per link). Opening an endpoint afterwards throws convoy::error.
  void links_complete();

  [[nodiscard]] int n_ranks() const noexcept;
  [[nodiscard]] link_class class_of(int src, int dst) const noexcept;
  /// The clock of `rank` in seconds; charge() adds CPU time to it (per-item costs).
  [[nodiscard]] double clock(int rank) const noexcept;
  void charge(int rank, double seconds) noexcept;

  /// Asks for `rank` to be stepped at its clock (no-op if it already is scheduled).
  void wake(int rank);
  /// Processes events (arrivals, returned credits) in time order until a rank is due: sets
  /// `rank` and returns true, its clock advanced to the event time. A rank with an
  /// arrival or a credit for it is woken. False when no event is left.
  [[nodiscard]] bool next_rank(int& rank);

  /// Posts, polls and releases of `rank`'s endpoint so far (the driver compares them
  /// around a step to see whether the rank did anything).
  [[nodiscard]] std::uint64_t activity(int rank) const noexcept;
  [[nodiscard]] timed_network_stats stats() const;
  /// The most messages (buffers and returned credits) on one causal chain that has reached
  /// `rank` so far; taken at the rank that completes last, the critical path's length.
  [[nodiscard]] std::uint32_t depth(int rank) const noexcept;

 private:
  std::shared_ptr<detail::timed_state> state_;
};

}  // namespace convoy::aggregation
