#pragma once
/// @file
/// Request/reply conveyors (Maley & DeVinney 2019, sec. 6.1; conveyor_api/README.md, API-23..25): a
/// query pushed to a rank is answered there by the function given to begin(), and its
/// reply comes back to the pusher, who pulls replies in the order it pushed the queries.
///
/// Two steady conveyors of any kind (streaming mesh or tensor, or bulk), one for queries
/// and one for replies, driven as Maley & DeVinney 2019, Figure 4. Each query carries a 4-byte slot
/// of a reorder window on its source (`window` replies outstanding per rank); the reply brings the
/// slot back, so replies are put in order whatever the route. A push fails (returns 0) while the
/// window is full of unpulled replies.
///
///   convoy::biconveyor<long, double> b(MPI_COMM_WORLD);        // collective
///   b.begin([&](const long& i, int from) { return table[i]; });
///   size_t i = 0, j = 0;
///   while (b.advance(i == n)) {
///     for (; i < n; ++i) if (!b.push(index[i] / p, index[i] % p)) break;
///     while (auto r = b.pull()) out[j++] = *r;                 // out[j] answers index[j]
///   }
///   b.reset();
#include <mpi.h>

#include <convoy/aggregation/packing.hpp>
#include <convoy/base/error.hpp>
#include <convoy/conveyor_api/options.hpp>
#include <convoy/termination/engine.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace convoy {

/// What untyped_biconveyor's inline push() and pull() read and write: the query engine's
/// hot state and the reorder window. Its layout is published: <convoy/convey_view.h>
/// declares the same bytes as `biconvey_view_t`, which biconvey.h's inline
/// `biconvey_push` and `biconvey_pull` use (offsets checked when libconvey is compiled).
///
/// A query occupies slot `tail & mask` of the window: it travels as a rigid item of
/// 4 + query_bytes bytes, the slot first, and its reply comes back into `ring` at that slot,
/// where `filled[slot]` marks it arrived. A push may proceed while `tail - head <= mask`.
struct biconveyor_hot {
  termination::hot_state* queries = nullptr;  ///< the query engine's; null without an engine
  std::uint64_t head = 0;                     ///< next reply to pull
  std::uint64_t tail = 0;                     ///< next query's slot
  std::uint64_t mask = 0;                     ///< window slots - 1
  std::size_t query_bytes = 0, reply_bytes = 0;
  std::byte* ring = nullptr;        ///< [slot][reply_bytes]
  unsigned char* filled = nullptr;  ///< per slot: its reply has arrived
};

/// Answers one query of query_bytes: writes reply_bytes to `reply`. `from` is the rank that
/// pushed the query. Called inside advance(), once per query.
using answer_function = std::function<void(const std::byte* query, std::byte* reply, int from)>;

/// Untyped: sizes set at begin, engine codes (termination::engine_error) instead of
/// exceptions, as untyped_conveyor. The core of biconveyor<Q, R> and of the C façade's
/// biconvey_t.
class untyped_biconveyor {
 public:
  /// Replies outstanding (pushed, not yet pulled) per rank at most.
  static constexpr std::uint64_t window = std::uint64_t{1} << 13;

  /// Collective over `comm`: two conveyors (queries, then replies) with `options`, made
  /// steady. Throws convoy::error.
  untyped_biconveyor(MPI_Comm comm, const conveyor_options& options);
  /// Over two conveyors built elsewhere, both steady, over the same ranks, DORMANT. Throws
  /// convoy::error otherwise. The reply conveyor is destroyed (and reset) first, so that
  /// buffers taken from an allocator go back in reverse order.
  untyped_biconveyor(untyped_conveyor queries, untyped_conveyor replies);

  /// DORMANT -> WORKING, collective. Returns 1, error_state (not DORMANT), error_argument
  /// (no answer), error_size (a size 0, or a query or reply with its slot above a
  /// buffer), error_alloc; on failure both conveyors stay DORMANT.
  int begin(std::size_t query_bytes, std::size_t reply_bytes, answer_function answer);
  /// Sends query_bytes from `query` to rank `dest`. Returns 1, 0 (window or path full:
  /// advance, pull, retry), error_state (not WORKING), error_rank, error_argument (null).
  /// Inline: the slot and the query go straight into the lane toward the first hop.
  [[nodiscard]] int push(const void* query, int dest) noexcept {
    termination::hot_state* const q = hot_.queries;
    if (q && query && hot_.tail - hot_.head <= hot_.mask) [[likely]] {
      std::uint32_t lane = 0;
      bool full = false;
      if (std::byte* p = q->reserve(dest, lane, full)) [[likely]] {
        const auto slot = static_cast<std::uint32_t>(hot_.tail & hot_.mask);
        hot_.filled[slot] = 0;
        ++hot_.tail;
        std::memcpy(p, &slot, sizeof slot);
        aggregation::copy_item(p + sizeof slot, query, hot_.query_bytes);
        if (full) [[unlikely]]
          lane_full(lane);
        return 1;
      }
    }
    return push_slow(query, dest);
  }
  /// Copies the reply to the oldest query not yet answered here to `reply`. Returns 1, 0
  /// (not arrived yet, or none outstanding), error_state (DORMANT), error_argument (null).
  /// Inline while that reply is in the window (then the biconveyor is not DORMANT).
  [[nodiscard]] int pull(void* reply) noexcept {
    if (hot_.head != hot_.tail && reply) [[likely]] {
      const std::uint64_t slot = hot_.head & hot_.mask;
      if (hot_.filled[slot]) {
        aggregation::copy_item(reply, hot_.ring + slot * hot_.reply_bytes, hot_.reply_bytes);
        hot_.filled[slot] = 0;
        ++hot_.head;
        return 1;
      }
    }
    return pull_slow(reply);
  }
  /// The query lane `lane` was filled past its limit by an inline push over hot().
  void lane_full(std::uint32_t lane) noexcept;
  /// The inline paths' state, for callers that inline push and pull themselves (the C
  /// façade): they must do exactly what push() and pull() do with it.
  [[nodiscard]] biconveyor_hot& hot() noexcept { return hot_; }
  /// Advances both conveyors, answers the queries that arrived (collective for the bulk
  /// kind while WORKING/ENDGAME). Returns ok, near, done — done only once every query of
  /// every rank is answered and every reply of this rank pulled — error_state (DORMANT),
  /// or a conveyor's code. An exception from the answer function propagates.
  [[nodiscard]] int advance(bool done);
  /// COMPLETE -> DORMANT (DORMANT: 1), collective. Returns 1 or error_state.
  int reset();

  [[nodiscard]] termination::state current_state() const noexcept { return state_.current(); }
  [[nodiscard]] int rank() const noexcept { return queries_.rank(); }
  [[nodiscard]] int n_ranks() const noexcept { return queries_.n_ranks(); }
  /// Query and reply bytes of the current cycle (0 before the first begin).
  [[nodiscard]] std::size_t query_bytes() const noexcept { return query_bytes_; }
  [[nodiscard]] std::size_t reply_bytes() const noexcept { return reply_bytes_; }
  /// The two conveyors (statistics, memory).
  [[nodiscard]] const untyped_conveyor& queries() const noexcept { return queries_; }
  [[nodiscard]] const untyped_conveyor& replies() const noexcept { return replies_; }
  /// Text of the last transport failure of either conveyor, empty if none.
  [[nodiscard]] std::string last_message() const;

 private:
  [[nodiscard]] int push_slow(const void* query, int dest) noexcept;
  [[nodiscard]] int pull_slow(void* reply) noexcept;
  void refresh_hot() noexcept;
  void label_reports();
  [[nodiscard]] int serve();
  [[nodiscard]] int collect() noexcept;

  untyped_conveyor queries_;
  untyped_conveyor replies_;  // after queries_: destroyed first (LIFO buffers)
  termination::conveyor_state state_;
  std::size_t query_bytes_ = 0, reply_bytes_ = 0;
  answer_function answer_;
  std::vector<std::byte> query_item_, reply_item_, ring_;  // [slot][payload]; the window
  std::vector<unsigned char> filled_;
  biconveyor_hot hot_;    // head, tail and the window's pointers
  bool pending_ = false;  // an answered query whose reply push failed
  int pending_to_ = 0;
};

/// Typed: queries Q, replies R (trivially copyable); `answer(query, from)` returns the
/// reply. Misuse and failures throw convoy::error naming the call, as conveyor<T>.
template <class Q, class R>
class biconveyor {
  static_assert(std::is_trivially_copyable_v<Q> && std::is_trivially_copyable_v<R>,
                "biconveyor queries and replies must be trivially copyable");

 public:
  /// Collective over `comm`; `options` as for conveyor<T> (kind, mesh, tensor_order, ...).
  explicit biconveyor(MPI_Comm comm, const conveyor_options& options = {}) : core_(comm, options) {}

  /// DORMANT -> WORKING, collective. `answer(const Q&, int from)` returns an R.
  template <class F>
  void begin(F answer) {
    check(core_.begin(sizeof(Q), sizeof(R),
                      [f = std::move(answer)](const std::byte* q, std::byte* r, int from) {
                        Q query;
                        std::memcpy(&query, q, sizeof(Q));
                        const R reply = f(query, from);
                        std::memcpy(r, &reply, sizeof(R));
                      }),
          "begin");
  }
  /// True if sent; false if the window or path is full (advance, pull, retry).
  [[nodiscard]] bool push(const Q& query, int rank) {
    const int rc = core_.push(&query, rank);
    if (rc < 0) [[unlikely]]
      check(rc, "push to rank " + std::to_string(rank));
    return rc > 0;
  }
  /// The reply to the oldest query not yet answered here, if it has arrived.
  [[nodiscard]] std::optional<R> pull() {
    R reply;
    const int rc = core_.pull(&reply);
    if (rc < 0) check(rc, "pull");
    if (rc <= 0) return std::nullopt;
    return reply;
  }
  /// True while not complete (Maley & DeVinney 2019, Figure 3's loop condition).
  [[nodiscard]] bool advance(bool done) {
    const int rc = core_.advance(done);
    if (rc < 0) [[unlikely]]
      check(rc, "advance");
    return rc != termination::done;
  }
  /// COMPLETE -> DORMANT (DORMANT: no-op).
  void reset() { check(core_.reset(), "reset"); }

  [[nodiscard]] termination::state current_state() const noexcept { return core_.current_state(); }
  [[nodiscard]] int rank() const noexcept { return core_.rank(); }
  [[nodiscard]] int n_ranks() const noexcept { return core_.n_ranks(); }
  [[nodiscard]] untyped_biconveyor& core() noexcept { return core_; }

 private:
  void check(int rc, const std::string& what) const {
    if (rc >= 0) return;
    std::string msg = "biconveyor " + what + ": " + termination::error_string(rc) + " (state " +
                      termination::to_string(core_.current_state()) + ")";
    if (const std::string m = core_.last_message(); !m.empty()) msg += ": " + m;
    throw error(msg);
  }

  untyped_biconveyor core_;
};

}  // namespace convoy
