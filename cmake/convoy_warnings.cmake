# Warnings and sanitizers travel through PRIVATE interface targets so that they are
# never leaked to users of the installed package.
add_library(convoy_warnings INTERFACE)
target_compile_options(convoy_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
     -Woverloaded-virtual -Wcast-align -Wimplicit-fallthrough>
  $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic -Wshadow>
  $<$<BOOL:${CONVOY_WERROR}>:-Werror>)

# CONVOY_PROGRAMS_O0 (the dev preset): the programs' own code — the test programs, the
# command-line tools, the benchmark programs — compiles at -O0, which halves its compile
# time under the sanitizers, and without debug information, which takes another third (a
# failing test still names its file and line, and the sanitizers' stacks name the
# programs' functions and the libraries' lines; CONVOY_PROGRAMS_DEBUG_INFO keeps -g). The
# libraries they exercise keep their flags. A program whose own code does heavy work (a
# model, a large oracle) sets the target property CONVOY_OPTIMIZED to keep the build
# type's optimization.
add_library(convoy_program_flags INTERFACE)
target_compile_options(convoy_program_flags INTERFACE
  $<$<AND:$<BOOL:${CONVOY_PROGRAMS_O0}>,$<NOT:$<BOOL:$<TARGET_PROPERTY:CONVOY_OPTIMIZED>>>>:-O0>)
if(CONVOY_PROGRAMS_O0 AND NOT CONVOY_PROGRAMS_DEBUG_INFO)
  target_compile_options(convoy_program_flags INTERFACE -g0)
endif()

if(CONVOY_SANITIZE)
  # Applied to every target of the build, libraries and tests alike.
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# convoy_component(<comp> [SOURCES ...] [HEADERS ...] [DEPENDS ...] [PRIVATE_DEPENDS ...])
# Declares convoy_<comp> with alias convoy::<comp>. It exports only its own include
# directory, so a layering slip (a lower component including a higher one) fails to
# compile. Without SOURCES the component is an INTERFACE (header-only) target.
# HEADERS: every public header, relative to include/ (e.g. convoy/base/error.hpp); the test
# build compiles each alone (convoy_add_header_tests, cmake/convoy_testing.cmake).
# DEPENDS must be exactly the components that the sources and public headers include.
function(convoy_component comp)
  cmake_parse_arguments(ARG "" "" "SOURCES;HEADERS;DEPENDS;PRIVATE_DEPENDS" ${ARGN})
  set(tgt convoy_${comp})
  if(ARG_SOURCES)
    add_library(${tgt} STATIC ${ARG_SOURCES})
    target_include_directories(${tgt} PUBLIC
      $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(${tgt} PUBLIC ${ARG_DEPENDS} PRIVATE $<BUILD_INTERFACE:convoy_warnings> ${ARG_PRIVATE_DEPENDS})
    target_compile_features(${tgt} PUBLIC cxx_std_20)
  else()
    add_library(${tgt} INTERFACE)
    target_include_directories(${tgt} INTERFACE
      $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(${tgt} INTERFACE ${ARG_DEPENDS})
    target_compile_features(${tgt} INTERFACE cxx_std_20)
  endif()
  foreach(h IN LISTS ARG_HEADERS)
    if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/include/${h})
      message(FATAL_ERROR "convoy_component(${comp}): header include/${h} does not exist")
    endif()
  endforeach()
  set_target_properties(${tgt} PROPERTIES EXPORT_NAME ${comp} CONVOY_HEADERS "${ARG_HEADERS}")
  add_library(convoy::${comp} ALIAS ${tgt})
  set_property(GLOBAL APPEND PROPERTY CONVOY_COMPONENTS ${tgt})
endfunction()
