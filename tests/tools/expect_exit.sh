#!/usr/bin/env bash
# expect_exit.sh CODE TEXT -- COMMAND...: runs COMMAND, passes if it exits with CODE and
# its output (stdout and stderr) contains TEXT once or more. Used by the command-line
# tests of the tools and benchmark programs (BENCH-3). With EXPECT_ABSENT set, the output
# must not contain that text either (e.g. RESULT: nothing ran before the error).
set -u
code=$1 text=$2
shift 2
[[ ${1:-} == -- ]] && shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [[ $rc -ne $code ]]; then
  echo "expect_exit: exit code $rc, expected $code" >&2
  exit 1
fi
if [[ $out != *"$text"* ]]; then
  echo "expect_exit: output lacks '$text'" >&2
  exit 1
fi
if [[ -n ${EXPECT_ABSENT:-} && $out == *"$EXPECT_ABSENT"* ]]; then
  echo "expect_exit: output contains '$EXPECT_ABSENT'" >&2
  exit 1
fi
