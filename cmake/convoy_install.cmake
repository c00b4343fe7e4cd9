# Installs the component libraries and headers with an exported CMake package:
# find_package(convoy) -> convoy::convoy (umbrella), convoy::<comp>, convoy::convey(_static).
include(CMakePackageConfigHelpers)
get_property(convoy_components GLOBAL PROPERTY CONVOY_COMPONENTS)
install(TARGETS ${convoy_components} convoy_convoy convoy_mpi EXPORT convoyTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Every component's headers (base, topology, ..., conveyor_api: the CONVOY_COMPONENTS list
# that convoy_component() fills, so a new component is installed without editing this file).
foreach(tgt IN LISTS convoy_components)
  get_target_property(comp_dir ${tgt} SOURCE_DIR)
  install(DIRECTORY ${comp_dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(EXPORT convoyTargets NAMESPACE convoy:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/convoy)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/convoyConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/convoyConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/convoy)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/convoyConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/convoyConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/convoyConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/convoy)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
