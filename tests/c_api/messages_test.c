/* Errors are printed once per code and conveyor, constructor failures once per text, and
 * nothing under QUIET (conveyor_api/README.md, CAPI-9). The CTest wrapper
 * (count_messages.cmake) counts the "convey:" lines on stderr: exactly 3 are expected. */
#include <convey.h>
#include <stdio.h>

int main(void) {
  long item = 0;
  int k, bad = 0;
  convey_t* loud = convey_new_simple(1024, NULL, NULL, 0);
  convey_t* quiet = convey_new_simple(1024, NULL, NULL, convey_opt_QUIET);
  if (!loud || !quiet) return 1;
  for (k = 0; k < 3; k++) {
    bad += convey_push(loud, &item, 0) != convey_error_STATE;    /* line 1 */
    bad += convey_pull(loud, &item, NULL) != convey_error_STATE; /* same code: suppressed */
    bad += convey_begin(loud, 0, 0) != convey_error_ZERO;        /* line 2 */
    bad += convey_push(quiet, &item, 0) != convey_error_STATE;   /* QUIET: nothing */
    bad += convey_new_tensor(1024, 4, 1, 2, NULL, 0) != NULL;    /* line 3, once */
    bad += convey_new_tensor(1024, 4, 1, 2, NULL, convey_opt_QUIET) != NULL;
  }
  bad += convey_free(loud) != convey_OK;
  bad += convey_free(quiet) != convey_OK;
  printf("messages: %s\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
