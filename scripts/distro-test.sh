#!/bin/bash
# Run the ADI suites on the packaged kernel booted as Debian boots it
# (scripts/distro-run.sh --suite, one boot per suite), and summarise as
# scripts/test.sh does: each suite's TAP, plus one result per boot (the
# guest finished, the suite exited 0, no kernel splat).
#
# Usage: scripts/distro-test.sh [--append ARGS] [SUITE...]
#   (default suites: adi adi-mm adi-syscall adimalloc)
#   --append ARGS   extra kernel command line for every boot, e.g.
#                   "preempt=full" (Debian's PREEMPT_DYNAMIC kernel
#                   switched to full preemption); a preempt=MODE there is
#                   also checked: the boot must say "Dynamic Preempt: MODE"
#   Results in build/distro/test-results, runs in build/distro/runs/test-<suite>
#   (with --append: test-results-<args>, runs/test-<suite>-<args>).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

D=$BUILD/distro
append=""
while [ $# -gt 0 ]; do
	case "$1" in
	--append) append+="${append:+ }$2"; shift 2 ;;
	-h|--help) usage_from_header "$0"; exit 0 ;;
	-*) die "unknown option '$1' (try --help)" ;;
	*) break ;;
	esac
done
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(adi adi-mm adi-syscall adimalloc)
# "preempt=full" -> "-preempt-full": a name for this variant's files.
tag=""
[ -z "$append" ] || tag=-$(tr -c 'A-Za-z0-9\n' '-' <<<"$append")
want_preempt=$(grep -o 'preempt=[a-z]*' <<<"$append" | tail -1 | cut -d= -f2 || true)

results=$D/test-results$tag
rm -rf "$results"
mkdir -p "$results"
files=()
for s in "${suites[@]}"; do
	say "suite $s (distro boot${append:+, kernel command line + '$append'})"
	rc=0
	start=$(date +%s)
	run=$D/runs/test-$s$tag
	"$REPO/scripts/distro-run.sh" ${append:+--append "$append"} --suite "$s" --out "$run" || rc=$?
	cp "$run/output.log" "$results/$s.tap" 2>/dev/null || : >"$results/$s.tap"
	case $rc in
	0) verdict="ok 1 - suite $s: finished, exit 0, no kernel splat" ;;
	3) verdict="not ok 1 - suite $s: kernel splat in the guest log" ;;
	124) verdict="not ok 1 - suite $s: timed out" ;;
	125) verdict="not ok 1 - suite $s: guest died without a status" ;;
	*) verdict="not ok 1 - suite $s: exited with status $rc" ;;
	esac
	plan=1
	if [ -n "$want_preempt" ]; then
		# The kernel prints its preemption model at boot.
		got=$(grep -ho 'Dynamic Preempt: [a-z]*' "$run/console.log" "$run/dmesg.log" 2>/dev/null | tail -1 | cut -d' ' -f3 || true)
		if [ "$got" = "$want_preempt" ]; then
			pverdict="ok 2 - suite $s: booted with preemption '$got'"
		else
			pverdict="not ok 2 - suite $s: preemption: got '${got:-no Dynamic Preempt line}', want '$want_preempt'"
		fi
		plan=2
	fi
	{ echo "1..$plan"; echo "$verdict"; [ $plan = 1 ] || echo "$pverdict"; } >"$results/$s.guest.tap"
	echo "$verdict ($(( $(date +%s) - start )) s)"
	[ $plan = 1 ] || echo "$pverdict"
	files+=("$results/$s.tap" "$results/$s.guest.tap")
done
"$REPO/scripts/tap-summary.sh" "${files[@]}"
