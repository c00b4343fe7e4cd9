// Biconveyors (seed 000 sec. 6.1): two steady conveyors, one for queries and one for
// replies, driven like seed 000 Figure 4. Each query carries a 4-byte slot number of a
// reorder window on its source; the reply brings it back, so replies are pulled in push
// order whatever the route. A push fails while the window is full of unpulled replies.
#include <biconvey.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

#include "facade.hpp"

using convoy::facade::state;

struct biconveyor {
  convey_t* q = nullptr;
  convey_t* r = nullptr;
  std::uint64_t options = 0;
  state st = state::dormant;
  std::size_t qbytes = 0, rbytes = 0;
  void (*answer)(const void*, void*, void*) = nullptr;
  void* context = nullptr;
  std::vector<std::byte> qitem, ritem, rpull, ring;
  std::vector<char> filled;
  std::uint64_t head = 0, tail = 0;  // next reply to pull / next slot to push
  bool pending = false;              // an answered query whose reply push failed
  std::int64_t pending_to = 0;
  std::int64_t n_pes = 1;
  std::uint64_t suppressed = 0;

  int panic(const char* where, int code) noexcept {
    const unsigned bit = static_cast<unsigned>(-code);
    if (code >= 0 || (bit < 64 && (suppressed >> bit & 1u))) return code;
    if (bit < 64) suppressed |= std::uint64_t{1} << bit;
    if (!(options & convey_opt_QUIET))
      std::fprintf(stderr, "convey: %s: %s (biconveyor, state %s)\n", where,
                   convey_error_string(nullptr, code), convoy::termination::to_string(st));
    return code;
  }
};

namespace {

constexpr std::uint64_t k_window = 1u << 13;  // replies outstanding per PE
constexpr std::size_t k_slot = sizeof(std::uint32_t);

biconvey_t* pair(convey_t* q, convey_t* r, std::uint64_t options) {
  if (!q || !r) {
    convey_free(r);  // reverse order of construction: allocator blocks go back LIFO
    convey_free(q);
    return nullptr;
  }
  auto* b = new (std::nothrow) biconveyor;
  if (!b) {
    convey_free(r);  // reverse order of construction: allocator blocks go back LIFO
    convey_free(q);
    return nullptr;
  }
  b->q = q;
  b->r = r;
  b->options = options;
  b->n_pes = q->n_pes;
  return b;
}

// Answers incoming queries (seed 000 Figure 4, without repeating an answer on retry).
int serve(biconveyor* b) {
  for (;;) {
    if (b->pending) {
      const int rc = convey_push(b->r, b->ritem.data(), b->pending_to);
      if (rc <= 0) return rc;
      b->pending = false;
    }
    int64_t from = 0;
    const int rc = convey_pull(b->q, b->qitem.data(), &from);
    if (rc <= 0) return rc;
    std::memcpy(b->ritem.data(), b->qitem.data(), k_slot);
    b->answer(b->qitem.data() + k_slot, b->ritem.data() + k_slot, b->context);
    b->pending = true;
    b->pending_to = from;
  }
}

int collect(biconveyor* b) {
  for (;;) {
    const int rc = convey_pull(b->r, b->rpull.data(), nullptr);
    if (rc <= 0) return rc;
    std::uint32_t slot = 0;
    std::memcpy(&slot, b->rpull.data(), k_slot);
    std::memcpy(b->ring.data() + slot * b->rbytes, b->rpull.data() + k_slot, b->rbytes);
    b->filled[slot] = 1;
  }
}

}  // namespace

extern "C" {

biconvey_t* biconvey_new(size_t max_bytes, size_t n_local, const convey_alc8r_t* alloc,
                         uint64_t options) {
  const std::uint64_t o = options | convey_opt_PROGRESS;
  const size_t half = max_bytes == SIZE_MAX ? SIZE_MAX : max_bytes / 2;
  convey_t* q = convey_new(half, n_local, alloc, o);
  convey_t* r = convey_new(half, n_local, alloc, o);
  return pair(q, r, options);
}

biconvey_t* biconvey_new_simple(size_t capacity, const convey_alc8r_t* alloc,
                                const convey_mpp_a2a_t* a2a, uint64_t options) {
  const std::uint64_t o = options | convey_opt_PROGRESS;
  convey_t* q = convey_new_simple(capacity, alloc, a2a, o);
  convey_t* r = convey_new_simple(capacity, alloc, a2a, o);
  return pair(q, r, options);
}

biconvey_t* biconvey_new_tensor(size_t capacity, int order, size_t n_local, size_t n_buffers,
                                const convey_alc8r_t* alloc, uint64_t options) {
  const std::uint64_t o = options | convey_opt_PROGRESS;
  convey_t* q = convey_new_tensor(capacity, order, n_local, n_buffers, alloc, o);
  convey_t* r = convey_new_tensor(capacity, order, n_local, n_buffers, alloc, o);
  return pair(q, r, options);
}

int biconvey_begin(biconvey_t* b, size_t query_bytes, size_t reply_bytes,
                   void (*answer)(const void*, void*, void*), void* context) {
  if (!b) return convey_error_NULL;
  if (b->st != state::dormant) return b->panic("biconvey_begin", convey_error_STATE);
  if (!answer) return b->panic("biconvey_begin", convey_error_NOFUNC);  // bale's code
  if (query_bytes == 0 || reply_bytes == 0) return b->panic("biconvey_begin", convey_error_ZERO);
  try {
    b->qitem.assign(k_slot + query_bytes, std::byte{0});
    b->ritem.assign(k_slot + reply_bytes, std::byte{0});
    b->rpull.assign(k_slot + reply_bytes, std::byte{0});
    b->ring.assign(k_window * reply_bytes, std::byte{0});
    b->filled.assign(k_window, 0);
  } catch (...) {
    return b->panic("biconvey_begin", convey_error_ALLOC);
  }
  int rc = convey_begin(b->q, k_slot + query_bytes, 0);
  if (rc < 0) return rc;
  rc = convey_begin(b->r, k_slot + reply_bytes, 0);
  if (rc < 0) {
    // Every PE fails alike (sizes are collective arguments): take the empty q back to
    // DORMANT together, so that the biconveyor is unchanged.
    while (convey_advance(b->q, true) > 0) {
    }
    convey_reset(b->q);
    return rc;
  }
  b->qbytes = query_bytes;
  b->rbytes = reply_bytes;
  b->answer = answer;
  b->context = context;
  b->head = b->tail = 0;
  b->pending = false;
  b->st = state::working;
  return convey_OK;
}

int biconvey_push(biconvey_t* b, const void* query, int64_t pe) {
  if (!b) return convey_error_NULL;
  if (b->st != state::working) return b->panic("biconvey_push", convey_error_STATE);
  if (!(b->options & convey_opt_RECKLESS) && (pe < 0 || pe >= b->n_pes))
    return b->panic("biconvey_push", convey_error_RANGE);
  if (!query) return b->panic("biconvey_push", convey_error_NULL);
  if (b->tail - b->head == k_window) return convey_FAIL;
  const auto slot = static_cast<std::uint32_t>(b->tail & (k_window - 1));
  std::memcpy(b->qitem.data(), &slot, k_slot);
  std::memcpy(b->qitem.data() + k_slot, query, b->qbytes);
  const int rc = convey_push(b->q, b->qitem.data(), pe);
  if (rc > 0) {
    b->filled[slot] = 0;
    ++b->tail;
  }
  return rc;
}

int biconvey_pull(biconvey_t* b, void* reply) {
  if (!b) return convey_error_NULL;
  if (b->st == state::dormant) return b->panic("biconvey_pull", convey_error_STATE);
  if (!reply) return b->panic("biconvey_pull", convey_error_NULL);
  if (b->head == b->tail) return convey_FAIL;
  const std::uint64_t slot = b->head & (k_window - 1);
  if (!b->filled[slot]) {
    const int rc = collect(b);
    if (rc < 0) return rc;
    if (!b->filled[slot]) return convey_FAIL;
  }
  std::memcpy(reply, b->ring.data() + slot * b->rbytes, b->rbytes);
  b->filled[slot] = 0;
  ++b->head;
  return convey_OK;
}

int biconvey_advance(biconvey_t* b, bool done) {
  if (!b) return convey_error_NULL;
  if (b->st == state::dormant) return b->panic("biconvey_advance", convey_error_STATE);
  if (b->st == state::complete) return convey_DONE;
  done = done || b->st != state::working;  // as convey_advance (CAPI-2)
  int rc = serve(b);
  if (rc < 0) return rc;
  const int rq = convey_advance(b->q, done);
  if (rq < 0) return rq;
  rc = serve(b);
  if (rc < 0) return rc;
  // No more replies from this PE once every query to it has been pulled and answered.
  const int rr = convey_advance(b->r, rq == convey_DONE && !b->pending);
  if (rr < 0) return rr;
  rc = collect(b);
  if (rc < 0) return rc;
  if (rr == convey_DONE || rr == convey_NEAR) {
    // Never DONE while replies remain to be pulled (contract over bale's simple biconveyor).
    const bool drained = rr == convey_DONE && b->head == b->tail;
    b->st = drained ? state::complete : state::cleanup;
    return drained ? convey_DONE : convey_NEAR;
  }
  if (done) b->st = state::endgame;
  return convey_OK;
}

int biconvey_reset(biconvey_t* b) {
  if (!b) return convey_error_NULL;
  if (b->st == state::dormant) return convey_OK;
  if (b->st != state::complete) return b->panic("biconvey_reset", convey_error_STATE);
  // r before q: with DYNAMIC, r's buffers were grabbed last and must go back first (LIFO).
  int rc = convey_reset(b->r);
  if (rc < 0) return rc;
  rc = convey_reset(b->q);
  if (rc < 0) return rc;
  b->st = state::dormant;
  return convey_OK;
}

int biconvey_free(biconvey_t* b) {
  if (!b) return convey_OK;
  if (b->st != state::dormant && b->st != state::complete)
    return b->panic("biconvey_free", convey_error_STATE);
  if (b->st == state::complete) {
    convey_reset(b->r);
    convey_reset(b->q);
  }
  // Reverse order of construction, so allocator blocks go back LIFO.
  const int rc2 = convey_free(b->r);
  const int rc = convey_free(b->q);
  delete b;
  return rc < 0 ? rc : rc2;
}

}  // extern "C"
