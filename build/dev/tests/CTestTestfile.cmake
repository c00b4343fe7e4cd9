# CMake generated Testfile for 
# Source directory: /work/main/tests
# Build directory: /work/main/build/dev/tests
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("support")
subdirs("topology")
subdirs("router")
subdirs("aggregation")
subdirs("termination")
subdirs("conveyor_api")
subdirs("c_api")
