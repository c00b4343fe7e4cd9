#!/usr/bin/env bash
# crossover_check.sh SWEEP SIM OUT: runs tools/sim/crossover-sweep at toy size (P 16, 32;
# 50 items per rank; two networks; direct sends simulated at P 16 only) and checks that its
# files exist and are well formed (SIM-9): 12 JSON rows with the documented keys, direct
# sends at P 32 as the floor alone (convoy-sim --bound), every simulated time at or above its
# floor, the gnuplot columns, the answer per network and mesh, a PNG when gnuplot is
# installed; a second run adds nothing (the rows are kept) and a row without a floor gets one.
set -euo pipefail
sweep=$1 sim=$2 out=$3
rm -rf "$out"
PS="16 32" ITEMS=50 NETWORKS="hpc eth25" DIRECT_MAX=16 "$sweep" --sim "$sim" --out "$out"
fail() { echo "crossover_check: $*" >&2; exit 1; }
rows=$out/crossover.jsonl
[ "$(wc -l <"$rows")" -eq 12 ] || fail "$rows: $(wc -l <"$rows") rows, expected 12"
jq -e 'has("network") and has("ranks") and has("topology") and has("mesh")
       and (.predicted_seconds > 0) and (.messages > 0) and (.bytes_injected > 0)' \
  "$rows" >/dev/null || fail "$rows: a row lacks a key or has a zero count"
[ "$(jq -s 'map(select(.topology == "direct")) | length' "$rows")" -eq 4 ] ||
  fail "$rows: expected 4 direct-send rows"
[ "$(jq -s 'map(select(.simulated == false and .topology == "direct" and .ranks == 32
                      and .predicted_seconds == null and .lower_bound_seconds > 0)) | length' \
  "$rows")" -eq 2 ] || fail "$rows: expected direct sends at P 32 as a floor alone"
jq -e -s 'map(select(.simulated)) | length == 10 and
          all(.predicted_seconds >= .lower_bound_seconds and .lower_bound_seconds > 0)' \
  "$rows" >/dev/null || fail "$rows: a simulated time is below its floor"
awk 'NF != 7 { exit 1 }' "$out/crossover.dat" || fail "$out/crossover.dat: not 7 columns"
[ "$(awk '$4 == "NaN"' "$out/crossover.dat" | wc -l)" -eq 2 ] ||
  fail "$out/crossover.dat: expected NaN for the two runs not simulated"
[ "$(grep -c 'beats direct sends from P = ' "$out/crossover.txt")" -eq 4 ] ||
  fail "$out/crossover.txt: expected one answer per network and mesh"
if command -v gnuplot >/dev/null; then
  [ "$(head -c 4 "$out/crossover.png" | od -An -c | tr -d ' ')" = '211PNG' ] ||
    fail "$out/crossover.png is not a PNG"
fi
# Resuming: nothing is run again; a row from before the floor existed gets one.
before=$(md5sum <"$rows")
PS="16 32" ITEMS=50 NETWORKS="hpc eth25" DIRECT_MAX=16 "$sweep" --sim "$sim" --out "$out" >/dev/null
[ "$(md5sum <"$rows")" = "$before" ] || fail "a second run changed the rows"
jq -c 'if .ranks == 16 and .topology == "2-D" then del(.lower_bound_seconds, .simulated) else . end' \
  "$rows" >"$rows.old" && mv "$rows.old" "$rows"
PLOT_ONLY=1 "$sweep" --sim "$sim" --out "$out" >/dev/null
jq -e -s 'length == 12 and all(.lower_bound_seconds > 0)' "$rows" >/dev/null ||
  fail "$rows: the redraw did not give the old rows their floor"
echo "crossover_check: ok"
