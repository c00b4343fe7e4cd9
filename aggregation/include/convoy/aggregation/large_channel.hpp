#pragma once
/// @file
/// The channel that carries the bytes of large ("monster") items beside the engine, whose
/// buffers carry only a ticket for them (Maley & DeVinney 2019, sec. 4.4.1; aggregation/README.md,
/// AGG-52..57). Two-sided and never blocking: a receive is started when the receiver meets
/// the ticket and completes in later progress() calls; at most one outgoing item is in
/// flight per rank, and each end holds one buffer of at most the item bound.
#include <mpi.h>

#include <convoy/aggregation/detail/large_buffer.hpp>
#include <convoy/aggregation/transport.hpp>
#include <convoy/base/settings.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace convoy::aggregation {

/// One rank's end of a large-item channel. Items from one rank to another are received in
/// the order they were sent (the caller starts receives in ticket order, which is send
/// order per pair). Not thread-safe.
class large_channel {
 public:
  virtual ~large_channel() = default;
  large_channel() = default;
  large_channel(const large_channel&) = delete;
  large_channel& operator=(const large_channel&) = delete;

  /// Largest item this channel moves.
  [[nodiscard]] virtual std::size_t max_item_bytes() const noexcept = 0;

  /// True when a new item may be sent: the previous one's memory may be reused (tests it).
  [[nodiscard]] virtual bool send_ready() = 0;
  /// Copies `bytes` (<= max_item_bytes()) of `data` for `dest` into the outgoing buffer
  /// before the item's ticket leaves, so that start_send() cannot fail for memory and a
  /// receiver that meets the ticket finds the bytes. Sends nothing: a staged item that is
  /// never started is replaced by the next stage_send(). Returns the item's descriptor,
  /// which the ticket carries to the receiver's start_receive() (0 when the channel needs
  /// none). Precondition: send_ready(). Throws std::bad_alloc, or convoy::error if `bytes`
  /// exceeds the bound, a buffer source's block is too small or a send is in flight.
  virtual std::uint64_t stage_send(const void* data, std::size_t bytes, int dest) = 0;
  /// Sends the staged item (its ticket has left). Throws convoy::error if nothing is
  /// staged or on an MPI failure.
  virtual void start_send() = 0;

  /// Starts receiving the next item from `from`, of `bytes` bytes, whose ticket carried
  /// `descriptor`, into the incoming buffer (which then holds nothing else). Precondition:
  /// no receive active. Throws as stage_send, or convoy::error on an MPI failure.
  virtual void start_receive(int from, std::size_t bytes, std::uint64_t descriptor) = 0;
  /// True once the active receive has completed (tests it); its bytes are at incoming().
  [[nodiscard]] virtual bool receive_done() = 0;
  [[nodiscard]] virtual bool receiving() const noexcept = 0;
  /// The incoming buffer: the last received item, until the next start_receive().
  [[nodiscard]] virtual const std::byte* incoming() const noexcept = 0;

  /// Tests the active send and receive (called from the conveyor's advance).
  virtual void progress() = 0;
  /// True when no send is in flight.
  [[nodiscard]] virtual bool idle() const noexcept = 0;

  /// Counters over the channel's lifetime (items to or from other ranks only).
  struct statistics {
    std::uint64_t sent = 0, sent_bytes = 0;
    std::uint64_t received = 0, received_bytes = 0;
    std::uint64_t messages = 0;  ///< point-to-point messages sent (chunks)
  };
  [[nodiscard]] virtual const statistics& stats() const noexcept = 0;
  /// Buffer bytes held now / at most (2 x max_item_bytes()).
  [[nodiscard]] virtual std::size_t memory_bytes() const noexcept = 0;
  [[nodiscard]] virtual std::size_t max_memory_bytes() const noexcept = 0;
};

/// The MPI channel: MPI_Isend / MPI_Irecv on its own duplicate of a communicator, an item
/// split into chunks of at most `chunk_bytes` (so items above 2^31 bytes work with MPI's
/// int counts); MPI's non-overtaking order per (source, tag, communicator) matches the
/// chunks of successive items in order.
class mpi_large_channel final : public large_channel {
 public:
  struct options {
    std::size_t max_item_bytes = 0;                  ///< the item bound
    std::size_t chunk_bytes = std::size_t{1} << 30;  ///< largest message (1 .. INT_MAX)
    /// With a source: both buffers (max_item_bytes each) are grabbed at construction,
    /// outgoing then incoming, and released LIFO at destruction (a source that needs
    /// collective grabs is served: call the constructor on every rank alike). Without:
    /// each buffer grows to the largest item it has carried, up to the bound.
    std::shared_ptr<buffer_source> memory;
  };

  /// Collective over `comm` (MPI_Comm_dup). Throws convoy::error on a bad chunk size or
  /// MPI failure, std::bad_alloc when the source's grab fails.
  mpi_large_channel(MPI_Comm comm, options o);
  /// Waits for a send still in flight (its receiver has received it once every rank's
  /// conveyor is complete), then frees the buffers and the communicator.
  ~mpi_large_channel() override;

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
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept override { return 2 * bound_; }

 private:
  void post(std::vector<MPI_Request>& reqs, std::byte* base, std::size_t bytes, int peer,
            bool send);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  std::size_t bound_ = 0, chunk_ = 0;
  std::shared_ptr<buffer_source> memory_;  // outlives the buffers (declared first)
  detail::large_buffer out_, in_;
  std::vector<MPI_Request> send_reqs_, recv_reqs_;
  bool staged_ = false, sending_ = false, receiving_ = false;
  int send_to_ = -1;
  std::size_t send_bytes_ = 0;
  int recv_from_ = -1;
  std::size_t recv_bytes_ = 0;
  statistics stats_;
};

/// What `kind` stands for on `comm` (collective when `kind` is automatic and there is no
/// buffer source): CONVOY_LARGE=auto is rendezvous when every rank of `comm` shares one
/// node (one copy from a shared window; docs/aggregation-reference.md, "Large items by
/// rendezvous"), two-sided otherwise (MPI_Win_allocate's one-sided
/// component there is AGG-117's), and two-sided with a buffer source (its contract: every
/// channel buffer from the source, which a window cannot be; every rank alike). Other
/// kinds come back unchanged. Throws convoy::error if MPI fails.
[[nodiscard]] base::large_kind resolve_large_kind(MPI_Comm comm, base::large_kind kind,
                                                  bool buffer_source = false);

/// The channel `kind` names (resolved by resolve_large_kind), collective over `comm`:
/// mpi_large_channel (two-sided) or rma_large_channel (rendezvous). Throws as their
/// constructors.
[[nodiscard]] std::unique_ptr<large_channel> make_large_channel(MPI_Comm comm,
                                                                base::large_kind kind,
                                                                mpi_large_channel::options o);

}  // namespace convoy::aggregation
