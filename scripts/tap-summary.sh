#!/bin/bash
# Count the results of TAP streams and check each stream's plan.
#
# Usage: scripts/tap-summary.sh FILE...
# Prints "N passed, N failed, N skipped"; exits 1 when any test failed or
# a plan is missing or does not match the results (a suite that died
# half-way: each missing result counts as failed), 0 otherwise.
set -u
awk '
function finish() {
	if (file == "") return
	# A missing plan or missing results mean the suite died: count them
	# as failures so the summary line never looks clean.
	if (plan < 0) { printf "%s: no TAP plan (suite did not finish?)\n", file > "/dev/stderr"; fail++ }
	else if (plan > seen) { printf "%s: planned %d tests, saw %d\n", file, plan, seen > "/dev/stderr"; fail += plan - seen }
	else if (plan < seen) { printf "%s: planned %d tests, saw %d\n", file, plan, seen > "/dev/stderr"; fail++ }
}
FNR == 1 { finish(); file = FILENAME; plan = -1; seen = 0 }
/^1\.\.[0-9]+/ { plan = substr($1, 4) + 0; next }
/^ok [0-9]/ || /^ok$/ {
	seen++
	if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) skip++; else pass++
	next
}
/^not ok/ {
	seen++
	if ($0 ~ /# *[Tt][Oo][Dd][Oo]/) skip++; else fail++
	next
}
END {
	finish()
	printf "%d passed, %d failed, %d skipped\n", pass, fail, skip
	exit fail > 0 ? 1 : 0
}' "$@"
