#pragma once
/// @file
/// The node shared-memory transport: single-producer single-consumer rings in one MPI-3
/// shared window per node, published with release/acquire atomics, no MPI call per
/// buffer (the conveyor paper's "local atomics" porter, Maley & DeVinney 2019, sec. 4.3.2;
/// docs/aggregation-reference.md, "Shared memory", invariants M1–M7).
#include <mpi.h>

#include <convoy/aggregation/node_map.hpp>
#include <convoy/aggregation/transport.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace convoy::aggregation {

/// How a sender fills the buffers of an on-node link.
enum class shm_filling {
  /// acquire() hands out a private buffer of the sender (64-byte aligned, one per link);
  /// post() copies it into the receiver's ring slot in one memcpy. Items are written into
  /// the sender's own cache; only the bulk copy moves lines between cores (M8).
  staged,
  /// acquire() hands out the receiver's ring slot itself: items are written straight into
  /// it, no copy. Every line of the slot migrates from the receiver's cache while items
  /// are written one by one; measured twice slower on index-gather (bench/README.md).
  zero_copy,
};

/// What becomes of a transport's window when the transport is destroyed (AGG-70).
enum class window_reuse {
  /// Kept with the node communicator, locked, for the next transport on the node whose
  /// ranks need segments of exactly its sizes (at most shm_transport::max_kept_windows).
  keep,
  /// Freed (MPI_Win_free): a dynamic conveyor's buffers exist only from begin to reset.
  release,
};

namespace detail {
class shm_window_pool;
}  // namespace detail

/// Moves buffers between ranks of one node through rings in a shared window.
///
/// Every served link (sender → receiver, stage) has one ring, hosted in the receiver's
/// segment of the window: n_buffers slots of buffer_bytes (rounded up to 64) and two
/// index queues — *posted* (sender → receiver: slot and length, published by the
/// sender's release-store of a tail counter) and *freed* (receiver → sender: slot,
/// published by the receiver's release-store of another tail counter, on its own cache
/// line). acquire() hands out a slot of the receiver's ring itself, so the engine packs
/// items straight into the receiver's memory (zero copy). A slot is a credit: a link has
/// n_buffers slots, so at most n_buffers buffers are acquired, posted or held per link
/// (AGG-4), and a released slot is a credit again at once, whatever order the receiver
/// releases in.
///
/// Preconditions: every rank of the node communicator constructs, opens and destroys its
/// transports in the same order (open() and the destructor are collective over the node);
/// the two ends of a link serve it here or both not. Nothing here blocks but those
/// collectives.
class shm_transport final : public transport {
 public:
  /// Works on the node of `comm` (split_node: the MPI_COMM_TYPE_SHARED group, narrowed to
  /// the node `nodes` gives this rank when not empty; AGG-60), split once per communicator
  /// and node map (shared_node_group, AGG-68); collective over `comm`.
  /// Throws convoy::error if `comm` is MPI_COMM_NULL, `nodes` is malformed or MPI fails.
  /// `reuse`: what becomes of the window at destruction; open() takes a window kept by an
  /// earlier transport on the node when one fits (AGG-70).
  explicit shm_transport(MPI_Comm comm, shm_filling filling = shm_filling::staged,
                         const node_map& nodes = {}, window_reuse reuse = window_reuse::keep);
  /// Windows kept per node communicator at most; one more is freed at destruction.
  static constexpr std::size_t max_kept_windows = 4;
  /// Keeps the window for the next transport (window_reuse::keep; local), or frees it
  /// (collective over the node communicator if open() succeeded).
  /// Destroy it when the engines of the node are done with it (after termination).
  ~shm_transport() override;

  /// Serves every link of `layout`; throws convoy::error if a peer is not on this node.
  /// Collective over the node communicator: see the three-argument form.
  void open(const link_layout& layout) override;

  /// Serves only the flagged links (`serve_out[i]`, `serve_in[i]`), keeping the layout's
  /// link ids; the others belong to another transport (hybrid_transport). Collective over
  /// the node communicator, also with nothing to serve: exchanges the served links of
  /// every node rank (MPI_Allgatherv), places the rings deterministically, takes a kept
  /// window of exactly the sizes needed or allocates one (MPI_Win_allocate_shared; AGG-70)
  /// and maps the peers' segments (MPI_Win_shared_query).
  /// Throws convoy::error — on every node rank alike, so none is left in a collective —
  /// on a bad layout (as mpi_transport), a flagged link whose peer is off the node, a link
  /// whose other end does not serve it here, ends disagreeing on buffer_bytes or
  /// n_buffers, or if called twice.
  void open(const link_layout& layout, std::vector<bool> serve_out, std::vector<bool> serve_in);

  /// A buffer for a free slot of the link's ring (the slot itself, or with
  /// shm_filling::staged the link's staging buffer, allocated on first use; 64-byte
  /// aligned), or nullptr when all n_buffers are acquired, posted or held by the receiver,
  /// or the link is not served. Never calls MPI.
  [[nodiscard]] std::byte* acquire(int out_link) noexcept override;
  /// Publishes the slot to the receiver (release-store of the posted tail): delivered at
  /// once. Throws convoy::error on a buffer that is not the link's acquired buffer, a size
  /// outside [header, capacity], or an unserved link.
  void post(int out_link, std::byte* buffer, std::size_t bytes) override;
  /// Acquire-loads the posted tails of the served in-links, round-robin (AGG-9). Non-blocking.
  [[nodiscard]] bool poll(received& out) override;
  /// Publishes the slot as free to the sender (release-store of the freed tail). Throws
  /// convoy::error on a buffer poll() did not hand out or that was released already.
  void release(const received& r) override;
  /// Nothing to advance: every operation completes in the call.
  void progress() override {}
  /// Always true: a posted slot is delivered the moment its tail is published, and a
  /// release is a store; nothing of ours is ever queued or in flight (M6).
  [[nodiscard]] bool idle() const noexcept override { return true; }
  /// Ring memory this rank hosts (its served in-links' rings, control lines included),
  /// plus its staging buffers (allocated / one per served out-link at most).
  [[nodiscard]] std::size_t memory_bytes() const noexcept override {
    return hosted_bytes_ + staged_bytes_;
  }
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept override;

  /// Whether rank `peer` of the communicator shares this node (a window segment): same
  /// real host and, with a node map, same node in it.
  [[nodiscard]] bool on_node(int peer) const noexcept;
  /// Ranks on this node, this one included.
  [[nodiscard]] int node_size() const noexcept { return static_cast<int>(node_to_comm_.size()); }
  /// Bytes of one ring with these parameters (its control lines and slots).
  [[nodiscard]] static std::size_t ring_bytes(std::size_t buffer_bytes, int n_buffers) noexcept;

 private:
  enum class slot_state : std::uint8_t { free, filling, posted };
  struct out_ring {
    std::byte* base = nullptr;     ///< the ring in the receiver's segment
    std::uint64_t posted = 0;      ///< buffers posted (our copy of the posted tail)
    std::uint64_t freed_seen = 0;  ///< entries of the freed queue taken back
    int n_free = 0;                ///< local stack of free slots: free_[link × n .. + n_free)
    int staged_slot = -1;          ///< slot reserved for the staging buffer being filled
  };
  struct in_ring {
    std::byte* base = nullptr;    ///< the ring in our own segment
    std::uint64_t taken = 0;      ///< entries of the posted queue handed out by poll()
    std::uint64_t tail_seen = 0;  ///< last acquire-loaded posted tail
    std::uint64_t freed = 0;      ///< our copy of the freed tail
  };

  [[nodiscard]] std::byte* slot_ptr(std::byte* ring, int slot) const noexcept;
  [[nodiscard]] int node_rank(int peer) const noexcept;

  // The steps of open() that use this object's state; what the node ranks tell each
  // other travels from step to step in a node_handshake.
  struct node_handshake;
  /// This rank's served links (checked locally) and kept windows, in h.mine; a failed
  /// check is kept in h.local_error, to be thrown after the exchange.
  void announce(const link_layout& layout, const std::vector<bool>& serve_out,
                const std::vector<bool>& serve_in, node_handshake& h) const;
  /// Takes a kept window that fits (AGG-70) or allocates one; collective over the node.
  void adopt_window(const node_handshake& h);
  /// Places the served rings: in-rings from `own` in this rank's segment, out-rings in
  /// their receivers' segments (M2).
  void map_rings(const node_handshake& h, std::byte* own);

  std::shared_ptr<const node_group> node_;            ///< kept with the communicator (AGG-68)
  MPI_Comm node_comm_ = MPI_COMM_NULL;                ///< node_->comm
  std::shared_ptr<detail::shm_window_pool> windows_;  ///< kept with node_comm_ (AGG-70)
  window_reuse reuse_ = window_reuse::keep;
  MPI_Win win_ = MPI_WIN_NULL;
  std::uint64_t win_serial_ = 0;     ///< the window's serial, the same on every node rank
  std::vector<MPI_Aint> win_sizes_;  ///< every node rank's segment bytes
  bool opened_ = false;
  int rank_ = 0;
  int size_ = 0;
  std::vector<int> node_to_comm_;                  ///< comm rank of each node rank
  std::vector<std::pair<int, int>> comm_to_node_;  ///< (comm rank, node rank), sorted
  link_layout layout_;
  int n_ = 0;
  std::size_t slot_bytes_ = 0;
  std::size_t hosted_bytes_ = 0;
  std::vector<bool> serve_out_, serve_in_;
  std::vector<out_ring> out_;
  std::vector<in_ring> in_;
  std::vector<int> free_;              ///< out-link × n: stacks of free slots
  std::vector<slot_state> out_state_;  ///< out-link × n
  std::vector<bool> held_;             ///< in-link × n: handed out by poll(), not released
  std::vector<int> served_in_;         ///< ids of served in-links, for round-robin poll
  std::size_t cursor_ = 0;
  struct aligned_delete {
    void operator()(std::byte* p) const noexcept { ::operator delete (p, std::align_val_t{4096}); }
  };
  shm_filling filling_ = shm_filling::staged;
  std::vector<std::unique_ptr<std::byte, aligned_delete>> stage_;  ///< per out-link (staged)
  std::size_t staged_bytes_ = 0;                                   ///< staging allocated
};

}  // namespace convoy::aggregation
