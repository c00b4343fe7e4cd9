/**
 * @file
 * bale-compatible biconveyors: queries pushed to any PE, each answered on its destination
 * by a client function, replies pulled by the querying PE in push order (Maley & DeVinney 2019
 * sec. 6.1). Biconveyors are always steady: while every PE keeps calling
 * biconvey_advance(), every query is answered and its reply becomes pullable.
 *
 * States and return values are those of convey.h; biconvey_pull() plays the part of
 * convey_pull(). A biconveyor never reports DONE while replies remain to be pulled.
 */
#ifndef BICONVEY_H
#define BICONVEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convey.h"
#include "convoy/convey_view.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The opaque biconveyor. */
typedef struct biconveyor biconvey_t;

/** As convey_new() (collective; NULL on failure; PROGRESS is implied). */
biconvey_t* biconvey_new(size_t max_bytes, size_t n_local, const convey_alc8r_t* alloc,
                         uint64_t options);

/** Over simple conveyors (collective advance); `a2a` must be NULL. */
biconvey_t* biconvey_new_simple(size_t capacity, const convey_alc8r_t* alloc,
                                const convey_mpp_a2a_t* a2a, uint64_t options);

/** Over tensor conveyors; arguments as convey_new_tensor(). */
biconvey_t* biconvey_new_tensor(size_t capacity, int order, size_t n_local, size_t n_buffers,
                                const convey_alc8r_t* alloc, uint64_t options);

/** DORMANT -> WORKING, collective. Queries are `query_bytes`, replies `reply_bytes`
 *  (both > 0); `answer(query, reply, context)` computes a reply on the query's
 *  destination and must accept unaligned pointers. Returns OK or negative (NOFUNC: no
 *  `answer`; ZERO; OFLO: an item larger than a buffer; the biconveyor stays DORMANT). */
int biconvey_begin(biconvey_t* b, size_t query_bytes, size_t reply_bytes,
                   void (*answer)(const void* query, void* reply, void* context), void* context);

/** As convey_push() for a query (FAIL also while 8192 replies are outstanding). Inline
 *  unless CONVOY_NO_INLINE, as convey_push(). */
CONVOY_HOT_ int biconvey_push(biconvey_t* b, const void* query, int64_t pe);

/** Copies the reply to the oldest unanswered-for query; OK, FAIL (not arrived yet) or
 *  negative. Replies come in push order. Inline unless CONVOY_NO_INLINE. */
CONVOY_HOT_ int biconvey_pull(biconvey_t* b, void* reply);

/** As convey_advance(): also answers incoming queries and collects replies. */
int biconvey_advance(biconvey_t* b, bool done);

/** As convey_reset(). */
int biconvey_reset(biconvey_t* b);

/** As convey_free(). */
int biconvey_free(biconvey_t* b);

/* ---- The inline calls (convoy/convey_view.h) ---- */

/** The library's whole calls behind the inline ones, named by the view's version. */
int convoy_v1_bipush(biconvey_t* b, const void* query, int64_t pe);
int convoy_v1_bilane_full(biconvey_t* b, uint32_t lane);
int convoy_v1_bipull(biconvey_t* b, void* reply);

#if !defined(CONVOY_NO_INLINE) || defined(CONVOY_LIBCONVEY_SOURCE)
static inline int convoy_bipush_inline_(biconvey_t* b, const void* query, int64_t pe) {
  if (b && query) {
    biconvey_view_t* const v = CONVOY_RCAST_(biconvey_head_t*, b)->view;
    if (v->queries && v->tail - v->head <= v->mask) {
      const size_t n = v->query_bytes;
      uint32_t lane;
      int full;
      unsigned char* const p = convoy_reserve_(v->queries, pe, &lane, &full);
      if (p) {
        /* The query travels after its 4-byte window slot. */
        const uint32_t slot = CONVOY_SCAST_(uint32_t, v->tail & v->mask);
        v->filled[slot] = 0;
        ++v->tail;
        memcpy(p, &slot, sizeof slot);
        convoy_copy_(p + sizeof slot, query, n);
        return full ? convoy_v1_bilane_full(b, lane) : convey_OK;
      }
    }
  }
  return convoy_v1_bipush(b, query, pe);
}

static inline int convoy_bipull_inline_(biconvey_t* b, void* reply) {
  if (b && reply) {
    biconvey_view_t* const v = CONVOY_RCAST_(biconvey_head_t*, b)->view;
    if (v->head != v->tail) {
      const uint64_t slot = v->head & v->mask;
      if (v->filled[slot]) {
        convoy_copy_(reply, v->ring + slot * v->reply_bytes, v->reply_bytes);
        v->filled[slot] = 0;
        ++v->head;
        return convey_OK;
      }
    }
  }
  return convoy_v1_bipull(b, reply);
}

#if !defined(CONVOY_NO_INLINE) && !defined(CONVOY_LIBCONVEY_SOURCE)
static inline int biconvey_push(biconvey_t* b, const void* query, int64_t pe) {
  return convoy_bipush_inline_(b, query, pe);
}
static inline int biconvey_pull(biconvey_t* b, void* reply) {
  return convoy_bipull_inline_(b, reply);
}
#endif
#endif

#ifdef __cplusplus
}
#endif

#endif /* BICONVEY_H */
