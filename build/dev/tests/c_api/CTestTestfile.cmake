# CMake generated Testfile for 
# Source directory: /work/main/tests/c_api
# Build directory: /work/main/build/dev/tests/c_api
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
