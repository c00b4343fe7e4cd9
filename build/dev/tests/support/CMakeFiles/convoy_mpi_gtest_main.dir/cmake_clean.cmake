file(REMOVE_RECURSE
  "CMakeFiles/convoy_mpi_gtest_main.dir/mpi_gtest_main.cpp.o"
  "CMakeFiles/convoy_mpi_gtest_main.dir/mpi_gtest_main.cpp.o.d"
  "libconvoy_mpi_gtest_main.a"
  "libconvoy_mpi_gtest_main.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/convoy_mpi_gtest_main.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
