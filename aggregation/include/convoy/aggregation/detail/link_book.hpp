#pragma once
/// @file
/// The credit and slot bookkeeping shared by every transport (aggregation/README.md,
/// "Transports", invariants AGG-1–AGG-6). It knows nothing about how bytes move: a transport
/// (MPI, simulation, later node shared memory or a hybrid of them) asks the books which
/// buffer may go now and tells them what completed. Both books are flat arrays indexed
/// by link id × n_buffers + slot, allocated once in init(); buffers are allocated per
/// link on its first use, 64-byte aligned — or, when the transport has a buffer_source
/// (AGG-11), all carved from one block handed over by use_block() right after init().
#include <convoy/aggregation/transport.hpp>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace convoy::aggregation::detail {

/// Bytes of a buffer's alignment: a cache line. Unaligned staging buffers copy ~10×
/// slower on the machines we measured.
inline constexpr std::size_t buffer_alignment = 64;

/// Bytes one buffer takes in a block: capacity rounded up to buffer_alignment, so every
/// slice of a 64-byte aligned block is 64-byte aligned.
[[nodiscard]] constexpr std::size_t slice_bytes(std::size_t buffer_bytes) noexcept {
  return (buffer_bytes + buffer_alignment - 1) / buffer_alignment * buffer_alignment;
}

/// A 64-byte aligned block of at least `bytes` from a buffer_source: grabs
/// `bytes + buffer_alignment - 1` (a size that depends only on `bytes`, so equal on
/// every rank when `bytes` is) and aligns inside it.
struct source_block {
  std::byte* grabbed = nullptr;  ///< what grab() returned (to release)
  std::byte* aligned = nullptr;  ///< first 64-byte boundary in it
  std::size_t grabbed_bytes = 0;
};
/// Grabs a block as above; `bytes` == 0 grabs nothing. Throws convoy::error naming `who`
/// if the source returns nullptr.
[[nodiscard]] source_block grab_block(buffer_source& source, std::size_t bytes, const char* who);

/// Checks a layout for every transport: ranks in range, no self-links, no duplicate
/// (stage, peer) among out-links or among in-links, capacity large enough for a
/// buffer_header and small enough for an `int` count, n_buffers ≥ 1. `who` prefixes the
/// message. Throws convoy::error naming the first problem.
void validate_layout(const link_layout& layout, const char* who);
/// Checks that `layout` is for this endpoint, rank `rank` of `n_ranks`. Throws
/// convoy::error "<who>: layout says rank … of … but this endpoint is rank … of …".
void check_layout_rank(const link_layout& layout, int rank, int n_ranks, const char* who);

/// A FIFO of ints with a fixed capacity, in a slice of a shared flat array.
struct ring_view {
  int head = 0;
  int size = 0;
};

/// What both books share: per link n_buffers slots of buffer_bytes (flat arrays indexed
/// link × n_buffers + slot), which links this transport serves, the stacks of free
/// slots, and the buffers themselves — allocated per link on first use, or carved from
/// one block (use_block).
class slot_buffers {
 public:
  slot_buffers() = default;
  slot_buffers(const slot_buffers&) = delete;
  slot_buffers& operator=(const slot_buffers&) = delete;
  ~slot_buffers();

  /// Bytes a block needs to hold every served link's buffers (after init()).
  [[nodiscard]] std::size_t block_bytes() const noexcept;
  /// Takes every served link's buffers from `block` (64-byte aligned, block_bytes() long,
  /// owned by the caller and outliving the book's use of it) instead of allocating them.
  /// Call right after init(); afterwards the book never allocates or frees a buffer.
  void use_block(std::byte* block) noexcept;

  [[nodiscard]] std::byte* buffer(int link, int slot) const noexcept {
    return buf_[index(link, slot)];
  }
  /// The transport allocates and frees every slot's buffer itself (AGG-144): call right
  /// after init(); afterwards the book never allocates or frees one, and set_buffer()
  /// says which buffer a slot holds (nullptr while it holds none).
  void manage_outside() noexcept;
  void set_buffer(int link, int slot, std::byte* p) noexcept { buf_[index(link, slot)] = p; }
  [[nodiscard]] bool served(int link) const noexcept {
    return link >= 0 && link < n_links_ && serve_[static_cast<std::size_t>(link)];
  }
  [[nodiscard]] bool allocated(int link) const noexcept {
    return allocated_[static_cast<std::size_t>(link)];
  }
  [[nodiscard]] std::size_t memory_bytes() const noexcept { return memory_bytes_; }
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept { return max_memory_bytes_; }
  [[nodiscard]] int n_links() const noexcept { return n_links_; }
  [[nodiscard]] int n_buffers() const noexcept { return n_; }
  [[nodiscard]] std::size_t buffer_bytes() const noexcept { return capacity_; }

 protected:
  /// Sizes the shared arrays; every slot free, nothing allocated.
  void init_slots(int n_links, int n_buffers, std::size_t buffer_bytes, std::vector<bool> serve);
  /// Allocates the link's n_buffers buffers if not yet done. Throws std::bad_alloc
  /// (nothing allocated then).
  void allocate_link(int link);
  /// Pops a free slot of the link, or -1.
  [[nodiscard]] int pop_free(int link) noexcept {
    const auto l = static_cast<std::size_t>(link);
    if (n_free_[l] == 0) return -1;
    return free_[l * static_cast<std::size_t>(n_) + static_cast<std::size_t>(--n_free_[l])];
  }
  void push_free(int link, int slot) noexcept {
    const auto l = static_cast<std::size_t>(link);
    free_[l * static_cast<std::size_t>(n_) + static_cast<std::size_t>(n_free_[l]++)] = slot;
  }
  [[nodiscard]] std::size_t index(int link, int slot) const noexcept {
    return static_cast<std::size_t>(link) * static_cast<std::size_t>(n_) +
           static_cast<std::size_t>(slot);
  }

  int n_links_ = 0;
  int n_ = 0;
  std::size_t capacity_ = 0;
  std::vector<bool> serve_;
  std::vector<std::byte*> buf_;
  std::vector<std::uint32_t> bytes_;  ///< at most buffer_bytes (<= INT_MAX)
  std::vector<int> free_;             ///< per link a stack of free slots
  std::vector<int> n_free_;
  std::vector<bool> allocated_;
  bool owned_ = true;  ///< buffers are ours to free (false: carved from a block)
  std::size_t memory_bytes_ = 0;
  std::size_t max_memory_bytes_ = 0;
};

/// Sender side: per out-link n_buffers slots, the credits (receive buffers the peer has
/// free for this link), and the FIFO of posted buffers still waiting for a credit.
class send_book : public slot_buffers {
 public:
  enum class state : std::uint8_t { free, filling, queued, sending };

  /// `serve[l]` false: link l is left to another transport (acquire returns nullptr).
  /// `credit_window`: credits a link starts with and may hold (0: n_buffers).
  void init(int n_links, int n_buffers, std::size_t buffer_bytes, std::vector<bool> serve,
            int credit_window = 0);

  /// A free slot's buffer, allocating the link's buffers on its first use; nullptr when
  /// all n_buffers are filling, queued or sending, or the link is not served.
  [[nodiscard]] std::byte* acquire(int link) noexcept;
  /// As acquire(), but the slot (or -1): for a transport that manages the buffers itself.
  [[nodiscard]] int acquire_slot(int link) noexcept;
  /// The filling slot of `link` whose buffer is `buffer`, or -1.
  [[nodiscard]] int filling_slot(int link, const std::byte* buffer) const noexcept;
  /// Turns a filling buffer into a queued one (FIFO behind earlier posts). Returns its
  /// slot. Throws convoy::error naming the problem if the buffer is not this link's
  /// acquired buffer or `bytes` is out of range.
  int post(int link, const std::byte* buffer, std::size_t bytes, const char* who);
  /// The next queued slot of `link` that has a credit (consumes it; the slot becomes
  /// sending), or -1.
  [[nodiscard]] int next_sendable(int link) noexcept;
  /// The transport finished sending the slot: it is free again.
  void send_done(int link, int slot) noexcept;
  /// The receiver released `n` buffers of this link. Throws if credits would exceed
  /// n_buffers (a protocol violation).
  void add_credits(int link, int n, const char* who);
  /// Gives up ownership of the slot's buffer without freeing it (a send that may still
  /// read it was abandoned at destruction).
  void forget(int link, int slot) noexcept { buf_[index(link, slot)] = nullptr; }

  [[nodiscard]] std::size_t bytes(int link, int slot) const noexcept {
    return bytes_[index(link, slot)];
  }
  [[nodiscard]] bool has_queued(int link) const noexcept {
    return queue_[static_cast<std::size_t>(link)].size > 0;
  }
  [[nodiscard]] int credits(int link) const noexcept {
    return credits_[static_cast<std::size_t>(link)];
  }
  [[nodiscard]] std::size_t n_queued() const noexcept { return n_queued_; }
  [[nodiscard]] std::size_t n_sending() const noexcept { return n_sending_; }

 private:
  std::vector<state> state_;
  std::vector<int> queue_slots_;  ///< per link a FIFO of queued slots, in post order
  std::vector<ring_view> queue_;
  std::vector<int> credits_;
  int window_ = 0;  ///< credits a link may hold
  std::size_t n_queued_ = 0;
  std::size_t n_sending_ = 0;
};

/// Receiver side: per in-link n_buffers slots, the FIFO of slots in the order messages
/// will fill them (for MPI: the order their receives were posted), and a FIFO of links
/// whose next buffer has arrived — poll() serves links round-robin from it.
class recv_book : public slot_buffers {
 public:
  enum class state : std::uint8_t { free, expecting, arrived, held };

  void init(int n_links, int n_buffers, std::size_t buffer_bytes, std::vector<bool> serve);
  /// Allocates the link's buffers if not yet done (all slots free; nothing left to do
  /// after use_block()). Throws on failure.
  void allocate(int link) { allocate_link(link); }
  /// A free slot of the link, or -1.
  [[nodiscard]] int take_free(int link) noexcept;
  /// The slot will be filled after every slot expected before it on this link.
  void expect(int link, int slot) noexcept;
  /// The slot's message arrived with `bytes`.
  void arrived(int link, int slot, std::size_t bytes) noexcept;
  /// The next buffer in link order, links served round-robin; false if none arrived.
  [[nodiscard]] bool poll(received& out) noexcept;
  /// Checks that `r` is a buffer this book handed out and not yet released, frees its
  /// slot. Throws convoy::error naming the problem otherwise.
  void release(const received& r, const char* who);

  [[nodiscard]] state slot_state(int link, int slot) const noexcept {
    return state_[index(link, slot)];
  }

 private:
  void make_ready(int link) noexcept;
  std::vector<state> state_;
  std::vector<int> order_slots_;  ///< per link a FIFO of expecting/arrived slots
  std::vector<ring_view> order_;
  std::vector<int> ready_;  ///< FIFO of links whose first expected slot arrived
  ring_view ready_ring_;
  std::vector<bool> in_ready_;
};

}  // namespace convoy::aggregation::detail
