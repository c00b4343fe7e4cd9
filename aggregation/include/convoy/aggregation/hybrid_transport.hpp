#pragma once
/// @file
/// The hybrid transport: node shared memory for on-node links, MPI point-to-point for the
/// rest, behind one transport object (aggregation/README.md, AGG-8; docs/aggregation-reference.md,
/// "Shared memory").
#include <mpi.h>

#include <convoy/aggregation/mpi_transport.hpp>
#include <convoy/aggregation/node_map.hpp>
#include <convoy/aggregation/shm_transport.hpp>
#include <convoy/aggregation/transport.hpp>
#include <convoy/base/settings.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace convoy::aggregation {

/// Which transport carries a link of a hybrid_transport.
enum class link_medium : std::uint8_t { shm, mpi };

/// Sends a link through shm_transport when its peer is on this node (and `use_shm`
/// agrees) and through an mpi_transport serving only the other links. "On this node"
/// follows the node map (AGG-60): topology discovery's nodes, so an emulated node
/// boundary is crossed by MPI. Link ids are the layout's; acquire/post/release are
/// routed by link id, poll() alternates between the two so neither starves the other (AGG-9).
class hybrid_transport final : public transport {
 public:
  /// `use_shm(rank, peer)` may restrict shared memory to some on-node links (tests use it
  /// to emulate remote peers); it must be symmetric, so both ends of a link choose alike.
  /// Empty: every on-node link uses shared memory.
  using link_predicate = std::function<bool(int rank, int peer)>;

  /// Collective over `comm` (duplicates it for MPI and splits it into the node).
  /// `memory` (may be null) supplies the buffers of the links that go through MPI
  /// (mpi_transport, AGG-11). The on-node links keep their rings in the node's
  /// MPI_Win_allocate_shared window: a client allocator cannot provide memory that other
  /// processes map, so those never come from `memory`.
  /// `filling`: how the on-node links' buffers are filled (shm_transport).
  /// `nodes`: the node of every rank, identical on every rank (discover_node_map();
  /// empty: the real shared-memory groups). A peer shares memory with this rank only if
  /// it is on the same real host and on the same node of `nodes` (split_node).
  /// `mpi_credit_window`: the MPI links' credit window (mpi_transport, AGG-67).
  /// `reuse`: what becomes of the on-node window at destruction (shm_transport, AGG-70).
  explicit hybrid_transport(MPI_Comm comm, link_predicate use_shm = {},
                            std::shared_ptr<buffer_source> memory = {},
                            shm_filling filling = shm_filling::staged, const node_map& nodes = {},
                            int mpi_credit_window = 0, window_reuse reuse = window_reuse::keep);

  /// Collective over the node communicator (shm_transport::open), and over `comm` when a
  /// buffer source was given (mpi_transport::open); throws convoy::error as
  /// mpi_transport::open and shm_transport::open do.
  void open(const link_layout& layout) override;
  [[nodiscard]] std::byte* acquire(int out_link) noexcept override;
  void post(int out_link, std::byte* buffer, std::size_t bytes) override;
  [[nodiscard]] bool poll(received& out) override;
  void release(const received& r) override;
  void progress() override;
  [[nodiscard]] bool idle() const noexcept override;
  [[nodiscard]] std::size_t memory_bytes() const noexcept override;
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept override;

  /// Links (out + in) served by shared memory; the rest go through MPI.
  [[nodiscard]] std::size_t n_shm_links() const noexcept { return n_shm_links_; }
  /// Which side carries out-link / in-link `id` (after open(); ids out of range: mpi,
  /// whose calls then reject them). Both ends of a link report the same medium.
  [[nodiscard]] link_medium out_medium(int id) const noexcept { return medium(shm_out_, id); }
  [[nodiscard]] link_medium in_medium(int id) const noexcept { return medium(shm_in_, id); }
  [[nodiscard]] const shm_transport& shm() const noexcept { return shm_; }
  [[nodiscard]] const mpi_transport& mpi() const noexcept { return mpi_; }

 private:
  static link_medium medium(const std::vector<bool>& shm, int id) noexcept {
    return id >= 0 && static_cast<std::size_t>(id) < shm.size() && shm[static_cast<std::size_t>(id)]
               ? link_medium::shm
               : link_medium::mpi;
  }

  mpi_transport mpi_;
  shm_transport shm_;
  link_predicate use_shm_;
  std::vector<bool> shm_out_, shm_in_;
  std::size_t n_shm_links_ = 0;
  bool mpi_links_ = true;  ///< some link goes through MPI
  bool shm_first_ = true;
};

/// The transport for an engine on `comm`, of the kind CONVOY_TRANSPORT names
/// (base::settings::transport_or_auto()): mpi -> mpi_transport for every link; shm ->
/// hybrid_transport (shared memory on the node, MPI off it); shm_zero_copy -> as shm with
/// zero-copy rings (shm_filling::zero_copy); rma -> rma_transport (one-sided, every link;
/// `memory` is not used); automatic -> shm if any node holds more than one rank of `comm`,
/// else mpi. Which ranks share a node comes from topology discovery (discover_node_map: the
/// emulated nodes when CONVOY_EMULATE_NODES etc. are set, AGG-60), run for the shm kinds
/// and automatic only. Collective over `comm`.
/// `memory` (may be null) supplies the buffers of every link that goes through MPI (AGG-11),
/// whose credit window is default_credit_window (AGG-67).
/// Throws convoy::error if `comm` is MPI_COMM_NULL, discovery fails (on every rank alike) or
/// MPI fails.
/// `reuse`: what becomes of a shared-memory window at destruction (AGG-70; release for a
/// dynamic conveyor, whose buffers exist only from begin to reset).
[[nodiscard]] std::unique_ptr<transport> make_transport(MPI_Comm comm, base::transport_kind kind,
                                                        std::shared_ptr<buffer_source> memory = {},
                                                        window_reuse reuse = window_reuse::keep);
/// make_transport(comm, s.transport_or_auto(), memory) with the already resolved settings
/// `s` (rank 0's, base::settings::from_env) for the node discovery too, so the environment
/// is not read again.
[[nodiscard]] std::unique_ptr<transport> make_transport(MPI_Comm comm, const base::settings& s,
                                                        std::shared_ptr<buffer_source> memory = {},
                                                        window_reuse reuse = window_reuse::keep);

}  // namespace convoy::aggregation
