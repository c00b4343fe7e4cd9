/* CAPI-5. A monster item above 2^31 bytes (bale's MPI build cannot send one: Maley & DeVinney 2019,
 * sec. 4.4.1) travels FIFO between small items on an elastic tensor conveyor. monster_test BYTES
 * (run on 2 PEs: PE 0 sends to PE 1, PE 1 sends a small item back) */
#include <convey.h>
#include <convoy_test/c_verdict.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The item is 1 MiB blocks of a pseudo-random template, each stamped with its index in
 * its first 8 bytes (block copies keep filling and checking fast under ASan). */
#define BLOCK ((size_t)1 << 20)
static unsigned char g_template[BLOCK];

static void make_template(void) {
  size_t i;
  for (i = 0; i < BLOCK; i++) g_template[i] = (unsigned char)(h_mix(i / 8) >> (8 * (i % 8)));
}

static void fill(unsigned char* p, size_t n) {
  size_t b;
  for (b = 0; b * BLOCK < n; b++) {
    const size_t len = n - b * BLOCK < BLOCK ? n - b * BLOCK : BLOCK;
    memcpy(p + b * BLOCK, g_template, len);
    if (len >= 8) memcpy(p + b * BLOCK, &b, sizeof b < 8 ? sizeof b : 8);
  }
}

static size_t verify(const unsigned char* p, size_t n) {
  size_t b, bad = 0;
  for (b = 0; b * BLOCK < n; b++) {
    const size_t len = n - b * BLOCK < BLOCK ? n - b * BLOCK : BLOCK;
    size_t stamp = 0;
    if (len >= 8) {
      memcpy(&stamp, p + b * BLOCK, sizeof stamp < 8 ? sizeof stamp : 8);
      bad += stamp != b || memcmp(p + b * BLOCK + 8, g_template + 8, len - 8) != 0;
    } else {
      bad += memcmp(p + b * BLOCK, g_template, len) != 0;
    }
  }
  return bad;
}

int main(int argc, char** argv) {
  size_t big, iters = 0;
  int me = 0, np = 1, rc;
  int stage_out = 0, stage_in = 0;
  double t0 = 0.0;
  unsigned char* item = NULL;
  convey_t* c;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  h_me = me;
  big = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : ((size_t)1 << 31) + 17;
  c = convey_new_etensor(4096, big, 1, 1, 2, NULL, 0);
  H_CHECK(c != NULL, "convey_new_etensor failed");
  if (np != 2 || !c) {
    h_fail(__FILE__, __LINE__, "needs 2 PEs and a conveyor");
    goto done;
  }
  make_template();
  if (me == 0) {
    item = malloc(big);
    H_CHECK(item != NULL, "malloc(%zu)", big);
    if (!item) goto done;
    fill(item, big);
  }
  /* PE 0 spends seconds filling; nobody starts the bounded loop before it is done. */
  MPI_Barrier(MPI_COMM_WORLD);
  H_EXPECT_RC(convey_begin(c, 8, 0), convey_OK);
  t0 = MPI_Wtime();
  /* PE 0 sends: small "A", the monster, small "B"; PE 1 sends one small item to PE 0. */
  while ((rc = convey_advance(c, me == 0 ? stage_out == 3 : stage_out == 1)) != convey_DONE) {
    convey_item_t e;
    H_CHECK(rc > 0, "advance %d", rc);
    if (rc < 0) break;
    if (me == 0) {
      const uint64_t small[2] = {0xA, 0xB};
      if (stage_out == 0 && convey_epush(c, 8, &small[0], 1) == convey_OK) stage_out = 1;
      if (stage_out == 1 && convey_epush(c, big, item, 1) == convey_OK) stage_out = 2;
      if (stage_out == 2 && convey_epush(c, 8, &small[1], 1) == convey_OK) stage_out = 3;
    } else if (stage_out == 0) {
      const uint64_t back = 0xC;
      if (convey_epush(c, 8, &back, 0) == convey_OK) stage_out = 1;
    }
    while (convey_epull(c, &e) == convey_OK) {
      uint64_t v = 0;
      if (me == 0) {
        memcpy(&v, e.data, 8);
        H_CHECK(e.bytes == 8 && v == 0xC && e.from == 1, "PE 0 got a wrong item");
        stage_in++;
        continue;
      }
      H_CHECK(e.from == 0, "source %lld", (long long)e.from);
      if (stage_in == 1) {
        H_CHECK(e.bytes == big, "monster arrived with %zu bytes, expected %zu", e.bytes, big);
        if (e.bytes == big) {
          const size_t bad = verify(e.data, big);
          H_CHECK(bad == 0, "monster corrupt");
        }
      } else {
        memcpy(&v, e.data, 8);
        H_CHECK(e.bytes == 8 && v == (stage_in == 0 ? 0xAu : 0xBu), "small item %d out of order",
                stage_in);
      }
      stage_in++;
    }
    /* Bounded by time, not iterations: PE 0 spends seconds copying the monster while the
       other PE's loop spins through cheap shared-memory polls. */
    ++iters;
    if (MPI_Wtime() - t0 > 240.0) {
      h_fail(__FILE__, __LINE__, "no termination after %zu iterations", iters);
      break;
    }
  }
  H_CHECK(stage_in == (me == 0 ? 1 : 3), "PE %d received %d items", me, stage_in);
  H_EXPECT_RC(convey_reset(c), convey_OK);
done:
  H_EXPECT_RC(convey_free(c), convey_OK);
  free(item);
  return convoy_test_verdict(h_failures, "monster of %zu bytes", big);
}
