#!/bin/bash
# Run test suites in QEMU, one boot per suite, and summarise.
#
# Usage: scripts/test.sh [--variant V] [SUITE...]
#   With no SUITE, runs every directory of tests/ that has a "run" file
#   and no "stress-only" marker.  Each suite's suite.conf gives its QEMU
#   options (QEMU_ARGS) and time limit (TIMEOUT, seconds).
#
# Besides the suite's own TAP, every suite gets one more result: the guest
# finished, the suite exited 0, and the kernel log is free of splats.
# A suite whose suite.conf says HOST_ONLY=1 tests the host CPU itself (the
# guest's TCG CPU is what it looks past): its run script runs on the host,
# as an ordinary process, and its extra result is its exit status.
# Ends with "N passed, N failed, N skipped"; exit 1 when anything failed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-guest.sh"

variant=default
if [ "${1:-}" = --variant ]; then variant=$2; shift 2; fi
case "${1:-}" in -h|--help) usage_from_header "$0"; exit 0 ;; esac

suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
	for d in "$REPO"/tests/*/; do
		[ -x "$d/run" ] && [ ! -e "$d/stress-only" ] && suites+=("$(basename "$d")")
	done
fi
for s in "${suites[@]}"; do
	[ -x "$REPO/tests/$s/run" ] ||
		die "no suite '$s' (have: $(cd "$REPO/tests" && ls -d */ | tr -d / | tr '\n' ' '))"
done

results=$BUILD/test-results
rm -rf "$results"
mkdir -p "$results"
khdr=$(kobj "$variant")/usr/include
[ -d "$khdr/linux" ] || die "no exported uapi headers in $khdr: build the kernel first"

for s in "${suites[@]}"; do
	read_suite_conf "$s" 600
	# KASAN, lockdep and DEBUG_VM make the debug kernel several times slower.
	[ "$variant" = debug ] && TIMEOUT=$((TIMEOUT * 4))
	if [ -f "$REPO/tests/$s/Makefile" ]; then
		say "building suite $s"
		make -s -C "$REPO/tests/$s" OUT="$BUILD/tests/$s" KHDR="$khdr" ||
			die "building suite $s failed"
	fi
	say "suite $s"
	rc=0
	if [ "$HOST_ONLY" = 1 ]; then
		mkdir -p "$BUILD/runs/test-$s"
		timeout "$TIMEOUT" env OUT="$BUILD/tests/$s" KHDR="$khdr" "$REPO/tests/$s/run" \
			>"$BUILD/runs/test-$s/output.log" 2>&1 || rc=$?
		cp "$BUILD/runs/test-$s/output.log" "$results/$s.tap"
		case $rc in
		0) verdict="ok 1 - suite $s: host-only, exit 0" ;;
		124) verdict="not ok 1 - suite $s: host-only, timed out after $TIMEOUT s" ;;
		*) verdict="not ok 1 - suite $s: host-only, exited with status $rc" ;;
		esac
		printf '1..1\n%s\n' "$verdict" >"$results/$s.guest.tap"
		echo "$verdict"
		continue
	fi
	# shellcheck disable=SC2086
	"$REPO/scripts/qemu-run.sh" --variant "$variant" $QEMU_ARGS --timeout "$TIMEOUT" \
		--out "$BUILD/runs/test-$s" -- "$REPO/guest/run-suite.sh" "$s" || rc=$?
	cp "$BUILD/runs/test-$s/output.log" "$results/$s.tap"
	verdict=$(suite_verdict "$s" $rc "$TIMEOUT")
	printf '1..1\n%s\n' "$verdict" >"$results/$s.guest.tap"
	echo "$verdict"
done

files=()
for s in "${suites[@]}"; do files+=("$results/$s.tap" "$results/$s.guest.tap"); done
"$REPO/scripts/tap-summary.sh" "${files[@]}"
