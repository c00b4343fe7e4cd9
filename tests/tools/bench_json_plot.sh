#!/usr/bin/env bash
# bench_json_plot.sh CONVOY_PLOT BENCH KERNEL ROWS TEXT LAUNCHER... -- ARGS...: the benchmark
# program BENCH, run under LAUNCHER with ARGS, writes its rows with --json (BENCH-7): ROWS
# rows of KERNEL, all verified; convoy-plot draws them, and its gnuplot script holds TEXT.
set -euo pipefail
plot=$1 bench=$2 kernel=$3 rows=$4 text=$5
shift 5
launch=()
while [[ $1 != -- ]]; do
  launch+=("$1")
  shift
done
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"${launch[@]}" "$bench" "$@" --json "$dir/rows.json"
if [[ ! -s $dir/rows.json ]]; then
  echo "bench_json_plot: --json wrote nothing" >&2
  exit 1
fi
n=$(grep -c "\"kernel\": \"$kernel\"" "$dir/rows.json" || true)
v=$(grep -c '"verified": true' "$dir/rows.json" || true)
if [[ $n -ne $rows || $v -ne $rows ]]; then
  echo "bench_json_plot: $n rows of $kernel, $v verified; expected $rows" >&2
  exit 1
fi
"$plot" -o "$dir/plot.png" "$dir/rows.json"
"$plot" -o "$dir/plot.png" --script "$dir/plot.gp" "$dir/rows.json"
grep -v '^[0-9]' "$dir/plot.gp"
if ! grep -qF -- "$text" "$dir/plot.gp"; then
  echo "bench_json_plot: the gnuplot script lacks '$text'" >&2
  exit 1
fi
