/* The counters of convoy/convey_ext.h (CAPI-110..113): per link and per PE, checked against
 * what the PEs pushed and against each other over all PEs (what every link sent is what
 * arrived at its other end), the struct's size protocol, and the error codes. Under
 * CONVOY_STATS (set by the CTest entry), convey_free writes the document: PE 0 finds this
 * conveyor in it. Argument: the constructor ("tensor" or "default"). */
#include <convey.h>
#include <convoy/convey_ext.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Sums, over every link of every stage of this PE: sent, received (items, bytes, buffers). */
static void link_sums(convey_t* c, uint64_t sums[6]) {
  int s, k;
  memset(sums, 0, 6 * sizeof sums[0]);
  for (s = 0; s < convoy_convey_n_stages(c); s++)
    for (k = 0; k < convoy_convey_n_links(c, s); k++) {
      convoy_link_stats_t l;
      l.size = sizeof l;
      H_EXPECT_RC(convoy_convey_link_stats(c, s, k, 1, &l), convey_OK);
      H_CHECK(l.size == sizeof l, "size %zu", l.size);
      H_CHECK(l.peer != convoy_convey_my_pe(c), "stage %d link %d is a loopback", s, k);
      sums[0] += l.items_sent;
      sums[1] += l.bytes_sent;
      sums[2] += l.buffers_full + l.buffers_partial;
      sums[3] += l.items_received;
      sums[4] += l.bytes_received;
      sums[5] += l.buffers_received;
    }
}

static int file_has(const char* path, const char* what) {
  static char text[1 << 20];
  size_t n;
  FILE* f = fopen(path, "rb");
  if (!f) return 0;
  n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  return strstr(text, what) != NULL;
}

int main(int argc, char** argv) {
  const long n = 3000;
  const int tensor = argc > 1 && strcmp(argv[1], "tensor") == 0;
  int64_t P, me, i = 0, from;
  uint64_t item = 0, pulled = 0, sums[6], all[6];
  convoy_pe_stats_t pe;
  convoy_link_stats_t l;
  int rc;
  long iters = 0;
  convey_t* c;
  MPI_Init(&argc, &argv);
  c = tensor ? convey_new_tensor(4096, 2, 1, 2, NULL, 0) : convey_new(SIZE_MAX, 0, NULL, 0);
  if (!c) {
    fprintf(stderr, "construction failed\n");
    return 1;
  }
  P = convoy_convey_n_pes(c);
  me = convoy_convey_my_pe(c);
  h_me = (long)me;
  H_CHECK(convoy_convey_n_stages(c) >= 1, "stages %d", convoy_convey_n_stages(c));
  H_EXPECT_RC(convey_begin(c, sizeof item, 0), convey_OK);
  while ((rc = convey_advance(c, i == n)) != convey_DONE) {
    H_CHECK(rc > 0, "advance %d", rc);
    if (rc < 0) break;
    for (; i < n; i++)
      if (!convey_push(c, &item, h_dest(me, i, P, 5))) break;
    while (convey_pull(c, &item, &from) == convey_OK) pulled++;
    if (++iters > H_MAX_ITER) {
      h_fail(__FILE__, __LINE__, "no termination");
      break;
    }
  }

  /* This PE: pushes and pulls as convey_statistic says; the rest adds up. */
  pe.size = sizeof pe;
  H_EXPECT_RC(convoy_convey_pe_stats(c, 0, &pe), convey_OK);
  H_CHECK(pe.size == sizeof pe, "size %zu", pe.size);
  H_CHECK(pe.pushes == (uint64_t)n, "pushes %llu", (unsigned long long)pe.pushes);
  H_CHECK(pe.pulls == pulled, "pulls %llu of %llu", (unsigned long long)pe.pulls,
          (unsigned long long)pulled);
  H_CHECK(pe.begins == 1 && pe.advances > 0, "begins %llu", (unsigned long long)pe.begins);
  H_CHECK(pe.cycle_seconds >= pe.advance_seconds, "cycle %g < advance %g", pe.cycle_seconds,
          pe.advance_seconds);
  link_sums(c, sums);
  H_CHECK(sums[2] == pe.buffers_sent, "links posted %llu, PE %llu", (unsigned long long)sums[2],
          (unsigned long long)pe.buffers_sent);
  H_CHECK(sums[1] == pe.bytes_sent, "link bytes %llu, PE %llu", (unsigned long long)sums[1],
          (unsigned long long)pe.bytes_sent);
  /* Over all PEs, every link's sent counts arrived at its other end. */
  MPI_Allreduce(sums, all, 6, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  H_CHECK(all[0] == all[3] && all[1] == all[4] && all[2] == all[5],
          "sent %llu items %llu bytes %llu buffers, received %llu %llu %llu",
          (unsigned long long)all[0], (unsigned long long)all[1], (unsigned long long)all[2],
          (unsigned long long)all[3], (unsigned long long)all[4], (unsigned long long)all[5]);
  H_CHECK(P == 1 || all[0] > 0, "nothing crossed a link on %lld PEs", (long long)P);

  /* The size protocol: an older, shorter struct gets only its fields. */
  memset(&l, 0xab, sizeof l);
  l.size = offsetof(convoy_link_stats_t, items_sent) + sizeof l.items_sent;
  if (convoy_convey_n_links(c, 0) > 0) {
    H_EXPECT_RC(convoy_convey_link_stats(c, 0, 0, 1, &l), convey_OK);
    H_CHECK(l.size == offsetof(convoy_link_stats_t, items_sent) + sizeof l.items_sent, "size %zu",
            l.size);
    H_CHECK(l.bytes_sent == 0xababababababababULL, "wrote beyond the caller's size");
  }

  /* Errors. */
  l.size = sizeof l;
  H_EXPECT_RC(convoy_convey_n_stages(NULL), convey_error_NULL);
  H_EXPECT_RC(convoy_convey_n_links(NULL, 0), convey_error_NULL);
  H_EXPECT_RC(convoy_convey_n_links(c, -1), convey_error_RANGE);
  H_EXPECT_RC(convoy_convey_n_links(c, convoy_convey_n_stages(c)), convey_error_RANGE);
  H_EXPECT_RC(convoy_convey_link_stats(c, 0, -1, 0, &l), convey_error_RANGE);
  H_EXPECT_RC(convoy_convey_link_stats(c, 0, convoy_convey_n_links(c, 0), 0, &l),
              convey_error_RANGE);
  H_EXPECT_RC(convoy_convey_link_stats(c, 99, 0, 0, &l), convey_error_RANGE);
  H_EXPECT_RC(convoy_convey_link_stats(c, 0, 0, 0, NULL), convey_error_NULL);
  H_EXPECT_RC(convoy_convey_link_stats(NULL, 0, 0, 0, &l), convey_error_NULL);
  H_EXPECT_RC(convoy_convey_pe_stats(c, 0, NULL), convey_error_NULL);
  pe.size = sizeof(size_t);
  H_EXPECT_RC(convoy_convey_pe_stats(c, 0, &pe), convey_error_USAGE);
  l.size = 0;
  H_EXPECT_RC(convoy_convey_link_stats(c, 0, 0, 0, &l), convey_error_USAGE);

  H_EXPECT_RC(convey_reset(c), convey_OK);
  H_EXPECT_RC(convey_free(c), convey_OK);
  {
    const char* path = getenv("CONVOY_STATS");
    int ok = 1;
    if (me == 0 && path) {
      ok = file_has(path, "\"api\": \"convey\"") && file_has(path, "\"format\": \"convoy-stats\"");
      H_CHECK(ok, "%s does not hold this conveyor", path);
      remove(path);
    }
  }
  if (me == 0) printf("counters on %lld PEs: %s\n", (long long)P, h_failures ? "FAIL" : "PASS");
  MPI_Finalize();
  return h_failures ? 1 : 0;
}
