#!/usr/bin/env bash
# progress_tty.sh TEXT -- COMMAND...: a long run shows a progress line containing TEXT,
# rewritten with '\r', when its stderr is a terminal (script(1) gives it one), and prints
# no such line when stderr is a file.
set -u
text=$1
shift 2
printf -v cmd '%q ' "$@"
tty_out=$(script -qec "$cmd >/dev/null" /dev/null)
rc=$?
[[ $rc -eq 0 ]] || { echo "progress_tty: exit $rc on a terminal" >&2; exit 1; }
[[ $tty_out == *$'\r'*"$text"* ]] || {
  echo "progress_tty: no progress line '$text' on a terminal:" >&2
  printf '%q\n' "$tty_out" | head -c 2000 >&2
  exit 1
}
file_err=$("$@" 2>&1 >/dev/null)
[[ $file_err != *"$text"* && $file_err != *$'\r'* ]] || {
  echo "progress_tty: a progress line although stderr is not a terminal: $file_err" >&2
  exit 1
}
exit 0
