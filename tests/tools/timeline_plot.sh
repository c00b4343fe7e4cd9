#!/usr/bin/env bash
# timeline_plot.sh CONVOY_PLOT TRACE_DIR: convoy-plot --timeline on the trace files of a real
# run (data/trace: bench-histogram, np 2, CONVOY_TRACE_EVENTS=64; TERM-17) merges them into one
# Chrome trace file holding every rank's events, writes a gnuplot script with a mark for
# each event of the files, and, when gnuplot is installed, a non-empty PNG (else exit 77: skipped).
set -euo pipefail
plot=$1 data=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$data"/convoy-trace.*.json "$dir"/
"$plot" --timeline "$dir" --script "$dir/timeline.gp"
merged=$dir/convoy-trace.0.json  # the data are of conveyor 0
if [[ ! -s $merged ]]; then
  echo "timeline_plot: no merged convoy-trace.0.json" >&2
  exit 1
fi
for pid in 0 1; do
  if ! grep -q "\"pid\":$pid" "$merged"; then
    echo "timeline_plot: the merged file lacks rank $pid" >&2
    exit 1
  fi
done
# Every full buffer sent, every advance and every stall of the files is one line of its data
# block (after the block's one placeholder line).
block_lines() { awk -v b="\$$1 << EOD" '$0 == b {on = 1; next} /^EOD$/ {on = 0} on' "$dir/timeline.gp" | wc -l; }
events() { cat "$data"/convoy-trace.*.json | grep -o "$1" | wc -l; }
check() {
  local got want
  got=$(($(block_lines "$1") - 1))
  want=$(events "$2")
  if [[ $got -ne $want || $want -eq 0 ]]; then
    echo "timeline_plot: \$$1 holds $got lines; the files have $want events matching $2" >&2
    exit 1
  fi
}
check full '"full":true'
check advance '"name":"advance","ph":"X"'
check stall '"name":"credit stall"'
check closed '"name":"stage closed"'
for mark in "title 'advance'" "title 'credit stall'" "title 'buffer sent, full'" \
  "title 'last buffer'" "title 'stage closed'"; do
  if ! grep -qF -- "$mark" "$dir/timeline.gp"; then
    echo "timeline_plot: the gnuplot script lacks $mark" >&2
    exit 1
  fi
done
if ! command -v gnuplot >/dev/null; then
  echo "timeline_plot: gnuplot is not installed; the PNG is not drawn"
  exit 77
fi
"$plot" --timeline "$dir" -o "$dir/timeline.png"
if [[ ! -s $dir/timeline.png ]]; then
  echo "timeline_plot: no PNG written" >&2
  exit 1
fi
echo "timeline_plot: $(stat -c %s "$dir/timeline.png") bytes of PNG"
