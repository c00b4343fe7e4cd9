/* Allocators for the engine's link buffers (convey_alc8r.h; aggregation/README.md AGG-11;
 * conveyor_api/README.md, CAPI-15): a tensor/mesh/etensor conveyor given an allocator
 * takes every link buffer that goes through MPI from it, in one collective grab of the
 * same size on every PE, released LIFO by convey_free; with convey_opt_DYNAMIC the link
 * buffers (and an etensor's monster buffers) exist only from convey_begin to convey_reset,
 * and cumulative statistics survive the cycles.
 *
 * The recording allocator keeps every grab's size and every free's grab index; at the end
 * every PE must have seen the same sequence (checked with MPI_Allreduce MIN and MAX).
 *
 * Arguments: "mpi" (run under CONVOY_TRANSPORT=mpi: every link through MPI, so every link
 * buffer from the allocator) or "auto" (default transport: on-node links stay in the
 * shared-memory window, so only the off-node ones are grabbed). */
#define _POSIX_C_SOURCE 200112L
#include <biconvey.h>
#include <convey.h>
#include <convoy/convey_ext.h>
#include <convoy_test/c_verdict.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int64_t g_pes = 1;

/* ---- the recording allocator ---- */
#define REC_MAX 256
typedef struct {
  void* stack[REC_MAX]; /* live blocks, grab order */
  size_t stack_size[REC_MAX];
  int stack_id[REC_MAX]; /* index into sizes[] */
  int live;
  size_t live_bytes;
  size_t sizes[REC_MAX]; /* every grab's size, in order */
  int grabs;
  int freed[REC_MAX]; /* grab index of every free, in order */
  int frees;
  int lifo_errors;
} rec_t;

static void* rec_grab(void* a, size_t size, const char* tag, uint64_t value) {
  rec_t* r = a;
  void* mem = NULL;
  (void)value;
  H_CHECK(tag != NULL && tag[0] != '\0', "grab without a tag");
  if (r->live == REC_MAX || r->grabs == REC_MAX) return NULL;
  if (posix_memalign(&mem, 8, size ? size : 1) != 0) return NULL; /* only 8-aligned */
  r->stack[r->live] = mem;
  r->stack_size[r->live] = size;
  r->stack_id[r->live] = r->grabs;
  r->live++;
  r->live_bytes += size;
  r->sizes[r->grabs++] = size;
  return mem;
}

static void rec_free(void* a, void* ptr) {
  rec_t* r = a;
  if (r->live == 0 || r->stack[r->live - 1] != ptr) {
    r->lifo_errors++;
  } else {
    r->live--;
    r->live_bytes -= r->stack_size[r->live];
    if (r->frees < REC_MAX) r->freed[r->frees++] = r->stack_id[r->live];
  }
  free(ptr);
}

static convey_alc8r_t rec_alc8r(rec_t* r) {
  convey_alc8r_t a;
  memset(r, 0, sizeof *r);
  a.alc8r = r;
  a.grab = rec_grab;
  a.free = rec_free;
  return a;
}

/* Same value on every PE? */
static int same_everywhere(long long v) {
  long long lo = 0, hi = 0;
  MPI_Allreduce(&v, &lo, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &hi, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

/* Every grab and free was collective: the same sizes and the same free order on every PE,
 * all freed, LIFO. */
static void check_collective(const rec_t* r, const char* what) {
  int i;
  H_CHECK(r->lifo_errors == 0, "%s: %d frees out of LIFO order", what, r->lifo_errors);
  H_CHECK(r->live == 0 && r->live_bytes == 0, "%s: %d blocks (%zu bytes) never freed", what,
          r->live, r->live_bytes);
  H_CHECK(r->frees == r->grabs, "%s: %d grabs, %d frees", what, r->grabs, r->frees);
  if (!same_everywhere(r->grabs)) {
    h_fail(__FILE__, __LINE__, "%s: PEs made different numbers of grabs (%d here)", what, r->grabs);
    return;
  }
  for (i = 0; i < r->grabs; i++) {
    H_CHECK(same_everywhere((long long)r->sizes[i]),
            "%s: grab %d has size %zu here, not on "
            "every PE",
            what, i, r->sizes[i]);
    H_CHECK(same_everywhere(i < r->frees ? r->freed[i] : -1),
            "%s: free %d is not of the same grab on every PE", what, i);
  }
}

/* One cycle: n items per PE to hashed destinations; exactly-once and FIFO per source are
 * checked by the receiver (item = {source, k-th item from it to me}). Elastic: every 7th
 * item is a monster of `monster` bytes. Between begin and the endgame, `during` (if not
 * NULL) gets the allocator's live bytes. */
static void exchange(convey_t* c, long n, int elastic, size_t monster, const rec_t* r,
                     size_t* during) {
  const int64_t P = g_pes, me = h_me;
  int64_t* sent = h_alloc(sizeof(int64_t) * (size_t)P);
  int64_t* got = h_alloc(sizeof(int64_t) * (size_t)P);
  int64_t* expect = h_alloc(sizeof(int64_t) * (size_t)P);
  unsigned char* item = h_alloc(monster > 16 ? monster : 16);
  long i = 0, iters = 0, s;
  int rc;
  for (s = 0; s < P; s++) { /* what every source will send me */
    long k;
    for (k = 0; k < n; k++)
      if (h_dest(s, k, P, 9) == me) expect[s]++;
  }
  H_EXPECT_RC(convey_begin(c, 16, 8), convey_OK);
  if (during) *during = r->live_bytes;
  while ((rc = convey_advance(c, i == n)) != convey_DONE) {
    H_CHECK(rc > 0, "advance returned %d", rc);
    if (rc < 0) break;
    for (; i < n; i++) {
      const int64_t d = h_dest(me, i, P, 9);
      const size_t z = elastic && i % 7 == 3 ? monster : 16;
      int64_t head[2];
      head[0] = me;
      head[1] = sent[d];
      memset(item, (int)(i & 0xff), z);
      memcpy(item, head, sizeof head);
      if ((elastic ? convey_epush(c, z, item, d) : convey_push(c, item, d)) != convey_OK) break;
      sent[d]++;
    }
    for (;;) {
      const unsigned char* p;
      int64_t from = -1, head[2];
      size_t z = 16;
      if (elastic) {
        convey_item_t e;
        if (convey_epull(c, &e) != convey_OK) break;
        p = e.data;
        from = e.from;
        z = e.bytes;
      } else {
        p = convey_apull(c, &from);
        if (!p) break;
      }
      H_CHECK(z == 16 || z == monster, "item of %zu bytes", z);
      memcpy(head, p, sizeof head);
      H_CHECK(from >= 0 && from < P && head[0] == from && head[1] == got[from],
              "from %lld: got item (%lld, %lld), expected (%lld, %lld)", (long long)from,
              (long long)head[0], (long long)head[1], (long long)from,
              (long long)(from >= 0 && from < P ? got[from] : -1));
      if (from >= 0 && from < P) got[from]++;
    }
    if (++iters > H_MAX_ITER) {
      h_fail(__FILE__, __LINE__, "no termination");
      break;
    }
  }
  for (s = 0; s < P; s++)
    H_CHECK(got[s] == expect[s], "from PE %lld: %lld items, expected %lld", (long long)s,
            (long long)got[s], (long long)expect[s]);
  H_EXPECT_RC(convey_reset(c), convey_OK);
  free(sent);
  free(got);
  free(expect);
  free(item);
}

/* n_local for orders 2 and 3: 2 when it divides P, else 1. */
static size_t pick_nlocal(int order) {
  if (order == 1) return 1;
  return g_pes % 2 == 0 ? 2 : 1;
}

static const size_t k_cap = 512, k_nb = 2;

/* (a) Orders 1-3: link buffers from the allocator at construction, one grab, all freed. */
static void test_orders(int all_mpi) {
  int order;
  for (order = 1; order <= 3; order++) {
    rec_t r;
    convey_alc8r_t a = rec_alc8r(&r);
    char what[64];
    convey_t* c = convey_new_tensor(k_cap, order, pick_nlocal(order), k_nb, &a, 0);
    snprintf(what, sizeof what, "tensor order %d", order);
    H_CHECK(c != NULL, "%s: construction failed", what);
    if (!c) continue;
    if (all_mpi && g_pes > 1) {
      const size_t per_link = k_nb * (k_cap + 16);
      /* Order 1: P-1 peers; order 2: n_local-1 in the group + P/n_local-1 across
       * (Maley & DeVinney 2019, sec. 4.3.1), each way; order 3: at least one link each way. */
      const size_t nl = pick_nlocal(order), P = (size_t)g_pes;
      const size_t links = order == 1   ? 2 * (P - 1)
                           : order == 2 ? 2 * ((nl - 1) + (P / nl - 1))
                                        : 2;
      H_CHECK(r.grabs == 1, "%s: %d grabs at construction, expected 1", what, r.grabs);
      H_CHECK(r.live_bytes >= links * per_link, "%s: %zu bytes grabbed, < %zu links x %zu", what,
              r.live_bytes, links, per_link);
    }
    if (g_pes == 1) H_CHECK(r.grabs == 0, "%s: %d grabs without any link", what, r.grabs);
    exchange(c, 3000, 0, 0, &r, NULL);
    exchange(c, 500, 0, 0, &r, NULL);
    H_CHECK(r.frees == 0, "%s: %d frees before convey_free", what, r.frees);
    H_EXPECT_RC(convey_free(c), convey_OK);
    check_collective(&r, what);
  }
}

/* (b) DYNAMIC: nothing held between cycles; link (and monster) buffers come back at every
 * begin; cumulative statistics add up over the cycles. */
static void test_dynamic(int all_mpi, int elastic) {
  rec_t r;
  convey_alc8r_t a = rec_alc8r(&r);
  const char* what = elastic ? "DYNAMIC etensor" : "DYNAMIC tensor";
  const size_t monster = 3000;
  long long sum_comms = 0, sum_bytes = 0;
  int cycle;
  convey_t* c =
      elastic ? convey_new_etensor(k_cap, monster, 2, pick_nlocal(2), k_nb, &a, convey_opt_DYNAMIC)
              : convey_new_tensor(k_cap, 2, pick_nlocal(2), k_nb, &a, convey_opt_DYNAMIC);
  H_CHECK(c != NULL, "%s: construction failed", what);
  if (!c) return;
  H_CHECK(r.live == 0, "%s: %d blocks live after construction", what, r.live);
  H_CHECK(convoy_convey_memory_bytes(c) == 0, "%s: %zu bytes held while DORMANT", what,
          convoy_convey_memory_bytes(c));
  H_CHECK(convoy_convey_max_memory_bytes(c) > 0, "%s: no memory bound", what);
  for (cycle = 0; cycle < 3; cycle++) {
    size_t during = 0;
    const int grabs_before = r.grabs;
    long long comms, bytes;
    exchange(c, 2000 + 500 * cycle, elastic, monster, &r, &during);
    if (g_pes > 1 && (all_mpi || elastic)) {
      H_CHECK(during > 0, "%s cycle %d: nothing grabbed at begin", what, cycle);
      H_CHECK(r.grabs > grabs_before, "%s cycle %d: no grab", what, cycle);
    }
    if (elastic)
      H_CHECK(during >= 2 * monster, "%s cycle %d: %zu live, monsters need %zu", what, cycle,
              during, 2 * monster);
    H_CHECK(r.live == 0 && r.live_bytes == 0, "%s cycle %d: %zu bytes live after reset", what,
            cycle, r.live_bytes);
    H_CHECK(convoy_convey_memory_bytes(c) == 0, "%s cycle %d: %zu bytes held after reset", what,
            cycle, convoy_convey_memory_bytes(c));
    comms = convey_statistic(c, convey_COMMS);
    bytes = convey_statistic(c, convey_BYTES);
    sum_comms += comms;
    sum_bytes += bytes;
    if (g_pes > 1) H_CHECK(comms > 0 && bytes > 0, "%s cycle %d: nothing sent?", what, cycle);
    H_CHECK(convey_statistic(c, convey_COMMS + convey_CUMULATIVE) == sum_comms,
            "%s cycle %d: cumulative COMMS %lld, sum of cycles %lld", what, cycle,
            (long long)convey_statistic(c, convey_COMMS + convey_CUMULATIVE), sum_comms);
    H_CHECK(convey_statistic(c, convey_BYTES + convey_CUMULATIVE) == sum_bytes,
            "%s cycle %d: cumulative BYTES %lld, sum of cycles %lld", what, cycle,
            (long long)convey_statistic(c, convey_BYTES + convey_CUMULATIVE), sum_bytes);
    H_CHECK(convey_statistic(c, convey_BEGINS + convey_CUMULATIVE) == cycle + 1,
            "%s: BEGINS %lld after %d cycles", what,
            (long long)convey_statistic(c, convey_BEGINS + convey_CUMULATIVE), cycle + 1);
  }
  H_EXPECT_RC(convey_free(c), convey_OK);
  check_collective(&r, what);
}

/* DYNAMIC without an allocator, and a conveyor freed in COMPLETE without reset. */
static void test_dynamic_own(void) {
  rec_t r;
  convey_alc8r_t a = rec_alc8r(&r);
  convey_t* c = convey_new_tensor(k_cap, 1, 1, k_nb, NULL, convey_opt_DYNAMIC);
  H_CHECK(c != NULL, "DYNAMIC own: construction failed");
  if (c) {
    exchange(c, 1000, 0, 0, &r, NULL);
    H_CHECK(convoy_convey_memory_bytes(c) == 0, "DYNAMIC own: %zu bytes after reset",
            convoy_convey_memory_bytes(c));
    exchange(c, 1000, 0, 0, &r, NULL);
    H_EXPECT_RC(convey_free(c), convey_OK);
  }
  c = convey_new_tensor(k_cap, 1, 1, k_nb, &a, convey_opt_DYNAMIC);
  if (c) {
    long iters = 0;
    H_EXPECT_RC(convey_begin(c, 8, 8), convey_OK);
    while (convey_advance(c, true) != convey_DONE && ++iters < H_MAX_ITER) {
    }
    H_EXPECT_RC(convey_free(c), convey_OK); /* COMPLETE: legal without reset */
  }
  check_collective(&r, "DYNAMIC freed in COMPLETE");
}

/* Construction still validates under DYNAMIC: a bad n_local gives NULL, nothing held. */
static void test_dynamic_validation(void) {
  rec_t r;
  convey_alc8r_t a = rec_alc8r(&r);
  convey_t* c = convey_new_tensor(k_cap, 2, (size_t)g_pes + 1, k_nb, &a,
                                  convey_opt_DYNAMIC | convey_opt_QUIET);
  H_CHECK(c == NULL, "DYNAMIC tensor with n_local %lld > PEs was built", (long long)g_pes + 1);
  convey_free(c);
  check_collective(&r, "DYNAMIC bad n_local");
}

/* (c) The generic constructor and a THRIFTY tensor with the allocator. */
static void test_others(void) {
  rec_t r;
  convey_alc8r_t a = rec_alc8r(&r);
  convey_t* c = convey_new_tensor(k_cap, 1, 1, k_nb, &a, convey_opt_COMPRESS);
  H_CHECK(c != NULL, "THRIFTY tensor: construction failed");
  if (c) {
    exchange(c, 2000, 0, 0, &r, NULL);
    H_EXPECT_RC(convey_free(c), convey_OK);
  }
  check_collective(&r, "THRIFTY tensor");
  c = convey_new_tensor(k_cap, 1, 1, k_nb, &a, convey_opt_COMPRESS | convey_opt_DYNAMIC);
  H_CHECK(c != NULL, "THRIFTY DYNAMIC tensor: construction failed");
  if (c) {
    H_EXPECT_RC(convey_set_codec(c, &convey_standard_codec, NULL), convey_OK);
    exchange(c, 2000, 0, 0, &r, NULL);
    H_CHECK(r.live == 0, "THRIFTY DYNAMIC: %d live after reset", r.live);
    exchange(c, 2000, 0, 0, &r, NULL);
    H_EXPECT_RC(convey_free(c), convey_OK);
  }
  check_collective(&r, "THRIFTY DYNAMIC tensor");
  c = convey_new(SIZE_MAX, 0, &a, convey_opt_PROGRESS);
  H_CHECK(c != NULL, "convey_new: construction failed");
  if (c) {
    exchange(c, 2000, 0, 0, &r, NULL);
    H_EXPECT_RC(convey_free(c), convey_OK);
  }
  check_collective(&r, "convey_new");
}

/* A biconveyor's two conveyors share the allocator: freed (and with DYNAMIC reset) in the
 * reverse order of their grabs. Each PE asks every PE for its rank plus the query. */
static void answer_rank(const void* query, void* reply, void* context) {
  int64_t q;
  (void)context;
  memcpy(&q, query, sizeof q);
  q += h_me * 1000;
  memcpy(reply, &q, sizeof q);
}

static void test_biconveyor(uint64_t options, const char* what) {
  rec_t r;
  convey_alc8r_t a = rec_alc8r(&r);
  int cycle;
  biconvey_t* b = biconvey_new_tensor(k_cap, 1, 1, k_nb, &a, options);
  H_CHECK(b != NULL, "%s: construction failed", what);
  if (!b) return;
  for (cycle = 0; cycle < 2; cycle++) {
    int64_t pe = 0, pulled = 0;
    long iters = 0;
    H_EXPECT_RC(biconvey_begin(b, 8, 8, answer_rank, NULL), convey_OK);
    while (biconvey_advance(b, pe == g_pes) != convey_DONE && ++iters < H_MAX_ITER) {
      int64_t reply;
      for (; pe < g_pes; pe++) {
        const int64_t q = pe + cycle;
        if (biconvey_push(b, &q, pe) != convey_OK) break;
      }
      while (biconvey_pull(b, &reply) == convey_OK) {
        H_CHECK(reply == pulled * 1000 + pulled + cycle, "%s: reply %lld to query %lld", what,
                (long long)reply, (long long)pulled);
        pulled++;
      }
    }
    H_CHECK(pulled == g_pes, "%s: %lld replies, expected %lld", what, (long long)pulled,
            (long long)g_pes);
    H_EXPECT_RC(biconvey_reset(b), convey_OK);
    if (options & convey_opt_DYNAMIC)
      H_CHECK(r.live == 0, "%s: %d blocks live after reset", what, r.live);
  }
  H_EXPECT_RC(biconvey_free(b), convey_OK);
  check_collective(&r, what);
}

int main(int argc, char** argv) {
  int all_mpi, me = 0, p = 1;
  const char* mode = argc > 1 ? argv[1] : "auto";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  h_me = me;
  g_pes = p;
  all_mpi = strcmp(mode, "mpi") == 0;
  test_orders(all_mpi);
  test_dynamic(all_mpi, 0);
  test_dynamic(all_mpi, 1);
  test_dynamic_own();
  test_dynamic_validation();
  test_others();
  test_biconveyor(0, "bitensor");
  test_biconveyor(convey_opt_DYNAMIC, "DYNAMIC bitensor");
  return convoy_test_verdict(h_failures, "alloc_link_test (%s, %d PEs)", mode, p);
}
