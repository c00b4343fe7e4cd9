#pragma once
/// @file
/// The one-sided (RMA) transport: every rank exposes one receive ring per stage in an
/// MPI-3 window; senders reserve space in it with an atomic on the receiver's tail counter
/// and write whole buffers with MPI_Put (Dinan & Flajslik 2014,
/// Listing 1, made circular). docs/aggregation-reference.md, "RMA transport", AGG-110–AGG-117.
#include <mpi.h>

#include <convoy/aggregation/detail/rma_window.hpp>
#include <convoy/aggregation/transport.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace convoy::aggregation {

/// Moves buffers with MPI-3 passive-target RMA (MPI_Win_allocate + MPI_Win_lock_all).
///
/// Receive side: per stage one ring of ring_bytes() on each rank, shared by all senders of
/// that stage, so its size does not grow with the number of peers (AGG-110). A record is a
/// 64-byte header line and the buffer. post() reserves a record with MPI_Compare_and_swap
/// on the ring's tail after checking the room against the head the receiver publishes
/// (never an overwrite, AGG-111), puts the header and buffer in one MPI_Put, flushes, and only
/// then stores the header's ready word (the record's absolute ring position + 1) with an
/// atomic: the receiver reads a record only after its ready word matches, so never a
/// partly written one (AGG-112). The receiver hands out records in ring order, straight from
/// the ring (no copy), and publishes its head as released records free a prefix (AGG-113). A
/// sender that finds no room keeps the buffer queued (at most n_buffers per link) and
/// retries in progress(): backpressure (AGG-114). Per link at most n_buffers records are
/// unreleased at the receiver: each release adds one to a credit word in the sender's
/// window (one word per out-link of the sender; AGG-118), as the engine expects (AGG-4).
///
/// Preconditions as for mpi_transport: both ends agree on buffer_bytes and n_buffers;
/// every rank of the communicator constructs, opens and destroys its transports in the
/// same order (open() and the destructor are collective).
class rma_transport final : public transport {
 public:
  /// Keeps `comm` (collective at open()). `ring_bytes_per_stage` 0: the default,
  /// 4 × n_buffers × record size. Throws convoy::error if `comm` is MPI_COMM_NULL.
  explicit rma_transport(MPI_Comm comm, std::size_t ring_bytes_per_stage = 0);
  ~rma_transport() override;

  /// Collective over the communicator: agrees on the number of stages and the ring size
  /// (MPI_Allreduce), then allocates the window. A bad layout on any rank makes open()
  /// throw on every rank (that rank: its own message). Throws convoy::error.
  void open(const link_layout& layout) override;
  [[nodiscard]] std::byte* acquire(int out_link) noexcept override;
  void post(int out_link, std::byte* buffer, std::size_t bytes) override;
  [[nodiscard]] bool poll(received& out) override;
  void release(const received& r) override;
  void progress() override;
  [[nodiscard]] bool idle() const noexcept override { return n_queued_ == 0; }
  [[nodiscard]] std::size_t memory_bytes() const noexcept override;
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept override;

  /// Bytes of one stage's receive ring (after open()).
  [[nodiscard]] std::size_t ring_bytes() const noexcept { return ring_bytes_; }
  /// Bytes a record takes in a ring: one header line plus the capacity rounded to 64.
  [[nodiscard]] static std::size_t record_bytes(std::size_t buffer_bytes) noexcept;
  /// Times a post found no room and left its buffer queued (backpressure events).
  [[nodiscard]] std::uint64_t n_full() const noexcept { return n_full_; }

 private:
  struct out_slot {
    std::byte* mem = nullptr;  ///< header line + buffer
    std::size_t bytes = 0;
    enum class state : std::uint8_t { free, filling, queued } st = state::free;
  };
  struct out_link_state {
    std::vector<out_slot> slots;  ///< n_buffers, allocated on first acquire
    std::vector<int> queue;       ///< queued slots in post order
    std::size_t queue_head = 0;
    std::uint64_t sent = 0;      ///< records put on this link
    std::uint64_t released = 0;  ///< of them released by the receiver (last read)
  };
  struct held_record {
    std::uint64_t pos = 0;    ///< absolute ring position
    std::uint64_t bytes = 0;  ///< record bytes (header included)
    bool held = false;
    int source = 0;                 ///< sender rank (data records)
    std::uint64_t sender_link = 0;  ///< the sender's out-link id, for its credit word
  };
  struct stage_ring {
    std::uint64_t cursor = 0;          ///< next absolute position to poll
    std::uint64_t head = 0;            ///< consumed (published) position
    std::vector<held_record> records;  ///< records between head and cursor, circular
    std::uint64_t first = 0;           ///< sequence number of records[first % size]
    std::uint64_t next = 0;            ///< sequence number of the next polled record
  };

  void drain(int out_link);
  bool try_send(int out_link, out_slot& s);
  void advance_head(int stage);
  [[nodiscard]] std::size_t ring_disp(int stage) const noexcept;
  [[nodiscard]] std::size_t credit_disp(int out_link) const noexcept;
  [[nodiscard]] std::size_t control_disp(int stage) const noexcept;

  MPI_Comm comm_;
  std::size_t asked_ring_bytes_;
  link_layout layout_;
  std::unique_ptr<detail::rma_window> window_;
  std::size_t ring_bytes_ = 0;
  std::size_t record_max_ = 0;
  int n_stages_ = 0;
  std::vector<out_link_state> out_;
  std::vector<stage_ring> rings_;
  std::unordered_map<std::uint64_t, int> in_link_of_;  ///< (stage << 32 | source) -> in-link
  std::size_t n_queued_ = 0;
  std::size_t send_memory_ = 0;
  int poll_stage_ = 0;
  std::uint64_t n_full_ = 0;
};

}  // namespace convoy::aggregation
