/* Model-based random test of the C façade on MPI ranks (conveyor_api/README.md,
 * CAPI-60..CAPI-66). Each seed is one conveyor instance: a random constructor (tensor order
 * 1-3, etensor, convey_new, convey_new_elastic; random capacity, n_buffers, PROGRESS,
 * DYNAMIC), 1-3 begin..reset cycles and a free in DORMANT or COMPLETE. In each cycle every
 * PE makes its own random sequence of legal and illegal calls — push, epush, pull, apull,
 * epull, unpull, advance(true/false), and free/reset/begin/set_codec where they are
 * illegal; PEs out of range, NULL items, sizes above the bound — then drains (Maley & DeVinney 2019
 * Figure 3) to COMPLETE. Every result is checked by model_contract.c; at NEAR/DONE the PE
 * reads every PE's declaration one-sidedly (no NEAR/DONE before every PE declared done;
 * nothing owed at DONE); at the end of a cycle the counts are compared with an all-to-all.
 *
 *   c_api_model [seeds=A..B] [bug-...]   (or CONVOY_MODEL_SEEDS=A..B; default 1..12)
 * Exit code 0 iff every check passed on every PE. A failure prints the seed, the PE and the
 * PE's last calls. */
#include <convey.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "model_calls.h"

static int64_t g_pes = 1;
/* Known bug, avoided unless named on the command line:
 *  bug-engine-unpull: the engine's bug 1 (tests/termination/model/model_test.cpp) seen through
 *    elastic conveyors; fixed, so always on (the flag is kept for old scripts).
 * Fixed (their c_api.model_bug_* entries are gone; every run checks them): an epush above
 * the item bound is refused (CAPI-6) and an apull/epull pointer stays valid across
 * advance (CAPI-7). */

/* One random local call of the random phase, by state. */
static void random_call(mt_ctx* x) {
  const m_model* m = &x->m;
  const uint64_t w = mt_below(&x->rng, 100);
  const int64_t bad[] = {-1, g_pes, g_pes + 7, INT64_MIN, INT64_MAX};
  const int64_t pe = mt_below(&x->rng, 10) ? (int64_t)mt_below(&x->rng, (uint64_t)g_pes)
                                           : bad[mt_below(&x->rng, 5)];
  const int null_item = mt_below(&x->rng, 25) == 0;
  const int kind = (int)mt_below(&x->rng, 3);
  uint64_t k, n;
  if (m->st == M_WORKING && w < 35) {
    for (n = 1 + mt_below(&x->rng, 12), k = 0; k < n; k++) {
      const int64_t d = (int64_t)mt_below(&x->rng, (uint64_t)g_pes);
      if (mt_push(x, k + 1 == n ? pe : d, k + 1 == n && null_item) == convey_FAIL) break;
    }
  } else if (w < 42) {
    const size_t big[] = {SIZE_MAX, (size_t)1 << 33, m->bound + 1};
    const size_t bytes = mt_below(&x->rng, 5) ? 0 : big[mt_below(&x->rng, 3)];
    mt_epush(x, pe, bytes, null_item);
  } else if (w < 72) {
    for (n = 1 + mt_below(&x->rng, 16), k = 0; k < n; k++) {
      const int rc = mt_pull(x, kind, mt_below(&x->rng, 40) == 0);
      if (rc != convey_OK) break;
      if (mt_below(&x->rng, 10) == 0) mt_unpull(x);
    }
  } else if (w < 78) {
    mt_unpull(x);
  } else if (w < 94) {
    const int done = m->st == M_WORKING ? mt_below(&x->rng, 8) == 0 : mt_below(&x->rng, 12) != 0;
    mt_advance(x, done);
  } else if (w < 97) {
    mt_misuse_collective_calls(x);
  } else {
    mt_null_conveyor(x);
  }
}

/* Maley & DeVinney 2019, Figure 3 until COMPLETE, pushing up to `quota` more items while WORKING.
 */
static void drain(mt_ctx* x, int64_t quota) {
  long iters;
  for (iters = 0; iters < 100000 && x->m.st != M_COMPLETE; iters++) {
    uint64_t k;
    while (x->m.st == M_WORKING && quota > 0) {
      if (mt_push(x, (int64_t)mt_below(&x->rng, (uint64_t)g_pes), 0) != convey_OK) break;
      quota--;
    }
    for (k = 0; k < 64; k++) {
      const int kind = x->m.elastic ? M_EPULL : (int)mt_below(&x->rng, 2);
      if (mt_pull(x, kind, 0) != convey_OK) break;
      if (mt_below(&x->rng, 20) == 0) mt_unpull(x);
    }
    mt_advance(x, x->m.st != M_WORKING || quota == 0);
  }
  if (x->m.st != M_COMPLETE) mt_report(x, "no termination: the drain did not reach COMPLETE");
}

/* Exactly once per pair over the cycle: what every PE sent here = what was pulled. */
static void check_cycle(mt_ctx* x) {
  int64_t* expect = h_alloc(sizeof(int64_t) * (size_t)g_pes);
  int64_t q;
  MPI_Alltoall(x->m.sent, 1, MPI_INT64_T, expect, 1, MPI_INT64_T, MPI_COMM_WORLD);
  for (q = 0; q < g_pes; q++)
    if (expect[q] != x->m.recv[q]) {
      char msg[160];
      snprintf(msg, sizeof msg, "cycle %d: PE %lld sent %lld items here, %lld pulled (CAPI-60)",
               x->m.cycle, (long long)q, (long long)expect[q], (long long)x->m.recv[q]);
      mt_report(x, msg);
    }
  free(expect);
}

/* Builds this seed's conveyor; *max_item: the largest begin size that surely fits a buffer. */
static convey_t* construct(mt_rng* shared, int* elastic, size_t* bound, size_t* max_item) {
  const size_t caps[] = {64, 100, 256, 1024};
  const size_t cap = caps[mt_below(shared, 4)];
  const size_t nb = (size_t)1 << mt_below(shared, 3);
  const uint64_t opt = convey_opt_QUIET | (mt_below(shared, 3) == 0 ? convey_opt_PROGRESS : 0) |
                       (mt_below(shared, 4) == 0 ? convey_opt_DYNAMIC : 0);
  const int order = 1 + (int)mt_below(shared, 3);
  size_t nl = 1 + mt_below(shared, (uint64_t)g_pes);
  while (g_pes % (int64_t)nl) nl--;
  *elastic = 0;
  *bound = 0;
  *max_item = cap / 2; /* a buffer holds its header, the tags and at least this much */
  switch (mt_below(shared, 6)) {
    case 0:
    case 1:
      return convey_new_tensor(cap, order, nl, nb, NULL, opt);
    case 2:
      return convey_new(SIZE_MAX, 0, NULL, opt);
    case 3:
      *elastic = 1;
      *bound = 1 + mt_below(shared, 3 * cap);
      return convey_new_etensor(cap, *bound, order, nl, nb, NULL, opt);
    default:
      *elastic = 1;
      *bound = 1 + mt_below(shared, 3000);
      return convey_new_elastic(*bound, SIZE_MAX, 0, NULL, opt);
  }
}

/* Constructor misuse (collective): each must return NULL. */
static void bad_constructors(mt_ctx* x) {
  convey_t* c[3];
  int i;
  c[0] = convey_new_tensor(256, 4, 1, 2, NULL, convey_opt_QUIET);
  c[1] = convey_new_tensor(256, 2, 1, 3, NULL, convey_opt_QUIET);
  c[2] = g_pes > 1 ? convey_new_tensor(256, 2, (size_t)g_pes + 1, 2, NULL, convey_opt_QUIET) : NULL;
  for (i = 0; i < 3; i++)
    if (c[i]) {
      mt_report(x, "a constructor with invalid arguments did not return NULL (CAPI-65)");
      convey_free(c[i]);
    }
}

static void run_instance(mt_ctx* x, uint64_t seed) {
  mt_rng shared = {h_mix(seed)};
  int elastic, cycle, rc;
  size_t bound, max_item;
  const int cycles = 1 + (int)mt_below(&shared, 3);
  x->seed = seed;
  x->rng.state = h_mix(seed * 1000003u + (uint64_t)h_me);
  x->c = construct(&shared, &elastic, &bound, &max_item);
  if (!x->c) {
    mt_report(x, "constructor returned NULL");
    return;
  }
  if (((convey_features(x->c) & convey_ELASTIC) != 0) != elastic)
    mt_report(x, "feature ELASTIC does not match the constructor");
  m_init(&x->m, g_pes, h_me, seed, elastic, bound);
  /* After a failure the PE goes on with the same collective calls as the others. */
  for (cycle = 0; cycle < cycles; cycle++) {
    const size_t aligns[] = {0, 1, 2, 3, 4, 8, 16, 64, 128};
    size_t item = 1 + mt_below(&shared, mt_below(&shared, 2) ? 16 : 64);
    const size_t align = aligns[mt_below(&shared, 9)];
    long steps, s;
    if (item > max_item) item = max_item;
    if (elastic && item > bound) item = bound;
    if (mt_below(&shared, 3) == 0) { /* collective begin(0): ZERO, stays DORMANT */
      rc = convey_begin(x->c, 0, align);
      mt_report(x, m_begin(&x->m, 0, align, rc));
    }
    rc = convey_begin(x->c, item, align);
    mt_report(x, m_begin(&x->m, item, align, rc));
    if (rc != convey_OK) break;
    steps = 20 + (long)mt_below(&x->rng, 400);
    for (s = 0; s < steps; s++) random_call(x);
    drain(x, (int64_t)mt_below(&x->rng, 40));
    check_cycle(x);
    if (cycle + 1 < cycles || mt_below(&shared, 2)) {
      mt_release(x);
      rc = convey_reset(x->c);
      mt_report(x, m_reset(&x->m, rc));
    }
  }
  mt_release(x);
  {
    /* free is collective: if a PE could not finish (a failure above), stop every PE
     * rather than leave the others waiting inside free. */
    int stuck = x->m.st != M_DORMANT && x->m.st != M_COMPLETE;
    MPI_Allreduce(MPI_IN_PLACE, &stuck, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (stuck) {
      mt_report(x, "a PE could not reach DORMANT or COMPLETE: aborting");
      fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  rc = convey_free(x->c); /* DORMANT or COMPLETE */
  if (rc != convey_OK) mt_report(x, "free in DORMANT or COMPLETE did not return OK");
  m_destroy(&x->m);
}

static int parse_seeds(const char* s, uint64_t* a, uint64_t* b) {
  char* end;
  *a = strtoull(s, &end, 10);
  if (end == s || strncmp(end, "..", 2) != 0) return 0;
  *b = strtoull(end + 2, &end, 10);
  return *end == '\0' && *a <= *b;
}

int main(int argc, char** argv) {
  uint64_t first = 1, last = 12, seed;
  mt_ctx x;
  int rank, size, i;
  long long local[3], total[3];
  const char* env = getenv("CONVOY_MODEL_SEEDS");
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  g_pes = size;
  h_me = rank;
  memset(&x, 0, sizeof x);
  x.engine_unpull = 1; /* the engine's bug 1 is fixed: unpull is exercised there too */
  if (env && !parse_seeds(env, &first, &last)) h_fail(__FILE__, __LINE__, "bad CONVOY_MODEL_SEEDS");
  for (i = 1; i < argc; i++)
    if (!strcmp(argv[i], "bug-engine-unpull"))
      x.engine_unpull = 1;
    else if (strncmp(argv[i], "seeds=", 6) != 0 || !parse_seeds(argv[i] + 6, &first, &last))
      h_fail(__FILE__, __LINE__, "usage: %s [seeds=A..B] [bug-engine-unpull]", argv[0]);
  /* Whole cache lines per rank: MPICH 4.0 addresses a rank's part that does not start on 16
   * bytes 8 bytes off (aggregation/src/rma_window.cpp). */
  MPI_Win_allocate(((MPI_Aint)sizeof(int64_t) * (size + 1) + 63) / 64 * 64, sizeof(int64_t),
                   MPI_INFO_NULL, MPI_COMM_WORLD, &x.win_mem, &x.win);
  memset(x.win_mem, 0, sizeof(int64_t) * (size_t)(size + 1));
  x.peer = h_alloc(sizeof(int64_t) * (size_t)(size + 1));
  MPI_Barrier(MPI_COMM_WORLD);
  if (!h_failures) bad_constructors(&x);
  for (seed = first; seed <= last && !h_failures; seed++) {
    long failed;
    run_instance(&x, seed);
    failed = x.failures;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (failed) break; /* every PE stops at the same seed */
    if (seed == UINT64_MAX) break;
  }
  local[0] = x.calls;
  local[1] = x.items;
  local[2] = x.failures + h_failures;
  MPI_Reduce(local, total, 3, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf(
        "c_api model test: seeds %llu..%llu on %d PEs: %lld calls, %lld items pulled, %lld "
        "failures: %s\n",
        (unsigned long long)first, (unsigned long long)last, size, total[0], total[1], total[2],
        total[2] ? "FAIL" : "PASS");
  free(x.peer);
  MPI_Win_free(&x.win);
  MPI_Finalize();
  return local[2] ? 1 : 0;
}
