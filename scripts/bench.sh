#!/bin/bash
# Run benchmarks in QEMU: each bench/<name>/ with a "run" file, one boot
# each.  Usage: scripts/bench.sh [NAME...]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
benches=("$@")
if [ ${#benches[@]} -eq 0 ] && [ -d "$REPO/bench" ]; then
	for d in "$REPO"/bench/*/; do
		[ -x "$d/run" ] && benches+=("$(basename "$d")")
	done
fi
if [ ${#benches[@]} -eq 0 ]; then
	say "no benchmarks yet (bench/<name>/run); nothing measured"
	exit 0
fi
khdr=$(kobj default)/usr/include
for b in "${benches[@]}"; do
	[ -x "$REPO/bench/$b/run" ] || die "no benchmark '$b'"
	QEMU_ARGS="" TIMEOUT=900
	[ -f "$REPO/bench/$b/bench.conf" ] && . "$REPO/bench/$b/bench.conf"
	[ -f "$REPO/bench/$b/Makefile" ] &&
		make -s -C "$REPO/bench/$b" OUT="$BUILD/bench/$b" KHDR="$khdr"
	say "benchmark $b"
	# shellcheck disable=SC2086
	"$REPO/scripts/qemu-run.sh" $QEMU_ARGS --timeout "$TIMEOUT" \
		--out "$BUILD/runs/bench-$b" -- env LK417_BENCHBIN="$BUILD/bench/$b" "$REPO/bench/$b/run"
done
