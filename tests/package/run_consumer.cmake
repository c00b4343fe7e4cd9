# convoy_run_consumer(<exe>): runs a consumer program as an MPI singleton (no launcher) and
# on 2 ranks; fails the test unless both exit 0 (the programs check every item).
# Expects MPIEXEC and MPIEXEC_FLAGS ('|'-separated). With CLEAN_ENV ('|'-separated
# VAR=value) both run under `env -i PATH=/usr/bin:/bin` and those variables alone, so
# that nothing (no LD_LIBRARY_PATH) helps the program find its libraries.
function(convoy_run_consumer exe)
  set(prefix)
  if(DEFINED CLEAN_ENV)
    string(REPLACE "|" ";" clean "${CLEAN_ENV}")
    set(prefix env -i PATH=/usr/bin:/bin ${clean})
  endif()
  execute_process(COMMAND ${prefix} ${exe} RESULT_VARIABLE rc)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "${exe} failed as a singleton: ${rc}")
  endif()
  string(REPLACE "|" ";" mflags "${MPIEXEC_FLAGS}")
  if(DEFINED ENV{LD_LIBRARY_PATH} AND NOT DEFINED CLEAN_ENV)
    list(APPEND mflags -x LD_LIBRARY_PATH)
  endif()
  execute_process(COMMAND ${prefix} ${MPIEXEC} -n 2 ${mflags} ${exe} RESULT_VARIABLE rc)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "${exe} failed on 2 ranks: ${rc}")
  endif()
endfunction()
