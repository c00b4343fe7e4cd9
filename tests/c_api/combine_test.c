/* convoy_convey_set_combine (convoy/convey_ext.h, CAPI-120..123): 24-byte items {value,
 * key, check} with the key at offset 8 and the value at offset 0, over few keys so that
 * many updates merge on the way. Every PE recomputes every PE's update stream (a
 * sequential oracle) and checks, for each key it owns, that the pulled values add up to the
 * pushed ones, that every pulled item kept its key's check word, and that fewer items arrived
 * than were pushed to it (combining happened); a second cycle does the same with the
 * library's sum (convoy_combine_add_u64, inlined by the core), and a third with combining off
 * must deliver every update as pushed. Then the error codes. Argument: the constructor ("tensor",
 * "default", or "dynamic": convey_new with convey_opt_DYNAMIC, whose engine exists from begin
 * to reset only). */
#include <convey.h>
#include <convoy/convey_ext.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { n_updates = 20000, keys_per_pe = 64 };

/* Update i of PE `src`: its global key and its value. */
static uint64_t key_of(int64_t src, int64_t i, int64_t n_pes) {
  const uint64_t x = h_mix((uint64_t)src * 7919u + (uint64_t)i);
  /* Skewed: half the updates go to 1/8 of the keys. */
  const uint64_t n_keys = (uint64_t)n_pes * keys_per_pe;
  return (x & 1) ? (x >> 1) % (n_keys / 8 + 1) % n_keys : (x >> 1) % n_keys;
}
static uint64_t value_of(int64_t src, int64_t i) {
  return h_mix((uint64_t)src * 104729u + (uint64_t)i) & 0xFFFF;
}

/* One cycle; got[k] sums the values pulled for local key k; returns the items pulled. */
static uint64_t run_cycle(convey_t* c, int64_t me, int64_t P, uint64_t* got) {
  unsigned char item[24], in[24];
  int64_t i = 0, from;
  uint64_t pulled = 0;
  long iters = 0;
  int rc;
  H_EXPECT_RC(convey_begin(c, sizeof item, 8), convey_OK);
  while ((rc = convey_advance(c, i == n_updates)) != convey_DONE) {
    H_CHECK(rc > 0, "advance %d", rc);
    if (rc < 0) break;
    for (; i < n_updates; i++) {
      const uint64_t key = key_of(me, i, P), value = value_of(me, i), check = h_mix(key);
      memcpy(item, &value, 8);
      memcpy(item + 8, &key, 8);
      memcpy(item + 16, &check, 8);
      if (!convey_push(c, item, (int64_t)(key % (uint64_t)P))) break;
    }
    while (convey_pull(c, in, &from) == convey_OK) {
      uint64_t value, key, check;
      memcpy(&value, in, 8);
      memcpy(&key, in + 8, 8);
      memcpy(&check, in + 16, 8);
      pulled++;
      if (key % (uint64_t)P != (uint64_t)me || key / (uint64_t)P >= keys_per_pe ||
          check != h_mix(key)) {
        h_fail(__FILE__, __LINE__, "pulled key %llu check %llx", (unsigned long long)key,
               (unsigned long long)check);
        continue;
      }
      got[key / (uint64_t)P] += value;
    }
    if (++iters > H_MAX_ITER) {
      h_fail(__FILE__, __LINE__, "no termination");
      break;
    }
  }
  H_EXPECT_RC(convey_reset(c), convey_OK);
  return pulled;
}

/* The oracle: every PE's stream, replayed; want[k] for this PE's local key k, and the count. */
static uint64_t oracle(int64_t me, int64_t P, uint64_t* want) {
  int64_t s, i;
  uint64_t count = 0;
  memset(want, 0, keys_per_pe * sizeof want[0]);
  for (s = 0; s < P; s++)
    for (i = 0; i < n_updates; i++) {
      const uint64_t key = key_of(s, i, P);
      if (key % (uint64_t)P != (uint64_t)me) continue;
      want[key / (uint64_t)P] += value_of(s, i);
      count++;
    }
  return count;
}

static void compare(const uint64_t* got, const uint64_t* want, const char* what) {
  int k;
  for (k = 0; k < keys_per_pe; k++)
    H_CHECK(got[k] == want[k], "%s: local key %d: pulled values sum to %llu, pushed %llu", what, k,
            (unsigned long long)got[k], (unsigned long long)want[k]);
}

/* The counters after a combining cycle that pulled `pulled` items here: summed over the PEs,
 * the updates pushed less the items folded are the items pulled (the test's own counts),
 * and folds happened on some link (with more than one PE); a PE's links fold at most what
 * the PE folds (its items to itself fold in no link). */
static void check_counters(convey_t* c, uint64_t pulled, const char* what) {
  convoy_pe_stats_t pe;
  convoy_link_stats_t l;
  uint64_t mine[4] = {n_updates, 0, 0, 0}, sums[4];
  int s, k;
  pe.size = sizeof pe;
  H_EXPECT_RC(convoy_convey_pe_stats(c, 1, &pe), convey_OK);
  H_CHECK(pe.size == sizeof pe, "%s: pe stats filled %zu bytes", what, pe.size);
  mine[1] = pe.combined;
  mine[2] = pulled;
  for (s = 0; s < convoy_convey_n_stages(c); s++)
    for (k = 0; k < convoy_convey_n_links(c, s); k++) {
      l.size = sizeof l;
      H_EXPECT_RC(convoy_convey_link_stats(c, s, k, 1, &l), convey_OK);
      H_CHECK(l.combine_ns_per_record >= 0 && l.combine_saved_ns >= 0, "%s: gate measures", what);
      mine[3] += l.combined;
    }
  H_CHECK(mine[3] <= pe.combined, "%s: links folded %llu, the PE %llu", what,
          (unsigned long long)mine[3], (unsigned long long)pe.combined);
  MPI_Allreduce(mine, sums, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  H_CHECK(sums[0] - sums[1] == sums[2], "%s: %llu pushed - %llu combined != %llu pulled", what,
          (unsigned long long)sums[0], (unsigned long long)sums[1], (unsigned long long)sums[2]);
  H_CHECK(sums[3] > 0 || convoy_convey_n_pes(c) == 1, "%s: no link folded", what);
}

int main(int argc, char** argv) {
  const int tensor = argc > 1 && strcmp(argv[1], "tensor") == 0;
  const uint64_t options = argc > 1 && strcmp(argv[1], "dynamic") == 0 ? convey_opt_DYNAMIC : 0;
  uint64_t want[keys_per_pe], got[keys_per_pe], expected, pulled;
  size_t plain_bytes;
  int64_t P, me;
  convey_t *c, *s;
  MPI_Init(&argc, &argv);
  c = tensor ? convey_new_tensor(4096, 2, 1, 2, NULL, 0) : convey_new(SIZE_MAX, 0, NULL, options);
  if (!c) {
    fprintf(stderr, "construction failed\n");
    return 1;
  }
  P = convoy_convey_n_pes(c);
  me = convoy_convey_my_pe(c);
  h_me = (long)me;
  expected = oracle(me, P, want);

  /* Combining on: values add up, fewer items arrive; the memory bound counts the tables. */
  plain_bytes = convoy_convey_max_memory_bytes(c);
  H_EXPECT_RC(convoy_convey_set_combine(c, 8, 8, 0, 8, h_add_u64), convey_OK);
  H_CHECK(convoy_convey_max_memory_bytes(c) > plain_bytes,
          "combining: max memory %zu bytes, as much as without combining tables (%zu)",
          convoy_convey_max_memory_bytes(c), plain_bytes);
  memset(got, 0, sizeof got);
  pulled = run_cycle(c, me, P, got);
  compare(got, want, "combining");
  H_CHECK(pulled < expected, "combining: %llu items pulled of %llu pushed to this PE",
          (unsigned long long)pulled, (unsigned long long)expected);
  H_CHECK(pulled >= (expected ? 1u : 0u), "combining: nothing pulled");
  check_counters(c, pulled, "combining");

  /* The library's sum: the core inlines the fold; the same totals. */
  H_EXPECT_RC(convoy_convey_set_combine(c, 8, 8, 0, 8, convoy_combine_add_u64), convey_OK);
  memset(got, 0, sizeof got);
  pulled = run_cycle(c, me, P, got);
  compare(got, want, "combining, library sum");
  H_CHECK(pulled < expected, "combining, library sum: %llu items pulled of %llu pushed",
          (unsigned long long)pulled, (unsigned long long)expected);

  /* Off again after the reset: every update arrives as pushed. */
  H_EXPECT_RC(convoy_convey_set_combine(c, 0, 0, 0, 0, NULL), convey_OK);
  H_CHECK(convoy_convey_max_memory_bytes(c) == plain_bytes,
          "off: max memory %zu bytes, %zu before combining", convoy_convey_max_memory_bytes(c),
          plain_bytes);
  memset(got, 0, sizeof got);
  pulled = run_cycle(c, me, P, got);
  compare(got, want, "off");
  H_CHECK(pulled == expected, "off: %llu items pulled, %llu pushed to this PE",
          (unsigned long long)pulled, (unsigned long long)expected);

  /* Errors: NULL, sizes, overlap, not DORMANT; a key beyond the item fails at begin. */
  H_EXPECT_RC(convoy_convey_set_combine(NULL, 8, 8, 0, 8, h_add_u64), convey_error_NULL);
  H_EXPECT_RC(convoy_convey_set_combine(c, 8, 0, 0, 8, h_add_u64), convey_error_USAGE);
  H_EXPECT_RC(convoy_convey_set_combine(c, 8, 8, 0, 4, convoy_combine_add_u64), convey_error_USAGE);
  H_EXPECT_RC(convoy_convey_set_combine(c, 8, 8, 0, 8, convoy_combine_add_u32), convey_error_USAGE);
  H_EXPECT_RC(convoy_convey_set_combine(c, 8, 8, 0, 0, h_add_u64), convey_error_USAGE);
  H_EXPECT_RC(convoy_convey_set_combine(c, 4, 8, 0, 8, h_add_u64), convey_error_USAGE);
  H_EXPECT_RC(convoy_convey_set_combine(c, 0, 8, 0, 8, h_add_u64), convey_error_USAGE);
  H_EXPECT_RC(convoy_convey_set_combine(c, (size_t)1 << 33, 8, 0, 8, h_add_u64),
              convey_error_USAGE);
  H_EXPECT_RC(convoy_convey_set_combine(c, 40, 8, 0, 8, h_add_u64), convey_OK);
  H_EXPECT_RC(convey_begin(c, 24, 8), convey_error_OFLO);
  H_EXPECT_RC(convoy_convey_set_combine(c, 8, 8, 0, 8, h_add_u64), convey_OK);
  H_EXPECT_RC(convey_begin(c, 24, 8), convey_OK);
  H_EXPECT_RC(convoy_convey_set_combine(c, 8, 8, 0, 8, h_add_u64), convey_error_STATE);
  while (convey_advance(c, 1) != convey_DONE) {
  }
  H_EXPECT_RC(convey_reset(c), convey_OK);
  H_EXPECT_RC(convey_free(c), convey_OK);

  s = convey_new_simple(4096, NULL, NULL, 0);
  if (s) {
    H_EXPECT_RC(convoy_convey_set_combine(s, 8, 8, 0, 8, h_add_u64), convey_error_USAGE);
    H_EXPECT_RC(convey_free(s), convey_OK);
  }
  if (me == 0) printf("combine on %lld PEs: %s\n", (long long)P, h_failures ? "FAIL" : "PASS");
  MPI_Finalize();
  return h_failures ? 1 : 0;
}
