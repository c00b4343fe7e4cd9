/* convoy_convey_new_broadcast, convoy_convey_broadcast and convoy_convey_broadcast_batch
 * (convoy/convey_ext.h, CAPI-130..133, CAPI-137) and the bulk pull (convoy_convey_pull_batch,
 * CAPI-134..136): every PE broadcasts its own number of 24-byte items {root, i, check};
 * every PE checks that it pulled every (root, i) exactly once, in the root's order, with
 * from = root and the check word intact (each PE knows how many every root sent). Four
 * cycles over 1 KiB single buffers (backpressure): pulled by convey_pull, in batches of at
 * most 7 items (the last of some put back with convey_unpull and pulled again), in whole
 * buffers, and in whole buffers with the items sent 50 a call. Then the error codes. Argument:
 * "dynamic" builds with convey_opt_DYNAMIC, "steady" with PROGRESS. */
#include <convey.h>
#include <convoy/convey_ext.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int64_t n_of(int64_t pe) { return 2000 + 101 * pe; }

/* Checks a pulled item against what its root sent and counts it in next[root]. */
static void take(const uint64_t* in, int64_t from, int64_t P, int64_t* next) {
  const int64_t root = (int64_t)in[0];
  if (root < 0 || root >= P || from != root || in[2] != h_mix(in[0] << 32 ^ in[1]) ||
      (int64_t)in[1] != next[root]) {
    h_fail(__FILE__, __LINE__, "pulled root %lld item %lld from %lld, due %lld", (long long)root,
           (long long)in[1], (long long)from, root >= 0 && root < P ? (long long)next[root] : -1LL);
    return;
  }
  next[root]++;
}

/* Pulls by batches of at most `max` items; every third batch puts its last item back and
 * pulls it again, which must give the same item from the same root. */
static void pull_batches(convey_t* c, int64_t max, int64_t P, int64_t* next) {
  convoy_batch_t b;
  uint64_t in[3], again[3];
  int64_t n, k, from;
  long batches = 0;
  while ((n = convoy_convey_pull_batch(c, &b, max)) > 0) {
    H_CHECK(n == b.count && n <= max, "batch of %lld returned %lld", (long long)b.count,
            (long long)n);
    for (k = 0; k < b.count; k++) {
      memcpy(in, (const char*)b.items + (size_t)k * b.stride, sizeof in);
      from = convoy_batch_from(&b, k);
      if (k + 1 == b.count && ++batches % 3 == 0) {
        H_EXPECT_RC(convey_unpull(c), convey_OK);
        H_EXPECT_RC(convey_pull(c, again, &from), convey_OK);
        H_CHECK(memcmp(in, again, sizeof in) == 0, "unpull gave back another item");
      }
      take(in, from, P, next);
    }
  }
  H_CHECK(n == convey_FAIL, "pull_batch returned %lld", (long long)n);
}

/* Sends this PE's items from i on, at most 50 a call of convoy_convey_broadcast_batch, until
 * a call sends fewer than it was given; returns the new i. */
static int64_t send_batches(convey_t* c, const uint64_t* mine, int64_t i, int64_t n) {
  int64_t want, sent;
  do {
    want = n - i < 50 ? n - i : 50;
    sent = convoy_convey_broadcast_batch(c, mine + 3 * i, want);
    H_CHECK(sent >= 0 && sent <= want, "broadcast_batch of %lld returned %lld", (long long)want,
            (long long)sent);
    if (sent < 0) return n;
    i += sent;
  } while (sent == want && i < n);
  return i;
}

/* One cycle of broadcasts; next[r] counts the items pulled from root r. batch: 0 pulls by
 * convey_pull, else by batches of at most `batch` items. batch_sends: sent by
 * convoy_convey_broadcast_batch, else one by one. */
static void run_cycle(convey_t* c, int64_t me, int64_t P, int64_t* next, int64_t batch,
                      int batch_sends) {
  const int64_t n = n_of(me);
  uint64_t in[3];
  uint64_t* mine = (uint64_t*)malloc((size_t)n * 3 * sizeof *mine);
  int64_t i = 0, from, r;
  long iters = 0;
  int rc;
  for (r = 0; r < P; r++) next[r] = 0;
  for (i = 0; i < n; i++) {
    mine[3 * i] = (uint64_t)me;
    mine[3 * i + 1] = (uint64_t)i;
    mine[3 * i + 2] = h_mix((uint64_t)me << 32 ^ (uint64_t)i);
  }
  i = 0;
  H_EXPECT_RC(convey_begin(c, 3 * sizeof *mine, 8), convey_OK);
  while ((rc = convey_advance(c, i == n)) != convey_DONE) {
    H_CHECK(rc > 0, "advance %d", rc);
    if (rc < 0) break;
    if (batch_sends && i < n) i = send_batches(c, mine, i, n);
    for (; i < n; i++) {
      rc = convoy_convey_broadcast(c, mine + 3 * i);
      H_CHECK(rc >= 0, "broadcast %d", rc);
      if (rc != convey_OK) break;
    }
    if (batch > 0)
      pull_batches(c, batch, P, next);
    else
      while (convey_pull(c, in, &from) == convey_OK) take(in, from, P, next);
    if (++iters > H_MAX_ITER) {
      h_fail(__FILE__, __LINE__, "no termination");
      break;
    }
  }
  H_EXPECT_RC(convey_reset(c), convey_OK);
  free(mine);
  for (r = 0; r < P; r++)
    H_CHECK(next[r] == n_of(r), "root %lld: pulled %lld of %lld", (long long)r, (long long)next[r],
            (long long)n_of(r));
}

int main(int argc, char** argv) {
  uint64_t options = 0, item[3] = {0, 0, 0};
  int64_t P, me, *next;
  const int64_t batch[4] = {0, 7, INT64_MAX, INT64_MAX};
  convoy_batch_t b;
  int cycle;
  convey_t *c, *t;
  if (argc > 1 && strcmp(argv[1], "dynamic") == 0) options = convey_opt_DYNAMIC;
  if (argc > 1 && strcmp(argv[1], "steady") == 0) options = convey_opt_PROGRESS;
  MPI_Init(&argc, &argv);
  c = convoy_convey_new_broadcast(1024, 1, NULL, options);
  if (!c) {
    fprintf(stderr, "construction failed\n");
    return 1;
  }
  P = convoy_convey_n_pes(c);
  me = convoy_convey_my_pe(c);
  h_me = (long)me;
  next = (int64_t*)calloc((size_t)P, sizeof *next);
  for (cycle = 0; cycle < 4; cycle++) run_cycle(c, me, P, next, batch[cycle], cycle == 3);
  H_CHECK(strcmp(convoy_convey_kind(c), "mesh") == 0, "kind %s", convoy_convey_kind(c));

  /* Errors: not WORKING, NULL arguments, push on a broadcast conveyor. */
  H_EXPECT_RC(convoy_convey_broadcast(c, item), convey_error_STATE);
  H_EXPECT_RC(convoy_convey_broadcast(NULL, item), convey_error_NULL);
  H_EXPECT_RC(convoy_convey_broadcast_batch(c, item, 1), convey_error_STATE);
  H_EXPECT_RC(convoy_convey_broadcast_batch(NULL, item, 1), convey_error_NULL);
  H_EXPECT_RC(convoy_convey_pull_batch(c, &b, 4), convey_error_STATE);
  H_EXPECT_RC(convoy_convey_pull_batch(NULL, &b, 4), convey_error_NULL);
  H_EXPECT_RC(convey_begin(c, sizeof item, 8), convey_OK);
  H_EXPECT_RC(convoy_convey_broadcast(c, NULL), convey_error_NULL);
  H_EXPECT_RC(convoy_convey_broadcast_batch(c, NULL, 2), convey_error_NULL);
  H_EXPECT_RC(convoy_convey_broadcast_batch(c, NULL, 0), 0);
  H_EXPECT_RC(convoy_convey_broadcast_batch(c, item, -1), convey_error_USAGE);
  H_EXPECT_RC(convoy_convey_pull_batch(c, NULL, 4), convey_error_NULL);
  H_EXPECT_RC(convoy_convey_pull_batch(c, &b, 0), convey_error_USAGE);
  H_EXPECT_RC(convey_push(c, item, 0), convey_error_USAGE);
  while (convey_advance(c, 1) != convey_DONE) {
  }
  H_EXPECT_RC(convey_reset(c), convey_OK);
  /* Broadcast does not combine, whether an engine exists now or not (DYNAMIC); off is. */
  H_EXPECT_RC(convoy_convey_set_combine(c, 8, 8, 0, 8, h_add_u64), convey_error_USAGE);
  H_EXPECT_RC(convoy_convey_set_combine(c, 0, 0, 0, 0, NULL), convey_OK);
  H_EXPECT_RC(convey_free(c), convey_OK);

  /* A point-to-point conveyor does not broadcast; bad sizes build nothing. */
  t = convey_new_tensor(4096, 1, 1, 2, NULL, 0);
  if (t) {
    H_EXPECT_RC(convey_begin(t, sizeof item, 8), convey_OK);
    H_EXPECT_RC(convoy_convey_broadcast(t, item), convey_error_USAGE);
    H_EXPECT_RC(convoy_convey_broadcast_batch(t, item, 1), convey_error_USAGE);
    while (convey_advance(t, 1) != convey_DONE) {
    }
    H_EXPECT_RC(convey_reset(t), convey_OK);
    H_EXPECT_RC(convey_free(t), convey_OK);
  }
  /* SIZE_MAX: the broadcast default (BCAST-8), larger than the other kinds' 16 KiB. */
  t = convoy_convey_new_broadcast(SIZE_MAX, 2, NULL, options);
  H_CHECK(t != NULL, "the default capacity built nothing");
  if (t) {
    H_CHECK(convoy_convey_buffer_bytes(t) > 16384 && convoy_convey_buffer_bytes(t) < 262144,
            "default broadcast capacity %zu", convoy_convey_buffer_bytes(t));
    run_cycle(t, me, P, next, 7, 0);
    H_EXPECT_RC(convey_free(t), convey_OK);
  }
  H_CHECK(convoy_convey_new_broadcast(0, 2, NULL, convey_opt_QUIET) == NULL, "capacity 0 built");
  H_CHECK(convoy_convey_new_broadcast(1024, 3, NULL, convey_opt_QUIET) == NULL,
          "3 buffers per link built");
  free(next);
  if (me == 0) printf("broadcast on %lld PEs: %s\n", (long long)P, h_failures ? "FAIL" : "PASS");
  MPI_Finalize();
  return h_failures ? 1 : 0;
}
