# Checks which way two builds of one C program call convey.h's hot calls, from their
# undefined symbols (nm -u): INLINE (the default) must reference the versioned slow paths
# (convoy_v1_push, ...) and none of convey_push/convey_pull/convey_apull; OUT_OF_LINE
# (CONVOY_NO_INLINE) must reference convey_push and convey_apull or convey_pull.
# The same for biconvey.h's biconvey_push and biconvey_pull.
foreach(prog INLINE OUT_OF_LINE)
  execute_process(COMMAND ${NM} -u ${${prog}} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm -u ${${prog}} failed (${rc})")
  endif()
  set(${prog}_syms "${syms}")
endforeach()
foreach(f convey_push convey_pull convey_apull biconvey_push biconvey_pull)
  if(INLINE_syms MATCHES "[ \n]${f}\n")
    message(FATAL_ERROR "${INLINE}: ${f} is called out of line; convey.h should inline it")
  endif()
endforeach()
foreach(f convoy_v1_push convoy_v1_pull convoy_v1_bipush convoy_v1_bipull)
  if(NOT INLINE_syms MATCHES "[ \n]${f}\n")
    message(FATAL_ERROR "${INLINE}: no reference to ${f}; the inline calls are not used")
  endif()
endforeach()
if(NOT OUT_OF_LINE_syms MATCHES "[ \n]convey_push\n" OR
   NOT OUT_OF_LINE_syms MATCHES "[ \n]biconvey_push\n" OR OUT_OF_LINE_syms MATCHES "convoy_v1_")
  message(FATAL_ERROR "${OUT_OF_LINE}: CONVOY_NO_INLINE should call convey_push, not the inline path")
endif()
message(STATUS "inline: ${INLINE}; out of line: ${OUT_OF_LINE}")
