#pragma once
/// @file
/// The "kinds" a benchmark can run: every way of moving items that the kernels compare,
/// behind one compile-time interface so that the kernels are written once (bench/README.md).
///
/// A channel follows the conveyor loop of Maley & DeVinney 2019, Figure 3:
///   ch.begin(item_bytes);
///   while (ch.advance(done)) { push until false; while (p = ch.pull(from)) use(p); }
///   ch.reset();
/// - push(item, dest): true if accepted, false if the caller must advance and pull first.
/// - pull(from): pointer to the next delivered item (unaligned, item_bytes bytes), valid
///   until the next pull, unpull, advance or reset; nullptr if none is ready.
/// - unpull(): the last pulled item is pulled again next.
/// - advance(done): true while the channel is not complete.
/// - memory_bytes(): buffer memory this rank held at most; buffers(): buffers it holds;
///   wire_bytes(): bytes sent to other ranks since begin, headers included;
///   buffer_bytes(): bytes per buffer (0 if buffers grow with the data).
///
/// Kinds (bench/README.md "Kinds"):
///   naive      one MPI_Isend per item, bounded outstanding requests (baseline)
///   alltoallv  bucket everything, one MPI_Alltoallv at the end (baseline)
///   simple, tensor1, tensor2, tensor3, convey   through convey.h (C façade, or bale)
///   mesh, mesh-1d, mesh:<spec>                   TRAM meshes through the C++ API
///   combine, combine:<spec>                      mesh with combining (8-byte key, 8-byte value)
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_common.hpp"

#if CONVOY_BENCH_HAVE_CONVEY
// bale's own convey.h has no extern "C" block; ours has one (nesting is harmless).
extern "C" {
#include <convey.h>
}
#if CONVOY_BENCH_HAVE_CONVEY_EXT
#include <convoy/convey_ext.h>
#endif
#endif
#if CONVOY_BENCH_HAVE_ENGINE
#include <convoy/conveyor_api/conveyor.hpp>
#include <convoy/router/memory.hpp>
#include <convoy/termination/untyped_conveyor.hpp>

#include "coro_channel.hpp"
#endif

namespace convoy::bench {

enum class family { naive, alltoallv, convey, engine, coro };

/// A parsed kind name.
struct kind_spec {
  std::string name;  ///< as printed in RESULT lines
  family fam = family::naive;
  int order = 0;              ///< convey: 0 simple, 1..3 tensor, -1 convey_new
  std::size_t n_local = 1;    ///< convey tensor kinds: --n-local, else ranks per node
  std::string mesh = "auto";  ///< engine: mesh spec
  std::size_t tasks = 0;      ///< coro: tasks in flight at most (0: the runtime's default)
  bool each = false;          ///< coro-each: one task per item (coro: Fischler & Uchima's threads)
  bool combine = false;       ///< engine kind combine: equal keys merged in the buffers
};

/// Parses a kind name; throws std::runtime_error naming it if unknown or not built.
kind_spec parse_kind(const std::string& name, const options& opt, const job& j);
/// Every kind this build can run, in report order.
std::vector<std::string> available_kinds();

void check_mpi(int rc, const char* what);

// ---------------------------------------------------------------------------------------
/// Baseline: one MPI_Isend per item. At most `window` sends are outstanding; `window`
/// receives (MPI_ANY_SOURCE) stay posted and are tested in posting order, which keeps
/// items from one rank in push order. An empty message closes a rank's stream.
class naive_channel {
 public:
  naive_channel(MPI_Comm comm, const kind_spec&, const options& opt);
  ~naive_channel();
  naive_channel(const naive_channel&) = delete;
  naive_channel& operator=(const naive_channel&) = delete;

  void begin(std::size_t item_bytes);
  [[nodiscard]] bool push(const void* item, int dest) {
    if (dest == rank_) {
      self_.insert(self_.end(), static_cast<const std::byte*>(item),
                   static_cast<const std::byte*>(item) + item_bytes_);
      return true;
    }
    if (free_.empty() && !reclaim()) return false;
    const int s = free_.back();
    free_.pop_back();
    std::byte* buf = send_buf_.data() + static_cast<std::size_t>(s) * slot_bytes_;
    std::memcpy(buf, item, item_bytes_);
    check_mpi(MPI_Isend(buf, static_cast<int>(item_bytes_), MPI_BYTE, dest, 0, comm_,
                        &send_req_[static_cast<std::size_t>(s)]),
              "MPI_Isend");
    wire_ += item_bytes_;
    return true;
  }
  [[nodiscard]] const std::byte* pull(int& from);
  bool unpull();
  [[nodiscard]] bool advance(bool done);
  void reset();
  [[nodiscard]] std::size_t memory_bytes() const {
    return send_buf_.size() + recv_buf_.size() + self_peak_;
  }
  [[nodiscard]] std::size_t buffers() const { return 2 * static_cast<std::size_t>(window_); }
  [[nodiscard]] std::size_t buffer_bytes() const { return slot_bytes_; }
  [[nodiscard]] std::uint64_t wire_bytes() const { return wire_; }

 private:
  bool reclaim();
  void repost_current();

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, n_ranks_ = 1, window_ = 256;
  std::size_t item_bytes_ = 0, slot_bytes_ = 0;
  std::vector<std::byte> send_buf_, recv_buf_;
  std::vector<MPI_Request> send_req_, recv_req_;
  std::vector<int> free_, done_idx_;
  std::vector<MPI_Request> end_req_;
  std::vector<std::byte> self_;  // items to self, FIFO
  std::size_t self_head_ = 0, self_peak_ = 0;
  int head_ = 0;      // next receive slot to test
  int current_ = -1;  // receive slot delivered by the last pull (-2: self item)
  bool redeliver_ = false;
  int current_from_ = -1;
  int ends_ = 0;
  bool end_sent_ = false;
  std::uint64_t wire_ = 0;
};

// ---------------------------------------------------------------------------------------
/// Baseline: bucket every item by destination, exchange once with MPI_Alltoallv when
/// every rank is done (bulk synchronous; no streaming).
class alltoallv_channel {
 public:
  alltoallv_channel(MPI_Comm comm, const kind_spec&, const options& opt);
  ~alltoallv_channel();
  alltoallv_channel(const alltoallv_channel&) = delete;
  alltoallv_channel& operator=(const alltoallv_channel&) = delete;

  void begin(std::size_t item_bytes);
  [[nodiscard]] bool push(const void* item, int dest) {
    auto& b = buckets_[static_cast<std::size_t>(dest)];
    const auto* p = static_cast<const std::byte*>(item);
    b.insert(b.end(), p, p + item_bytes_);
    return true;
  }
  [[nodiscard]] const std::byte* pull(int& from) {
    if (redeliver_) {
      redeliver_ = false;
      from = from_;
      return recv_.data() + (next_ - 1) * item_bytes_;
    }
    if (next_ >= n_recv_) return nullptr;
    while (next_ >= recv_end_[static_cast<std::size_t>(from_ + 1)]) ++from_;
    from = from_;
    return recv_.data() + (next_++) * item_bytes_;
  }
  bool unpull() {
    if (next_ == 0 || redeliver_) return false;
    redeliver_ = true;
    return true;
  }
  [[nodiscard]] bool advance(bool done);
  void reset();
  [[nodiscard]] std::size_t memory_bytes() const { return peak_; }
  [[nodiscard]] std::size_t buffers() const { return static_cast<std::size_t>(n_ranks_) + 2; }
  [[nodiscard]] std::size_t buffer_bytes() const { return 0; }  // grows with the data
  [[nodiscard]] std::uint64_t wire_bytes() const { return wire_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Datatype item_type_ = MPI_DATATYPE_NULL;
  int rank_ = 0, n_ranks_ = 1;
  std::size_t item_bytes_ = 0;
  std::vector<std::vector<std::byte>> buckets_;
  std::vector<std::byte> send_, recv_;
  std::vector<std::size_t> recv_end_;  // recv_end_[s+1]: items from ranks <= s
  std::size_t n_recv_ = 0, next_ = 0;
  int from_ = 0;
  bool exchanged_ = false, redeliver_ = false;
  std::size_t peak_ = 0;
  std::uint64_t wire_ = 0;
};

#if CONVOY_BENCH_HAVE_CONVEY
// ---------------------------------------------------------------------------------------
/// A conveyor from convey.h: simple, tensor of order 1-3, or convey_new's choice.
/// Memory is what the library allocates through a counting convey_alc8r (the same
/// measure for every library), or convoy's own count when the library reports one.
class convey_channel {
 public:
  convey_channel(MPI_Comm comm, const kind_spec& k, const options& opt);
  ~convey_channel();
  convey_channel(const convey_channel&) = delete;
  convey_channel& operator=(const convey_channel&) = delete;

  void begin(std::size_t item_bytes);
  [[nodiscard]] bool push(const void* item, int dest) {
    const int rc = convey_push(c_, item, dest);
    if (rc < 0) [[unlikely]]
      fail("convey_push", rc);
    return rc > 0;
  }
  [[nodiscard]] const std::byte* pull(int& from) {
    int64_t f = 0;
    void* p = convey_apull(c_, &f);
    from = static_cast<int>(f);
    return static_cast<const std::byte*>(p);
  }
  bool unpull() { return convey_unpull(c_) > 0; }
  [[nodiscard]] bool advance(bool done) {
    const int rc = convey_advance(c_, done);
    if (rc < 0) [[unlikely]]
      fail("convey_advance", rc);
    return rc != convey_DONE;
  }
  void reset();
  [[nodiscard]] std::size_t memory_bytes() const;
  [[nodiscard]] std::size_t buffers() const;
  [[nodiscard]] std::size_t buffer_bytes() const;
  [[nodiscard]] std::uint64_t wire_bytes() const {
    return static_cast<std::uint64_t>(convey_statistic(c_, convey_BYTES));
  }

 private:
  [[noreturn]] void fail(const char* call, int rc) const;

  convey_t* c_ = nullptr;
  std::size_t capacity_ = 0;
  struct counter;
  std::unique_ptr<counter> counter_;
  convey_alc8r_t alloc_{};
};
#endif

#if CONVOY_BENCH_HAVE_ENGINE
// ---------------------------------------------------------------------------------------
/// A convoy engine over a TRAM mesh: the streaming engine of a C++ conveyor
/// (termination::untyped_conveyor), driven directly; the conveyor owns it and, with
/// CONVOY_STATS, reports its counters when the channel goes (collective, as every channel).
class engine_channel {
 public:
  engine_channel(MPI_Comm comm, const kind_spec& k, const options& opt);

  void begin(std::size_t item_bytes);
  [[nodiscard]] bool push(const void* item, int dest) {
    const int rc = e_->push(item, dest);
    if (rc < 0) [[unlikely]]
      fail("push", rc);
    return rc > 0;
  }
  [[nodiscard]] const std::byte* pull(int& from) {
    termination::item_view v;
    if (e_->pull(v) <= 0) return nullptr;
    from = v.from;
    return v.data;
  }
  bool unpull() { return e_->unpull() > 0; }
  [[nodiscard]] bool advance(bool done) {
    const int rc = e_->advance(done);
    if (rc < 0) [[unlikely]]
      fail("advance", rc);
    return rc != termination::done;
  }
  void reset();
  [[nodiscard]] std::size_t memory_bytes() const { return e_->max_memory_bytes(); }
  [[nodiscard]] std::size_t buffers() const;
  [[nodiscard]] std::size_t buffer_bytes() const { return e_->options().buffer_bytes; }
  [[nodiscard]] std::uint64_t wire_bytes() const { return e_->stats().bytes_sent; }
  /// Bytes sent since begin to ranks whose node (`rank_node`) is not this rank's, headers
  /// included: the per-link counters summed over the off-node links.
  [[nodiscard]] std::uint64_t offnode_bytes(const std::vector<int>& rank_node) const;
  /// Kind combine: items are an 8-byte key and an 8-byte value added at the owner.
  [[nodiscard]] bool combining() const noexcept { return combining_; }
  [[nodiscard]] const termination::engine& engine() const { return *e_; }

 private:
  [[noreturn]] void fail(const char* call, int rc) const;
  termination::untyped_conveyor conveyor_;
  termination::engine* e_ = nullptr;
  bool combining_ = false;
};
#endif

/// True for the coroutine kind, which runs a whole kernel through one runtime.
template <class C>
inline constexpr bool is_coro_channel = false;
#if CONVOY_BENCH_HAVE_ENGINE
template <>
inline constexpr bool is_coro_channel<coro_channel> = true;
#endif

/// Calls f(std::type_identity<Channel>{}) with the channel type of kind `k`.
template <class F>
void dispatch(const kind_spec& k, F&& f) {
  switch (k.fam) {
    case family::naive:
      f(std::type_identity<naive_channel>{});
      return;
    case family::alltoallv:
      f(std::type_identity<alltoallv_channel>{});
      return;
    case family::convey:
#if CONVOY_BENCH_HAVE_CONVEY
      f(std::type_identity<convey_channel>{});
      return;
#else
      break;
#endif
    case family::engine:
#if CONVOY_BENCH_HAVE_ENGINE
      f(std::type_identity<engine_channel>{});
      return;
#else
      break;
#endif
    case family::coro:
#if CONVOY_BENCH_HAVE_ENGINE
      f(std::type_identity<coro_channel>{});
      return;
#else
      break;
#endif
  }
  throw std::runtime_error("kind '" + k.name + "' is not built into this program");
}

}  // namespace convoy::bench
