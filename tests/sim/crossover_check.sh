#!/usr/bin/env bash
# crossover_check.sh SWEEP SIM OUT: runs tools/sim/crossover-sweep at toy size (P 16, 32;
# 50 items per rank; two networks) and checks that its files exist and are well formed
# (SIM-9): 12 JSON rows with the documented keys, the gnuplot columns, the answer per
# network and mesh, and a PNG when gnuplot is installed.
set -euo pipefail
sweep=$1 sim=$2 out=$3
rm -rf "$out"
PS="16 32" ITEMS=50 NETWORKS="hpc eth25" "$sweep" --sim "$sim" --out "$out"
fail() { echo "crossover_check: $*" >&2; exit 1; }
rows=$out/crossover.jsonl
[ "$(wc -l <"$rows")" -eq 12 ] || fail "$rows: $(wc -l <"$rows") rows, expected 12"
jq -e 'has("network") and has("ranks") and has("topology") and has("mesh")
       and (.predicted_seconds > 0) and (.messages > 0) and (.bytes_injected > 0)' \
  "$rows" >/dev/null || fail "$rows: a row lacks a key or has a zero count"
[ "$(jq -s 'map(select(.topology == "direct")) | length' "$rows")" -eq 4 ] ||
  fail "$rows: expected 4 direct-send rows"
awk 'NF != 6 { exit 1 }' "$out/crossover.dat" || fail "$out/crossover.dat: not 6 columns"
[ "$(grep -c 'beats direct sends from P = ' "$out/crossover.txt")" -eq 4 ] ||
  fail "$out/crossover.txt: expected one answer per network and mesh"
if command -v gnuplot >/dev/null; then
  [ "$(head -c 4 "$out/crossover.png" | od -An -c | tr -d ' ')" = '211PNG' ] ||
    fail "$out/crossover.png is not a PNG"
fi
echo "crossover_check: ok"
