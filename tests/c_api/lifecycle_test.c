/* CAPI-14. A program in the style of bale's OpenSHMEM apps: it never calls MPI. The library must
 * initialize MPI on first use and finalize it at exit (docs/c-api.md, CAPI-14).
 * Only convey.h and convoy/convey_ext.h (for the PE number) are used; each PE checks what
 * it received on its own: exactly once, FIFO per source, the right source. */
#include <convey.h>
#include <convoy/convey_ext.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

int main(void) {
  const long n = 2000;
  int64_t P, me, i = 0, s, k, *sent, *recv;
  uint64_t item, want;
  long iters = 0;
  int rc, round;
  convey_t* c = convey_new(SIZE_MAX, 0, NULL, 0);
  if (!c) {
    fprintf(stderr, "convey_new failed\n");
    return 1;
  }
  P = convoy_convey_n_pes(c);
  me = convoy_convey_my_pe(c);
  h_me = (long)me;
  sent = h_alloc(sizeof(int64_t) * (size_t)P);
  recv = h_alloc(sizeof(int64_t) * (size_t)P);
  for (round = 0; round < 2; round++) {
    for (s = 0; s < P; s++) sent[s] = recv[s] = 0;
    i = 0;
    H_EXPECT_RC(convey_begin(c, sizeof item, 0), convey_OK);
    /* Maley & DeVinney 2019, Figure 3 */
    while ((rc = convey_advance(c, i == n)) != convey_DONE) {
      int64_t from;
      H_CHECK(rc > 0, "advance %d", rc);
      if (rc < 0) break;
      for (; i < n; i++) {
        const int64_t d = h_dest(me, i, P, (uint64_t)round);
        item = h_seed(me, d, sent[d], 3);
        if (!convey_push(c, &item, d)) break;
        sent[d]++;
      }
      while (convey_pull(c, &item, &from) == convey_OK) {
        want = h_seed(from, me, recv[from], 3);
        H_CHECK(item == want, "item %lld from %lld", (long long)recv[from], (long long)from);
        recv[from]++;
      }
      if (++iters > H_MAX_ITER) {
        h_fail(__FILE__, __LINE__, "no termination");
        break;
      }
    }
    for (s = 0; s < P; s++) {
      int64_t expect = 0;
      for (k = 0; k < n; k++) expect += h_dest(s, k, P, (uint64_t)round) == me;
      H_CHECK(recv[s] == expect, "from %lld: %lld of %lld", (long long)s, (long long)recv[s],
              (long long)expect);
    }
    H_EXPECT_RC(convey_reset(c), convey_OK);
  }
  H_EXPECT_RC(convey_free(c), convey_OK);
  free(sent);
  free(recv);
  if (me == 0) printf("lifecycle on %lld PEs: %s\n", (long long)P, h_failures ? "FAIL" : "PASS");
  return h_failures ? 1 : 0; /* MPI_Finalize runs at exit, registered by the library */
}
