#pragma once
/// @file
/// The MPI transport: nonblocking point-to-point with credit flow control
/// (docs/aggregation-reference.md, "Transports"; bale's MPI porters, Maley & DeVinney 2019,
/// sec. 4.3.2).
#include <mpi.h>

#include <convoy/aggregation/detail/book_endpoint.hpp>
#include <convoy/aggregation/detail/credit_ledger.hpp>
#include <convoy/aggregation/detail/link_book.hpp>
#include <convoy/aggregation/detail/pooled_dup.hpp>
#include <convoy/aggregation/transport.hpp>
#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

namespace convoy::aggregation {

/// What an mpi_transport has sent and received (message economy, AGG-66).
struct mpi_counters {
  std::uint64_t data_sent = 0;        ///< data messages (one per posted buffer)
  std::uint64_t data_bytes_sent = 0;  ///< their bytes
  std::uint64_t data_received = 0;
  std::uint64_t credit_messages_sent = 0;  ///< messages carrying only credits
  std::uint64_t credit_messages_received = 0;
  std::uint64_t credits_in_messages = 0;  ///< credits returned in credit messages
  std::uint64_t credits_piggybacked = 0;  ///< credits returned inside data messages
  std::uint64_t tests = 0;  ///< MPI_Testsome calls (each runs MPI's progress engine once)
  /// Tests that completed nothing (with mpi_yield_when_idle, each gave the core away).
  std::uint64_t tests_empty = 0;
};

/// The credit window make_transport gives MPI links (AGG-67): with bale's one buffer per
/// link, four messages in flight take the round trip of a credit off the critical path
/// (docs/aggregation-reference.md, AGG-67).
inline constexpr int default_credit_window = 4;

/// Moves buffers with MPI_Isend / pre-posted MPI_Irecv on its own duplicate of a
/// communicator, so any number of transports (engines) coexist on one communicator.
///
/// Protocol (README invariants AGG-1..AGG-8, AGG-61..66): every served in-link has n_buffers
/// receive buffers, each with a posted MPI_Irecv; a sender holds one credit per free
/// receive buffer of the peer, starting with n_buffers (or the larger credit window). post() sends
/// at once if the link has a credit and queues the buffer (inside the link's n_buffers) otherwise;
/// release() re-posts the receive and owes the credit, which goes back inside the next data buffer
/// to that peer on that stage (header flag bits, transport.hpp) or, once the sender is
/// low on credits, in a credit message at the next progress() (detail/credit_ledger.hpp).
/// Data of stage s uses tag 2s, credits tag 2s+1: stages between the same two ranks never
/// mix, and within a stage MPI's non-overtaking rule keeps each link FIFO. At most
/// max(n_buffers, credit_window) data messages and one credit message per link are ever
/// unreceived, which bounds MPI's unexpected-message queue (AGG-67).
///
/// Preconditions: the layout has no link from a rank to itself (open() throws);
/// layout.rank and layout.n_ranks are this rank and the size of the communicator; the
/// two ends of a link agree on buffer_bytes and n_buffers. Destroy it when idle() on
/// every rank (after termination): a send still in flight then has its request freed and
/// its buffer left allocated, rather than freed under MPI's feet (with a buffer source:
/// the whole block is then never released). The block of a buffer source is released at
/// the end of the destructor, after the credit settling, the cancelled receives and the
/// completed sends.
class mpi_transport final : public detail::book_endpoint {
 public:
  /// Takes a duplicate of `comm` (collective over it: detail::pooled_dup, the one an earlier
  /// transport on `comm` handed back when every rank kept it, else MPI_Comm_dup; AGG-69),
  /// errors returned on it. Throws convoy::error if `comm` is MPI_COMM_NULL or MPI fails.
  /// `memory` (may be null: own 64-byte aligned allocations, send buffers lazily per
  /// link) supplies every link buffer in one block (AGG-11); open() is then collective.
  /// `credit_window` (AGG-67): data messages a link may have unreceived, at least
  /// n_buffers (0 or less: exactly n_buffers). Messages beyond the n_buffers posted
  /// receives wait in MPI's unexpected queue (its eager buffers, or a rendezvous that holds
  /// the send), so the sender keeps filling while credits travel, and credits go back in
  /// batches: about one credit message per window instead of one per buffer.
  explicit mpi_transport(MPI_Comm comm, std::shared_ptr<buffer_source> memory = {},
                         int credit_window = 0);
  ~mpi_transport() override;

  /// Serves every link of `layout`. Without a buffer source: not collective, does not
  /// communicate; allocates the receive buffers and posts their receives; send buffers
  /// come lazily on first acquire(). With one (AGG-11): collective over the communicator
  /// (one MPI_Allreduce MAX of the block size, one of the grab's success), then ONE
  /// grab of that size on every rank, carved into every served link's send and receive
  /// buffers; a bad layout on any rank makes open() throw on every rank. Throws convoy::error on a
  /// bad layout (peer out of range, self-link, duplicate link, rank or size not the communicator's,
  /// stage beyond the tag range, capacity or n_buffers out of range) before MPI sees it, or if
  /// called twice.
  void open(const link_layout& layout) override;

  /// Serves only the links whose flag is true (`serve_out[i]` for out-link i,
  /// `serve_in[i]` for in-link i); the others belong to another transport, e.g. a node
  /// shared-memory one inside a hybrid transport. Link ids stay those of `layout`:
  /// acquire() on an unserved link returns nullptr, post()/release() on one throw. Both
  /// ends of a link must choose the same transport for it.
  ///
  /// `failed_before` (may be null): a failure of the caller's own just before this open
  /// (the hybrid's shared-memory side). With a buffer source this open still takes part
  /// in the collective agreement, so the other ranks throw too instead of waiting, and
  /// then rethrows it; without one it is rethrown at once.
  void open(const link_layout& layout, std::vector<bool> serve_out, std::vector<bool> serve_in,
            std::exception_ptr failed_before = nullptr);

  void post(int out_link, std::byte* buffer, std::size_t bytes) override;
  [[nodiscard]] bool poll(received& out) override;
  void release(const received& r) override;
  void progress() override;
  /// Nothing queued, no data or credit message in flight.
  [[nodiscard]] bool idle() const noexcept override;

  /// The duplicated communicator (for diagnostics and tests).
  [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }
  /// Messages and bytes so far (AGG-66).
  [[nodiscard]] const mpi_counters& counters() const noexcept { return counters_; }

 private:
  void check_open(const link_layout& layout, const std::vector<bool>& serve_out,
                  const std::vector<bool>& serve_in) const;
  /// open()'s checks and, with a buffer source, every rank's agreement on them and on the
  /// size of the block (collective, AGG-11); returns that size. Throws as open().
  [[nodiscard]] std::size_t agree_on_open(const link_layout& layout,
                                          const std::vector<bool>& serve_out,
                                          const std::vector<bool>& serve_in,
                                          std::exception_ptr failed_before) const;
  /// Grabs the block from the buffer source and carves the books' buffers from it; if the
  /// source fails on any rank, every rank gives its block back and throws (collective).
  void take_block(std::size_t block_bytes);
  void pair_links();
  void send_ready(int out_link);
  void post_receive(int in_link, int slot);
  void send_credits(int in_link);
  void test_all();
  void data_arrived(int in_link, int slot, const MPI_Status& status);
  void credits_arrived(int out_link);
  void flush_urgent();
  void flush_all_owed();
  [[nodiscard]] bool settled() const noexcept;

  // The request array (one MPI_Testsome finds every completion, so no link starves behind
  // a lower index, and MPI's progress engine runs once per test, AGG-65), in sections:
  // data sends (out-link × n), data receives (in-link × n), credit receives (one per
  // out-link), credit sends (one per in-link).
  [[nodiscard]] std::size_t recv_base() const noexcept {
    return n_out_ * static_cast<std::size_t>(n_);
  }
  [[nodiscard]] std::size_t credit_recv_base() const noexcept {
    return recv_base() + n_in_ * static_cast<std::size_t>(n_);
  }
  [[nodiscard]] std::size_t credit_send_base() const noexcept {
    return credit_recv_base() + n_out_;
  }

  detail::pooled_dup dup_;         ///< the communicator's duplicate (AGG-69)
  MPI_Comm comm_ = MPI_COMM_NULL;  ///< dup_.get()
  std::shared_ptr<buffer_source> memory_;
  detail::source_block block_;  ///< from memory_; released last in the destructor
  link_layout layout_;
  detail::credit_ledger credits_;
  int n_ = 0;
  int credit_window_ = 0;  ///< as given to the constructor
  int window_ = 0;         ///< credits per link: max(n_, credit_window_) (AGG-67)
  std::size_t n_out_ = 0, n_in_ = 0;
  /// The link of the same stage and peer in the other direction, when this transport
  /// serves it (credits ride on it, AGG-61), else -1.
  std::vector<int> reverse_of_out_, reverse_of_in_;

  std::vector<MPI_Request> req_;
  std::size_t n_send_active_ = 0;
  std::vector<std::int32_t> credit_recv_buf_;  ///< one per out-link
  /// Credits in the message in flight, per in-link (a raw array: if a send is still in
  /// flight at destruction, it is leaked rather than freed under MPI).
  std::unique_ptr<std::int32_t[]> credit_send_buf_;
  std::size_t n_credit_send_active_ = 0;
  std::vector<int> urgent_;  ///< scratch for credit_ledger::take_urgent
  mpi_counters counters_;

  // Scratch for MPI_Testsome, sized once in open().
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

}  // namespace convoy::aggregation
