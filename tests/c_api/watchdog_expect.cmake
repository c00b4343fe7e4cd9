# Runs PROGRAM with ARGS through LAUNCHER (lists) under the environment CTest gives, and
# checks the watchdog's output on stderr (termination/README.md, TERM-15):
#   EXPECT  the number of diagnoses (lines "convoy watchdog: rank N has made no progress");
#   MATCH   a regular expression the likely cause must match (EXPECT 1);
#   SECONDS the watchdog's timeout: the stall the diagnosis reports is at most twice that;
#   EXIT    "nonzero" (CONVOY_WATCHDOG_ABORT=1 ends the job) or "zero".
string(TIMESTAMP start "%s")
execute_process(COMMAND ${LAUNCHER} ${PROGRAM} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 120)
string(TIMESTAMP stop "%s")
math(EXPR elapsed "${stop} - ${start}")
set(all "exit ${rc} after ${elapsed} s; stderr:\n${err}\nstdout:\n${out}")
string(REGEX MATCHALL "convoy watchdog: rank [0-9]+ has made no progress for [0-9.]+ s" heads
       "${err}")
list(LENGTH heads n)
if(NOT n EQUAL EXPECT)
  message(FATAL_ERROR "${n} diagnoses (expected ${EXPECT}); ${all}")
endif()
if(EXIT STREQUAL "nonzero" AND rc EQUAL 0)
  message(FATAL_ERROR "the job should have been aborted; ${all}")
endif()
if(EXIT STREQUAL "zero" AND NOT rc EQUAL 0)
  message(FATAL_ERROR "the job should have succeeded; ${all}")
endif()
if(EXPECT EQUAL 1)
  if(NOT err MATCHES "likely cause:\n    ${MATCH}")
    message(FATAL_ERROR "the likely cause does not match '${MATCH}'; ${all}")
  endif()
  string(REGEX REPLACE ".*no progress for ([0-9.]+) s.*" "\\1" stalled "${heads}")
  # Within twice the timeout, in tenths of a second (CMake's math is integer only).
  string(REGEX REPLACE "^([0-9]+)\\.([0-9]).*" "\\1\\2" tenths "${stalled}")
  math(EXPR limit "${SECONDS} * 20")
  if(tenths GREATER limit)
    message(FATAL_ERROR "diagnosed after ${stalled} s, more than twice ${SECONDS} s; ${all}")
  endif()
  # Exactly one cause line: the other ranks are not blamed.
  string(REPLACE ";" "," plain "${err}")  # a ';' would split a CMake list entry
  string(REGEX MATCHALL "\n    rank [0-9]+ [^\n]*" causes "${plain}")
  list(LENGTH causes n_causes)
  if(NOT n_causes EQUAL 1)
    message(FATAL_ERROR "${n_causes} cause lines (expected 1); ${all}")
  endif()
endif()
message(STATUS "${all}")
