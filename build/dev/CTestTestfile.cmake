# CMake generated Testfile for 
# Source directory: /work/main
# Build directory: /work/main/build/dev
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("topology")
subdirs("router")
subdirs("aggregation")
subdirs("termination")
subdirs("conveyor_api")
subdirs("tools")
subdirs("tests")
