/* The one-sided append's C API (convoy/convey_ext.h, convoy_append_*; conveyor_api/README.md
 * CAPI-100..106). Each push is a record {source, seq, length} + bytes h_fill'ed from
 * (source, target, seq, cycle): every PE checks its own buffer byte by byte. */
#include <convey.h>
#include <convoy/convey_ext.h>
#include <convoy_test/c_verdict.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

typedef struct {
  uint32_t source, seq;
  uint64_t bytes;
} rec_head;

static size_t payload_of(int64_t s, int64_t k) { return (size_t)((s * 53 + k * 29) % 97); }

/* All PEs push `per` records to every PE; every PE checks what arrived (CAPI-100, 101). */
static void exchange(convoy_append_t a, int64_t P, int64_t me, int per, int cycle) {
  unsigned char rec[sizeof(rec_head) + 97], want[97];
  const void* data = NULL;
  size_t bytes = 0, at = 0, expect = 0;
  int64_t appends = -1, k, t, s, *next = h_alloc(sizeof(int64_t) * (size_t)P);
  for (k = 0; k < per; k++)
    for (t = 0; t < P; t++) {
      const int64_t d = (t + me) % P;
      rec_head h;
      h.source = (uint32_t)me;
      h.seq = (uint32_t)k;
      h.bytes = payload_of(me, k);
      memcpy(rec, &h, sizeof h);
      h_fill(rec + sizeof h, (size_t)h.bytes, h_seed(me, d, k, (uint64_t)cycle));
      H_CHECK(convoy_append_push(a, d, rec, sizeof h + (size_t)h.bytes) ==
                  (int64_t)(sizeof h + h.bytes),
              "push to %lld", (long long)d);
    }
  MPI_Barrier(MPI_COMM_WORLD);
  H_EXPECT_RC(convoy_append_view(a, &data, &bytes, &appends), 1);
  for (s = 0; s < P; s++) {
    next[s] = 0;
    for (k = 0; k < per; k++) expect += sizeof(rec_head) + payload_of(s, k);
  }
  H_CHECK(bytes == expect, "%zu bytes arrived, %zu expected", bytes, expect);
  H_CHECK(appends == P * per, "%lld appends", (long long)appends);
  H_CHECK(convoy_append_offset(a) == (int64_t)expect, "offset");
  while (at + sizeof(rec_head) <= bytes) {
    rec_head h;
    memcpy(&h, (const unsigned char*)data + at, sizeof h);
    H_CHECK(h.source < P && h.seq == next[h.source] && h.bytes == payload_of(h.source, h.seq),
            "record (%u, %u) at %zu out of order or malformed", h.source, h.seq, at);
    if (h.source >= P || h.bytes > 97) break;
    h_fill(want, (size_t)h.bytes, h_seed(h.source, me, h.seq, (uint64_t)cycle));
    H_CHECK(memcmp((const unsigned char*)data + at + sizeof h, want, (size_t)h.bytes) == 0,
            "bytes of record (%u, %u) differ", h.source, h.seq);
    next[h.source]++;
    at += sizeof h + (size_t)h.bytes;
  }
  H_CHECK(at == bytes, "records end at %zu of %zu", at, bytes);
  for (s = 0; s < P; s++)
    H_CHECK(next[s] == per, "%lld records from %lld", (long long)next[s], (long long)s);
  MPI_Barrier(MPI_COMM_WORLD);
  free(next);
}

/* CAPI-102 truncation at the boundary, CAPI-103 zero-length pushes. */
static void truncation(int64_t P, int64_t me) {
  convoy_append_t a;
  unsigned char src[300];
  const void* data = NULL;
  size_t bytes = 0;
  int64_t appends = 0;
  int i;
  for (i = 0; i < 300; i++) src[i] = (unsigned char)(i * 13 + 1);
  H_EXPECT_RC(convoy_append_create(&a, 256, 0), 1);
  if (me == 0) {
    H_CHECK(convoy_append_push(a, P - 1, src, 0) == 0, "zero-length push");
    H_CHECK(convoy_append_push(a, P - 1, NULL, 0) == 0, "zero-length push of NULL");
    H_CHECK(convoy_append_push(a, P - 1, src, 200) == 200, "first push");
    H_CHECK(convoy_append_push(a, P - 1, src + 200, 56) == 56, "push up to the boundary");
    H_CHECK(convoy_append_push(a, P - 1, src, 1) == 0, "push on a full buffer");
    H_CHECK(convoy_append_push(a, P - 1, src, 0) == 0, "zero-length push on a full buffer");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == P - 1) {
    H_EXPECT_RC(convoy_append_view(a, &data, &bytes, &appends), 1);
    H_CHECK(bytes == 256 && appends == 2, "%zu bytes, %lld appends", bytes, (long long)appends);
    H_CHECK(memcmp(data, src, 256) == 0, "truncated contents");
    H_CHECK(convoy_append_offset(a) == 257, "offset %lld", (long long)convoy_append_offset(a));
  }
  H_EXPECT_RC(convoy_append_reset(a), 1);
  if (me == 0) H_CHECK(convoy_append_push(a, P - 1, src, 300) == 256, "one push past the end");
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == P - 1) {
    H_EXPECT_RC(convoy_append_view(a, &data, &bytes, &appends), 1);
    H_CHECK(bytes == 256 && appends == 1 && memcmp(data, src, 256) == 0, "cut push");
  }
  H_EXPECT_RC(convoy_append_free(a), 1);
}

/* CAPI-104 misuse: clear codes, never a crash. Messages are printed (not QUIET here). */
static void misuse(int64_t P) {
  convoy_append_t a, never = {0};
  const char c = 'x';
  H_EXPECT_RC(convoy_append_create(NULL, 64, 0), convey_error_NULL);
  H_EXPECT_RC(convoy_append_create(&a, 64, convey_opt_QUIET), 1);
  H_CHECK(convoy_append_push(a, -1, &c, 1) == convey_error_RANGE, "PE -1");
  H_CHECK(convoy_append_push(a, P, &c, 1) == convey_error_RANGE, "PE P");
  H_CHECK(convoy_append_push(a, 0, NULL, 1) == convey_error_NULL, "NULL bytes");
  H_EXPECT_RC(convoy_append_free(a), 1);
  H_CHECK(convoy_append_push(a, 0, &c, 1) == convey_error_STATE, "push after free");
  H_EXPECT_RC(convoy_append_view(a, NULL, NULL, NULL), convey_error_STATE);
  H_CHECK(convoy_append_offset(a) == convey_error_STATE, "offset after free");
  H_EXPECT_RC(convoy_append_reset(a), convey_error_STATE);
  H_EXPECT_RC(convoy_append_free(a), convey_error_STATE);
  H_CHECK(convoy_append_push(never, 0, &c, 1) == convey_error_STATE, "push on {0}");
  if (P > 1) {
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    H_EXPECT_RC(convoy_append_create(&a, me == 0 ? 64 : 128, convey_opt_QUIET), convey_error_USAGE);
  }
}

int main(int argc, char** argv) {
  int rank = 0, size = 0, cycle;
  convoy_append_t a;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  h_me = rank;
  H_EXPECT_RC(convoy_append_create(&a, 1 << 16, 0), 1);
  for (cycle = 0; cycle < 6; cycle++) { /* CAPI-105 reuse over cycles */
    exchange(a, size, rank, 1 + cycle % 3, cycle);
    H_EXPECT_RC(convoy_append_reset(a), 1);
  }
  H_EXPECT_RC(convoy_append_free(a), 1);
  truncation(size, rank);
  misuse(size);
  return convoy_test_verdict(h_failures, "append_test on %d PEs", size);
}
