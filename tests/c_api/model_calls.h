/* Checked calls of the MPI model test: each makes one convey_* call on this PE, records it
 * in a short trace, and compares the result with the per-PE model (model_contract.h). */
#ifndef CONVOY_C_API_MODEL_CALLS_H
#define CONVOY_C_API_MODEL_CALLS_H

#include <convey.h>
#include <mpi.h>
#include <stdint.h>

#include "model_contract.h"

typedef struct {
  uint64_t state;
} mt_rng;
uint64_t mt_next(mt_rng* r);
/* Uniform in [0, n). */
uint64_t mt_below(mt_rng* r, uint64_t n);

typedef struct {
  convey_t* c;
  m_model m;
  mt_rng rng;    /* this PE's calls */
  uint64_t seed; /* the instance, for reports */
  MPI_Win win;   /* per PE: [0] cycle+1 when done was declared, [1..P] items sent */
  int64_t* win_mem;
  int64_t* peer;    /* scratch for one-sided reads */
  const void* held; /* apull/epull pointer that must stay valid until the next pull */
  size_t held_bytes;
  int64_t held_src, held_k;
  int held_cycle;
  /* Engine known bug 1 (tests/termination/model/model_test.cpp): on an elastic conveyor, no
   * unpull after a pull of an item from this PE followed by a push, unless engine_unpull. */
  int engine_unpull;
  int self_pull_pushed;
  long calls, items, failures;
  char trace[16][112];
  int trace_n;
} mt_ctx;

void mt_report(mt_ctx* x, const char* what);
/* Each returns the call's result (apull: convey_OK or convey_FAIL). */
int mt_push(mt_ctx* x, int64_t pe, int null_item);
int mt_epush(mt_ctx* x, int64_t pe, size_t bytes, int null_item);
int mt_pull(mt_ctx* x, int kind, int null_out);
int mt_unpull(mt_ctx* x);
int mt_advance(mt_ctx* x, int done);
void mt_misuse_collective_calls(mt_ctx* x); /* free/reset/begin where they are illegal */
void mt_null_conveyor(mt_ctx* x);
/* Checks the item held from the last apull/epull is unchanged, then forgets it. */
void mt_release(mt_ctx* x);

#endif
