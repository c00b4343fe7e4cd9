#!/usr/bin/env bash
# combine_offnode.sh -- COMMAND...: COMMAND runs bench-histogram (its launcher included).
# Runs it at --skew 1.0 and 1.5 with kinds mesh and combine over 16-byte items; passes if
# every run exits 0 with both kinds verified, and at 1.5 the combine kind's offnode_bytes
# are below the mesh kind's (BENCH-8). Run under emulated nodes.
set -u
[[ ${1:-} == -- ]] && shift
field() {  # field KIND NAME: NAME=value of kind KIND's RESULT line in $out
  printf '%s\n' "$out" | grep "^RESULT .* kind=$1 " | sed -n "s/.* $2=\([^ ]*\).*/\1/p"
}
for skew in 1.0 1.5; do
  out=$("$@" --kinds mesh,combine --sizes 16 --items 20000 --table 1000 --reps 2 --skew "$skew" 2>&1)
  rc=$?
  printf '%s\n' "$out"
  if [[ $rc -ne 0 ]]; then
    echo "combine_offnode: exit code $rc at skew $skew" >&2
    exit 1
  fi
  for kind in mesh combine; do
    if [[ $(field "$kind" verified) != 1 ]]; then
      echo "combine_offnode: kind $kind not verified at skew $skew" >&2
      exit 1
    fi
  done
done
mesh=$(field mesh offnode_bytes) combine=$(field combine offnode_bytes)
if [[ -z $mesh || -z $combine ]] || ((mesh == 0 || combine >= mesh)); then
  echo "combine_offnode: offnode_bytes at skew 1.5: mesh '$mesh', combine '$combine'" >&2
  exit 1
fi
echo "combine_offnode: offnode_bytes at skew 1.5: mesh $mesh, combine $combine"
