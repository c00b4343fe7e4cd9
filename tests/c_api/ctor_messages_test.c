/* A constructor failure prints its message once for all PEs, from the lowest PE that
 * failed, and nothing under QUIET (CAPI-8). Run on several PEs; the CTest wrapper
 * (count_messages.cmake) counts the "convey:" lines of all of them. With
 * CONVOY_TRANSPORT=banana, or another bad setting and the argument bad-setting, the settings
 * error reaches the C user as that one message. */
#include <convey.h>
#include <convoy_test/c_verdict.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  int bad = 0;
  const char* transport = getenv("CONVOY_TRANSPORT");
  const int banana = (transport != NULL && strcmp(transport, "banana") == 0) ||
                     (argc > 1 && strcmp(argv[1], "bad-setting") == 0);
  MPI_Init(&argc, &argv);
  /* line 1: invalid arguments, the same on every PE */
  bad += convey_new_tensor(1024, 4, 1, 2, NULL, 0) != NULL;
  bad += convey_new_tensor(1024, 4, 1, 2, NULL, convey_opt_QUIET) != NULL;
  if (banana) { /* line 2: the invalid setting, once */
    bad += convey_new(SIZE_MAX, 0, NULL, 0) != NULL;
    bad += convey_new(SIZE_MAX, 0, NULL, convey_opt_QUIET) != NULL;
    bad += convey_new_tensor(1024, 1, 1, 2, NULL, convey_opt_QUIET) != NULL;
  } else { /* line 2: nothing fits, once */
    bad += convey_new(100, 0, NULL, 0) != NULL;
    bad += convey_new(100, 0, NULL, convey_opt_QUIET) != NULL;
  }
  return convoy_test_verdict(bad, "ctor messages");
}
