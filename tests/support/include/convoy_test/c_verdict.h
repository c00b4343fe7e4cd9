/* The ending the C test programs share (C99 and MPI only): the PEs agree on the verdict,
 * PE 0 prints one line "<description>: PASS" or "<description>: FAIL", MPI is finalized,
 * and the exit status is 0 or 1 (any PE's failure fails every PE).
 *
 *   return convoy_test_verdict(h_failures, "bale codes on %d PEs", np);
 */
#ifndef CONVOY_TEST_C_VERDICT_H
#define CONVOY_TEST_C_VERDICT_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>

/* Collective over MPI_COMM_WORLD; `failures` is this PE's count, `fmt` a printf format of
 * the description. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline int
convoy_test_verdict(long failures, const char* fmt, ...) {
  int me = 0, bad = failures != 0, any = 0;
  va_list ap;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (me == 0) {
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf(": %s\n", any ? "FAIL" : "PASS");
    fflush(stdout);
  }
  MPI_Finalize();
  return any ? 1 : 0;
}

#endif
