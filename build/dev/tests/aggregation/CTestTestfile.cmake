# CMake generated Testfile for 
# Source directory: /work/main/tests/aggregation
# Build directory: /work/main/build/dev/tests/aggregation
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
