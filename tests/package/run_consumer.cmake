# convoy_run_consumer(<exe>): runs a consumer program as an MPI singleton (no launcher) and
# on 2 ranks; fails the test unless both exit 0 (the programs check every item).
# Expects MPIEXEC and MPIEXEC_FLAGS ('|'-separated).
function(convoy_run_consumer exe)
  execute_process(COMMAND ${exe} RESULT_VARIABLE rc)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "${exe} failed as a singleton: ${rc}")
  endif()
  string(REPLACE "|" ";" mflags "${MPIEXEC_FLAGS}")
  if(DEFINED ENV{LD_LIBRARY_PATH})
    list(APPEND mflags -x LD_LIBRARY_PATH)
  endif()
  execute_process(COMMAND ${MPIEXEC} -n 2 ${mflags} ${exe} RESULT_VARIABLE rc)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "${exe} failed on 2 ranks: ${rc}")
  endif()
endfunction()
