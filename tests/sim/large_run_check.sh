#!/usr/bin/env bash
# large_run_check.sh CONVOY_SIM OUT_JSON RANKS ITEMS_PER_RANK -- ARGS...: runs convoy-sim
# with ARGS and --json OUT_JSON and passes if it exits 0 (the exactly-once, FIFO and
# termination oracle held, SIM-1, SIM-2) with RANKS ranks, RANKS × ITEMS_PER_RANK items
# pulled, and heap buffers (SIM-13).
set -eu
sim=$1 out=$2 ranks=$3 per_rank=$4
shift 4
[[ ${1:-} == -- ]] && shift
"$sim" "$@" --json "$out"
items=$((ranks * per_rank))
fail() { echo "large_run_check: $1" >&2; exit 1; }
grep -Eq "\"ranks\": *$ranks([,}]|$)" "$out" || fail "the run did not have $ranks ranks"
grep -Eq "\"items\": *$items([,}]|$)" "$out" || fail "the run did not pull $items items"
grep -Eq '"buffer_memory": *"heap"' "$out" || fail "the run did not use heap buffers"
