# Sourced by tools/cluster, bench/emulate and bench/compare (bash).
#
# mpi_family LAUNCHER [ARGS...]: the MPI family of a launcher by what its --version prints,
# decided as cmake/convoy_testing.cmake decides CONVOY_MPI_FAMILY: "openmpi" (OpenRTE,
# PRRTE: -np, --mca, -x), "mpich" (Hydra: MPICH, Intel MPI, MVAPICH: -n, -genv, -launcher)
# or "other".
mpi_family() {
  local text
  text=$("$@" --version 2>&1) || true
  case $text in
    *"Open MPI"* | *OpenRTE* | *PRRTE*) echo openmpi ;;
    *HYDRA* | *"Intel(R) MPI"*) echo mpich ;;
    *) echo other ;;
  esac
}
