#!/usr/bin/env bash
# tune_args.sh CONVOY_TUNE: convoy-tune runs only what its options allow. A stand-in for
# bench-histogram records each command line and fails; the launcher (-l) is `env` with a
# quoted word holding a blank. Every measurement then fails (exit 1), and each recorded
# run must have had the quoted word whole, only the buffer size of -c, only the buffers
# per link of -b, nothing on stderr may be a progress line (stderr is not a terminal), and
# each run's line says how many runs remain and about how long they take.
set -u
tune=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "tune_args: $*" >&2; exit 1; }
cat > "$dir/bench" <<'SH'
#!/bin/sh
printf '%s|%s\n' "$WORDS" "$*" >> "$LOG"
exit 1
SH
chmod +x "$dir/bench"
"$tune" -n 2 -m 2 -N 1e3 -r 1 -c 4096 -b 1 -K simple,tensor1 -B "$dir/bench" \
  -l "env LOG=$dir/calls 'WORDS=two words'" -o "$dir/tune.conf" 2> "$dir/err"
rc=$?
cat "$dir/err"
[[ $rc -eq 1 ]] || fail "exit $rc, expected 1 (every measurement failed)"
grep -q 'every measurement failed' "$dir/err" || fail "no 'every measurement failed'"
[[ -s $dir/calls ]] || fail "the benchmark never ran"
cat "$dir/calls"
while IFS= read -r call; do
  [[ $call == "two words|"* ]] || fail "the launcher's quoted word was split: $call"
  [[ $call == *16384* ]] && fail "a buffer size that -c did not give: $call"
  [[ $call == *"--n-buffers 2"* || $call == *"--convey-buffers 2"* ]] &&
    fail "buffers per link that -b did not give: $call"
  [[ $call == *"--capacity 4096"* || $call == *"--convey-capacity 4096"* ]] ||
    fail "not the buffer size of -c: $call"
done < "$dir/calls"
[[ $(wc -l < "$dir/calls") -eq 2 ]] || fail "expected 2 runs (C++ API, then both kinds at once)"
grep -q $'\r' "$dir/err" && fail "a progress line on a stderr that is not a terminal"
# Each finished run says how far the search is: runs done, at most how many, time left.
grep -q '(run 1 of at most 6; at most about [0-9]* s left)' "$dir/err" ||
  fail "run 1 does not say what remains"
grep -q '(run 2 of at most 6; at most about [0-9]* s left)' "$dir/err" ||
  fail "run 2 does not say what remains"
[[ -e $dir/tune.conf ]] && fail "a tuning file was written"
exit 0
