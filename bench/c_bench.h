/* What the C benchmark programs (bench-construct, bench-bigather) share: command-line
 * errors printed once (rank 0) with status 2, counts, kind lists, a counter-based random
 * draw and the median. Each program sets cb_prog and cb_rank after MPI_Init. Valid C99. */
#ifndef CONVOY_BENCH_C_BENCH_H
#define CONVOY_BENCH_C_BENCH_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* cb_prog = "bench";
static int cb_rank;

/* A bad command line: one message (rank 0) and status 2. */
static void cb_bad(const char* what, const char* arg) {
  if (cb_rank == 0) fprintf(stderr, "%s: %s '%s' (see --help)\n", cb_prog, what, arg);
  MPI_Finalize();
  exit(2);
}

/* A whole count >= min (1e6 allowed), else cb_bad(opt, text). */
static long cb_count(const char* opt, const char* text, long min) {
  char* end = NULL;
  const double v = strtod(text, &end);
  if (!text[0] || *end || v < (double)min || v > 1e15 || v != (double)(long)v) cb_bad(opt, text);
  return (long)v;
}

/* A comma-separated list of names out of `names` (n of them): sets use[k] for those given,
   clears the others; an unknown name is cb_bad. */
static void cb_kinds(const char* list_text, const char* const* names, int n, int* use) {
  char list[256];
  if (strlen(list_text) >= sizeof list) cb_bad("--kinds: too long", list_text);
  strcpy(list, list_text);
  for (int k = 0; k < n; ++k) use[k] = 0;
  for (char* t = strtok(list, ","); t; t = strtok(NULL, ",")) {
    int found = 0;
    for (int k = 0; k < n; ++k)
      if (!strcmp(t, names[k])) use[k] = found = 1;
    if (!found) cb_bad("--kinds: unknown kind", t);
  }
}

/* A counter-based draw (splitmix64 of seed and i): the same for every run. */
static uint64_t cb_draw(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ULL + i + 0x632be59bd9b4e019ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int cb_cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v); n >= 1. */
static double cb_median(double* v, long n) {
  qsort(v, (size_t)n, sizeof *v, cb_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif /* CONVOY_BENCH_C_BENCH_H */
