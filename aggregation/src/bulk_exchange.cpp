// Bulk-synchronous exchange (Maley & DeVinney 2019, sec. 4.1): per-rank buffers moved by one
// MPI_Alltoall of {items, bytes} and one MPI_Alltoallv. Behaviour reference: the C
// façade's simple conveyor, compression included (sec. 3.6): a buffer to a chosen rank is
// compressed in place when the codec makes it smaller; the receiver knows it by its byte
// count (bytes != items x item size) and restores it into its receive buffer.
#include <climits>
#include <convoy/aggregation/bulk_exchange.hpp>
#include <convoy/aggregation/detail/link_book.hpp>
#include <convoy/base/error.hpp>
#include <cstring>
#include <new>
#include <string>
#include <utility>

namespace convoy::aggregation {

namespace {
using detail::buffer_alignment;
// The first byte at or after `p` whose address is a multiple of `a` (> 0).
std::byte* align_up(std::byte* p, std::size_t a) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  return p + ((a - v % a) % a);
}
std::size_t region_of(std::size_t capacity, bool compress) {
  return detail::slice_bytes(capacity + bulk_exchange::store_room_bytes) +
         (compress ? bulk_exchange::codec_room_bytes : 0);
}
}  // namespace

std::size_t bulk_exchange::footprint(std::size_t buffer_bytes, int n_ranks,
                                     bool compress) noexcept {
  return 2 * static_cast<std::size_t>(n_ranks) * region_of(buffer_bytes, compress);
}

bulk_exchange::bulk_exchange(MPI_Comm comm, options o)
    : capacity_(o.buffer_bytes),
      memory_(std::move(o.memory)),
      room_for_codec_(o.codec != nullptr),
      codec_(std::move(o.codec)) {
  if (comm == MPI_COMM_NULL) throw error("bulk_exchange: MPI_COMM_NULL");
  if (capacity_ == 0) throw error("bulk_exchange: buffer_bytes must be positive");
  CONVOY_MPI_CHECK(MPI_Comm_size(comm, &n_ranks_));
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  region_ = region_of(capacity_, room_for_codec_);
  const auto P = static_cast<std::size_t>(n_ranks_);
  if (capacity_ > static_cast<std::size_t>(INT_MAX) ||
      P * region_ > static_cast<std::size_t>(INT_MAX))
    throw error("bulk_exchange: capacity " + std::to_string(capacity_) + " x " + std::to_string(P) +
                " ranks exceeds the 2 GiB one MPI_Alltoallv can address");
  dup_ = detail::pooled_dup(comm);  // AGG-69
  comm_ = dup_.get();
  compress_.assign(P, 0);
  for (int d = 0; d < n_ranks_; ++d)
    compress_[static_cast<std::size_t>(d)] =
        o.compress_link ? o.compress_link(rank_, d) : (d != rank_);
  send_pair_.assign(2 * P, 0);
  recv_pair_.assign(2 * P, 0);
  send_bytes_.assign(P, 0);
  recv_bytes_.assign(P, 0);
  displ_.assign(P, 0);
  for (std::size_t d = 0; d < P; ++d) displ_[d] = static_cast<int>(d * region_);
}

bulk_exchange::~bulk_exchange() {
  end_cycle();
  release_buffers();
  // Only blocking collectives ran on the duplicate: nothing of ours is in flight (AGG-69).
  dup_.end(true);
  comm_ = MPI_COMM_NULL;
}

void bulk_exchange::acquire_buffers() {
  if (block_) return;
  const std::size_t half = static_cast<std::size_t>(n_ranks_) * region_;
  if (memory_) {
    block_ = memory_->grab(2 * half + buffer_alignment - 1);  // the source need not align
    if (!block_) throw std::bad_alloc();
    send_ = align_up(block_, buffer_alignment);
  } else {
    block_ = static_cast<std::byte*>(::operator new (2 * half, std::align_val_t{buffer_alignment}));
    send_ = block_;
  }
  recv_ = send_ + half;
}

void bulk_exchange::release_buffers() noexcept {
  if (!block_) return;
  if (memory_)
    memory_->release(block_);
  else
    ::operator delete (block_, std::align_val_t{buffer_alignment});
  block_ = send_ = recv_ = nullptr;
}

void bulk_exchange::set_codec(std::shared_ptr<codec> c) {
  if (c && !room_for_codec_)
    throw error("bulk_exchange: built without a codec, so its buffers have no room for one");
  end_cycle();
  codec_ = std::move(c);
}

bool bulk_exchange::begin_cycle(std::size_t item_bytes) {
  end_cycle();
  item_ = item_bytes;
  if (!codec_ || item_bytes == 0) return false;
  const std::size_t cap_items = capacity_ / item_bytes;
  cargo_ = cargo{0, item_bytes, item_bytes, cap_items};
  layout_ = codec_layout{8, item_bytes, 0, 0, 0};
  if (cap_items == 0 || !codec_->plan(cargo_, layout_)) return false;
  // The slack packets and the overrun must fit in the room after the items (region).
  if (!usable_layout(layout_, item_bytes) ||
      layout_.slack * layout_.stride + layout_.overrun > region_ - cap_items * item_bytes)
    return false;
  scratch_.assign(region_ + 2 * max_codec_align + layout_.overrun, std::byte{0});
  links_.resize(2 * static_cast<std::size_t>(n_ranks_));
  linked_.assign(links_.size(), 0);
  codec_on_ = true;
  return true;
}

void bulk_exchange::end_cycle() noexcept {
  for (auto& l : links_) l.reset();
  linked_.assign(linked_.size(), 0);
  codec_on_ = false;
}

codec_link* bulk_exchange::link_state(int peer, bool decompress) {
  const auto k = static_cast<std::size_t>(peer) + (decompress ? links_.size() / 2 : 0);
  if (!linked_[k]) {
    links_[k] = codec_->link(cargo_, decompress);
    linked_[k] = 1;
  }
  return links_[k].get();
}

std::byte* bulk_exchange::scratch_spot() noexcept {
  return align_up(scratch_.data(), layout_.align) + layout_.offset;
}

// Compresses the buffer to `dest` in place when that makes it smaller; returns its bytes.
std::size_t bulk_exchange::compress_one(int dest, std::size_t items) {
  const std::size_t raw = items * item_;
  std::byte* z = scratch_spot();
  std::byte* buf = send_buffer(dest);
  const std::size_t n = codec_->compress(cargo_, link_state(dest, false), items, buf, raw - 1, z);
  if (n == 0 || n >= raw) {  // declined or no gain: the buffer goes as it was
    ++stats_.declined;
    return raw;
  }
  std::memcpy(buf, z, n);
  ++stats_.compressed;
  stats_.saved_bytes += raw - n;
  return n;
}

void bulk_exchange::restore_one(int src, std::size_t items, std::size_t bytes) {
  if (!codec_on_)
    throw error("bulk_exchange: a compressed buffer from rank " + std::to_string(src) +
                " but no codec planned here");
  std::byte* z = scratch_spot();
  auto* buf = recv_ + static_cast<std::size_t>(src) * region_;
  std::memcpy(z, buf, bytes);
  codec_->decompress(cargo_, link_state(src, true), items, bytes, z, buf);
}

void bulk_exchange::exchange(const int* send_counts, int* recv_counts) {
  const auto P = static_cast<std::size_t>(n_ranks_);
  for (std::size_t d = 0; d < P; ++d) {
    const auto items = static_cast<std::size_t>(send_counts[d]);
    std::size_t bytes = items * item_;
    if (codec_on_ && compress_[d] && items > 0) bytes = compress_one(static_cast<int>(d), items);
    send_pair_[2 * d] = send_counts[d];
    send_pair_[2 * d + 1] = static_cast<int>(bytes);
    send_bytes_[d] = static_cast<int>(bytes);
    if (static_cast<int>(d) != rank_ && items > 0) {
      ++stats_.messages;
      stats_.bytes += bytes;
    }
  }
  CONVOY_MPI_CHECK(
      MPI_Alltoall(send_pair_.data(), 2, MPI_INT, recv_pair_.data(), 2, MPI_INT, comm_));
  for (std::size_t s = 0; s < P; ++s) recv_bytes_[s] = recv_pair_[2 * s + 1];
  CONVOY_MPI_CHECK(MPI_Alltoallv(send_, send_bytes_.data(), displ_.data(), MPI_BYTE, recv_,
                                 recv_bytes_.data(), displ_.data(), MPI_BYTE, comm_));
  stats_.collectives += 2;
  for (std::size_t s = 0; s < P; ++s) {
    const auto items = static_cast<std::size_t>(recv_pair_[2 * s]);
    recv_counts[s] = recv_pair_[2 * s];
    if (static_cast<int>(s) != rank_ && items > 0) ++stats_.received;
    const auto got = static_cast<std::size_t>(recv_bytes_[s]);
    if (got != items * item_) restore_one(static_cast<int>(s), items, got);
  }
}

void bulk_exchange::agree_max(int* flags, int n) {
  CONVOY_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, flags, n, MPI_INT, MPI_MAX, comm_));
  ++stats_.collectives;
}

std::size_t bulk_exchange::memory_bytes() const noexcept {
  return (block_ ? footprint(capacity_, n_ranks_, room_for_codec_) : 0) + scratch_.size();
}

std::size_t bulk_exchange::max_memory_bytes() const noexcept {
  return footprint(capacity_, n_ranks_, room_for_codec_) +
         (room_for_codec_ ? region_ + 2 * max_codec_align + codec_room_bytes : 0);
}

}  // namespace convoy::aggregation
