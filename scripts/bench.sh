#!/bin/bash
# Run benchmarks: each bench/<name>/ has a "run" script, run on the host
# (it boots the guest as often as it needs, with scripts/qemu-run.sh), and
# an optional Makefile for its programs, built into build/bench/<name>.
# Usage: scripts/bench.sh [NAME...]
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
	if [ -f "$REPO/bench/$b/Makefile" ]; then
		make -s -C "$REPO/bench/$b" OUT="$BUILD/bench/$b" KHDR="$khdr"
	fi
	say "benchmark $b"
	LK417_REPO=$REPO LK417_BENCHBIN=$BUILD/bench/$b "$REPO/bench/$b/run"
done
