/* A bale program in miniature, written only against convey.h: built by the install
 * consumer test with `cc $(pkg-config --cflags --libs convey)`. It never calls MPI. */
#include <convey.h>
#include <stdio.h>

int main(void) {
  convey_t* c = convey_new(SIZE_MAX, 0, NULL, 0);
  long i = 0, n = 1000, got = 0, item;
  int64_t from;
  if (!c || convey_begin(c, sizeof(long), 0) != convey_OK) return 1;
  while (convey_advance(c, i == n)) {
    for (; i < n; i++)
      if (!convey_push(c, &i, 0)) break; /* everyone sends to PE 0 */
    while (convey_pull(c, &item, &from)) got++;
  }
  if (convey_reset(c) != convey_OK || convey_free(c) != convey_OK) return 1;
  printf("consumer (%s): pulled %ld items\n", convey_version, got);
  return 0;
}
