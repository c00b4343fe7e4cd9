/* The façade where MPI cannot make one-sided windows (AGG-161): across nodes joined by TCP
 * under OpenMPI's defaults, or anywhere with its one-sided components excluded
 * (--mca osc ^rdma,sm,pt2pt,ucx). Nothing may abort the job.
 *
 *   no_window_test refuse   convey_new and convey_new_tensor return NULL on every PE
 *                           (CONVOY_TRANSPORT=rma, or shm where MPI makes no shared
 *                           window); the CTest wrapper
 *                           (count_messages.cmake) checks the reason is printed once
 *   no_window_test refuse_large  convey_new_elastic for items beyond a buffer returns NULL
 *                           on every PE (CONVOY_LARGE=rendezvous)
 *   no_window_test run      convey_new, convey_new_simple and convey_new_elastic (items
 *                           beyond a buffer: the large-item channel) each deliver every
 *                           item exactly once, with its source and bytes, against the
 *                           oracle of the sends; then every PE pushes to PE -1 once
 *                           (one usage report for the job) */
#include <convey.h>
#include <convoy_test/c_verdict.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long g_bad = 0;
#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "check failed at line %d: %s\n", __LINE__, #cond); \
      g_bad++;                                                           \
    }                                                                    \
  } while (0)

enum { n_items = 3000, big = 9000 };

typedef struct {
  int64_t src;
  int64_t seq;
  int64_t check;
} item_t;

static int64_t mix(int64_t src, int64_t seq) { return (src * 1000003 + seq) * 2654435761LL; }

/* Item k of PE `me` goes to PE (me * 7 + k * 13) % np. received[src] counts, in order. */
static void rigid_round(convey_t* c, int me, int np) {
  int64_t* next = calloc((size_t)np, sizeof *next);
  int64_t k = 0;
  item_t it;
  int64_t from = -1;
  CHECK(next && convey_begin(c, sizeof(item_t), 0) == convey_OK);
  while (convey_advance(c, k == n_items)) {
    for (; k < n_items; k++) {
      item_t out = {me, k, mix(me, k)};
      if (!convey_push(c, &out, (me * 7 + k * 13) % np)) break;
    }
    while (convey_pull(c, &it, &from) == convey_OK) {
      CHECK(from == it.src && it.check == mix(it.src, it.seq));
      if (from >= 0 && from < np) next[from]++;
    }
  }
  /* The oracle: how many of each source's items are addressed here. */
  for (int64_t s = 0; s < np; s++) {
    int64_t want = 0;
    for (int64_t j = 0; j < n_items; j++) want += (s * 7 + j * 13) % np == me;
    CHECK(next[s] == want);
  }
  CHECK(convey_reset(c) == convey_OK);
  free(next);
}

/* Elastic items of 1..big bytes, byte i of item (src, k) = (src + k + i) % 251. */
static void elastic_round(convey_t* c, int me, int np) {
  unsigned char* buf = malloc(big);
  int64_t k = 0, got = 0, want = 0;
  convey_item_t r;
  CHECK(buf && convey_begin(c, 1, 0) == convey_OK);
  for (int64_t s = 0; s < np; s++)
    for (int64_t j = 0; j < 40; j++) want += (s + j) % np == me;
  while (convey_advance(c, k == 40)) {
    for (; k < 40; k++) {
      const size_t bytes = (size_t)(1 + (k * 977) % big);
      for (size_t i = 0; i < bytes; i++) buf[i] = (unsigned char)((me + k + (int64_t)i) % 251);
      if (!convey_epush(c, bytes, buf, (me + k) % np)) break;
    }
    while (convey_epull(c, &r) == convey_OK) {
      const unsigned char* p = r.data;
      int64_t kk = -1;
      for (int64_t j = 0; j < 40; j++)
        if ((size_t)(1 + (j * 977) % big) == r.bytes && (r.from + j) % np == me) kk = j;
      CHECK(kk >= 0);
      for (size_t i = 0; kk >= 0 && i < r.bytes; i++)
        if (p[i] != (unsigned char)((r.from + kk + (int64_t)i) % 251)) {
          CHECK(!"elastic item bytes");
          break;
        }
      got++;
    }
  }
  CHECK(got == want);
  CHECK(convey_reset(c) == convey_OK);
  free(buf);
}

int main(int argc, char** argv) {
  int me = 0, np = 1;
  const char* mode = argc > 1 ? argv[1] : "run";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (strcmp(mode, "refuse_large") == 0) {
    CHECK(convey_new_elastic(100000, SIZE_MAX, 0, NULL, 0) == NULL);
  } else if (strcmp(mode, "refuse") == 0) {
    CHECK(convey_new(SIZE_MAX, 0, NULL, 0) == NULL);
    CHECK(convey_new_tensor(4096, 1, 1, 1, NULL, 0) == NULL);
  } else {
    convey_t* a = convey_new(SIZE_MAX, 0, NULL, 0);
    convey_t* b = convey_new_simple(4096, NULL, NULL, 0);
    convey_t* e = convey_new_elastic(big, SIZE_MAX, 0, NULL, 0);
    CHECK(a && b && e);
    if (a) rigid_round(a, me, np);
    if (b) rigid_round(b, me, np);
    if (e) elastic_round(e, me, np);
    if (a) {
      item_t x = {0, 0, 0};
      CHECK(convey_begin(a, sizeof x, 0) == convey_OK);
      CHECK(convey_push(a, &x, -1) == convey_error_RANGE);
      while (convey_advance(a, 1) != convey_DONE) {
      }
      CHECK(convey_reset(a) == convey_OK);
    }
    CHECK(convey_free(a) == convey_OK);
    CHECK(convey_free(b) == convey_OK);
    CHECK(convey_free(e) == convey_OK);
  }
  return convoy_test_verdict(g_bad, "no one-sided windows (%s) on %d PEs", mode, np);
}
