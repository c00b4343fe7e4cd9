#pragma once
/// @file
/// The transport interface: moves whole buffers along the links of a route plan.
///
/// The engine (termination/) fills per-peer buffers with items and hands them to a
/// transport; the transport delivers them, per link in send order, to the receiving
/// rank's engine. Implementations: MPI point-to-point (mpi_transport.hpp), in-process
/// simulation (sim_transport.hpp), node shared memory (later). One transport object
/// serves one engine on one rank.
///
/// Flow control is the transport's job and makes memory bounded (aggregation/README.md,
/// invariants): each link has n_buffers send buffers and n_buffers receive buffers of
/// buffer_bytes; a sender never has more than n_buffers buffers on a link that the
/// receiver has not released, so nothing ever queues beyond them (no unbounded MPI
/// unexpected-message queue). When all n_buffers of a link are taken, acquire() returns
/// nullptr and the engine's push fails until the receiver releases — backpressure.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace convoy::aggregation {

/// Where a transport may take its buffer memory from instead of its own allocation
/// (aggregation/README.md, invariant AGG-11): e.g. the C façade's convey_alc8r_t, which
/// carves a symmetric region. A transport given a source takes ALL its link buffers (send
/// and receive) in ONE grab() at open(), carves 64-byte aligned slices from it, and
/// release()s it once, in its destructor. Transports over MPI make the grab collective:
/// the same size on every rank of the communicator (the maximum any rank needs), so a
/// source that requires collective calls with equal sizes is served.
class buffer_source {
 public:
  virtual ~buffer_source() = default;
  buffer_source() = default;
  buffer_source(const buffer_source&) = delete;
  buffer_source& operator=(const buffer_source&) = delete;

  /// `bytes` (> 0) bytes, any alignment (the transport aligns inside the block), or
  /// nullptr on failure. Not on the hot path: called once per transport.
  [[nodiscard]] virtual std::byte* grab(std::size_t bytes) = 0;
  /// Gives back a block obtained from grab(). Blocks of one source are released in the
  /// reverse order of their grabs when the transports using them are destroyed in the
  /// reverse order of their construction.
  virtual void release(std::byte* block) noexcept = 0;
};

/// One directed link seen from this rank: the stage it belongs to and the peer's rank.
struct link {
  int stage = 0;
  int peer = 0;
  bool operator==(const link&) const = default;
};

/// Everything a transport needs to set itself up on one rank.
struct link_layout {
  int rank = 0;  ///< this rank in the plan (== rank in the communicator)
  int n_ranks = 1;
  std::vector<link> out_links;   ///< links this rank sends on, indexed by out-link id
  std::vector<link> in_links;    ///< links this rank receives on, indexed by in-link id
  std::size_t buffer_bytes = 0;  ///< size of every buffer, header included
  int n_buffers = 2;             ///< buffers per link on each side (1, 2, 4, ...)
  /// The engine writes rigid records only, so a transport may hand out send buffers with
  /// less room than buffer_bytes and grow them on request (transport::room, grow).
  bool growable = false;
};

/// The fixed header at the start of every buffer (written and read by the engine; the
/// transport only reads payload_bytes to know how much to move).
struct buffer_header {
  std::uint32_t bytes;  ///< bytes used in the buffer, this header included
  std::uint32_t epoch;  ///< the engine's begin/reset cycle that filled it
  std::uint32_t seq;    ///< buffers sent on this link in this epoch, this one included
  std::uint32_t flags;  ///< buffer_flag bits; bits 16–27 are the transport's (see below)
};
static_assert(sizeof(buffer_header) == 16);

enum buffer_flag : std::uint32_t {
  /// The last buffer of its epoch on this link: the sender has closed the link's stage;
  /// `seq` is the total number of buffers the receiver must have seen (Wesolowski et al. 2014, sec.
  /// III.D).
  flag_last = 1u,
};

/// Bits 16–27 of `flags` belong to the transport while a buffer is in flight (the MPI
/// transport returns credits in them, AGG-61): whoever posts a buffer leaves them 0, and
/// poll() hands buffers out with them 0.
inline constexpr std::uint32_t transport_flag_shift = 16;
inline constexpr std::uint32_t transport_flag_mask = 0xfffu << transport_flag_shift;

/// A buffer handed to the engine by poll(); give it back with release().
struct received {
  std::byte* data = nullptr;  ///< starts with a buffer_header
  std::size_t bytes = 0;
  int in_link = -1;  ///< index into link_layout::in_links
  int slot = -1;     ///< transport's own bookkeeping
};

class transport {
 public:
  virtual ~transport() = default;
  transport() = default;
  transport(const transport&) = delete;
  transport& operator=(const transport&) = delete;

  /// Sets up the links. Collective over all ranks of the engine for transports that need
  /// it (MPI). Called once, before any other call. Throws convoy::error on failure.
  virtual void open(const link_layout& layout) = 0;

  /// A free send buffer (buffer_bytes, aligned to 64) for out-link `out_link`, or
  /// nullptr if all n_buffers of that link are in use (being filled, queued or in flight).
  /// The engine fills it and then post()s it. The engine holds at most one acquired,
  /// unposted buffer per link. Hot path: no allocation after the link's first use.
  [[nodiscard]] virtual std::byte* acquire(int out_link) noexcept = 0;

  /// Bytes the engine may write into `buffer`, just acquired for `out_link`: 0 means
  /// buffer_bytes (every transport but one whose buffers grow, AGG-144).
  [[nodiscard]] virtual std::size_t room(int out_link, const std::byte* buffer) const noexcept {
    (void)out_link;
    (void)buffer;
    return 0;
  }
  /// A buffer of at least `at_least` bytes (at most buffer_bytes) holding the first
  /// `used_bytes` of `buffer`, the acquired, unposted buffer of `out_link`, which it
  /// replaces (the old pointer is invalid afterwards); `room` is set to its size. nullptr
  /// if this transport's buffers do not grow (the default). Only on a layout with
  /// `growable`; not on the hot path (once per doubling of a buffer).
  [[nodiscard]] virtual std::byte* grow(int out_link, std::byte* buffer, std::size_t used_bytes,
                                        std::size_t at_least, std::size_t& room) noexcept {
    (void)out_link;
    (void)buffer;
    (void)used_bytes;
    (void)at_least;
    (void)room;
    return nullptr;
  }

  /// Sends the first `bytes` of a buffer obtained from acquire(out_link). Never blocks
  /// and never fails for lack of credit: the transport sends it as soon as the receiver
  /// has room. Buffers on one link arrive in post order. Throws convoy::error on a
  /// transport failure (e.g. MPI error).
  virtual void post(int out_link, std::byte* buffer, std::size_t bytes) = 0;

  /// The next received buffer, if any. Buffers of one in-link come in send order. The
  /// engine may hold several received buffers and release them in any order.
  [[nodiscard]] virtual bool poll(received& out) = 0;

  /// Returns a received buffer; its space becomes credit for the sender.
  virtual void release(const received& r) = 0;

  /// Advances outstanding operations (completes sends, forwards credits). Cheap when
  /// there is nothing to do.
  virtual void progress() = 0;

  /// True when nothing this rank posted is still queued or in flight.
  [[nodiscard]] virtual bool idle() const noexcept = 0;

  /// Bytes of buffer memory this transport holds now on this rank.
  [[nodiscard]] virtual std::size_t memory_bytes() const noexcept = 0;
  /// Bytes it will hold at most with the layout it was opened with.
  [[nodiscard]] virtual std::size_t max_memory_bytes() const noexcept = 0;
  /// Bytes of posted buffers that did not go on the wire over the transport's lifetime
  /// (compression); 0 for the transports that send what they are given.
  [[nodiscard]] virtual std::uint64_t saved_bytes() const noexcept { return 0; }
};

}  // namespace convoy::aggregation
