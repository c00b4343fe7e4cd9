#!/usr/bin/env bash
# tune_roundtrip.sh CONVOY_TUNE BENCH_HISTOGRAM LAUNCHER...: convoy-tune measures with short
# settings and writes a tuning file with the C++ API keys and a convey.h kind per kind
# (BENCH-5); the benchmark program then runs with that file as CONVOY_TUNE_FILE, i.e.
# convoy's reader accepts every line of it.
set -euo pipefail
tune=$1 bench=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$tune" -l "$*" -n 2 -N 1e4 -r 1 -c 4096,8192 -b 1,2 -m auto -m 2 -K simple,tensor1 \
  -B "$bench" -o "$dir/tune.conf"
cat "$dir/tune.conf"
for key in buffer_bytes n_buffers mesh kind simple.buffer_bytes tensor1.buffer_bytes \
           tensor1.n_buffers; do
  grep -q "^$key=" "$dir/tune.conf" || { echo "tune_roundtrip: no $key= line" >&2; exit 1; }
done
if grep -q '^simple.n_buffers=' "$dir/tune.conf"; then
  echo "tune_roundtrip: simple has no buffers per link" >&2
  exit 1
fi
CONVOY_TUNE_FILE=$dir/tune.conf "$@" "$bench" --kinds mesh,convey --items 1e4 --reps 1 --sizes 8
