# Empty dependencies file for convoy_mpi_gtest_main.
# This may be replaced when dependencies are built.
