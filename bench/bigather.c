/* bench-bigather: index-gather through a biconveyor (biconvey.h), as a bale program writes
 * it: every rank reads `--items` random entries of a table spread over all ranks (`--table`
 * 8-byte entries per rank), one biconvey_push per query and one biconvey_pull per reply.
 * Built twice: bench-bigather with biconvey.h's inline push and pull, bench-bigather-ool
 * with CONVOY_NO_INLINE (the exported functions, what objects compiled against another
 * biconvey.h call), so that one run of each compares the two.
 *
 * Each repetition times the kernel from a barrier to the last rank's DONE (the maximum over
 * ranks) and checks every reply against the table's formula; a wrong or missing reply exits
 * 1. Prints one RESULT line per kind with the median items/s per rank over `--reps`.
 *
 * A C program against convey.h and biconvey.h only. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "biconvey.h"
#include "c_bench.h"
#include "convey.h"

#ifdef CONVOY_NO_INLINE
#define CALLS "out-of-line"
#else
#define CALLS "inline"
#endif

enum kind { kind_new, kind_tensor, kind_simple, n_kinds };
static const char* const kind_names[n_kinds] = {"new", "tensor", "simple"};

typedef struct {
  long items;
  long table;
  long reps;
  long capacity;
  int use[n_kinds];
} config;

static int rank_, n_ranks_;

static void usage(FILE* to) {
  fprintf(to,
          "usage: bench-bigather [--items N] [--table T] [--reps R] [--kinds new,tensor,simple]\n"
          "                      [--capacity BYTES]\n"
          "  Index-gather of N random 8-byte entries per rank (default 1000000) from a table\n"
          "  of T entries per rank (default 1000000) through a biconveyor, R timed\n"
          "  repetitions (default 5) after one warm-up. tensor: biconvey_new_tensor(capacity\n"
          "  (default 16384), order 1); simple: biconvey_new_simple(capacity); new:\n"
          "  biconvey_new(SIZE_MAX, 0).\n");
}

static void parse(int argc, char** argv, config* c) {
  c->items = 1000000;
  c->table = 1000000;
  c->reps = 5;
  c->capacity = 16384;
  for (int k = 0; k < n_kinds; ++k) c->use[k] = 1;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (rank_ == 0) usage(stdout);
      MPI_Finalize();
      exit(0);
    }
    if (i + 1 >= argc) cb_bad("unknown option or missing value", a);
    const char* v = argv[++i];
    if (!strcmp(a, "--items")) {
      c->items = cb_count("--items: expected a count >= 1, got", v, 1);
    } else if (!strcmp(a, "--table")) {
      c->table = cb_count("--table: expected a count >= 1, got", v, 1);
    } else if (!strcmp(a, "--reps")) {
      c->reps = cb_count("--reps: expected a count >= 1, got", v, 1);
    } else if (!strcmp(a, "--capacity")) {
      c->capacity = cb_count("--capacity: expected a byte count >= 64, got", v, 64);
    } else if (!strcmp(a, "--kinds")) {
      cb_kinds(v, kind_names, n_kinds, c->use);
    } else {
      cb_bad("unknown option", a);
    }
  }
}

static biconvey_t* build(enum kind k, const config* c) {
  switch (k) {
    case kind_new:
      return biconvey_new(SIZE_MAX, 0, NULL, 0);
    case kind_tensor:
      return biconvey_new_tensor((size_t)c->capacity, 1, 1, 2, NULL, 0);
    case kind_simple:
      return biconvey_new_simple((size_t)c->capacity, NULL, NULL, 0);
    default:
      return NULL;
  }
}

/* The table's entry `i` on rank `r`: what every reply is checked against. */
static uint64_t entry(uint64_t r, uint64_t i) { return (r << 40) ^ (i * 0x9e3779b97f4a7c15ULL); }

static void answer(const void* query, void* reply, void* context) {
  const uint64_t* table = context;
  uint64_t i;
  memcpy(&i, query, sizeof i);
  memcpy(reply, &table[i], sizeof table[i]);
}

/* One repetition: seconds (this rank), or a negative value on a failure. `index` holds the
   global indices; every reply is compared with entry(). */
static double gather(biconvey_t* b, const config* c, const uint64_t* index, uint64_t* table,
                     long* wrong) {
  const uint64_t T = (uint64_t)c->table;
  const long n = c->items;
  long i = 0, j = 0;
  if (biconvey_begin(b, sizeof(uint64_t), sizeof(uint64_t), answer, table) != convey_OK) return -1;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  int rc;
  while ((rc = biconvey_advance(b, i == n)) != convey_DONE) {
    if (rc < 0) return -1;
    for (; i < n; ++i) {
      const uint64_t local = index[i] % T;
      if (biconvey_push(b, &local, (int64_t)(index[i] / T)) != convey_OK) break;
    }
    uint64_t r;
    while (biconvey_pull(b, &r) == convey_OK) {
      if (j >= n || r != entry(index[j] / T, index[j] % T)) ++*wrong;
      ++j;
    }
  }
  const double t = MPI_Wtime() - t0;
  if (j != n) *wrong += 1;
  if (biconvey_reset(b) != convey_OK) return -1;
  return t;
}

/* Runs one kind; prints its RESULT line on rank 0. Returns 1 if every reply verified. */
static int run_kind(enum kind k, const config* c, const uint64_t* index, uint64_t* table) {
  biconvey_t* b = build(k, c);
  long wrong = 0;
  int failed = b == NULL;
  double* times = calloc((size_t)c->reps, sizeof(double));
  for (long rep = -1; rep < c->reps && !failed; ++rep) {
    double t = gather(b, c, index, table, &wrong);
    failed = t < 0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rep >= 0) times[rep] = t;
  }
  if (b && biconvey_free(b) != convey_OK) failed = 1;
  long bad_count = wrong + failed;
  MPI_Allreduce(MPI_IN_PLACE, &bad_count, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) {
    const double med = cb_median(times, c->reps);
    printf(
        "RESULT prog=bench-bigather calls=%s kind=%s ranks=%d items=%ld table=%ld "
        "seconds=%.6f items_per_s_per_rank=%.4g verified=%d\n",
        CALLS, kind_names[k], n_ranks_, c->items, c->table, med,
        med > 0 ? (double)c->items / med : 0.0, bad_count == 0);
  }
  free(times);
  return bad_count == 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  cb_rank = rank_;
  cb_prog = "bench-bigather";
  MPI_Comm_size(MPI_COMM_WORLD, &n_ranks_);
  config c;
  parse(argc, argv, &c);
  uint64_t* table = malloc(sizeof(uint64_t) * (size_t)c.table);
  uint64_t* index = malloc(sizeof(uint64_t) * (size_t)c.items);
  if (!table || !index) cb_bad("out of memory for --items/--table", "");
  for (long i = 0; i < c.table; ++i) table[i] = entry((uint64_t)rank_, (uint64_t)i);
  const uint64_t span = (uint64_t)c.table * (uint64_t)n_ranks_;
  for (long i = 0; i < c.items; ++i) index[i] = cb_draw((uint64_t)rank_ + 7, (uint64_t)i) % span;
  int ok = 1;
  for (int k = 0; k < n_kinds; ++k)
    if (c.use[k]) ok &= run_kind((enum kind)k, &c, index, table);
  free(index);
  free(table);
  MPI_Finalize();
  return ok ? 0 : 1;
}
