/* A bale program in miniature, written only against the installed convey.h (and convoy's
 * convey_ext.h for the PE count): built by the package tests with
 * `cc $(pkg-config --cflags --libs convey)`, with convey-static (libconvey.a), and through
 * find_package(convoy). It never calls MPI, unless built with CONSUMER_CALLS_MPI: then it
 * initialises and finalises MPI itself, checks that convey's PEs are MPI's ranks and sums
 * the wrong items over every rank (what needs MPI's headers and library from convey.pc).
 * Every PE sends item me * n + i to PE i % P; each receiver checks source, content, FIFO
 * per source and the count it must get. Exit code 0 only if this PE saw exactly its items. */
#include <convey.h>
#include <convoy/convey_ext.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef CONSUMER_CALLS_MPI
#include <mpi.h>
#endif

int main(void) {
#ifdef CONSUMER_CALLS_MPI
  int mpi_rank = -1, mpi_size = 0;
  long bad_anywhere = 0;
  MPI_Init(NULL, NULL);
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
#endif
  convey_t* c = convey_new(SIZE_MAX, 0, NULL, 0);
  const long n = 1000;
  long i = 0, got = 0, bad = 0, item, me, p, expected;
  long* next; /* per source: the next i it must send me */
  int64_t from;
  if (!c) return 1;
  me = (long)convoy_convey_my_pe(c);
  p = (long)convoy_convey_n_pes(c);
  next = malloc((size_t)p * sizeof *next);
  if (!next || convey_begin(c, sizeof(long), 0) != convey_OK) return 1;
  for (from = 0; from < p; from++) next[from] = me;
  while (convey_advance(c, i == n)) {
    for (; i < n; i++) {
      item = me * n + i;
      if (!convey_push(c, &item, i % p)) break;
    }
    while (convey_pull(c, &item, &from)) {
      got++;
      if (from < 0 || from >= p || item != from * n + next[from])
        bad++;
      else
        next[from] += p;
    }
  }
  if (convey_reset(c) != convey_OK || convey_free(c) != convey_OK) return 1;
  free(next);
  expected = p * ((n - me + p - 1) / p);
  printf("consumer (%s) PE %ld of %ld: pulled %ld items, expected %ld, %ld wrong\n", convey_version,
         me, p, got, expected, bad);
#ifdef CONSUMER_CALLS_MPI
  if (mpi_rank != me || mpi_size != p) return 1;
  MPI_Allreduce(&bad, &bad_anywhere, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (bad_anywhere != 0) return 1;
#endif
  return got == expected && bad == 0 ? 0 : 1;
}
