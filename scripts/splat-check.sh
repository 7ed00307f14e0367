#!/bin/bash
# Fail when a kernel log shows an oops, BUG, WARNING, KASAN report, panic
# or call trace.  Prints the offending lines.
#
# Usage: scripts/splat-check.sh LOG...   exit 0 clean, 1 splat, 2 usage
set -u
[ $# -gt 0 ] || { echo "usage: $0 LOG..." >&2; exit 2; }
pattern='Oops|BUG:|kernel BUG at|WARNING:|KASAN:|KFENCE:|UBSAN:|Kernel panic|Call Trace:|INFO: task .* blocked for more than|rcu: INFO: .* detected stalls'
for f in "$@"; do
	[ -r "$f" ] || { echo "splat-check: cannot read $f" >&2; exit 2; }
done
if grep -aEn "$pattern" "$@" >&2; then
	exit 1
fi
exit 0
