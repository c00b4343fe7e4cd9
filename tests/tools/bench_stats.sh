#!/usr/bin/env bash
# bench_stats.sh API KINDS EXPECTED -- LAUNCHER... PROGRAM ARGS...: runs a bench program
# with CONVOY_STATS and checks the document: exactly EXPECTED conveyors, each of `api`
# API, and the pushes summed over every rank and conveyor equal to the pulls (every item
# counted once where it entered and once where it left).
set -u
api=$1 expected=$2
shift 3
doc=$(mktemp)
trap 'rm -f "$doc"' EXIT
rm -f "$doc"
CONVOY_STATS=$doc "$@" >/dev/null || { echo "bench_stats: the run failed" >&2; exit 1; }
[[ -s $doc ]] || { echo "bench_stats: CONVOY_STATS wrote nothing" >&2; exit 1; }
n=$(jq --arg api "$api" '[.conveyors[] | select(.api == $api)] | length' "$doc")
all=$(jq '.conveyors | length' "$doc")
if [[ $n != "$expected" || $all != "$expected" ]]; then
  echo "bench_stats: $all conveyors, $n of api '$api' (expected $expected):" >&2
  jq -c '.conveyors[] | {api, kind}' "$doc" >&2
  exit 1
fi
pushes=$(jq '[.conveyors[].reduced.pushes.sum] | add' "$doc")
pulls=$(jq '[.conveyors[].reduced.pulls.sum] | add' "$doc")
if [[ $pushes != "$pulls" || $pushes == 0 ]]; then
  echo "bench_stats: $pushes pushes, $pulls pulls" >&2
  exit 1
fi
jq -c '.conveyors[] | {api, kind, pushes: .reduced.pushes.sum}' "$doc"
