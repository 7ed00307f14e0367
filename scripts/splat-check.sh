#!/bin/bash
# Fail when a kernel log shows an oops, BUG, WARNING, KASAN report, panic
# or call trace.  Prints the offending lines.  One call trace is expected:
# the stack the OOM killer prints with its report (dump_header() calls
# dump_stack() whenever it kills), which tests of memory.max provoke; a
# "Call Trace:" at most 4 lines after "invoked oom-killer:" is that one.
#
# Usage: scripts/splat-check.sh LOG...   exit 0 clean, 1 splat, 2 usage
set -u
[ $# -gt 0 ] || { echo "usage: $0 LOG..." >&2; exit 2; }
pattern='Oops|BUG:|kernel BUG at|WARNING:|KASAN:|KFENCE:|UBSAN:|Kernel panic|Call Trace:|INFO: task .* blocked for more than|rcu: INFO: .* detected stalls'
for f in "$@"; do
	[ -r "$f" ] || { echo "splat-check: cannot read $f" >&2; exit 2; }
done
found=0
for f in "$@"; do
	awk -v pat="$pattern" -v file="$f" '
		/invoked oom-killer:/ { oom = FNR }
		$0 ~ pat {
			if ($0 ~ /Call Trace:/ && oom && FNR - oom <= 4)
				next
			printf "%s:%d:%s\n", file, FNR, $0
			bad = 1
		}
		END { exit bad }' "$f" >&2 || found=1
done
exit $found
