#!/usr/bin/env bash
# plot_speedup.sh CONVOY_PLOT ROWS.json: convoy-plot --speedup mesh over rows of kinds mesh and
# combine at several skews draws one line whose points are (skew, combine's items/s ÷ mesh's),
# each ratio computed here from the rows with jq (the independent oracle), and a PNG.
set -euo pipefail
plot=$1 rows=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$plot" --speedup mesh -o "$dir/s.png" --script "$dir/s.gp" "$rows"
grep -q "ratio to mesh" "$dir/s.gp" || { echo "plot_speedup: no 'ratio to mesh' label" >&2; exit 1; }
grep -q "key skew" "$dir/s.gp" || { echo "plot_speedup: x is not the skew" >&2; exit 1; }
# The data block: lines "x y" between "<< EOD" and "EOD".
sed -n '/<< EOD/,/^EOD/p' "$dir/s.gp" | grep -E '^[0-9]' > "$dir/points"
jq -r '[.results[] | select(.verified)] as $r
       | $r[] | select(.kind == "combine") as $c
       | ($r[] | select(.kind == "mesh" and .skew == $c.skew)) as $m
       | "\($c.skew) \($c.items_per_s_per_rank / $m.items_per_s_per_rank)"' "$rows" |
  sort -n > "$dir/expected"
if [[ $(wc -l < "$dir/points") -ne $(wc -l < "$dir/expected") ]]; then
  echo "plot_speedup: $(wc -l < "$dir/points") points, expected $(wc -l < "$dir/expected")" >&2
  exit 1
fi
paste "$dir/points" "$dir/expected" | awk '
  { if ($1 != $3 || ($2 - $4) > 1e-4 * $4 || ($4 - $2) > 1e-4 * $4) { print "plot_speedup: point " $1 " " $2 ", expected " $3 " " $4; bad = 1 } }
  END { exit bad }' >&2
if command -v gnuplot > /dev/null; then
  "$plot" --speedup mesh -o "$dir/s.png" "$rows" | grep -q "wrote"
  [[ -s $dir/s.png ]] || { echo "plot_speedup: no PNG" >&2; exit 1; }
fi
echo "plot_speedup: $(wc -l < "$dir/points") ratios as computed from the rows"
