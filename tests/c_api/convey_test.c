/* The C façade test driver: one conveyor kind, several scenarios, any rank count.
 *
 *   convey_test SCENARIOS KIND [key=value ...]
 *
 * SCENARIOS: comma list of histo (Maley & DeVinney 2019, Figure 3 with unpull/apull, reuse over
 * item sizes 1..256, statistics), gather (Figure 4, two conveyors, unpull), misuse (every illegal
 * call in every state, then a correct round), ring (steady ring), elastic (epush / epull, size 0,
 * near-buffer and monster items, rigid pull on a mixed stream), bigather (biconveyor, replies in
 * push order), ctors (constructor errors, max_bytes as a hard limit, features). KIND: simple,
 * tensor, twohop, new, etensor, elastic, bisimple, bitensor, binew. keys: cap, order, nl (n_local),
 * nb (n_buffers), mon (monster bound), max (max_bytes), n (items per PE), opt (or of: progress,
 * scatter, compress, reckless, dynamic, quiet, alert). Exit code 0 iff every check passed on every
 * PE. Invariants (conveyor_api/README.md): histo CAPI-1, CAPI-3, CAPI-7, CAPI-12; misuse CAPI-1,
 * CAPI-2, CAPI-6; elastic CAPI-5, CAPI-7; bigather CAPI-13; ctors CAPI-8, CAPI-10; ring: steady
 * (Maley & DeVinney 2019, sec. 3.6).
 */
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

typedef struct {
  const char* kind;
  size_t cap, nl, nb, mon, max;
  int order;
  long n;
  uint64_t opt;
} spec_t;

static int64_t g_pes = 1;

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

static uint64_t parse_opts(const char* s) {
  uint64_t o = 0;
  if (strstr(s, "progress")) o |= convey_opt_PROGRESS;
  if (strstr(s, "scatter")) o |= convey_opt_SCATTER;
  if (strstr(s, "compress")) o |= convey_opt_COMPRESS;
  if (strstr(s, "reckless")) o |= convey_opt_RECKLESS;
  if (strstr(s, "dynamic")) o |= convey_opt_DYNAMIC;
  if (strstr(s, "quiet")) o |= convey_opt_QUIET;
  if (strstr(s, "alert")) o |= convey_opt_ALERT;
  return o;
}

static convey_t* make(const spec_t* s, uint64_t extra) {
  const uint64_t o = s->opt | extra;
  if (!strcmp(s->kind, "simple")) return convey_new_simple(s->cap, NULL, NULL, o);
  if (!strcmp(s->kind, "tensor")) return convey_new_tensor(s->cap, s->order, s->nl, s->nb, NULL, o);
  if (!strcmp(s->kind, "twohop")) return convey_new_twohop(s->cap, s->nl, NULL, o);
  if (!strcmp(s->kind, "new")) return convey_new(s->max, s->nl, NULL, o);
  if (!strcmp(s->kind, "etensor"))
    return convey_new_etensor(s->cap, s->mon, s->order, s->nl, s->nb, NULL, o);
  if (!strcmp(s->kind, "elastic")) return convey_new_elastic(s->mon, s->max, s->nl, NULL, o);
  return NULL;
}

static biconvey_t* make_bi(const spec_t* s) {
  if (!strcmp(s->kind, "bisimple")) return biconvey_new_simple(s->cap, NULL, NULL, s->opt);
  if (!strcmp(s->kind, "bitensor"))
    return biconvey_new_tensor(s->cap, s->order, s->nl, s->nb, NULL, s->opt);
  if (!strcmp(s->kind, "binew")) return biconvey_new(s->max, s->nl, NULL, s->opt);
  return NULL;
}

static int64_t global_sum(int64_t v) {
  long long in = (long long)v, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return (int64_t)out;
}

/* ---- histo: Figure 3 over one item size, with unpull, apull and statistics ---- */
static void stream(convey_t* c, size_t sz, long n, uint64_t salt, int cycle) {
  const int64_t P = g_pes, me = h_me;
  int64_t* sent = h_alloc(sizeof(int64_t) * (size_t)P);
  int64_t* recv = h_alloc(sizeof(int64_t) * (size_t)P);
  unsigned char* item = h_alloc(sz);
  unsigned char* got = h_alloc(sz);
  unsigned char* want = h_alloc(sz);
  const size_t natural = (sz & (~sz + 1)) > 64 ? 64 : (sz & (~sz + 1));
  long i = 0, iters = 0, toggle = 0;
  int64_t pulled = 0, unpulls = 0, last_from = -1, s, k;
  int rc = convey_begin(c, sz, 0);
  H_EXPECT_RC(rc, convey_OK);
  if (rc != convey_OK) goto out;
  H_CHECK(convey_item_size(c) == sz, "item_size %zu != %zu", convey_item_size(c), sz);
  for (;;) {
    rc = convey_advance(c, i == n);
    if (rc < 0) {
      h_fail(__FILE__, __LINE__, "advance: %d %s", rc, convey_error_string(c, rc));
      break;
    }
    for (; i < n; i++) {
      const int64_t d = h_dest(me, i, P, salt);
      int prc;
      if (rc == convey_DONE) break;
      h_fill(item, sz, h_seed(me, d, sent[d], salt));
      prc = convey_push(c, item, d);
      if (prc < 0) {
        h_fail(__FILE__, __LINE__, "push: %d", prc);
        i = n;
      }
      if (prc <= 0) break;
      sent[d]++;
    }
    for (;;) {
      int64_t from = -1;
      const unsigned char* p;
      if (toggle++ % 3 == 0) {
        p = convey_apull(c, &from);
        if (!p) break;
        H_CHECK(((uintptr_t)p % natural) == 0, "apull pointer %p not aligned to %zu",
                (const void*)p, natural);
      } else {
        const int prc = convey_pull(c, got, &from);
        H_CHECK(prc >= 0, "pull: %d", prc);
        if (prc <= 0) break;
        p = got;
      }
      if (from < 0 || from >= P) {
        h_fail(__FILE__, __LINE__, "pull reported source %lld", (long long)from);
        continue;
      }
      if (last_from >= 0) {
        H_CHECK(from == last_from, "re-pull after unpull came from %lld, not %lld", (long long)from,
                (long long)last_from);
        last_from = -1;
      }
      h_fill(want, sz, h_seed(from, me, recv[from], salt));
      H_CHECK(memcmp(p, want, sz) == 0, "item %lld from PE %lld (size %zu): wrong contents",
              (long long)recv[from], (long long)from, sz);
      if (toggle % 7 == 0) { /* put it back; it must come again next */
        H_EXPECT_RC(convey_unpull(c), convey_OK);
        unpulls++;
        last_from = from;
        continue;
      }
      recv[from]++;
      pulled++;
    }
    if (rc == convey_DONE) break;
    if (++iters > H_MAX_ITER) {
      h_fail(__FILE__, __LINE__, "no termination after %ld advances", iters);
      break;
    }
  }
  H_CHECK(i == n, "pushed %ld of %ld", i, n);
  for (s = 0; s < P; s++) {
    int64_t expect = 0;
    for (k = 0; k < n; k++) expect += h_dest(s, k, P, salt) == me;
    H_CHECK(recv[s] == expect, "received %lld items from PE %lld, expected %lld (size %zu)",
            (long long)recv[s], (long long)s, (long long)expect, sz);
  }
  H_EXPECT_RC(convey_pull(c, got, NULL), convey_FAIL);
  H_EXPECT_RC(convey_advance(c, true), convey_DONE);
  /* Statistics since this begin, and over the lifetime. */
  H_CHECK(convey_statistic(c, convey_BEGINS) == 1, "BEGINS %lld",
          (long long)convey_statistic(c, convey_BEGINS));
  H_CHECK(convey_statistic(c, convey_BEGINS + convey_CUMULATIVE) == cycle + 1,
          "cumulative BEGINS %lld, expected %d",
          (long long)convey_statistic(c, convey_BEGINS + convey_CUMULATIVE), cycle + 1);
  H_CHECK(convey_statistic(c, convey_PUSHES) == n, "PUSHES %lld != %ld",
          (long long)convey_statistic(c, convey_PUSHES), n);
  H_CHECK(convey_statistic(c, convey_PULLS) == pulled + unpulls, "PULLS %lld != %lld",
          (long long)convey_statistic(c, convey_PULLS), (long long)(pulled + unpulls));
  H_CHECK(convey_statistic(c, convey_UNPULLS) == unpulls, "UNPULLS %lld != %lld",
          (long long)convey_statistic(c, convey_UNPULLS), (long long)unpulls);
  H_CHECK(convey_statistic(c, convey_ADVANCES) >= 1, "ADVANCES");
  H_CHECK(convey_statistic(c, convey_PUSHES + convey_CUMULATIVE) >= n, "cumulative PUSHES");
  H_CHECK(convey_statistic(c, 2 * convey_CUMULATIVE) == -1, "out-of-range statistic");
  {
    const int64_t comms = global_sum(convey_statistic(c, convey_COMMS));
    const int64_t bytes = global_sum(convey_statistic(c, convey_BYTES));
    if (P > 1 && n > 0) {
      H_CHECK(comms > 0, "no COMMS counted (%lld)", (long long)comms);
      H_CHECK(bytes >= comms, "BYTES %lld < COMMS %lld", (long long)bytes, (long long)comms);
    }
    H_CHECK(convey_statistic(c, convey_SYNCS) >= 0, "SYNCS negative");
  }
  H_EXPECT_RC(convey_reset(c), convey_OK);
  H_CHECK(convey_item_size(c) == 0, "item_size after reset");
out:
  free(sent);
  free(recv);
  free(item);
  free(got);
  free(want);
}

static void scenario_histo(const spec_t* s) {
  static const size_t sizes[] = {8, 1, 3, 16, 24, 100, 256, 8};
  convey_t* c = make(s, 0);
  size_t j;
  H_CHECK(c != NULL, "constructor %s failed", s->kind);
  if (!c) return;
  for (j = 0; j < sizeof sizes / sizeof sizes[0]; j++) stream(c, sizes[j], s->n, 100 + j, (int)j);
  H_EXPECT_RC(convey_free(c), convey_OK);
}

/* ---- gather: Figure 4, two conveyors and unpull ---- */
struct packet {
  int64_t slot;
  int64_t value;
};

static int64_t array_value(int64_t pe, int64_t j) {
  return (int64_t)(h_mix((uint64_t)pe * 7919u + (uint64_t)j) >> 2);
}

static void scenario_gather(const spec_t* s) {
  const int64_t P = g_pes, m = 50;
  const long n = s->n;
  convey_t* q = make(s, 0);
  convey_t* r = make(s, 0);
  int64_t* index = h_alloc(sizeof(int64_t) * (size_t)(n + 1));
  int64_t* gather = h_alloc(sizeof(int64_t) * (size_t)(n + 1));
  int64_t* array = h_alloc(sizeof(int64_t) * (size_t)m);
  int64_t i = 0, from, j, round;
  long iters = 0;
  struct packet packet;
  H_CHECK(q && r, "constructor %s failed", s->kind);
  if (!q || !r) goto out;
  for (j = 0; j < m; j++) array[j] = array_value(h_me, j);
  for (round = 0; round < 2; round++) {
    for (j = 0; j < n; j++) {
      index[j] = (int64_t)(h_mix((uint64_t)(h_me * 31 + round) * 100003u + (uint64_t)j) %
                           (uint64_t)(m * P));
      gather[j] = -1;
    }
    i = 0;
    H_EXPECT_RC(convey_begin(q, sizeof(struct packet), 0), convey_OK);
    H_EXPECT_RC(convey_begin(r, sizeof(struct packet), 0), convey_OK);
    /* Maley & DeVinney 2019, Figure 4, with error checks and a bound */
    while (convey_advance(r, !convey_advance(q, i == n))) {
      for (; i < n; i++) {
        packet.slot = i;
        packet.value = index[i] / P;
        if (!convey_push(q, &packet, index[i] % P)) break;
      }
      while (convey_pull(q, &packet, &from) == convey_OK) {
        H_CHECK(packet.value >= 0 && packet.value < m, "query index %lld", (long long)packet.value);
        packet.value = array[packet.value < 0 || packet.value >= m ? 0 : packet.value];
        if (!convey_push(r, &packet, from)) {
          H_EXPECT_RC(convey_unpull(q), convey_OK);
          break;
        }
      }
      while (convey_pull(r, &packet, NULL) == convey_OK) {
        H_CHECK(packet.slot >= 0 && packet.slot < n && gather[packet.slot] == -1,
                "reply slot %lld repeated or out of range", (long long)packet.slot);
        if (packet.slot >= 0 && packet.slot < n) gather[packet.slot] = packet.value;
      }
      if (++iters > H_MAX_ITER) {
        h_fail(__FILE__, __LINE__, "gather did not terminate");
        break;
      }
    }
    for (j = 0; j < n; j++)
      H_CHECK(gather[j] == array_value(index[j] % P, index[j] / P), "gather[%lld] wrong",
              (long long)j);
    H_EXPECT_RC(convey_reset(q), convey_OK);
    H_EXPECT_RC(convey_reset(r), convey_OK);
  }
out:
  H_EXPECT_RC(convey_free(q), convey_OK);
  H_EXPECT_RC(convey_free(r), convey_OK);
  free(index);
  free(gather);
  free(array);
}

/* ---- misuse: every illegal call in every state, then a correct round ---- */
static void check_strings(convey_t* c) {
  int code;
  for (code = convey_error_INTERNAL; code <= 1; code++) {
    const char* t = convey_error_string(c, code);
    H_CHECK(t && *t && !strstr(t, "unknown"), "no message for code %d", code);
  }
  H_CHECK(strstr(convey_error_string(NULL, -99), "unknown") != NULL, "code -99");
}

static void scenario_misuse(const spec_t* s) {
  convey_t* c = make(s, convey_opt_QUIET);
  const int elastic = (convey_features(c) & convey_ELASTIC) != 0;
  const int rigid_code = elastic ? convey_error_STATE : convey_error_RIGID; /* epush */
  unsigned char item[16] = {0};
  convey_item_t ei;
  long iters = 0;
  int rc;
  H_CHECK(c != NULL, "constructor %s failed", s->kind);
  if (!c) return;
  check_strings(c);
  /* NULL conveyor */
  H_EXPECT_RC(convey_begin(NULL, 8, 0), convey_error_NULL);
  H_EXPECT_RC(convey_push(NULL, item, 0), convey_error_NULL);
  H_EXPECT_RC(convey_advance(NULL, true), convey_error_NULL);
  H_EXPECT_RC(convey_free(NULL), convey_OK);
  H_CHECK(convey_apull(NULL, NULL) == NULL, "apull(NULL)");
  H_CHECK(convey_item_size(NULL) == 0 && convey_features(NULL) == 0, "NULL queries");
  /* DORMANT */
  H_EXPECT_RC(convey_push(c, item, 0), convey_error_STATE);
  H_EXPECT_RC(convey_epush(c, 8, item, 0), rigid_code);
  H_EXPECT_RC(convey_pull(c, item, NULL), convey_error_STATE);
  H_CHECK(convey_apull(c, NULL) == NULL, "apull in DORMANT");
  /* bale: epull on an elastic conveyor in DORMANT has nothing to pull (CAPI-2). */
  H_EXPECT_RC(convey_epull(c, &ei), elastic ? convey_FAIL : convey_error_RIGID);
  H_EXPECT_RC(convey_unpull(c), convey_error_STATE);
  H_EXPECT_RC(convey_advance(c, false), convey_error_STATE);
  H_EXPECT_RC(convey_advance(c, true), convey_error_STATE);
  H_EXPECT_RC(convey_reset(c), convey_OK);
  H_EXPECT_RC(convey_begin(c, 0, 0), convey_error_ZERO);
  H_CHECK(convey_item_size(c) == 0, "item_size in DORMANT");
  rc = convey_set_codec(c, NULL, NULL);
  H_CHECK(rc == ((convey_features(c) & convey_THRIFTY) ? convey_OK : convey_FAIL), "set_codec %d",
          rc);
  /* WORKING */
  H_EXPECT_RC(convey_begin(c, 8, 3), convey_OK);
  H_EXPECT_RC(convey_begin(c, 8, 0), convey_error_STATE);
  H_EXPECT_RC(convey_reset(c), convey_error_STATE);
  H_EXPECT_RC(convey_free(c), convey_error_STATE);
  H_EXPECT_RC(convey_set_codec(c, NULL, NULL), convey_error_STATE);
  H_EXPECT_RC(convey_push(c, item, -1), convey_error_RANGE);
  H_EXPECT_RC(convey_push(c, item, g_pes), convey_error_RANGE);
  H_EXPECT_RC(convey_push(c, NULL, 0), convey_error_NULL);
  H_EXPECT_RC(convey_pull(c, NULL, NULL), convey_error_NULL);
  if (!elastic) {
    H_EXPECT_RC(convey_epush(c, 8, item, 0), convey_error_RIGID);
    H_EXPECT_RC(convey_epull(c, &ei), convey_error_RIGID);
  } else {
    H_EXPECT_RC(convey_epush(c, 8, item, g_pes), convey_error_RANGE);
    H_EXPECT_RC(convey_epush(c, s->mon + 1, item, 0), convey_error_OFLO);
  }
  H_EXPECT_RC(convey_unpull(c), convey_FAIL);
  H_CHECK(convey_item_size(c) == 8, "item_size in WORKING");
  H_CHECK(convey_statistic(c, convey_PUSHES) == 0, "failed pushes counted");
  /* advance(true): ENDGAME, CLEANUP or COMPLETE */
  for (;;) {
    rc = convey_advance(c, true);
    H_CHECK(rc >= 0, "advance %d", rc);
    if (rc <= 0) break;
    H_EXPECT_RC(convey_push(c, item, 0), convey_error_STATE);
    H_EXPECT_RC(convey_begin(c, 8, 0), convey_error_STATE);
    H_EXPECT_RC(convey_reset(c), convey_error_STATE);
    H_EXPECT_RC(convey_free(c), convey_error_STATE);
    H_EXPECT_RC(convey_pull(c, item, NULL), convey_FAIL);
    /* bale: done stays true after advance(true); a false is taken as true (CAPI-2). */
    rc = convey_advance(c, false);
    H_CHECK(rc >= 0, "advance(false) after advance(true): %d", rc);
    if (rc == convey_DONE) break;
    if (++iters > H_MAX_ITER) {
      h_fail(__FILE__, __LINE__, "empty round did not terminate");
      break;
    }
  }
  /* COMPLETE */
  H_EXPECT_RC(convey_push(c, item, 0), convey_error_STATE);
  H_EXPECT_RC(convey_begin(c, 8, 0), convey_error_STATE);
  H_EXPECT_RC(convey_pull(c, item, NULL), convey_FAIL);
  H_CHECK(convey_apull(c, NULL) == NULL, "apull in COMPLETE");
  H_EXPECT_RC(convey_unpull(c), convey_FAIL);
  H_EXPECT_RC(convey_advance(c, false), convey_DONE);
  H_EXPECT_RC(convey_advance(c, true), convey_DONE);
  H_EXPECT_RC(convey_set_codec(c, NULL, NULL), convey_error_STATE);
  H_EXPECT_RC(convey_reset(c), convey_OK);
  H_EXPECT_RC(convey_reset(c), convey_OK);
  /* Then a full correct round on the same conveyor. */
  stream(c, 8, s->n, 7, 1);
  H_EXPECT_RC(convey_free(c), convey_OK);
}

/* ---- ring: a steady conveyor delivers without the endgame ---- */
static void scenario_ring(const spec_t* s) {
  convey_t* c = make(s, convey_opt_PROGRESS);
  const int64_t P = g_pes, right = (h_me + 1) % P, left = (h_me + P - 1) % P;
  const int64_t rounds = 25;
  int64_t sent = 0, got = 0, token[2], from;
  long iters = 0;
  int rc;
  H_CHECK(c != NULL, "constructor %s failed", s->kind);
  if (!c) return;
  H_CHECK(convey_features(c) & convey_STEADY, "PROGRESS did not give STEADY");
  H_EXPECT_RC(convey_begin(c, sizeof token, 0), convey_OK);
  /* PE 0 starts; every PE forwards its k-th token only after receiving the k-th. */
  while ((rc = convey_advance(c, sent == rounds)) != convey_DONE) {
    if (rc < 0) {
      h_fail(__FILE__, __LINE__, "advance %d", rc);
      break;
    }
    if (sent < rounds && (h_me == 0 ? sent <= got : sent < got)) {
      token[0] = h_me;
      token[1] = sent;
      if (convey_push(c, token, right) == convey_OK) sent++;
    }
    while (convey_pull(c, token, &from) == convey_OK) {
      H_CHECK(from == left && token[0] == left && token[1] == got, "ring token %lld from %lld",
              (long long)token[1], (long long)from);
      got++;
    }
    if (++iters > H_MAX_ITER) {
      h_fail(__FILE__, __LINE__, "steady ring stalled: sent %lld got %lld", (long long)sent,
             (long long)got);
      break;
    }
  }
  H_CHECK(sent == rounds && got == rounds, "ring sent %lld got %lld", (long long)sent,
          (long long)got);
  H_EXPECT_RC(convey_reset(c), convey_OK);
  H_EXPECT_RC(convey_free(c), convey_OK);
}

/* ---- elastic: sizes 0..monster bound, FIFO with monsters, rigid pull on a mixed stream ---- */
static size_t elastic_size(int64_t src, int64_t dst, int64_t k, size_t buf, size_t mon) {
  const uint64_t r = h_mix((uint64_t)(src * 131 + dst) * 7777u + (uint64_t)k);
  size_t z;
  switch (r % 10) {
    case 0:
      z = 0;
      break;
    case 1:
    case 2:
      z = 8;
      break; /* the default size */
    case 3:
      z = buf > 40 ? buf - 40 + (r >> 8) % 48 : 1;
      break; /* around a buffer */
    case 4:
      z = buf + 1 + (size_t)((r >> 8) % (mon > buf ? mon - buf : 1));
      break; /* monster */
    default:
      z = 1 + (r >> 8) % 64;
      break;
  }
  return z > mon ? mon : z;
}

static void scenario_elastic(const spec_t* s) {
  convey_t* c = make(s, 0);
  const int64_t P = g_pes, me = h_me;
  const long n = s->n;
  const size_t buf = s->cap ? s->cap : 1024, mon = s->mon;
  int64_t* sent = h_alloc(sizeof(int64_t) * (size_t)P);
  int64_t* recv = h_alloc(sizeof(int64_t) * (size_t)P);
  unsigned char* item = h_alloc(mon + 1);
  unsigned char* want = h_alloc(mon + 1);
  unsigned char small[8];
  int64_t i = 0, k, src, rigid = 0;
  long iters = 0, cycle;
  int rc;
  H_CHECK(c != NULL, "constructor %s failed", s->kind);
  if (!c) goto out;
  H_CHECK(convey_features(c) & convey_ELASTIC, "not ELASTIC");
  for (cycle = 0; cycle < 2; cycle++) {
    memset(sent, 0, sizeof(int64_t) * (size_t)P);
    memset(recv, 0, sizeof(int64_t) * (size_t)P);
    i = 0;
    H_EXPECT_RC(convey_begin(c, 8, 0), convey_OK);
    while ((rc = convey_advance(c, i == n)) != convey_DONE) {
      if (rc < 0) {
        h_fail(__FILE__, __LINE__, "advance %d", rc);
        break;
      }
      for (; i < n; i++) {
        const int64_t d = h_dest(me, i, P, 9 + (uint64_t)cycle);
        const size_t z = elastic_size(me, d, sent[d], buf, mon);
        int prc;
        h_fill(item, z, h_seed(me, d, sent[d], 50));
        prc = (z == 8 && i % 2) ? convey_push(c, item, d) : convey_epush(c, z, item, d);
        H_CHECK(prc >= 0, "epush size %zu: %d", z, prc);
        if (prc <= 0) break;
        sent[d]++;
      }
      for (;;) {
        int64_t from = -1;
        size_t z;
        const unsigned char* p;
        convey_item_t e;
        /* A rigid pull succeeds only on an item of the default size; another size fails
         * with MISFIT (bale's code) and stays to be pulled by epull (CAPI-5). */
        const int prc = convey_pull(c, small, &from);
        H_CHECK(prc == convey_OK || prc == convey_FAIL || prc == convey_error_MISFIT, "pull %d",
                prc);
        if (prc == convey_OK) {
          z = 8;
          p = small;
          rigid++;
        } else {
          const int erc = convey_epull(c, &e);
          H_CHECK(erc >= 0, "epull %d", erc);
          /* After MISFIT epull takes that item, or says "nothing yet" while it is a large
           * item whose bytes are still on their way (pulls never block, CAPI-5). */
          H_CHECK(prc != convey_error_MISFIT || (erc == convey_OK && e.bytes != 8) ||
                      (erc == convey_FAIL && mon > (size_t)convoy_convey_buffer_bytes(c) / 2),
                  "the item a rigid pull refused was not left for epull");
          if (erc <= 0) break;
          from = e.from;
          z = e.bytes;
          p = e.data;
          H_CHECK(z == 0 || ((uintptr_t)p % 8) == 0, "epull pointer not aligned");
        }
        if (from < 0 || from >= P) {
          h_fail(__FILE__, __LINE__, "source %lld", (long long)from);
          continue;
        }
        {
          const size_t expect = elastic_size(from, me, recv[from], buf, mon);
          H_CHECK(z == expect, "item %lld from %lld: size %zu, expected %zu", (long long)recv[from],
                  (long long)from, z, expect);
          if (z == expect) {
            h_fill(want, z, h_seed(from, me, recv[from], 50));
            H_CHECK(z == 0 || memcmp(p, want, z) == 0, "item %lld from %lld (size %zu) corrupt",
                    (long long)recv[from], (long long)from, z);
          }
        }
        recv[from]++;
      }
      if (++iters > H_MAX_ITER) {
        h_fail(__FILE__, __LINE__, "elastic round did not terminate");
        break;
      }
    }
    for (src = 0; src < P; src++) {
      int64_t expect = 0;
      for (k = 0; k < n; k++) expect += h_dest(src, k, P, 9 + (uint64_t)cycle) == me;
      H_CHECK(recv[src] == expect, "elastic: %lld items from %lld, expected %lld",
              (long long)recv[src], (long long)src, (long long)expect);
    }
    H_EXPECT_RC(convey_reset(c), convey_OK);
  }
  H_CHECK(global_sum(rigid) > 0 || n == 0, "no rigid pull ever succeeded");
  H_EXPECT_RC(convey_free(c), convey_OK);
out:
  free(sent);
  free(recv);
  free(item);
  free(want);
}

/* ---- bigather: a biconveyor returns replies in push order ---- */
struct bictx {
  int64_t me;
  size_t reply_words;
};

static void answer(const void* query, void* reply, void* context) {
  const struct bictx* x = context;
  int64_t idx, v;
  size_t w;
  memcpy(&idx, query, sizeof idx);
  for (w = 0; w < x->reply_words; w++) {
    v = array_value(x->me, idx) + (int64_t)w;
    memcpy((char*)reply + w * sizeof v, &v, sizeof v);
  }
}

/* biconvey.h: replies outstanding per PE at most. */
enum { k_bi_window = 8192 };

static void scenario_bigather(const spec_t* s) {
  biconvey_t* b = make_bi(s);
  const int64_t P = g_pes, m = 40;
  const long n = s->n;
  int64_t* query = h_alloc(sizeof(int64_t) * (size_t)(n + 1));
  int64_t reply[3];
  struct bictx ctx;
  long iters, round;
  int64_t i, j;
  int rc, lazy, saw_full;
  H_CHECK(b != NULL, "biconveyor %s failed", s->kind);
  if (!b) goto out;
  ctx.me = h_me;
  /* Misuse in DORMANT and WORKING (QUIET is not set: each code prints once). */
  H_EXPECT_RC(biconvey_push(b, reply, 0), convey_error_STATE);
  H_EXPECT_RC(biconvey_pull(b, reply), convey_error_STATE);
  H_EXPECT_RC(biconvey_advance(b, true), convey_error_STATE);
  H_EXPECT_RC(biconvey_reset(b), convey_OK);
  H_EXPECT_RC(biconvey_begin(b, 8, 8, NULL, NULL), convey_error_NOFUNC); /* bale */
  H_EXPECT_RC(biconvey_begin(b, 0, 8, answer, &ctx), convey_error_ZERO);
  H_EXPECT_RC(biconvey_push(NULL, reply, 0), convey_error_NULL);
  H_EXPECT_RC(biconvey_free(NULL), convey_OK);
  for (round = 0; round < 2; round++) {
    ctx.reply_words = round ? 3 : 1;
    for (j = 0; j < n; j++)
      query[j] =
          (int64_t)(h_mix((uint64_t)(h_me * 17 + round) * 999u + (uint64_t)j) % (uint64_t)(m * P));
    H_EXPECT_RC(biconvey_begin(b, sizeof(int64_t), ctx.reply_words * sizeof(int64_t), answer, &ctx),
                convey_OK);
    i = j = 0;
    iters = 0;
    lazy = round == 1 && n > k_bi_window;
    saw_full = 0;
    if (round == 0) {
      H_EXPECT_RC(biconvey_begin(b, 8, 8, answer, &ctx), convey_error_STATE);
      H_EXPECT_RC(biconvey_push(b, reply, -1), convey_error_RANGE);
      H_EXPECT_RC(biconvey_reset(b), convey_error_STATE);
      H_EXPECT_RC(biconvey_free(b), convey_error_STATE);
      H_EXPECT_RC(biconvey_pull(b, reply), convey_FAIL);
    }
    while ((rc = biconvey_advance(b, i == n)) != convey_DONE) {
      if (rc < 0) {
        h_fail(__FILE__, __LINE__, "biconvey_advance %d", rc);
        break;
      }
      for (; i < n; i++) {
        const int64_t local = query[i] / P;
        if (biconvey_push(b, &local, query[i] % P) != convey_OK) break;
      }
      /* The reorder window: never more than 8192 replies outstanding; a push into a full
         window fails. The second round of a long run pulls only when it must. */
      H_CHECK(i - j <= k_bi_window, "%lld replies outstanding", (long long)(i - j));
      if (i - j == k_bi_window && i < n) {
        const int64_t local = query[i] / P;
        saw_full = 1;
        H_EXPECT_RC(biconvey_push(b, &local, query[i] % P), convey_FAIL);
      }
      if (lazy && i < n && i - j < k_bi_window) continue;
      while (biconvey_pull(b, reply) == convey_OK) {
        H_CHECK(j < n, "more replies than queries");
        if (j < n) {
          H_CHECK(reply[0] == array_value(query[j] % P, query[j] / P), "reply %lld out of order",
                  (long long)j);
          if (round) H_CHECK(reply[2] == reply[0] + 2, "reply %lld word 2", (long long)j);
        }
        j++;
      }
      if (++iters > H_MAX_ITER) {
        h_fail(__FILE__, __LINE__, "bigather did not terminate");
        break;
      }
    }
    H_CHECK(i == n && j == n, "bigather pushed %lld pulled %lld of %ld", (long long)i, (long long)j,
            n);
    H_CHECK(!lazy || saw_full, "the reorder window never filled");
    H_EXPECT_RC(biconvey_pull(b, reply), convey_FAIL);
    H_EXPECT_RC(biconvey_reset(b), convey_OK);
  }
  H_EXPECT_RC(biconvey_free(b), convey_OK);
out:
  free(query);
}

/* ---- ctors: invalid arguments give NULL; max_bytes is a hard limit; features ---- */
static void scenario_ctors(const spec_t* s) {
  const uint64_t q = convey_opt_QUIET;
  const int dummy = 0;
  size_t limit;
  convey_t* c;
  (void)s;
  if (g_pes % 3 != 0)
    H_CHECK(convey_new_tensor(1024, 2, 3, 2, NULL, q) == NULL, "n_local 3 accepted on %lld PEs",
            (long long)g_pes);
  H_CHECK(convey_new_tensor(1024, 3, (size_t)g_pes + 1, 2, NULL, q) == NULL, "n_local > PEs");
  H_CHECK(convey_new_tensor(1024, 2, 0, 2, NULL, q) == NULL, "n_local 0");
  H_CHECK(convey_new_tensor(1024, 4, 1, 2, NULL, q) == NULL, "order 4");
  H_CHECK(convey_new_tensor(1024, 0, 1, 2, NULL, q) == NULL, "order 0");
  H_CHECK(convey_new_tensor(1024, 1, 1, 3, NULL, q) == NULL, "n_buffers 3");
  H_CHECK(convey_new_tensor(1024, 1, 1, 0, NULL, q) == NULL, "n_buffers 0");
  H_CHECK(convey_new_tensor(0, 1, 1, 2, NULL, q) == NULL, "capacity 0");
  H_CHECK(convey_new_twohop(1024, (size_t)g_pes + 1, NULL, q) == NULL, "row_procs > PEs");
  H_CHECK(convey_new_simple(0, NULL, NULL, q) == NULL, "simple capacity 0");
  H_CHECK(convey_new_simple(1024, NULL, (const convey_mpp_a2a_t*)(const void*)&dummy, q) == NULL,
          "a2a strategy accepted");
  H_CHECK(convey_new_etensor(8, 100, 1, 1, 2, NULL, q) == NULL, "etensor with 8-byte buffers");
  H_CHECK(convey_new(100, 0, NULL, q) == NULL, "convey_new fits in 100 bytes?");
  H_CHECK(convey_new_elastic(1000, 100, 0, NULL, q) == NULL, "convey_new_elastic in 100 bytes?");
  for (limit = 20000; limit <= 2000000; limit *= 10) {
    c = convey_new(limit, 0, NULL, q);
    H_CHECK(c != NULL, "convey_new(%zu) failed", limit);
    H_CHECK(convoy_convey_max_memory_bytes(c) <= limit, "convey_new(%zu) may use %zu bytes", limit,
            convoy_convey_max_memory_bytes(c));
    if (c) stream(c, 24, 300, 3, 0);
    H_EXPECT_RC(convey_free(c), convey_OK);
    c = convey_new_elastic(3000, limit * 2, 0, NULL, q);
    H_CHECK(c != NULL, "convey_new_elastic(%zu) failed", limit * 2);
    H_CHECK(convoy_convey_max_memory_bytes(c) <= limit * 2, "convey_new_elastic(%zu) may use %zu",
            limit * 2, convoy_convey_max_memory_bytes(c));
    H_CHECK(convey_features(c) & convey_ELASTIC, "convey_new_elastic is not ELASTIC");
    H_EXPECT_RC(convey_free(c), convey_OK);
  }
  c = convey_new_tensor(1024, 1, 1, 2, NULL, 0);
  H_CHECK(c && !(convey_features(c) & (convey_ELASTIC | convey_STEADY | convey_THRIFTY)),
          "plain tensor features %llx", (unsigned long long)convey_features(c));
  H_CHECK(!strcmp(convoy_convey_kind(c), "tensor") && convoy_convey_order(c) == 1, "kind/order");
  H_EXPECT_RC(convey_free(c), convey_OK);
  c = convey_new_simple(1024, NULL, NULL, convey_opt_PROGRESS);
  H_CHECK(c && convey_features(c) == convey_STEADY, "steady simple features");
  H_CHECK(!strcmp(convoy_convey_kind(c), "simple"), "simple kind");
  H_EXPECT_RC(convey_free(c), convey_OK);
  H_CHECK(!strcmp(convey_version, CONVOY_TEST_VERSION), "version %s, not the project's %s",
          convey_version, CONVOY_TEST_VERSION);
  /* The generic constructor reads CONVEY_NLOCAL, CONVEY_BUFFER_SIZE and CONVOY_MESH. Up to
   * convoy::direct_first_ranks (8) PEs it takes order 1 whatever the group (API-8). */
  c = convey_new(SIZE_MAX, 0, NULL, 0);
  H_CHECK(c != NULL, "convey_new failed");
  if (c && getenv("CONVOY_MESH")) {
    H_CHECK(!strcmp(convoy_convey_kind(c), "mesh"), "CONVOY_MESH ignored: kind %s",
            convoy_convey_kind(c));
  } else if (c && g_pes <= 8) {
    H_CHECK(!strcmp(convoy_convey_kind(c), "tensor") && convoy_convey_order(c) == 1,
            "%d PEs: kind %s order %d, expected direct sends (tensor order 1)", (int)g_pes,
            convoy_convey_kind(c), convoy_convey_order(c));
  } else if (c && getenv("CONVEY_NLOCAL")) {
    const size_t nl = (size_t)strtoull(getenv("CONVEY_NLOCAL"), NULL, 10);
    if (g_pes % (int64_t)nl == 0 && (int64_t)nl < g_pes && nl > 1)
      H_CHECK(convoy_convey_n_local(c) == nl && convoy_convey_order(c) >= 2,
              "CONVEY_NLOCAL=%zu ignored: n_local %zu order %d", nl, convoy_convey_n_local(c),
              convoy_convey_order(c));
  } else if (c && getenv("CONVOY_EMULATE_NODES")) { /* n_local from topology discovery */
    const char* v = getenv("CONVOY_EMULATE_NODES");
    size_t g = 0, a, b, t;
    while (*v) {
      a = (size_t)strtoull(v, (char**)&v, 10);
      for (b = g; b; t = a % b, a = b, b = t) {
      }
      g = a;
      if (*v == ',') v++;
    }
    if (g > 1 && (int64_t)g < g_pes)
      H_CHECK(convoy_convey_n_local(c) == g, "n_local %zu, expected the node size gcd %zu",
              convoy_convey_n_local(c), g);
  }
  if (c && getenv("CONVEY_BUFFER_SIZE")) {
    const char* v = getenv("CONVEY_BUFFER_SIZE");
    size_t want = (size_t)strtoull(v, NULL, 10);
    if (strchr(v, 'k')) want *= 1000;
    H_CHECK(convoy_convey_buffer_bytes(c) == want, "CONVEY_BUFFER_SIZE=%s ignored: %zu", v,
            convoy_convey_buffer_bytes(c));
  }
  H_EXPECT_RC(convey_free(c), convey_OK);
}

int main(int argc, char** argv) {
  spec_t s;
  int a, np = 1, me = 0;
  char scen[256];
  char* tok;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  h_me = me;
  g_pes = np;
  if (argc < 3) {
    if (me == 0) fprintf(stderr, "usage: %s SCENARIOS KIND [key=value ...]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  memset(&s, 0, sizeof s);
  s.kind = argv[2];
  s.cap = 1024;
  s.order = 1;
  s.nl = 1;
  s.nb = 2;
  s.mon = 4000;
  s.max = SIZE_MAX;
  s.n = 1500;
  for (a = 3; a < argc; a++) {
    const char* v = strchr(argv[a], '=');
    if (!v) continue;
    v++;
    if (!strncmp(argv[a], "cap=", 4)) s.cap = (size_t)strtoull(v, NULL, 10);
    if (!strncmp(argv[a], "order=", 6)) s.order = atoi(v);
    if (!strncmp(argv[a], "nl=", 3)) s.nl = (size_t)strtoull(v, NULL, 10);
    if (!strncmp(argv[a], "nb=", 3)) s.nb = (size_t)strtoull(v, NULL, 10);
    if (!strncmp(argv[a], "mon=", 4)) s.mon = (size_t)strtoull(v, NULL, 10);
    if (!strncmp(argv[a], "max=", 4)) s.max = (size_t)strtoull(v, NULL, 10);
    if (!strncmp(argv[a], "n=", 2)) s.n = atol(v);
    if (!strncmp(argv[a], "opt=", 4)) s.opt = parse_opts(v);
  }
  strncpy(scen, argv[1], sizeof scen - 1);
  scen[sizeof scen - 1] = '\0';
  for (tok = strtok(scen, ","); tok; tok = strtok(NULL, ",")) {
    if (!strcmp(tok, "histo"))
      scenario_histo(&s);
    else if (!strcmp(tok, "gather"))
      scenario_gather(&s);
    else if (!strcmp(tok, "misuse"))
      scenario_misuse(&s);
    else if (!strcmp(tok, "ring"))
      scenario_ring(&s);
    else if (!strcmp(tok, "elastic"))
      scenario_elastic(&s);
    else if (!strcmp(tok, "bigather"))
      scenario_bigather(&s);
    else if (!strcmp(tok, "ctors"))
      scenario_ctors(&s);
    else
      h_fail(__FILE__, __LINE__, "unknown scenario %s", tok);
  }
  return convoy_test_verdict(h_failures, "%s %s on %d PEs", argv[1], argv[2], np);
}
