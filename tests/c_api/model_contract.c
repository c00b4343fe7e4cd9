/* The per-PE contract model of model_test.c (see model_contract.h). */
#include "model_contract.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-variable" /* harness.h's counters live in main */
#endif
#include "harness.h"

static char m_msg[1024];
static const char* state_names[] = {"DORMANT", "WORKING", "ENDGAME", "CLEANUP", "COMPLETE"};

static const char* m_fmt(const m_model* m, const char* fmt, ...) {
  va_list ap;
  int n = snprintf(m_msg, sizeof m_msg, "[%s, cycle %d] ", state_names[m->st], m->cycle);
  va_start(ap, fmt);
  vsnprintf(m_msg + n, sizeof m_msg - (size_t)n, fmt, ap);
  va_end(ap);
  return m_msg;
}

/* A set of allowed results. */
typedef struct {
  int n;
  int v[12];
} m_set;
static void m_add(m_set* s, int rc) { s->v[s->n++] = rc; }
static int m_has(const m_set* s, int rc) {
  int i;
  for (i = 0; i < s->n; i++)
    if (s->v[i] == rc) return 1;
  return 0;
}
static const char* m_check(const m_model* m, const char* call, int rc, const m_set* s) {
  char allowed[256] = "";
  int i;
  if (m_has(s, rc)) return NULL;
  for (i = 0; i < s->n; i++) {
    const size_t len = strlen(allowed);
    snprintf(allowed + len, sizeof allowed - len, " %d (%s)", s->v[i],
             convey_error_string(NULL, s->v[i]));
  }
  return m_fmt(m, "%s returned %d (%s); the contract allows%s", call, rc,
               convey_error_string(NULL, rc), allowed);
}

void m_init(m_model* m, int64_t n_pes, int64_t me, uint64_t salt, int elastic, size_t bound) {
  memset(m, 0, sizeof *m);
  m->n_pes = n_pes;
  m->me = me;
  m->salt = salt;
  m->elastic = elastic;
  m->bound = bound;
  m->cycle = -1;
  m->sent = h_alloc(sizeof(int64_t) * (size_t)n_pes);
  m->recv = h_alloc(sizeof(int64_t) * (size_t)n_pes);
}

void m_destroy(m_model* m) {
  free(m->sent);
  free(m->recv);
}

size_t m_effective_align(size_t item_bytes, size_t align) {
  if (align == 0 || (align & (align - 1)) || item_bytes % align)
    align = item_bytes & (~item_bytes + 1);
  return align > CONVEY_MAX_ALIGN ? (size_t)CONVEY_MAX_ALIGN : align;
}

uint64_t m_item_seed(const m_model* m, int64_t src, int64_t dst, int64_t k) {
  return h_seed(src, dst, k, m->salt * 8 + (uint64_t)m->cycle);
}

/* Elastic sizes: the cycle's item size, 0, small, anything up to the bound. */
size_t m_item_size(const m_model* m, int64_t src, int64_t dst, int64_t k) {
  const uint64_t r = h_mix(m_item_seed(m, src, dst, k) ^ UINT64_C(0x51e));
  if (!m->elastic) return m->item_bytes;
  switch (r % 10) {
    case 0:
    case 1:
    case 2:
      return m->item_bytes;
    case 3:
      return 0;
    case 4:
    case 5:
      return (size_t)(r >> 8) % (m->bound < 8 ? m->bound + 1 : 9);
    case 6:
      return m->bound;
    default:
      return (size_t)(r >> 8) % (m->bound + 1);
  }
}

size_t m_next_size(const m_model* m, int64_t dst) {
  return m_item_size(m, m->me, dst, m->sent[dst]);
}

const char* m_begin(m_model* m, size_t item_bytes, size_t align, int rc) {
  m_set s = {0, {0}};
  const char* e;
  if (m->st != M_DORMANT)
    m_add(&s, convey_error_STATE);
  else if (item_bytes == 0)
    m_add(&s, convey_error_ZERO);
  else
    m_add(&s, convey_OK);
  if ((e = m_check(m, "begin", rc, &s)) || rc != convey_OK) return e;
  m->st = M_WORKING;
  m->cycle++;
  m->item_bytes = item_bytes;
  m->align = m_effective_align(item_bytes, align);
  m->said_done = 0;
  m->can_unpull = 0;
  m->pending = 0;
  m->pushes = m->pulls = m->unpulls = 0;
  memset(m->sent, 0, sizeof(int64_t) * (size_t)m->n_pes);
  memset(m->recv, 0, sizeof(int64_t) * (size_t)m->n_pes);
  return NULL;
}

/* Misuse codes that apply to a push of `bytes` from `null_item` to `pe`. */
static void push_errors(const m_model* m, int64_t pe, size_t bytes, int null_item, m_set* s) {
  if (pe < 0 || pe >= m->n_pes) m_add(s, convey_error_RANGE);
  if (m->elastic && bytes > m->bound) m_add(s, convey_error_OFLO);
  if (null_item && bytes > 0) {
    m_add(s, convey_error_NULL);
    m_add(s, convey_error_USAGE);
  }
}

static const char* push_result(m_model* m, const char* call, int64_t pe, int null_item, int rc,
                               m_set* s) {
  const char* e;
  if (m->st == M_WORKING && s->n == 0) {
    m_add(s, convey_OK);
    m_add(s, convey_FAIL);
    if (null_item) { /* 0 bytes from NULL: either */
      m_add(s, convey_error_NULL);
      m_add(s, convey_error_USAGE);
    }
  } else if (m->st != M_WORKING) {
    m_add(s, convey_error_STATE);
  }
  if ((e = m_check(m, call, rc, s)) || rc != convey_OK) return e;
  m->sent[pe]++;
  m->pushes++;
  return NULL;
}

const char* m_push(m_model* m, int64_t pe, int null_item, int rc) {
  m_set s = {0, {0}};
  push_errors(m, pe, m->st == M_DORMANT ? 1 : m->item_bytes, null_item, &s);
  return push_result(m, "push", pe, null_item, rc, &s);
}

const char* m_epush(m_model* m, int64_t pe, size_t bytes, int null_item, int rc) {
  m_set s = {0, {0}};
  if (!m->elastic) m_add(&s, convey_error_RIGID);
  push_errors(m, pe, bytes, null_item, &s);
  return push_result(m, "epush", pe, null_item, rc, &s);
}

static const char* pulled(m_model* m, int kind, const unsigned char* data, size_t bytes,
                          int64_t from) {
  static const char* names[] = {"pull", "apull", "epull"};
  unsigned char* want;
  size_t size;
  int64_t k;
  int bad;
  if (from < 0 || from >= m->n_pes)
    return m_fmt(m, "%s: source %lld", names[kind], (long long)from);
  if (m->pending && from != m->last_src)
    return m_fmt(m, "%s: the unpulled item from %lld must come next, got one from %lld",
                 names[kind], (long long)m->last_src, (long long)from);
  k = m->recv[from];
  size = m_item_size(m, from, m->me, k);
  if (bytes != size || (kind != M_EPULL && size != m->item_bytes))
    return m_fmt(m, "%s: item %lld from %lld has %zu bytes, expected %zu (FIFO/exactly once)",
                 names[kind], (long long)k, (long long)from, bytes, size);
  want = h_alloc(size);
  h_fill(want, size, m_item_seed(m, from, m->me, k));
  bad = size && memcmp(want, data, size) != 0;
  free(want);
  if (bad)
    return m_fmt(m, "%s: item %lld from %lld has wrong bytes (FIFO, exactly once or corrupted)",
                 names[kind], (long long)k, (long long)from);
  if (kind != M_PULL && size && ((uintptr_t)data % m->align) != 0)
    return m_fmt(m, "%s: pointer %p not aligned to %zu", names[kind], (const void*)data, m->align);
  m->recv[from]++;
  m->pending = 0;
  m->can_unpull = 1;
  m->last_src = from;
  m->pulls++;
  return NULL;
}

const char* m_pull(m_model* m, int kind, int null_out, int rc, const void* data, size_t bytes,
                   int64_t from) {
  static const char* names[] = {"pull", "apull", "epull"};
  m_set s = {0, {0}};
  const char* e;
  const int misfit_ok = m->elastic && kind != M_EPULL; /* a rigid pull may meet another size */
  if (kind == M_EPULL && !m->elastic) m_add(&s, convey_error_RIGID);
  if (null_out) {
    m_add(&s, convey_error_NULL);
    m_add(&s, convey_error_USAGE);
  }
  if (m->st == M_DORMANT) {
    m_add(&s, kind == M_APULL || kind == M_EPULL ? convey_FAIL : convey_error_STATE);
    if (kind == M_EPULL) m_add(&s, convey_error_STATE);
  } else if (m->st == M_COMPLETE) {
    m_add(&s, convey_FAIL);
  } else if (s.n == 0 && m->pending) {
    const size_t z = m_item_size(m, m->last_src, m->me, m->recv[m->last_src]);
    if (misfit_ok && z != m->item_bytes) {
      /* bale's elastic_pull: MISFIT; apull gives NULL (CAPI-2). The item stays (CAPI-5). */
      m_add(&s, kind == M_APULL ? convey_FAIL : convey_error_MISFIT);
    } else {
      m_add(&s, convey_OK);
    }
  } else if (s.n == 0) {
    m_add(&s, convey_OK);
    m_add(&s, convey_FAIL);
    if (misfit_ok && kind != M_APULL) m_add(&s, convey_error_MISFIT);
  }
  if ((e = m_check(m, names[kind], rc, &s))) return e;
  if (rc == convey_OK) return pulled(m, kind, (const unsigned char*)data, bytes, from);
  if (m->can_unpull == 1 && m->st != M_DORMANT) m->can_unpull = 2;
  return NULL;
}

const char* m_unpull(m_model* m, int rc) {
  m_set s = {0, {0}};
  const char* e;
  if (m->st == M_DORMANT) {
    m_add(&s, convey_error_STATE);
  } else if (m->st == M_COMPLETE || m->can_unpull == 0) {
    m_add(&s, convey_FAIL);
  } else {
    m_add(&s, convey_OK);
    if (m->can_unpull == 2) m_add(&s, convey_FAIL);
  }
  if ((e = m_check(m, "unpull", rc, &s)) || rc != convey_OK) return e;
  m->recv[m->last_src]--;
  m->pending = 1;
  m->can_unpull = 0;
  m->unpulls++;
  return NULL;
}

const char* m_advance(m_model* m, int done, int rc, int peers_done, int64_t owed) {
  m_set s = {0, {0}};
  const char* e;
  const m_state before = m->st;
  switch (m->st) {
    case M_DORMANT:
      m_add(&s, convey_error_STATE);
      break;
    case M_COMPLETE:
      m_add(&s, convey_DONE);
      break;
    case M_WORKING:
      m_add(&s, convey_OK);
      if (done) {
        m_add(&s, convey_NEAR);
        m_add(&s, convey_DONE);
      }
      break;
    case M_ENDGAME:
    case M_CLEANUP:
      /* advance(false) after advance(true): USAGE, or (bale) taken as advance(true). */
      if (!done) m_add(&s, convey_error_USAGE);
      if (m->st == M_ENDGAME) m_add(&s, convey_OK);
      m_add(&s, convey_NEAR);
      m_add(&s, convey_DONE);
      break;
  }
  if ((e = m_check(m, done ? "advance(true)" : "advance(false)", rc, &s)) || rc < 0) return e;
  if (before == M_COMPLETE) return NULL;
  m->can_unpull = 0;
  if (before == M_WORKING && done) m->said_done = 1;
  if (rc == convey_OK && before == M_WORKING && done) m->st = M_ENDGAME;
  if (rc == convey_NEAR) m->st = M_CLEANUP;
  if (rc == convey_DONE) m->st = M_COMPLETE;
  if ((rc == convey_NEAR || rc == convey_DONE) && !peers_done)
    return m_fmt(m, "advance returned %s before every PE declared done (CAPI-63)",
                 rc == convey_NEAR ? "NEAR" : "DONE");
  if (rc == convey_DONE && (owed != 0 || m->pending))
    return m_fmt(m, "advance returned DONE with %lld items owed to this PE%s (CAPI-62)",
                 (long long)owed, m->pending ? " and an unpulled one" : "");
  return NULL;
}

const char* m_reset(m_model* m, int rc) {
  m_set s = {0, {0}};
  const char* e;
  m_add(&s, m->st == M_DORMANT || m->st == M_COMPLETE ? convey_OK : convey_error_STATE);
  if ((e = m_check(m, "reset", rc, &s)) || rc != convey_OK) return e;
  m->st = M_DORMANT;
  m->can_unpull = 0;
  return NULL;
}

const char* m_free_illegal(const m_model* m, int rc) {
  m_set s = {0, {0}};
  m_add(&s, convey_error_STATE);
  return m_check(m, "free", rc, &s);
}

const char* m_queries(const m_model* m, convey_t* c) {
  const size_t want = m->st == M_DORMANT ? 0 : m->item_bytes;
  if (convey_item_size(c) != want)
    return m_fmt(m, "item_size %zu, expected %zu", convey_item_size(c), want);
  if (m->st == M_DORMANT) return NULL;
  if (convey_statistic(c, convey_PUSHES) != m->pushes ||
      convey_statistic(c, convey_PULLS) != m->pulls ||
      convey_statistic(c, convey_UNPULLS) != m->unpulls)
    return m_fmt(m, "statistics pushes/pulls/unpulls %lld/%lld/%lld, the model %lld/%lld/%lld",
                 (long long)convey_statistic(c, convey_PUSHES),
                 (long long)convey_statistic(c, convey_PULLS),
                 (long long)convey_statistic(c, convey_UNPULLS), (long long)m->pushes,
                 (long long)m->pulls, (long long)m->unpulls);
  return NULL;
}
