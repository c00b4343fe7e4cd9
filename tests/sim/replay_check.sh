#!/usr/bin/env bash
# replay_check.sh CONVOY_SIM MAX_PERCENT WHAT -- ARGS...: runs convoy-sim ARGS (a replay,
# --from-stats) and passes if it exits 0 and every 'replay' row of the quantities in WHAT
# (comma separated, e.g. items,bytes) has a predicted-vs-measured error within
# ±MAX_PERCENT (SIM-14), with at least one such row.
set -eu
sim=$1 max=$2 what=$3
shift 3
[[ ${1:-} == -- ]] && shift
out=$("$sim" "$@")
printf '%s\n' "$out"
printf '%s\n' "$out" | awk -v max="$max" -v what=",$what," '
  $1 == "replay" && $2 ~ /^[0-9]+$/ && index(what, "," $4 ",") {
    rows++
    err = $7; sub(/%$/, "", err); err += 0
    if (err > max || err < -max) { print "replay_check: " $0 " is off by more than " max "%"; bad = 1 }
  }
  END {
    if (rows == 0) { print "replay_check: no replay rows of " what; exit 1 }
    exit bad
  }' >&2
