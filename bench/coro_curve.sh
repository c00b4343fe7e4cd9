#!/bin/sh
# Fischler & Uchima's curve (Fischler & Uchima 1993, sec. 4.4-4.6): throughput of the coroutine kernels
# against the number of tasks in flight, beside the hand-written loop of the same run.
#
#   bench/coro_curve.sh [BUILD_DIR] [OUT_PREFIX]
#
# For each T in $TASKS (default 1 8 64 512 1024 4096 16384) and each of index-gather with
# kind coro (Fischler & Uchima's T threads), index-gather with kind coro-each (one task per query, T
# in flight) and histogram with kind coro, it runs, in one process, `--kinds mesh-1d,KIND:T`
# (one mpirun per T, so the frame peak of one T does not leak into another's memory
# figure), and writes
#   OUT_PREFIX.dat  kernel kind tasks coro_items_per_s loop_items_per_s ratio memory_bytes
#   OUT_PREFIX.png  (gnuplot; skipped if gnuplot is missing)
# Environment: NP (2), ITEMS (1e6 per rank), REPS (5), MPIRUN_FLAGS (as bench/README.md);
# PLOT_ONLY=1 redraws the PNG from an existing OUT_PREFIX.dat.
# Frame bytes per task = (memory(T2) - memory(T1)) / (T2 - T1) for the first two T >= 64
# of index-gather coro-each (the memory figure of kind coro is the conveyors' buffers plus peak frames x frame
# bytes; at large T the peak stays below T, as no task starts while a call waits for a
# full path).
set -eu
build=${1:-build/rel}
out=${2:-coro_curve}
np=${NP:-2}
items=${ITEMS:-1e6}
reps=${REPS:-5}
tasks=${TASKS:-"1 8 64 512 1024 4096 16384"}
flags=${MPIRUN_FLAGS:-"--mca mpi_yield_when_idle 1 --mca btl self,vader --bind-to none"}

field() { # field NAME < RESULT line
  sed -n "s/.* $1=\([^ ]*\).*/\1/p"
}

if [ -n "${PLOT_ONLY:-}" ]; then  # redraw OUT_PREFIX.png from an existing OUT_PREFIX.dat
  items=$(sed -n 's/.* \([0-9e.+]*\) items\/rank.*/\1/p' "$out.dat" | head -1)
else
: >"$out.dat"
printf '# kernel kind tasks coro_items_per_s loop_items_per_s ratio memory_bytes  (np %s, %s items/rank, median of %s, load %s)\n' \
  "$np" "$items" "$reps" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out.dat"
for run in index-gather:coro index-gather:coro-each histogram:coro; do
  kernel=${run%%:*}
  kind=${run#*:}
  for t in $tasks; do
    # shellcheck disable=SC2086
    rows=$(mpirun -np "$np" $flags "$build/bench/bench-$kernel" --items "$items" --sizes 8 \
      --reps "$reps" --warmup 1 --kinds "mesh-1d,$kind:$t" | grep '^RESULT')
    loop=$(echo "$rows" | grep ' kind=mesh-1d ' | field items_per_s_per_rank)
    coro_row=$(echo "$rows" | grep " kind=$kind:$t ")
    coro=$(echo "$coro_row" | field items_per_s_per_rank)
    mem=$(echo "$coro_row" | field memory_bytes_per_rank)
    for v in $(echo "$rows" | field verified); do
      [ "$v" = 1 ] || { echo "coro_curve: $kernel $kind T=$t not verified" >&2; exit 1; }
    done
    ratio=$(awk -v a="$coro" -v b="$loop" 'BEGIN { printf "%.3f", a / b }')
    echo "$kernel $kind $t $coro $loop $ratio $mem" | tee -a "$out.dat"
  done
done

awk '$1 == "index-gather" && $2 == "coro-each" && $3 >= 64 {
       if (t0 == "") { t0 = $3; m0 = $7 } else if (t1 == "") { t1 = $3; m1 = $7 } }
     END { if (t1 != "") printf "# frame bytes per task (index-gather, coro-each): %d\n", (m1 - m0) / (t1 - t0) }' \
  "$out.dat" | tee -a "$out.dat"
fi

command -v gnuplot >/dev/null || exit 0
gnuplot <<EOF
set terminal pngcairo size 1100,450 font ",10" noenhanced
set output "$out.png"
set multiplot layout 1,2 title "coroutine tasks vs the hand-written loop, same run (np $np, $items items/rank, 8-byte values)"
set logscale x 2
set xlabel "tasks in flight per rank (max_tasks)"
set grid
set key top left
set ylabel "M items/s per rank"
plot "$out.dat" using (strcol(1) eq "index-gather" && strcol(2) eq "coro" ? \$3 : 1/0):(\$4/1e6) with linespoints lw 2 title "index-gather, T threads", \
     "$out.dat" using (strcol(1) eq "index-gather" && strcol(2) eq "coro-each" ? \$3 : 1/0):(\$4/1e6) with linespoints lw 2 title "index-gather, a task per query", \
     "$out.dat" using (strcol(1) eq "index-gather" && strcol(2) eq "coro" ? \$3 : 1/0):(\$5/1e6) with linespoints dt 2 title "index-gather, loop", \
     "$out.dat" using (strcol(1) eq "histogram" ? \$3 : 1/0):(\$4/1e6) with linespoints lw 2 title "histogram, tasks", \
     "$out.dat" using (strcol(1) eq "histogram" ? \$3 : 1/0):(\$5/1e6) with linespoints dt 2 title "histogram, loop"
set ylabel "tasks / loop (items/s, same run)"
set yrange [0:1.2]
set key bottom right
plot "$out.dat" using (strcol(1) eq "index-gather" && strcol(2) eq "coro" ? \$3 : 1/0):6 with linespoints lw 2 title "index-gather, T threads", \
     "$out.dat" using (strcol(1) eq "index-gather" && strcol(2) eq "coro-each" ? \$3 : 1/0):6 with linespoints lw 2 title "index-gather, a task per query", \
     "$out.dat" using (strcol(1) eq "histogram" ? \$3 : 1/0):6 with linespoints lw 2 title "histogram", \
     0.8 with lines dt 2 lc rgb "#777777" title "index-gather target 0.8", \
     0.9 with lines dt 3 lc rgb "#777777" title "histogram target 0.9"
unset multiplot
EOF
echo "wrote $out.dat $out.png"
