#!/usr/bin/env bash
# Product files speak of the product as it is now (house style, "Comments"): no private ids
# of papers (cite them as docs/references.md says), no development history ("session",
# issue numbers, dated notebook headings) and no paths outside the repository. Checks every
# tracked text file except this script and the changelog, prints file:line: text of each
# hit and fails if there is one.
#
# Usage: product_text_test.sh [SOURCE_DIR]   (default: the checkout this script is in)
# Exit: 0 clean, 1 hits, 77 not a git checkout (CTest reports it as skipped).
set -euo pipefail

src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
self=tests/docs/product_text_test.sh

if ! command -v git >/dev/null || ! git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "product_text_test: $src is not a git checkout; nothing to check"
  exit 77
fi
cd "$src"

# One pattern per kind of hit (Perl syntax, case-insensitive unless marked).
#   paper id     the private id of a paper: the word for it followed by three digits (any case,
#                with or without a blank), or its file name (three digits, "_", 16 hex digits, .txt)
#   session      the word, except MPI's own sessions ("MPI session", MPI_Session_init)
#   issue        the word "issue" or "issues" followed by a number (with a blank, "#" or "-")
#   path         /work/..., ../shared/..., shared/seeds, the unpublished convey-api.md
#   dated entry  a heading or list item that carries a date ("### 2026-11-24: ...")
git ls-files -z | SELF="$self" perl -0 -ne '
  chomp;
  my $f = $_;
  next if $f eq $ENV{SELF} || $f =~ m{(^|/)CHANGELOG[^/]*$}i;
  next unless -f $f && -T $f;
  open(my $fh, "<", $f) or next;
  local $/ = "\n";
  while (my $l = <$fh>) {
    my $why;
    if    ($l =~ /\bseeds?[ _]?00\d\b|\b00\d_[0-9a-f]{16}\.txt/i)            { $why = "paper id" }
    elsif ($l =~ /(?<!MPI )(?<!MPI_)\bsessions?\b/i)                        { $why = "session" }
    elsif ($l =~ /\bissues?[ -]?#?\d/i)                                     { $why = "issue number" }
    elsif ($l =~ m{(?<![\w.])/work/|\.\./shared\b|\bshared/seeds\b|\bconvey-api\.md\b})        { $why = "path outside the repository" }
    elsif ($l =~ /^\s*(?:#+|[-*]|\/\/+)\s.*\b20\d\d-[01]\d-[0-3]\d\b/)       { $why = "dated entry" }
    next unless $why;
    chomp $l;
    $l = substr($l, 0, 160) . " ..." if length($l) > 160;
    print "$f:$.: [$why] $l\n";
    $main::hits++;
  }
  close $fh;
  END {
    if ($main::hits) {
      print STDERR "product_text_test: $main::hits line(s) above name private paper ids, ",
                   "development history or paths outside the repository\n";
      $? = 1;
    } else {
      print "product_text_test: clean\n";
    }
  }
'
