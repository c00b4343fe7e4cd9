/* Shared helpers of the C façade tests (C99, public headers only).
 *
 * Items are generated so that every receiver can check exactly-once, FIFO per pair and the
 * reported source on its own (docs/c-api.md, invariants): the k-th item
 * that PE s sends to PE d has contents fill(seed(s, d, k)), so d knows what the next item
 * from s must be. Destinations are a hash of (s, i), so each receiver can also count what
 * it must receive from every source. Every loop is bounded and fails when the bound is hit.
 */
#ifndef CONVOY_C_API_HARNESS_H
#define CONVOY_C_API_HARNESS_H

#include <convey.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int h_failures = 0;
static long h_me = 0;

/* Up to 10 million loop iterations per conveyor round: far beyond any correct run. */
#define H_MAX_ITER 10000000L

static inline void h_fail(const char* file, int line, const char* fmt, ...) {
  va_list ap;
  if (++h_failures > 20) return;
  fprintf(stderr, "[PE %ld] %s:%d: ", h_me, file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

#define H_CHECK(cond, ...)                                \
  do {                                                    \
    if (!(cond)) h_fail(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

#define H_EXPECT_RC(call, want)                                                                 \
  do {                                                                                          \
    const int h_rc_ = (call);                                                                   \
    if (h_rc_ != (want))                                                                        \
      h_fail(__FILE__, __LINE__, "%s returned %d (%s), expected %d (%s)", #call, h_rc_,         \
             convey_error_string(NULL, h_rc_), (int)(want), convey_error_string(NULL, (want))); \
  } while (0)

/* A combining function (convoy_convey_set_combine): adds the 8-byte value `from` into `into`. */
static inline void h_add_u64(void* into, const void* from) {
  uint64_t a, b;
  memcpy(&a, into, 8);
  memcpy(&b, from, 8);
  a += b;
  memcpy(into, &a, 8);
}

static inline uint64_t h_mix(uint64_t x) {
  x += UINT64_C(0x9E3779B97F4A7C15);
  x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
  return x ^ (x >> 31);
}

static inline uint64_t h_seed(int64_t src, int64_t dst, int64_t k, uint64_t salt) {
  return h_mix(((uint64_t)src << 40) ^ ((uint64_t)dst << 20) ^ (uint64_t)k ^ (salt << 56));
}

static inline void h_fill(unsigned char* p, size_t n, uint64_t seed) {
  uint64_t v = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    if (i % 8 == 0) v = h_mix(seed + i);
    p[i] = (unsigned char)(v >> (8 * (i % 8)));
  }
}

static inline int64_t h_dest(int64_t src, int64_t i, int64_t n_pes, uint64_t salt) {
  return (int64_t)(h_mix((uint64_t)src * 1000003u + (uint64_t)i + (salt << 48)) % (uint64_t)n_pes);
}

static inline void* h_alloc(size_t n) {
  void* p = calloc(n ? n : 1, 1);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  return p;
}

#endif
