/* bench-construct: what a conveyor costs to build and free, beside what it costs to use
 * for a few items. For each constructor kind, `--conveyors N` conveyors are built one
 * after another; each runs `--cycles K` one-item cycles (begin, push one item to a random
 * PE, advance/pull until done, reset) and is freed. A call's time is the maximum over
 * ranks (each call starts after a barrier); the table gives the median and the fastest
 * over the N conveyors, and the first one's alone (it pays for what a process does once).
 * Every item is checked on arrival (its source) and counted: per conveyor, the items and
 * their sum received over all ranks must equal those pushed, else the program exits 1.
 *
 * A C program against convey.h only, so that it measures what a bale program pays. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_bench.h"
#include "convey.h"

enum kind { kind_new, kind_tensor, kind_simple, n_kinds };
static const char* const kind_names[n_kinds] = {"new", "tensor", "simple"};
static const char* const kind_calls[n_kinds] = {"convey_new(SIZE_MAX, 0, NULL, 0)",
                                                "convey_new_tensor(capacity, order, n_local, 2)",
                                                "convey_new_simple(capacity, NULL, NULL, 0)"};

typedef struct {
  long conveyors;
  long cycles;
  long capacity;
  long order;
  long n_local;
  int use[n_kinds];
} config;

static int rank_, n_ranks_;

static void usage(FILE* to) {
  fprintf(to,
          "usage: bench-construct [--conveyors N] [--cycles K] [--kinds new,tensor,simple]\n"
          "                       [--capacity BYTES] [--order 1|2|3] [--n-local L]\n"
          "  Builds N conveyors of each kind one after another (default 20), runs K one-item\n"
          "  cycles on each (default 5) and frees it; prints the median, fastest and first\n"
          "  time of construction + free and of a cycle, the maximum over ranks.\n"
          "  tensor: convey_new_tensor(capacity (default 16384), order (default 1), n_local\n"
          "  (default 1), 2 buffers). simple: convey_new_simple(capacity).\n");
}

static void parse(int argc, char** argv, config* c) {
  c->conveyors = 20;
  c->cycles = 5;
  c->capacity = 16384;
  c->order = 1;
  c->n_local = 1;
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
    if (!strcmp(a, "--conveyors")) {
      c->conveyors = cb_count("--conveyors: expected a count >= 1, got", v, 1);
    } else if (!strcmp(a, "--cycles")) {
      c->cycles = cb_count("--cycles: expected a count >= 0, got", v, 0);
    } else if (!strcmp(a, "--capacity")) {
      c->capacity = cb_count("--capacity: expected a byte count >= 64, got", v, 64);
    } else if (!strcmp(a, "--order")) {
      c->order = cb_count("--order: expected 1, 2 or 3, got", v, 1);
      if (c->order > 3) cb_bad("--order: expected 1, 2 or 3, got", v);
    } else if (!strcmp(a, "--n-local")) {
      c->n_local = cb_count("--n-local: expected a count >= 1, got", v, 1);
    } else if (!strcmp(a, "--kinds")) {
      cb_kinds(v, kind_names, n_kinds, c->use);
    } else {
      cb_bad("unknown option", a);
    }
  }
}

static convey_t* build(enum kind k, const config* c) {
  switch (k) {
    case kind_new:
      return convey_new(SIZE_MAX, 0, NULL, 0);
    case kind_tensor:
      return convey_new_tensor((size_t)c->capacity, (int)c->order, (size_t)c->n_local, 2, NULL, 0);
    case kind_simple:
      return convey_new_simple((size_t)c->capacity, NULL, NULL, 0);
    default:
      return NULL;
  }
}

/* Counts of one conveyor on this rank: [pushed, pushed sum, pulled, pulled sum, bad]. */
enum { n_counts = 5 };

/* One cycle: one item to a random PE, pulled wherever it lands. 0 on success. */
static int one_cycle(convey_t* cv, uint64_t serial, long long* counts) {
  if (convey_begin(cv, sizeof(uint64_t), sizeof(uint64_t)) != convey_OK) return 1;
  const uint64_t item = ((uint64_t)rank_ << 40) | serial;
  const int64_t pe = (int64_t)(cb_draw((uint64_t)rank_ + 1, serial) % (uint64_t)n_ranks_);
  int pushed = 0;
  for (;;) {
    if (!pushed) {
      const int rc = convey_push(cv, &item, pe);
      if (rc < 0) return 1;
      if (rc == convey_OK) {
        pushed = 1;
        counts[0] += 1;
        counts[1] += (long long)(item & 0xffffffffffULL);
      }
    }
    uint64_t got = 0;
    int64_t from = -1;
    int rc;
    while ((rc = convey_pull(cv, &got, &from)) == convey_OK) {
      counts[2] += 1;
      counts[3] += (long long)(got & 0xffffffffffULL);
      if ((int64_t)(got >> 40) != from) counts[4] += 1;
    }
    if (rc < 0) return 1;
    rc = convey_advance(cv, pushed);
    if (rc < 0) return 1;
    if (rc == convey_DONE) break;
  }
  return convey_reset(cv) < 0;
}

static double min_of(const double* v, long n) {
  double m = v[0];
  for (long i = 1; i < n; ++i)
    if (v[i] < m) m = v[i];
  return m;
}

/* Runs one kind; prints its row on rank 0. Returns 1 if every conveyor verified. */
static int run_kind(enum kind k, const config* c) {
  const long n = c->conveyors, nc = c->cycles > 0 ? c->cycles : 1;
  double* t_new = calloc((size_t)n, sizeof(double));
  double* t_free = calloc((size_t)n, sizeof(double));
  double* t_both = calloc((size_t)n, sizeof(double));
  double* t_cycle = calloc((size_t)(n * nc), sizeof(double));
  long long* counts = calloc((size_t)(n * n_counts), sizeof(long long));
  int failed = 0;
  for (long i = 0; i < n && !failed; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    convey_t* cv = build(k, c);
    t_new[i] = MPI_Wtime() - t0;
    if (!cv) {
      failed = 1;
      break;
    }
    for (long j = 0; j < c->cycles && !failed; ++j) {
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
      failed = one_cycle(cv, (uint64_t)(i * c->cycles + j), counts + i * n_counts);
      t_cycle[i * nc + j] = MPI_Wtime() - t0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (convey_free(cv) != convey_OK) failed = 1;
    t_free[i] = MPI_Wtime() - t0;
  }
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, t_new, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, t_free, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, t_cycle, (int)(n * nc), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, counts, (int)(n * n_counts), MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  int verified = !any_failed;
  for (long i = 0; i < n && verified; ++i) {
    const long long* s = counts + i * n_counts;
    if (s[0] != (long long)n_ranks_ * c->cycles || s[2] != s[0] || s[3] != s[1] || s[4] != 0)
      verified = 0;
  }
  if (rank_ == 0) {
    const double ms = 1e3;
    for (long i = 0; i < n; ++i) t_both[i] = t_new[i] + t_free[i];
    const double first = t_both[0] * ms, first_cycle = t_cycle[0] * ms;
    const double both_min = min_of(t_both, n) * ms, both_med = cb_median(t_both, n) * ms;
    const double new_med = cb_median(t_new, n) * ms, free_med = cb_median(t_free, n) * ms;
    double cyc_min = 0, cyc_med = 0;
    if (c->cycles > 0) {
      cyc_min = min_of(t_cycle, n * nc) * ms;
      cyc_med = cb_median(t_cycle, n * nc) * ms;
    }
    printf("%-7s %5ld %11.3f %9.3f %9.3f %9.3f %9.3f %6ld %11.3f %9.3f %9.3f %8d\n", kind_names[k],
           n, both_med, both_min, new_med, free_med, first, c->cycles > 0 ? n * c->cycles : 0,
           cyc_med, cyc_min, first_cycle, verified);
    fflush(stdout);
  }
  free(t_new);
  free(t_free);
  free(t_both);
  free(t_cycle);
  free(counts);
  return verified;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  cb_rank = rank_;
  cb_prog = "bench-construct";
  MPI_Comm_size(MPI_COMM_WORLD, &n_ranks_);
  config c;
  parse(argc, argv, &c);
  if (rank_ == 0) {
    printf(
        "# bench-construct: %d ranks, %ld conveyors per kind, %ld one-item cycles each;\n"
        "# times in ms, maximum over ranks; median/min over the conveyors, first = the "
        "first conveyor\n",
        n_ranks_, c.conveyors, c.cycles);
    for (int k = 0; k < n_kinds; ++k)
      if (c.use[k]) printf("#   %-7s %s\n", kind_names[k], kind_calls[k]);
    printf("%-7s %5s %11s %9s %9s %9s %9s %6s %11s %9s %9s %8s\n", "kind", "calls", "new+free",
           "min", "new", "free", "first", "cycles", "cycle", "min", "first", "verified");
  }
  int ok = 1;
  for (int k = 0; k < n_kinds; ++k)
    if (c.use[k] && !run_kind((enum kind)k, &c)) ok = 0;
  MPI_Finalize();
  return ok ? 0 : 1;
}
