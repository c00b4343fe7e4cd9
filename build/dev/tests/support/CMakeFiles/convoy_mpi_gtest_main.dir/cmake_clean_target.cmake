file(REMOVE_RECURSE
  "libconvoy_mpi_gtest_main.a"
)
