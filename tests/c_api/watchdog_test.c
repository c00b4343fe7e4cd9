/* Programs that hang on purpose, for the watchdog (termination/README.md, TERM-15), run with
 * CONVOY_WATCHDOG set; the CTest wrapper (watchdog_expect.cmake) checks the diagnosis.
 *
 *   watchdog_test never_done R   rank R keeps advancing and pulling but never says done
 *   watchdog_test no_advance R   rank R pushes its share, then sleeps: no advance again
 *   watchdog_test unpulled R     rank R pushes and advances but never pulls: every path to
 *                                it fills and the others wait for room
 *   watchdog_test late R         rank R pauses in user code for 2.5 s before it says done:
 *                                one diagnosis (CONVOY_WATCHDOG=1), then the run ends, PASS
 *   watchdog_test busy           a normal run that makes progress for a few seconds, with
 *                                pauses shorter than the timeout: no diagnosis, PASS
 *   watchdog_test slow R [MS]    rank R pushes 8 items one at a time, advancing after each
 *                                and pausing MS ms (500) in user code before the next, while
 *                                the others said done long ago and wait (8 MS in all, several
 *                                timeouts): a slow but healthy rank, no diagnosis, PASS
 *
 * Every rank pushes `items` items round-robin over all ranks (itself included). */
#define _POSIX_C_SOURCE 200809L
#include <convey.h>
#include <convoy_test/c_verdict.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void pause_ms(long ms) {
  struct timespec t;
  t.tv_sec = ms / 1000;
  t.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&t, NULL);
}

/* Pulls everything that is ready; returns how many. */
static long pull_all(convey_t* c) {
  long n = 0;
  int64_t item = 0;
  int64_t from = 0;
  while (convey_pull(c, &item, &from) == convey_OK) ++n;
  return n;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "busy";
  const int victim = argc > 2 ? atoi(argv[2]) : -1;
  const int never_done = strcmp(mode, "never_done") == 0;
  const int no_advance = strcmp(mode, "no_advance") == 0;
  const int late = strcmp(mode, "late") == 0;
  const int unpulled = strcmp(mode, "unpulled") == 0;
  const int busy = strcmp(mode, "busy") == 0;
  const int slow = strcmp(mode, "slow") == 0;
  const long slow_ms = slow && argc > 3 ? atol(argv[3]) : 500;
  int me = 0, np = 1;
  long bad = 0;
  long items = unpulled ? 200000 : 2000;
  long pushed = 0;
  convey_t* c = NULL;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  c = convey_new(SIZE_MAX, 0, NULL, 0);
  if (!c || convey_begin(c, sizeof(int64_t), 0) != convey_OK) {
    fprintf(stderr, "watchdog_test: no conveyor\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (busy) items = 20000;
  if (slow && me == victim) items = 8;
  while (pushed < items) {
    const int64_t value = pushed;
    const int rc = convey_push(c, &value, (int64_t)((me + pushed) % np));
    if (rc == convey_OK) {
      ++pushed;
      /* busy: about 4 s of pushing, with pauses well below the timeout */
      if (busy && pushed % 1000 == 0) pause_ms(200);
      if (slow && me == victim) {
        pull_all(c);
        if (convey_advance(c, 0) < 0) ++bad;
        pause_ms(slow_ms);
      }
      continue;
    }
    if (rc < 0) ++bad;
    if (!(unpulled && me == victim)) pull_all(c);
    if (convey_advance(c, 0) < 0) ++bad;
  }
  if (no_advance && me == victim)
    for (;;) pause_ms(1000); /* in user code for good: only an abort ends it */
  if (late && me == victim) pause_ms(2500);
  for (;;) {
    const int done = !(never_done && me == victim);
    if (!(unpulled && me == victim)) pull_all(c);
    const int rc = convey_advance(c, done);
    if (rc == convey_DONE) break;
    if (rc < 0) {
      ++bad;
      break;
    }
  }
  convey_free(c);
  return convoy_test_verdict(bad, "watchdog %s on %d PEs", mode, np);
}
