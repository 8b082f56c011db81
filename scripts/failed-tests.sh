#!/usr/bin/env bash
# Prints each failed test of a `bun test` log with what it printed (its error and stack), so a CI log that is read
# from the end shows why. Usage: scripts/failed-tests.sh LOG
set -euo pipefail
awk '
  /^[^ ].*\.test\.ts:$/ { file = $0; n = 0; next }
  /^ *[0-9]+ tests? failed:$/ { exit }
  /^\((pass|skip|todo)\)/ { n = 0; next }
  /^\(fail\)/ {
    print "---- " file
    start = (n > 80) ? n - 80 : 0
    for (i = start; i < n; i++) print buf[i % 80]
    print $0
    n = 0
    next
  }
  { buf[n % 80] = $0; n++ }
' "$1"
