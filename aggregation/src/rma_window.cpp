#include <algorithm>
#include <climits>
#include <convoy/aggregation/detail/rma_window.hpp>
#include <convoy/aggregation/node_map.hpp>
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <cstring>
#include <string>

namespace convoy::aggregation::detail {

namespace {
MPI_Aint as_disp(std::size_t disp) { return static_cast<MPI_Aint>(disp); }

// Every rank's part is a whole number of cache lines. MPICH 4.0 (ch4) places the parts of
// the ranks of one node back to back in one segment and hands each rank the exact start
// of its part, but its one-sided calls address a part from that start rounded down to 16
// bytes: with 24 bytes per rank, rank 1's `*base` is 8 bytes past where a get or put
// aimed at rank 1 lands, inside rank 0's part. Whole cache lines keep every start
// aligned (and keep ranks' words off each other's lines).
constexpr MPI_Aint part_align = 64;
MPI_Aint whole_lines(MPI_Aint size) { return (size + part_align - 1) / part_align * part_align; }
}  // namespace

std::string window_failure(const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = 0;
  return std::string("MPI cannot make one-sided windows across these ranks (") + call + ": " +
         std::string(text, static_cast<std::size_t>(len)) + ")";
}

MPI_Win allocate_window(MPI_Comm comm, MPI_Aint size, void** base) {
  // OpenMPI 4.1.4 picks its `rdma` one-sided component for MPI_Win_allocate, and that
  // component over the `vader` shared-memory BTL crashes (SEGV in mca_btl_vader.so while
  // a later collective progresses) once a window has been freed and another allocated.
  // When every rank shares one node, MPI_Win_allocate_shared selects the `sm` component,
  // which is correct and fast; across nodes MPI_Win_allocate stays (aggregation/README.md,
  // "RMA transport", AGG-117).
  MPI_Comm node = split_node(comm, {});  // the real shared-memory group
  int node_size = 0, n_ranks = 0;
  const int rc = MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  if (rc != MPI_SUCCESS) convoy::detail::throw_mpi_error("MPI_Comm_size", rc, __FILE__, __LINE__);
  CONVOY_MPI_CHECK(MPI_Comm_size(comm, &n_ranks));
  MPI_Win win = MPI_WIN_NULL;
  int rc_alloc = MPI_SUCCESS;
  const char* call = "MPI_Win_allocate";
  if (node_size == n_ranks) {
    call = "MPI_Win_allocate_shared";
    MPI_Info info = MPI_INFO_NULL;
    CONVOY_MPI_CHECK(MPI_Info_create(&info));
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    rc_alloc = MPI_Win_allocate_shared(whole_lines(size), 1, info, comm, base, &win);
    MPI_Info_free(&info);
  } else {
    rc_alloc = MPI_Win_allocate(whole_lines(size), 1, MPI_INFO_NULL, comm, base, &win);
  }
  // Every rank or none (AGG-161): MPI may be unable to make one-sided windows at all
  // (OpenMPI 4.1's `rdma` component between nodes joined by TCP alone), and a rank that
  // failed must not leave the others holding a window. A rank that made one while another
  // failed keeps it unfreed: MPI_Win_free is collective over ranks that have no window.
  std::string failure;
  if (rc_alloc != MPI_SUCCESS) failure = window_failure(call, rc_alloc);
  try {
    base::raise_if_any_failed(comm, rc_alloc != MPI_SUCCESS ? &failure : nullptr);
  } catch (...) {
    *base = nullptr;
    throw;
  }
  if (const int erc = MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN); erc != MPI_SUCCESS) {
    MPI_Win_free(&win);
    convoy::detail::throw_mpi_error("MPI_Win_set_errhandler", erc, __FILE__, __LINE__);
  }
  return win;
}

rma_window::rma_window(MPI_Comm comm, std::size_t bytes) : bytes_(bytes) {
  if (comm == MPI_COMM_NULL) throw convoy::error("rma_window: communicator is MPI_COMM_NULL");
  CONVOY_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  try {
    CONVOY_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    CONVOY_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    CONVOY_MPI_CHECK(MPI_Comm_size(comm_, &n_ranks_));
    // The window's size is a single MPI_Aint; ask at least one word so that base_ is a
    // real address on every rank.
    const auto size = as_disp(std::max<std::size_t>(bytes, sizeof(std::uint64_t)));
    void* base = nullptr;
    win_ = allocate_window(comm_, size, &base);
    base_ = static_cast<std::byte*>(base);
    std::memset(base_, 0, static_cast<std::size_t>(size));
    // Nobody may touch this memory before every rank has zeroed its own.
    CONVOY_MPI_CHECK(MPI_Barrier(comm_));
    CONVOY_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));
  } catch (...) {
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
    MPI_Comm_free(&comm_);
    throw;
  }
}

rma_window::~rma_window() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  MPI_Comm_free(&comm_);
}

std::uint64_t rma_window::fetch_add(int target, std::size_t disp, std::uint64_t add) {
  std::uint64_t old = 0;
  CONVOY_MPI_CHECK(
      MPI_Fetch_and_op(&add, &old, MPI_UINT64_T, target, as_disp(disp), MPI_SUM, win_));
  CONVOY_MPI_CHECK(MPI_Win_flush(target, win_));
  return old;
}

void rma_window::read_words(int target, std::size_t disp, std::uint64_t* out, int n) {
  // MPI ignores the origin buffer of MPI_NO_OP; give it a valid one all the same.
  std::uint64_t ignored = 0;
  if (n == 1) {
    CONVOY_MPI_CHECK(
        MPI_Fetch_and_op(&ignored, out, MPI_UINT64_T, target, as_disp(disp), MPI_NO_OP, win_));
  } else {
    CONVOY_MPI_CHECK(MPI_Get_accumulate(&ignored, 1, MPI_UINT64_T, out, n, MPI_UINT64_T, target,
                                        as_disp(disp), n, MPI_UINT64_T, MPI_NO_OP, win_));
  }
  CONVOY_MPI_CHECK(MPI_Win_flush(target, win_));
}

std::uint64_t rma_window::compare_swap(int target, std::size_t disp, std::uint64_t expected,
                                       std::uint64_t desired) {
  std::uint64_t old = 0;
  CONVOY_MPI_CHECK(
      MPI_Compare_and_swap(&desired, &expected, &old, MPI_UINT64_T, target, as_disp(disp), win_));
  CONVOY_MPI_CHECK(MPI_Win_flush(target, win_));
  return old;
}

void rma_window::add_words(int target, std::size_t disp, const std::uint64_t* add, int n) {
  CONVOY_MPI_CHECK(
      MPI_Accumulate(add, n, MPI_UINT64_T, target, as_disp(disp), n, MPI_UINT64_T, MPI_SUM, win_));
  CONVOY_MPI_CHECK(MPI_Win_flush(target, win_));
}

void rma_window::store_words(int target, std::size_t disp, const std::uint64_t* values, int n) {
  CONVOY_MPI_CHECK(MPI_Accumulate(values, n, MPI_UINT64_T, target, as_disp(disp), n, MPI_UINT64_T,
                                  MPI_REPLACE, win_));
  CONVOY_MPI_CHECK(MPI_Win_flush(target, win_));
}

void rma_window::put(int target, std::size_t disp, const void* src, std::size_t len) {
  // MPI counts are int: move more than 2^30 bytes as several puts.
  constexpr std::size_t piece = std::size_t{1} << 30;
  const auto* from = static_cast<const std::byte*>(src);
  for (std::size_t done = 0; done < len;) {
    const std::size_t n = std::min(piece, len - done);
    CONVOY_MPI_CHECK(MPI_Put(from + done, static_cast<int>(n), MPI_BYTE, target,
                             as_disp(disp + done), static_cast<int>(n), MPI_BYTE, win_));
    done += n;
  }
  CONVOY_MPI_CHECK(MPI_Win_flush(target, win_));
}

void rma_window::sync() { CONVOY_MPI_CHECK(MPI_Win_sync(win_)); }

}  // namespace convoy::aggregation::detail
