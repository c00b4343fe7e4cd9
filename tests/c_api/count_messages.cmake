# Runs PROGRAM with the arguments ARGS (a list; through LAUNCHER, a list, if given) and
# fails unless it exits 0 and prints exactly EXPECT lines starting with "convey:" on
# stderr, and, if MATCH is given, stderr matches that regular expression.
execute_process(COMMAND ${LAUNCHER} ${PROGRAM} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
string(REPLACE ";" "," plain "${err}")  # a ';' in a message would split a CMake list entry
string(REGEX MATCHALL "(^|\n)convey:[^\n]*" lines "${plain}")
list(LENGTH lines n)
if(NOT rc EQUAL 0 OR NOT n EQUAL EXPECT)
  message(FATAL_ERROR "exit ${rc}, ${n} message lines (expected ${EXPECT}):\n${err}\n${out}")
endif()
if(DEFINED MATCH AND NOT err MATCHES "${MATCH}")
  message(FATAL_ERROR "stderr does not match '${MATCH}':\n${err}")
endif()
