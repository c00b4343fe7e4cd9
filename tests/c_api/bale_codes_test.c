/* bale's error codes, row by row (conveyor_api/README.md, CAPI-2: the table of what bale's
 * source returns for each misuse; CAPI-6: the elastic item bound). A bale client checks
 * these numbers, so each row is tested as such a client would: on a rigid tensor, a simple,
 * an elastic and a bi- conveyor. QUIET everywhere: the codes, not the messages. */
#include <biconvey.h>
#include <convey.h>
#include <convoy_test/c_verdict.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

/* bale's values (convey_impl.h), checked at compile time: code compiled against bale's
 * header and ours must agree. */
#define H_STATIC(cond, name) typedef char name[(cond) ? 1 : -1]
H_STATIC(convey_error_STATE == -1, v_state);
H_STATIC(convey_error_USAGE == -2, v_usage);
H_STATIC(convey_error_NULL == -3, v_null);
H_STATIC(convey_error_RANGE == -4, v_range);
H_STATIC(convey_error_TEAM == -5, v_team);
H_STATIC(convey_error_COMMS == -6, v_comms);
H_STATIC(convey_error_ALLOC == -7, v_alloc);
H_STATIC(convey_error_RIGID == -8, v_rigid);
H_STATIC(convey_error_MISFIT == -9, v_misfit);
H_STATIC(convey_error_OFLO == -10, v_oflo);
H_STATIC(convey_error_ZERO == -11, v_zero);
H_STATIC(convey_error_TOOBIG == -12, v_toobig);
H_STATIC(convey_error_NOFUNC == -13, v_nofunc);
H_STATIC(convey_error_INTERNAL == -14, v_internal);

static int64_t g_pes = 1;
static const uint64_t Q = convey_opt_QUIET;

/* Every code has its own description (convey_error_string). */
static void strings(void) {
  int a, b;
  for (a = convey_error_INTERNAL; a < 0; a++) {
    const char* s = convey_error_string(NULL, a);
    H_CHECK(s && *s && !strstr(s, "unknown"), "code %d has no description", a);
    for (b = a + 1; b < 0; b++)
      H_CHECK(strcmp(s, convey_error_string(NULL, b)) != 0, "codes %d and %d read alike", a, b);
  }
  H_CHECK(strstr(convey_error_string(NULL, 0), "ordinary") != NULL, "0");
  H_CHECK(strstr(convey_error_string(NULL, 1), "success") != NULL, "1");
  H_CHECK(strstr(convey_error_string(NULL, 2), "success") != NULL, "2 (convey_NEAR)");
  /* Codes no call returns: not "success" because they are positive. */
  H_CHECK(strcmp(convey_error_string(NULL, -15), "unknown error") == 0, "-15");
  H_CHECK(strcmp(convey_error_string(NULL, 3), "unknown error") == 0, "3");
  H_CHECK(strcmp(convey_error_string(NULL, 12345), "unknown error") == 0, "12345");
  H_CHECK(strcmp(convey_error_string(NULL, INT_MIN), "unknown error") == 0, "INT_MIN");
}

/* Drives `c` to COMPLETE with nothing pushed. */
static void finish(convey_t* c) {
  long iters = 0;
  int rc;
  while ((rc = convey_advance(c, true)) != convey_DONE) {
    H_CHECK(rc > 0, "advance %d", rc);
    if (rc < 0 || ++iters > H_MAX_ITER) break;
  }
}

/* Rows common to rigid conveyors (convey.c: the dispatch and convey_checked_* functions). */
static void rigid_rows(convey_t* c, const char* kind, size_t too_big) {
  unsigned char item[16] = {0};
  convey_item_t ei;
  H_CHECK(c != NULL, "%s constructor", kind);
  if (!c) return;
  /* DORMANT */
  H_EXPECT_RC(convey_push(c, item, 0), convey_error_STATE);    /* convey_checked_push */
  H_EXPECT_RC(convey_pull(c, item, NULL), convey_error_STATE); /* convey_checked_pull */
  H_CHECK(convey_apull(c, NULL) == NULL, "%s: apull in DORMANT", kind);
  H_EXPECT_RC(convey_unpull(c), convey_error_STATE);            /* convey_checked_unpull */
  H_EXPECT_RC(convey_advance(c, true), convey_error_STATE);     /* convey_advance */
  H_EXPECT_RC(convey_epush(c, 8, item, 0), convey_error_RIGID); /* convey_no_epush */
  H_EXPECT_RC(convey_epull(c, &ei), convey_error_RIGID);        /* convey_no_epull */
  H_EXPECT_RC(convey_reset(c), convey_OK);                      /* convey_reset */
  H_EXPECT_RC(convey_begin(c, 0, 0), convey_error_ZERO);        /* convey_begin */
  H_EXPECT_RC(convey_begin(c, too_big, 0), convey_error_OFLO);  /* tensor_begin, simple_begin */
  H_CHECK(convey_statistic(c, convey_BEGINS) == 0, "%s: a failed begin counted", kind);
  /* WORKING */
  H_EXPECT_RC(convey_begin(c, 8, 0), convey_OK);
  H_EXPECT_RC(convey_begin(c, 8, 0), convey_error_STATE);
  H_EXPECT_RC(convey_push(c, item, -1), convey_error_RANGE); /* convey_checked_push */
  H_EXPECT_RC(convey_push(c, item, g_pes), convey_error_RANGE);
  H_EXPECT_RC(convey_epush(c, 8, item, 0), convey_error_RIGID);
  H_EXPECT_RC(convey_epull(c, &ei), convey_error_RIGID);
  H_EXPECT_RC(convey_reset(c), convey_error_STATE);                 /* convey_reset: not COMPLETE */
  H_EXPECT_RC(convey_free(c), convey_error_STATE);                  /* convey_free */
  H_EXPECT_RC(convey_set_codec(c, NULL, NULL), convey_error_STATE); /* convey_set_codec */
  H_CHECK(convey_statistic(c, convey_PUSHES) == 0, "%s: failed pushes counted", kind);
  /* advance(false) after advance(true): bale takes it as true (convey_advance) */
  if (convey_advance(c, true) != convey_DONE) {
    const int rc = convey_advance(c, false);
    H_CHECK(rc >= 0, "%s: advance(false) after advance(true) returned %d", kind, rc);
    H_EXPECT_RC(convey_push(c, item, 0), convey_error_STATE);
    finish(c);
  }
  /* COMPLETE */
  H_EXPECT_RC(convey_pull(c, item, NULL), convey_FAIL);
  H_EXPECT_RC(convey_unpull(c), convey_FAIL); /* convey_unpull */
  H_EXPECT_RC(convey_advance(c, false), convey_DONE);
  H_EXPECT_RC(convey_push(c, item, 0), convey_error_STATE);
  H_EXPECT_RC(convey_reset(c), convey_OK);
  /* THRIFTY only: set_codec (convey_set_codec) */
  H_EXPECT_RC(convey_set_codec(c, &convey_standard_codec, NULL),
              (convey_features(c) & convey_THRIFTY) ? convey_OK : convey_FAIL);
  if (convey_features(c) & convey_THRIFTY) {
    convey_codec_t no_plan = convey_standard_codec, no_compress = convey_standard_codec;
    no_plan.plan = NULL;
    no_compress.compress = NULL; /* bale accepts it and crashes later; convoy: NOFUNC */
    H_EXPECT_RC(convey_set_codec(c, &no_plan, NULL), convey_FAIL);
    H_EXPECT_RC(convey_set_codec(c, &no_compress, NULL), convey_error_NOFUNC);
  }
  H_CHECK(convey_statistic(c, -1) == -1 && convey_statistic(c, 2 * convey_CUMULATIVE) == -1,
          "%s: statistic out of range", kind); /* convey_imp_statistic */
  H_EXPECT_RC(convey_free(c), convey_OK);
}

/* Rows of elastic conveyors (elastic.c) and CAPI-6. */
static void elastic_rows(void) {
  const int64_t me = h_me, right = (h_me + 1) % g_pes;
  unsigned char item[200];
  convey_item_t ei;
  int64_t from = -1, got = 0, got16 = 0, got100 = 0, iters = 0;
  int rc, misfit = 0;
  convey_t* c = convey_new_elastic(100, SIZE_MAX, 1, NULL, Q);
  H_CHECK(c != NULL, "convey_new_elastic");
  if (!c) return;
  memset(item, 7, sizeof item);
  H_EXPECT_RC(convey_epush(c, 8, item, 0), convey_error_STATE); /* convey_checked_epush */
  H_EXPECT_RC(convey_epull(c, &ei), convey_FAIL);               /* convey_checked_epull */
  H_CHECK(ei.data == NULL, "epull in DORMANT left data");
  H_EXPECT_RC(convey_begin(c, 101, 0), convey_error_OFLO); /* larger than the bound */
  H_EXPECT_RC(convey_begin(c, 8, 0), convey_OK);
  H_EXPECT_RC(convey_epush(c, 8, item, g_pes), convey_error_RANGE);
  /* CAPI-6: above item_bound fails with OFLO and moves nothing, far below a buffer too. */
  H_EXPECT_RC(convey_epush(c, 101, item, right), convey_error_OFLO);
  H_EXPECT_RC(convey_epush(c, 100, item, right), convey_OK);
  H_EXPECT_RC(convey_epush(c, 16, item, me), convey_OK);
  H_CHECK(convey_statistic(c, convey_PUSHES) == 2, "PUSHES %lld",
          (long long)convey_statistic(c, convey_PUSHES));
  /* A rigid pull meeting another size: MISFIT (elastic_pull); the item stays first. */
  while ((rc = convey_advance(c, got == 2)) != convey_DONE) {
    if (rc < 0 || ++iters > H_MAX_ITER) {
      h_fail(__FILE__, __LINE__, "elastic round: advance %d", rc);
      break;
    }
    for (;;) {
      rc = convey_pull(c, item, &from);
      H_CHECK(rc == convey_FAIL || rc == convey_error_MISFIT, "pull of a 16/100-byte item: %d", rc);
      if (rc == convey_error_MISFIT) {
        misfit++;
        H_CHECK(convey_apull(c, NULL) == NULL, "apull of a misfit"); /* elastic_apull */
      }
      if (convey_epull(c, &ei) != convey_OK) break;
      if (ei.bytes == 16) {
        H_CHECK(ei.from == me, "16-byte item from %lld", (long long)ei.from);
        got16++;
      } else {
        H_CHECK(ei.bytes == 100 && ei.from == (me + g_pes - 1) % g_pes,
                "item of %zu bytes from %lld", ei.bytes, (long long)ei.from);
        got100++;
      }
      got++;
    }
  }
  H_CHECK(got16 == 1 && got100 == 1,
          "received %lld + %lld items, expected 1 + 1 (the OFLO push "
          "moved nothing)",
          (long long)got16, (long long)got100);
  H_CHECK(misfit > 0, "no MISFIT seen");
  H_EXPECT_RC(convey_reset(c), convey_OK);
  H_EXPECT_RC(convey_free(c), convey_OK);
}

/* Rows of biconvey.c. */
static void answer(const void* q, void* r, void* ctx) {
  (void)ctx;
  memcpy(r, q, 8);
}
static void bi_rows(void) {
  biconvey_t* b = biconvey_new_tensor(1024, 1, 1, 2, NULL, Q);
  H_CHECK(b != NULL, "biconvey_new_tensor");
  H_EXPECT_RC(biconvey_begin(NULL, 8, 8, answer, NULL), convey_error_NULL);
  H_EXPECT_RC(biconvey_advance(NULL, true), convey_error_NULL);
  H_EXPECT_RC(biconvey_reset(NULL), convey_error_NULL);
  H_EXPECT_RC(biconvey_free(NULL), convey_OK);
  if (!b) return;
  H_EXPECT_RC(biconvey_begin(b, 8, 8, NULL, NULL), convey_error_NOFUNC);
  H_EXPECT_RC(biconvey_begin(b, 0, 8, answer, NULL), convey_error_ZERO);
  H_EXPECT_RC(biconvey_begin(b, 8, 0, answer, NULL), convey_error_ZERO);
  H_EXPECT_RC(biconvey_begin(b, 8, 100000, answer, NULL), convey_error_OFLO);
  /* ... and changed nothing: a correct cycle follows. */
  H_EXPECT_RC(biconvey_begin(b, 8, 8, answer, NULL), convey_OK);
  {
    long iters = 0;
    int rc;
    while ((rc = biconvey_advance(b, true)) != convey_DONE)
      if (rc < 0 || ++iters > H_MAX_ITER) {
        h_fail(__FILE__, __LINE__, "biconvey_advance %d", rc);
        break;
      }
  }
  H_EXPECT_RC(biconvey_reset(b), convey_OK);
  H_EXPECT_RC(biconvey_free(b), convey_OK);
}

/* Rows on a NULL conveyor (convey.c). */
static void null_rows(void) {
  unsigned char item[8] = {0};
  H_EXPECT_RC(convey_begin(NULL, 8, 0), convey_error_NULL);
  H_EXPECT_RC(convey_advance(NULL, true), convey_error_NULL);
  H_EXPECT_RC(convey_reset(NULL), convey_error_NULL);
  H_EXPECT_RC(convey_set_codec(NULL, NULL, NULL), convey_error_NULL);
  H_EXPECT_RC(convey_free(NULL), convey_OK);
  H_EXPECT_RC(convey_push(NULL, item, 0), convey_error_NULL); /* bale: crashes */
  H_CHECK(convey_statistic(NULL, convey_PUSHES) == 0, "statistic(NULL)");
  H_CHECK(convey_item_size(NULL) == 0 && convey_features(NULL) == 0, "NULL queries");
}

int main(int argc, char** argv) {
  int me = 0, np = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  h_me = me;
  g_pes = np;
  strings();
  null_rows();
  rigid_rows(convey_new_tensor(64, 1, 1, 2, NULL, Q), "tensor", 1000);
  rigid_rows(convey_new_tensor(256, 1, 1, 2, NULL, Q | convey_opt_COMPRESS), "thrifty tensor",
             1000);
  rigid_rows(convey_new_simple(64, NULL, NULL, Q), "simple", 1000);
  rigid_rows(convey_new_simple(256, NULL, NULL, Q | convey_opt_COMPRESS), "thrifty simple", 1000);
  elastic_rows();
  bi_rows();
  return convoy_test_verdict(h_failures, "bale codes on %d PEs", np);
}
