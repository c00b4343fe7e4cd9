# Installs BUILD_DIR into a fresh prefix and moves the tree to PREFIX (the fixture of the
# package tests): every consumer then uses a prefix other than the one installed to.
cmake_minimum_required(VERSION 3.25)
set(installed ${PREFIX}-installed)
file(REMOVE_RECURSE ${PREFIX} ${installed})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${installed}
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${installed} failed: ${rc}")
endif()
file(RENAME ${installed} ${PREFIX})
