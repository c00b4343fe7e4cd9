#include <algorithm>
#include <array>
#include <convoy/aggregation/append_buffer.hpp>
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <string>

namespace convoy::aggregation {

namespace {

// The window: three counters, then the data from one cache line on.
constexpr std::size_t offset_disp = 0;     // bytes reserved (may pass the capacity)
constexpr std::size_t completed_disp = 8;  // bytes written and flushed
constexpr std::size_t appends_disp = 16;   // completed pushes that wrote >= 1 byte
constexpr std::size_t data_disp = 64;
// push() adds {bytes, 1} to both completion counters with one accumulate.
static_assert(appends_disp == completed_disp + sizeof(std::uint64_t));

}  // namespace

append_buffer::append_buffer(MPI_Comm comm, std::size_t buffer_bytes) : capacity_(buffer_bytes) {
  if (comm == MPI_COMM_NULL) throw convoy::error("append_buffer: communicator is MPI_COMM_NULL");
  // A capacity too large on any rank throws on every rank (none waits in the reduction).
  const auto bytes = base::agree(comm, [&] {
    if (buffer_bytes > (std::size_t{1} << 62))
      throw convoy::error("append_buffer: capacity " + std::to_string(buffer_bytes) +
                          " bytes is beyond 2^62");
    return static_cast<unsigned long long>(buffer_bytes);
  });
  // Same length on every rank (Dinan & Flajslik 2014, sec. 2.1): checked, so that a mistake is an
  // error on every rank rather than silent truncation at the wrong place.
  std::array<unsigned long long, 2> mine{bytes, ~static_cast<unsigned long long>(0) - bytes};
  std::array<unsigned long long, 2> most{};
  CONVOY_MPI_CHECK(
      MPI_Allreduce(mine.data(), most.data(), 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
  const unsigned long long least = ~static_cast<unsigned long long>(0) - most[1];
  if (most[0] != least)
    throw convoy::error("append_buffer: capacity must be the same on every rank (between " +
                        std::to_string(least) + " and " + std::to_string(most[0]) +
                        " bytes given)");
  window_ = std::make_unique<detail::rma_window>(comm, data_disp + buffer_bytes);
  rank_ = window_->rank();
  n_ranks_ = window_->n_ranks();
}

append_buffer::~append_buffer() = default;

void append_buffer::check_live(const char* call) const {
  if (!window_)
    throw convoy::error(std::string("append_buffer::") + call + ": the buffer was freed");
}

std::size_t append_buffer::push(int rank, std::span<const std::byte> bytes) {
  check_live("push");
  if (rank < 0 || rank >= n_ranks_)
    throw convoy::error("append_buffer::push: rank " + std::to_string(rank) + " is outside [0, " +
                        std::to_string(n_ranks_) + ")");
  if (bytes.empty()) return 0;
  // Listing 1 of Dinan & Flajslik 2014: reserve at the tail with a fetch-and-add, then put.
  const std::uint64_t start = window_->fetch_add(rank, offset_disp, bytes.size());
  if (start >= capacity_) return 0;
  const std::size_t written = std::min<std::size_t>(bytes.size(), capacity_ - start);
  window_->put(rank, data_disp + start, bytes.data(), written);
  // Counting push (Dinan & Flajslik 2014, sec. 2.1): published after the data is complete at the
  // target, so completed == reserved means every reserved byte is valid.
  const std::array<std::uint64_t, 2> done{written, 1};
  window_->add_words(rank, completed_disp, done.data(), 2);
  return written;
}

append_buffer::view append_buffer::local_view() {
  check_live("local_view");
  std::array<std::uint64_t, 3> c{};
  window_->read_words(rank_, offset_disp, c.data(), 3);
  window_->sync();
  view v;
  v.data = window_->base() + data_disp;
  v.requested_bytes = c[0];
  v.bytes = std::min<std::size_t>(c[0], capacity_);
  v.complete = c[1] == v.bytes;
  v.n_appends = c[2];
  return v;
}

void append_buffer::reset() {
  check_live("reset");
  CONVOY_MPI_CHECK(MPI_Barrier(window_->comm()));
  const std::array<std::uint64_t, 3> zero{};
  window_->store_words(rank_, offset_disp, zero.data(), 3);
  CONVOY_MPI_CHECK(MPI_Barrier(window_->comm()));
}

void append_buffer::free() {
  check_live("free");
  window_.reset();
}

}  // namespace convoy::aggregation
