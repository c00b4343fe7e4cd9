#pragma once
/// @file
/// Large items by rendezvous (MP_Lite SHMEM notes: a header says where the
/// data lies on the source, the receiver matches it and pulls the data with a get;
/// aggregation/README.md, AGG-120..127). The sender's outgoing buffer is its part of an
/// MPI-3 window held open for the channel's life (passive target, lock_all): a 64-byte
/// control line (the release counter), then room for one item of the bound. The ticket
/// that travels through the engine carries the item's displacement (the descriptor of
/// stage_send()); the receiver fetches the bytes with MPI_Rget in chunks of at most
/// `chunk_bytes` (items above 2^31 bytes work) completed by later tests, then adds 1 to
/// the sender's release counter with an atomic (MPI_Accumulate SUM). The sender may reuse
/// its buffer, and send_ready() turns true, only when the counter (plus the items it took
/// from itself, by a copy) equals the number of items it has started.
///
/// The window is allocated, not a dynamic one: on OpenMPI 4.1.4 here, gets from a dynamic
/// window (MPI_Win_create_dynamic + MPI_Win_attach, component osc rdma) failed with
/// MPI_ERR_RMA_RANGE on attached memory (AGG-127). As rma_window, it is
/// MPI_Win_allocate_shared when every rank shares a node, else MPI_Win_allocate. Its item
/// room is the bound, reserved at construction (pages are touched only by items).
#include <mpi.h>

#include <convoy/aggregation/large_channel.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace convoy::aggregation {

class rma_large_channel final : public large_channel {
 public:
  using options = mpi_large_channel::options;

  /// Collective over `comm` (MPI_Comm_dup, the window). With a source the incoming buffer
  /// (the bound) is grabbed first; the outgoing one is the window's (MPI memory). If the
  /// grab fails on any rank, every rank throws std::bad_alloc. Throws convoy::error on a
  /// bad chunk size or an MPI failure.
  rma_large_channel(MPI_Comm comm, options o);
  /// Collective (MPI_Win_free): waits for its own gets, frees the window and the buffer.
  ~rma_large_channel() override;

  /// Bytes in front of the outgoing item: the release counter, padded to 64 bytes.
  static constexpr std::size_t control_bytes = 64;

  [[nodiscard]] std::size_t max_item_bytes() const noexcept override { return bound_; }
  [[nodiscard]] bool send_ready() override;
  std::uint64_t stage_send(const void* data, std::size_t bytes, int dest) override;
  void start_send() override;
  void start_receive(int from, std::size_t bytes, std::uint64_t descriptor) override;
  [[nodiscard]] bool receive_done() override;
  [[nodiscard]] bool receiving() const noexcept override { return receiving_; }
  [[nodiscard]] const std::byte* incoming() const noexcept override { return in_.data(); }
  void progress() override;
  [[nodiscard]] bool idle() const noexcept override { return !sending_; }
  [[nodiscard]] const statistics& stats() const noexcept override { return stats_; }
  [[nodiscard]] std::size_t memory_bytes() const noexcept override;
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept override {
    return 2 * bound_ + control_bytes;
  }

  /// Items this rank has started and receivers have released (tests and statistics).
  [[nodiscard]] std::uint64_t started() const noexcept { return started_; }

 private:
  void make_window();
  void grab_from_source(MPI_Comm comm);
  [[nodiscard]] std::uint64_t read_released();

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* base_ = nullptr;  // this rank's window: control line, then the item
  int rank_ = 0, n_ranks_ = 1;
  std::size_t bound_ = 0, chunk_ = 0;
  std::shared_ptr<buffer_source> memory_;  // outlives in_ (declared first)
  detail::large_buffer in_;                // the incoming buffer
  std::uint64_t started_ = 0;              // items sent (start_send) over the lifetime
  std::uint64_t self_released_ = 0;        // of them, items to self, copied by start_receive
  bool staged_ = false, sending_ = false, receiving_ = false;
  int send_to_ = -1;
  std::size_t send_bytes_ = 0;
  std::vector<MPI_Request> recv_reqs_;
  int recv_from_ = -1;
  std::size_t recv_bytes_ = 0;
  statistics stats_;
};

}  // namespace convoy::aggregation
