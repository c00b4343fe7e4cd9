# Runs PROG with ARGS (a ;-list passed as a |-separated string) and requires exit status 2
# and a "convoy-route:" message on stderr (a usage error, not a crash).
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${PROG} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit status 2, got ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT err MATCHES "convoy-route: ")
  message(FATAL_ERROR "expected a convoy-route: message on stderr, got: ${err}")
endif()
message(STATUS "usage error as expected: ${err}")
