# CMake generated Testfile for 
# Source directory: /work/main/tests/conveyor_api
# Build directory: /work/main/build/dev/tests/conveyor_api
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
