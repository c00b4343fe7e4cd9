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

/** As convey_push() for a query. */
int biconvey_push(biconvey_t* b, const void* query, int64_t pe);

/** Copies the reply to the oldest unanswered-for query; OK, FAIL (not arrived yet) or
 *  negative. Replies come in push order. */
int biconvey_pull(biconvey_t* b, void* reply);

/** As convey_advance(): also answers incoming queries and collects replies. */
int biconvey_advance(biconvey_t* b, bool done);

/** As convey_reset(). */
int biconvey_reset(biconvey_t* b);

/** As convey_free(). */
int biconvey_free(biconvey_t* b);

#ifdef __cplusplus
}
#endif

#endif /* BICONVEY_H */
