#!/usr/bin/env bash
# progress_log.sh PATTERN -- COMMAND...: a run longer than the progress period, with its
# stderr in a file (a batch job's log), prints whole progress lines matching the extended
# regular expression PATTERN there, none of them rewritten with '\r'.
set -u
pattern=$1
shift 2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" >/dev/null 2>"$log"
rc=$?
[[ $rc -eq 0 ]] || { echo "progress_log: exit $rc" >&2; cat "$log" >&2; exit 1; }
if ! grep -Eq "$pattern" "$log"; then
  echo "progress_log: no line matching '$pattern' in the log:" >&2
  head -c 2000 "$log" >&2
  exit 1
fi
if grep -q $'\r' "$log"; then
  echo "progress_log: a line rewritten with '\\r' in the log" >&2
  exit 1
fi
grep -E "$pattern" "$log"
exit 0
