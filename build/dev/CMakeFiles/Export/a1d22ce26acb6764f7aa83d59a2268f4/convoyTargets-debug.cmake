#----------------------------------------------------------------
# Generated CMake target import file for configuration "Debug".
#----------------------------------------------------------------

# Commands may need to know the format version.
set(CMAKE_IMPORT_FILE_VERSION 1)

# Import target "convoy::topology" for configuration "Debug"
set_property(TARGET convoy::topology APPEND PROPERTY IMPORTED_CONFIGURATIONS DEBUG)
set_target_properties(convoy::topology PROPERTIES
  IMPORTED_LINK_INTERFACE_LANGUAGES_DEBUG "CXX"
  IMPORTED_LOCATION_DEBUG "${_IMPORT_PREFIX}/lib/libconvoy_topology.a"
  )

list(APPEND _cmake_import_check_targets convoy::topology )
list(APPEND _cmake_import_check_files_for_convoy::topology "${_IMPORT_PREFIX}/lib/libconvoy_topology.a" )

# Commands beyond this point should not need to know the version.
set(CMAKE_IMPORT_FILE_VERSION)
