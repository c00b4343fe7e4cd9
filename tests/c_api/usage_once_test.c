/* Usage errors are printed once per job, not once per PE (conveyor_api/README.md, CAPI-9),
 * and absurd constructor arguments are refused with one message (CAPI-8). The CTest wrapper
 * (count_messages.cmake) counts the "convey:" lines on the job's stderr.
 *
 *   usage_once_test all     every PE pushes to PE -1 and to PE n_pes on conveyor A, then
 *                           pushes before begin on A, then to PE -1 on conveyor B:
 *                           3 lines (RANGE and STATE on A, RANGE on B)
 *   usage_once_test rank2   only PE 2 pushes to PE n_pes: 1 line, naming PE 2
 *   usage_once_test ctors   each constructor with a size no machine has: NULL, 5 lines
 *                           (convey_new_twohop, deprecated, is checked by convey_test) */
#include <convey.h>
#include <convoy_test/c_verdict.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static long g_bad = 0;
#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "check failed at line %d: %s\n", __LINE__, #cond); \
      g_bad++;                                                           \
    }                                                                    \
  } while (0)

/* Runs `c` to COMPLETE with nothing pushed and resets it. */
static void drain(convey_t* c) {
  long item = 0;
  while (convey_advance(c, 1) != convey_DONE)
    while (convey_pull(c, &item, NULL) == convey_OK) {
    }
  CHECK(convey_reset(c) == convey_OK);
}

static void misuse(int me, int np, int all) {
  long item = 7;
  int k;
  convey_t* a = convey_new_simple(1024, NULL, NULL, 0);
  convey_t* b = convey_new_simple(1024, NULL, NULL, 0);
  CHECK(a && b);
  if (!a || !b) return;
  if (all) CHECK(convey_push(a, &item, 0) == convey_error_STATE); /* before begin */
  CHECK(convey_begin(a, sizeof item, 0) == convey_OK);
  CHECK(convey_begin(b, sizeof item, 0) == convey_OK);
  for (k = 0; k < 3; k++)
    if (all || me == 2) {
      CHECK(convey_push(a, &item, np) == convey_error_RANGE);
      if (all) CHECK(convey_push(a, &item, -1) == convey_error_RANGE);
    }
  if (all) CHECK(convey_push(b, &item, -1) == convey_error_RANGE);
  /* Every PE has reported (or not) before any PE frees its conveyors. */
  MPI_Barrier(MPI_COMM_WORLD);
  drain(a);
  drain(b);
  CHECK(convey_free(a) == convey_OK);
  CHECK(convey_free(b) == convey_OK);
}

static void ctors(void) {
  const size_t huge = SIZE_MAX;
  CHECK(convey_new(huge, huge, NULL, 0) == NULL);                  /* n_local > PEs */
  CHECK(convey_new_simple(huge, NULL, NULL, 0) == NULL);           /* capacity */
  CHECK(convey_new_tensor(huge, 1, 1, 1, NULL, 0) == NULL);        /* capacity */
  CHECK(convey_new_etensor(1024, huge, 1, 1, 1, NULL, 0) == NULL); /* monster_bytes */
  CHECK(convey_new_elastic(huge, huge, 0, NULL, 0) == NULL);       /* item_bound */
  /* Refused quietly under QUIET. */
  CHECK(convey_new(huge, huge, NULL, convey_opt_QUIET) == NULL);
  CHECK(convey_new_simple(huge, NULL, NULL, convey_opt_QUIET) == NULL);
}

int main(int argc, char** argv) {
  int me = 0, np = 1;
  const char* mode = argc > 1 ? argv[1] : "all";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (strcmp(mode, "ctors") == 0)
    ctors();
  else
    misuse(me, np, strcmp(mode, "all") == 0);
  return convoy_test_verdict(g_bad, "usage errors once per job (%s) on %d PEs", mode, np);
}
