# CHANGELOG.md's newest section is the version the build says it is (VERSION, the CMake
# project version that every program's --version, convey_version and the packages print):
# what a user reads as the newest features is what they run. Its first "## " heading must
# be "## VERSION" (a date may follow), not "Unreleased" nor an older number.
cmake_minimum_required(VERSION 3.25)
file(STRINGS ${CHANGELOG} headings REGEX "^## ")
list(GET headings 0 newest)
if(NOT newest MATCHES "^## ${VERSION}( |$)")
  message(FATAL_ERROR "CHANGELOG.md's newest section is '${newest}', but the build is "
                      "version ${VERSION}: name the section '## ${VERSION}' or raise the "
                      "version in CMakeLists.txt")
endif()
