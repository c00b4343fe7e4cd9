#!/usr/bin/env bash
# bench/emulate's launch line by MPI family: a stand-in launcher answers --version as
# MPICH's Hydra or as Open MPI and prints what it is asked to run and the emulation
# settings it was given. Usage: emulate_launch.sh EMULATE
set -euo pipefail
emulate=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
launcher() {  # launcher VERSION_LINE: writes the stand-in
  cat >"$dir/launcher" <<EOS
#!/bin/sh
if [ "\$1" = --version ]; then echo "$1"; exit 0; fi
echo "launched: \$*"
echo "nodes: \$CONVOY_EMULATE_NODES"
EOS
  chmod +x "$dir/launcher"
}

launcher "HYDRA build details:"
out=$(CONVOY_MPIEXEC=$dir/launcher "$emulate" 2,3 prog arg 2>&1)
grep -qxF "launched: -n 5 prog arg" <<<"$out" || fail "Hydra's line, got: $out"
grep -qxF "nodes: 2,3" <<<"$out" || fail "Hydra's emulated nodes, got: $out"
[[ $(grep -c "shared memory, not TCP" <<<"$out") == 1 ]] ||
  fail "Hydra without -x: no word that MPI is shared memory there: $out"
out=$(CONVOY_MPIEXEC=$dir/launcher "$emulate" -x 2,3 prog arg 2>&1)
! grep -q "not TCP" <<<"$out" || fail "Hydra with -x: a warning: $out"

launcher "mpirun (Open MPI) 4.1.4"
out=$(CONVOY_MPIEXEC=$dir/launcher "$emulate" 2x2 prog 2>&1)
want="launched: -np 4 --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 --mca pml ob1"
want+=" --mca btl self,tcp --mca btl_tcp_if_include lo prog"
grep -qxF "$want" <<<"$out" || fail "Open MPI's line, got: $out"
grep -qxF "nodes: 2,2" <<<"$out" || fail "Open MPI's emulated nodes, got: $out"
echo PASS
