#!/usr/bin/env bash
# compare_by_mpi.sh CONVOY_COMPARE DATA_DIR: convoy-compare --by mpi on two runs of the same
# configuration made with different MPIs (data/histogram_convoy.json under Open MPI 4.1.4;
# histogram_convoy_mpich.json, the same run marked as MPICH 4.0.2 with kind simple at half
# the rate) and a bale run (rows of another library, which --by mpi leaves out): the
# columns are named by MPI, MPICH first (the first file's), and simple's ratio is 0.50,
# every other kind's 1.00.
set -u
compare=$1 data=$2
out=$("$compare" --by mpi "$data/histogram_convoy_mpich.json" "$data/histogram_convoy.json" \
      "$data/histogram_bale.json" 2>&1) || { echo "$out"; echo "compare_by_mpi: exit $?" >&2; exit 1; }
printf '%s\n' "$out"
fail() { echo "compare_by_mpi: $*" >&2; exit 1; }
head=$(head -n 1 <<<"$out")
[[ $head =~ kind\ +MPICH\ 4\.0\.2\ M/s\ +Open\ MPI\ 4\.1\.4\ M/s\ +MPICH\ 4\.0\.2/Open\ MPI\ 4\.1\.4$ ]] ||
  fail "header '$head'"
ratio() { awk -F '  +' -v k="$1" '$4 == k { print $NF }' <<<"$out" | sed -n 1p; }  # columns: 2+ blanks apart
[[ $(ratio simple) == 0.50 ]] || fail "simple's ratio '$(ratio simple)', expected 0.50"
for kind in tensor1 convey mesh mesh-1d alltoallv; do
  [[ $(ratio "$kind") == 1.00 ]] || fail "$kind's ratio '$(ratio "$kind")', expected 1.00"
done
# bale's rows are not convoy's: nine rows (header, eight kinds) and the best row.
rows=$(grep -c "histogram" <<<"$out")
((rows == 9)) || fail "$rows rows of histogram, expected 9 (8 kinds and best)"
# Another base: the ratios turn over.
out=$("$compare" --by mpi --base "Open MPI 4.1.4" "$data/histogram_convoy_mpich.json" \
      "$data/histogram_convoy.json") || fail "--base 'Open MPI 4.1.4' failed"
[[ $(ratio simple) == 2.00 ]] || fail "with --base Open MPI, simple's ratio '$(ratio simple)'"
echo "compare_by_mpi: ok"
