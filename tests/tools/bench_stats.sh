#!/usr/bin/env bash
# bench_stats.sh APIS -- LAUNCHER... PROGRAM ARGS...: runs a bench program with
# CONVOY_STATS and checks the document: its conveyors' `api` fields, in creation order, are
# the comma-separated APIS (one document for a program that holds convoy twice: the C++
# components linked in and libconvey.so), and the pushes summed over every rank and
# conveyor equal the pulls (every item counted once where it entered and once where it
# left); no conveyor says item_bytes 0 (the programs push fixed-size items).
set -u
expected=$1
shift 2
doc=$(mktemp)
trap 'rm -f "$doc"' EXIT
rm -f "$doc"
CONVOY_STATS=$doc "$@" >/dev/null || { echo "bench_stats: the run failed" >&2; exit 1; }
[[ -s $doc ]] || { echo "bench_stats: CONVOY_STATS wrote nothing" >&2; exit 1; }
apis=$(jq -r '[.conveyors[].api] | join(",")' "$doc")
if [[ $apis != "$expected" ]]; then
  echo "bench_stats: conveyors of apis '$apis' (expected '$expected'):" >&2
  jq -c '.conveyors[] | {api, kind}' "$doc" >&2
  exit 1
fi
# Fixed-size items: each conveyor's item size is the one its last cycle began with.
if jq -e '[.conveyors[] | select(.item_bytes == 0)] | length > 0' "$doc" >/dev/null; then
  echo "bench_stats: a conveyor with item_bytes 0:" >&2
  jq -c '.conveyors[] | {api, kind, item_bytes}' "$doc" >&2
  exit 1
fi
pushes=$(jq '[.conveyors[].reduced.pushes.sum] | add' "$doc")
pulls=$(jq '[.conveyors[].reduced.pulls.sum] | add' "$doc")
if [[ $pushes != "$pulls" || $pushes == 0 ]]; then
  echo "bench_stats: $pushes pushes, $pulls pulls" >&2
  exit 1
fi
jq -c '.conveyors[] | {api, kind, pushes: .reduced.pushes.sum}' "$doc"
