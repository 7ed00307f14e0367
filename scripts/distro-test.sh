#!/bin/bash
# Run the ADI suites on the packaged kernel booted as Debian boots it
# (scripts/distro-run.sh --suite, one boot per suite), and summarise as
# scripts/test.sh does: each suite's TAP, plus one result per boot (the
# guest finished, the suite exited 0, no kernel splat).
#
# Usage: scripts/distro-test.sh [SUITE...]   (default: adi adi-mm adi-syscall adimalloc)
#   Results in build/distro/test-results, runs in build/distro/runs/test-<suite>.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

D=$BUILD/distro
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(adi adi-mm adi-syscall adimalloc)
case "${suites[0]}" in -h|--help) usage_from_header "$0"; exit 0 ;; esac

results=$D/test-results
rm -rf "$results"
mkdir -p "$results"
files=()
for s in "${suites[@]}"; do
	say "suite $s (distro boot)"
	rc=0
	start=$(date +%s)
	"$REPO/scripts/distro-run.sh" --suite "$s" --out "$D/runs/test-$s" || rc=$?
	cp "$D/runs/test-$s/output.log" "$results/$s.tap" 2>/dev/null || : >"$results/$s.tap"
	case $rc in
	0) verdict="ok 1 - suite $s: finished, exit 0, no kernel splat" ;;
	3) verdict="not ok 1 - suite $s: kernel splat in the guest log" ;;
	124) verdict="not ok 1 - suite $s: timed out" ;;
	125) verdict="not ok 1 - suite $s: guest died without a status" ;;
	*) verdict="not ok 1 - suite $s: exited with status $rc" ;;
	esac
	printf '1..1\n%s\n' "$verdict" >"$results/$s.guest.tap"
	echo "$verdict ($(( $(date +%s) - start )) s)"
	files+=("$results/$s.tap" "$results/$s.guest.tap")
done
"$REPO/scripts/tap-summary.sh" "${files[@]}"
