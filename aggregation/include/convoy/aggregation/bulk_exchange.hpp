#pragma once
/// @file
/// The bulk-synchronous exchange: one send and one receive buffer per rank, moved all at
/// once by MPI_Alltoallv (bale's "simple" conveyors, Maley & DeVinney 2019, sec. 4.1), optionally
/// with the buffers to other nodes compressed (sec. 3.6). The per-destination buffers of the bulk
/// conveyor kind (conveyor_api's bulk_engine); aggregation/README.md, AGG-48..51.
#include <mpi.h>

#include <convoy/aggregation/codec.hpp>
#include <convoy/aggregation/detail/pooled_dup.hpp>
#include <convoy/aggregation/transport.hpp>
#include <convoy/base/settings.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace convoy::aggregation {

class bulk_exchange {
 public:
  struct options {
    /// Bytes of one per-destination buffer (no header: a buffer holds items only).
    std::size_t buffer_bytes = base::default_buffer_bytes;
    /// Where the buffers come from (one grab of footprint() bytes; T11's interface).
    /// Null: 64-byte aligned operator new.
    std::shared_ptr<buffer_source> memory;
    /// Compress the buffers to the ranks `compress_link` chooses. Null: never; then the
    /// regions carry no codec slack and set_codec() cannot switch compression on.
    std::shared_ptr<aggregation::codec> codec;
    /// `compress_link(rank, peer)`: compress buffers to `peer` (typically: on another
    /// node). Empty: every other rank. Must be symmetric.
    std::function<bool(int rank, int peer)> compress_link;
  };

  /// Bytes kept after each region for a codec's slack packets and overrun.
  static constexpr std::size_t codec_room_bytes = 512;
  /// Bytes kept after a buffer's last item for an inline push's 8-byte tag store (the
  /// bulk engine's lanes are send lanes: termination/conveyor_engine.hpp, hot_state).
  static constexpr std::size_t store_room_bytes = 8;

  /// Collective over `comm` (a duplicate through detail::pooled_dup, AGG-69; MPI_ERRORS_RETURN
  /// on it). Buffers
  /// are not taken yet (acquire_buffers). Throws convoy::error if capacity is 0 or the
  /// ranks' buffers exceed the 2 GiB one MPI_Alltoallv can address.
  bulk_exchange(MPI_Comm comm, options o);
  ~bulk_exchange();
  bulk_exchange(const bulk_exchange&) = delete;
  bulk_exchange& operator=(const bulk_exchange&) = delete;

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int n_ranks() const noexcept { return n_ranks_; }
  [[nodiscard]] std::size_t buffer_bytes() const noexcept { return capacity_; }
  /// Distance between two ranks' buffers: capacity plus the store room rounded up to 64,
  /// plus codec room.
  [[nodiscard]] std::size_t region_bytes() const noexcept { return region_; }
  /// Bytes of both buffer arrays: 2 x n_ranks x region_bytes().
  [[nodiscard]] static std::size_t footprint(std::size_t buffer_bytes, int n_ranks,
                                             bool compress) noexcept;

  /// Takes the send and receive buffers (one grab when a buffer source is set, which may
  /// be collective: call on every rank alike). Does nothing if they are held. Throws
  /// std::bad_alloc.
  void acquire_buffers();
  /// Gives them back (released or freed). Does nothing if none are held.
  void release_buffers() noexcept;
  [[nodiscard]] bool has_buffers() const noexcept { return send_ != nullptr; }
  /// The send buffer to `dest` / receive buffer from `src` (valid while buffers are held).
  [[nodiscard]] std::byte* send_buffer(int dest) noexcept {
    return send_ + static_cast<std::size_t>(dest) * region_;
  }
  [[nodiscard]] const std::byte* receive_buffer(int src) const noexcept {
    return recv_ + static_cast<std::size_t>(src) * region_;
  }

  /// The codec from the next begin_cycle on (null: off). Throws convoy::error when switching
  /// compression on for an exchange built without a codec (its regions have no room).
  void set_codec(std::shared_ptr<codec> c);
  /// Plans the codec for items of `item_bytes` (rigid); false when it will not compress.
  bool begin_cycle(std::size_t item_bytes);
  /// Drops the cycle's codec state.
  void end_cycle() noexcept;

  /// Collective: rank r's `send_counts[d]` items from send_buffer(d) go to rank d, where
  /// they land in receive_buffer(r); `recv_counts[s]` receives how many came from s.
  /// Both arrays have n_ranks() entries. Throws convoy::error on an MPI failure.
  void exchange(const int* send_counts, int* recv_counts);
  /// Collective: `flags[i]` becomes the maximum over ranks (one MPI_Allreduce).
  void agree_max(int* flags, int n);

  struct statistics {
    std::uint64_t messages = 0;     ///< non-empty buffers sent to other ranks
    std::uint64_t bytes = 0;        ///< bytes of those buffers, as sent (compressed or not)
    std::uint64_t received = 0;     ///< non-empty buffers received from other ranks
    std::uint64_t collectives = 0;  ///< collective MPI calls (agree_max, exchange)
    std::uint64_t compressed = 0;   ///< buffers sent compressed
    std::uint64_t declined = 0;     ///< buffers the codec declined (sent as they were)
    std::uint64_t saved_bytes = 0;  ///< bytes not sent thanks to compression
  };
  [[nodiscard]] const statistics& stats() const noexcept { return stats_; }
  /// Buffer bytes held now (footprint() while held, else 0) plus codec scratch.
  [[nodiscard]] std::size_t memory_bytes() const noexcept;
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept;

 private:
  std::size_t compress_one(int dest, std::size_t items);
  void restore_one(int src, std::size_t items, std::size_t bytes);
  codec_link* link_state(int peer, bool decompress);
  [[nodiscard]] std::byte* scratch_spot() noexcept;

  detail::pooled_dup dup_;         ///< the communicator's duplicate (AGG-69)
  MPI_Comm comm_ = MPI_COMM_NULL;  ///< dup_.get()
  int rank_ = 0, n_ranks_ = 1;
  std::size_t capacity_ = 0, region_ = 0;
  std::shared_ptr<buffer_source> memory_;
  std::byte* block_ = nullptr;  // as grabbed or allocated
  std::byte* send_ = nullptr;
  std::byte* recv_ = nullptr;
  bool room_for_codec_ = false;
  std::shared_ptr<codec> codec_;
  std::vector<char> compress_;  // per peer
  // This cycle's plan and per-peer codec state (compress: [0, P), decompress: [P, 2P)).
  std::size_t item_ = 0;
  bool codec_on_ = false;
  cargo cargo_;
  codec_layout layout_;
  std::vector<std::unique_ptr<codec_link>> links_;
  std::vector<char> linked_;
  std::vector<std::byte> scratch_;
  std::vector<int> send_pair_, recv_pair_, send_bytes_, recv_bytes_, displ_;
  statistics stats_;
};

}  // namespace convoy::aggregation
