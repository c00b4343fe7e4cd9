/* Checked calls of the MPI model test (model_calls.h). */
#include "model_calls.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-variable" /* harness.h's counters live in main */
#endif
#include "harness.h"

uint64_t mt_next(mt_rng* r) {
  r->state += UINT64_C(0x9E3779B97F4A7C15);
  return h_mix(r->state);
}
uint64_t mt_below(mt_rng* r, uint64_t n) { return n ? mt_next(r) % n : 0; }

static void trace(mt_ctx* x, const char* fmt, ...) {
  va_list ap;
  char* line = x->trace[x->trace_n++ % 16];
  int n = snprintf(line, sizeof x->trace[0], "#%ld ", x->calls++);
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof x->trace[0] - (size_t)n, fmt, ap);
  va_end(ap);
}

void mt_report(mt_ctx* x, const char* what) {
  int i, first;
  if (!what) return;
  if (++x->failures > 3) return;
  fprintf(stderr, "[PE %lld] seed %llu: %s\n  last calls on this PE:\n", (long long)x->m.me,
          (unsigned long long)x->seed, what);
  first = x->trace_n > 16 ? x->trace_n - 16 : 0;
  for (i = first; i < x->trace_n; i++) fprintf(stderr, "    %s\n", x->trace[i % 16]);
}

static void queries(mt_ctx* x) { mt_report(x, m_queries(&x->m, x->c)); }

static void note_push(mt_ctx* x, int rc) {
  const m_model* m = &x->m;
  if (rc >= 0 && m->elastic && m->can_unpull && m->last_src == m->me) x->self_pull_pushed = 1;
}

int mt_epush(mt_ctx* x, int64_t pe, size_t bytes, int null_item) {
  m_model* m = &x->m;
  const int in_range = pe >= 0 && pe < m->n_pes;
  unsigned char* item;
  int rc;
  /* A size the receiver does not expect would be accepted: only misuse sizes differ. */
  if (m->elastic && in_range && bytes <= m->bound) bytes = m_next_size(m, pe);
  item = h_alloc(bytes <= m->bound ? bytes : 1); /* above the bound it must not be read */
  if (in_range && bytes <= m->bound) h_fill(item, bytes, m_item_seed(m, m->me, pe, m->sent[pe]));
  rc = convey_epush(x->c, bytes, null_item ? NULL : item, pe);
  free(item);
  trace(x, "epush(%zu bytes, pe %lld%s) -> %d", bytes, (long long)pe, null_item ? ", NULL" : "",
        rc);
  note_push(x, rc);
  mt_report(x, m_epush(m, pe, bytes, null_item, rc));
  queries(x);
  return rc;
}

int mt_push(mt_ctx* x, int64_t pe, int null_item) {
  m_model* m = &x->m;
  const int in_range = pe >= 0 && pe < m->n_pes;
  const size_t z = m->item_bytes ? m->item_bytes : 1;
  unsigned char* item;
  int rc;
  if (m->elastic && in_range && m->st == M_WORKING && m_next_size(m, pe) != m->item_bytes)
    return mt_epush(x, pe, m_next_size(m, pe), null_item);
  item = h_alloc(z);
  if (in_range) h_fill(item, z, m_item_seed(m, m->me, pe, m->sent[pe]));
  rc = convey_push(x->c, null_item ? NULL : item, pe);
  free(item);
  trace(x, "push(pe %lld%s) -> %d", (long long)pe, null_item ? ", NULL" : "", rc);
  note_push(x, rc);
  mt_report(x, m_push(m, pe, null_item, rc));
  queries(x);
  return rc;
}

void mt_release(mt_ctx* x) {
  unsigned char* want;
  if (!x->held) return;
  if (x->held_cycle == x->m.cycle) {
    want = h_alloc(x->held_bytes);
    h_fill(want, x->held_bytes, m_item_seed(&x->m, x->held_src, x->m.me, x->held_k));
    if (x->held_bytes && memcmp(want, x->held, x->held_bytes) != 0)
      mt_report(x,
                "the item of the last apull/epull changed before the next pull or unpull "
                "(CAPI-64)");
    free(want);
  }
  x->held = NULL;
}

int mt_pull(mt_ctx* x, int kind, int null_out) {
  static const char* names[] = {"pull", "apull", "epull"};
  m_model* m = &x->m;
  const size_t z = m->item_bytes ? m->item_bytes : 1;
  unsigned char* buf = h_alloc(z);
  const void* data = buf;
  size_t bytes = m->item_bytes;
  int64_t from = -1;
  /* Without `from` the source is found from the bytes: only for items of 4 bytes or more. */
  const int want_from = m->item_bytes < 4 || mt_below(&x->rng, 4) != 0;
  const char* e;
  int rc;
  if (kind == M_APULL) null_out = 0; /* apull has no output argument */
  mt_release(x);
  if (kind == M_PULL) {
    rc = convey_pull(x->c, null_out ? NULL : buf, want_from ? &from : NULL);
  } else if (kind == M_APULL) {
    data = convey_apull(x->c, want_from ? &from : NULL);
    rc = data ? convey_OK : convey_FAIL;
  } else {
    convey_item_t it = {0, NULL, -1};
    rc = convey_epull(x->c, null_out ? NULL : &it);
    data = it.data;
    bytes = it.bytes;
    from = it.from;
  }
  if (rc == convey_OK && !want_from && kind != M_EPULL) {
    /* Find the source whose next item these bytes are. */
    int64_t q;
    unsigned char* want = h_alloc(z);
    for (q = 0; q < m->n_pes && from < 0; q++) {
      if (m->pending && q != m->last_src) continue;
      h_fill(want, z, m_item_seed(m, q, m->me, m->recv[q]));
      if (memcmp(want, data, z) == 0) from = q;
    }
    free(want);
  }
  trace(x, "%s(%s%s) -> %d from %lld, %zu bytes", names[kind], null_out ? "NULL" : "item",
        want_from ? ", &from" : "", rc, (long long)from, rc == convey_OK ? bytes : 0);
  e = m_pull(m, kind, null_out, rc, data, bytes, from);
  mt_report(x, e);
  if (rc == convey_OK) x->self_pull_pushed = 0;
  if (rc == convey_OK && !e) {
    x->items++;
    if (kind != M_PULL) {
      x->held = data;
      x->held_bytes = bytes;
      x->held_src = from;
      x->held_k = m->recv[from] - 1;
      x->held_cycle = m->cycle;
    }
  }
  free(buf);
  queries(x);
  return rc;
}

int mt_unpull(mt_ctx* x) {
  int rc;
  if (x->self_pull_pushed && !x->engine_unpull) return convey_FAIL; /* not called */
  mt_release(x);
  rc = convey_unpull(x->c);
  trace(x, "unpull() -> %d", rc);
  mt_report(x, m_unpull(&x->m, rc));
  queries(x);
  return rc;
}

/* The PE's declaration (cycle, items sent to each PE), readable by all one-sidedly. */
static void publish(mt_ctx* x) {
  const int64_t n = x->m.n_pes;
  int64_t* v = h_alloc(sizeof(int64_t) * (size_t)(n + 1));
  v[0] = x->m.cycle + 1;
  memcpy(v + 1, x->m.sent, sizeof(int64_t) * (size_t)n);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, (int)x->m.me, 0, x->win);
  MPI_Put(v, (int)n + 1, MPI_INT64_T, (int)x->m.me, 0, (int)n + 1, MPI_INT64_T, x->win);
  MPI_Win_unlock((int)x->m.me, x->win);
  free(v);
}

/* Has every PE declared done in this cycle; how many items are still owed to this PE. */
static void read_peers(mt_ctx* x, int* all_done, int64_t* owed) {
  const int64_t n = x->m.n_pes;
  int64_t q;
  *all_done = 1;
  *owed = 0;
  for (q = 0; q < n; q++) {
    MPI_Win_lock(MPI_LOCK_SHARED, (int)q, 0, x->win);
    MPI_Get(x->peer, (int)n + 1, MPI_INT64_T, (int)q, 0, (int)n + 1, MPI_INT64_T, x->win);
    MPI_Win_unlock((int)q, x->win);
    if (x->peer[0] != x->m.cycle + 1) *all_done = 0;
    *owed += x->peer[1 + x->m.me] - x->m.recv[q];
  }
}

int mt_advance(mt_ctx* x, int done) {
  m_model* m = &x->m;
  int rc, all_done = 1;
  int64_t owed = 0;
  if (done && m->st == M_WORKING) publish(x);
  rc = convey_advance(x->c, done != 0);
  if ((rc == convey_NEAR || rc == convey_DONE) && m->st != M_COMPLETE)
    read_peers(x, &all_done, &owed);
  trace(x, "advance(%s) -> %d", done ? "true" : "false", rc);
  mt_report(x, m_advance(m, done, rc, all_done, owed));
  queries(x);
  return rc;
}

void mt_misuse_collective_calls(mt_ctx* x) {
  const m_model* m = &x->m;
  int rc;
  if (m->st == M_DORMANT) return;
  if (m->st != M_COMPLETE) {
    rc = convey_free(x->c);
    trace(x, "free() -> %d", rc);
    mt_report(x, m_free_illegal(m, rc));
    rc = convey_reset(x->c);
    trace(x, "reset() -> %d", rc);
    mt_report(x, m_reset(&x->m, rc));
  }
  rc = convey_begin(x->c, 8, 0);
  trace(x, "begin(8) -> %d", rc);
  if (rc != convey_error_STATE) mt_report(x, "begin outside DORMANT did not return STATE");
  rc = convey_set_codec(x->c, NULL, NULL);
  trace(x, "set_codec(NULL) -> %d", rc);
  if (rc != convey_error_STATE) mt_report(x, "set_codec outside DORMANT did not return STATE");
  queries(x);
}

void mt_null_conveyor(mt_ctx* x) {
  unsigned char item[8] = {0};
  convey_item_t it;
  int ok =
      convey_begin(NULL, 8, 0) == convey_error_NULL &&
      convey_push(NULL, item, 0) == convey_error_NULL &&
      convey_epush(NULL, 8, item, 0) == convey_error_NULL &&
      convey_pull(NULL, item, NULL) == convey_error_NULL && convey_apull(NULL, NULL) == NULL &&
      convey_epull(NULL, &it) == convey_error_NULL && convey_unpull(NULL) == convey_error_NULL &&
      convey_advance(NULL, true) == convey_error_NULL && convey_reset(NULL) == convey_error_NULL &&
      convey_free(NULL) == convey_OK && convey_item_size(NULL) == 0 && convey_features(NULL) == 0;
  trace(x, "calls on a NULL conveyor");
  if (!ok) mt_report(x, "a call on a NULL conveyor did not return convey_error_NULL (CAPI-65)");
}
