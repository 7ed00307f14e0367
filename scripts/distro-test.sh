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
#                   also checked: the boot must say "Dynamic Preempt: MODE";
#                   so is pti=on|off: with on the boot must say
#                   "Kernel/User page tables isolation: enabled", with off
#                   it must not (an unaffected CPU prints nothing then)
#   Results in build/distro/test-results, runs in build/distro/runs/test-<suite>
#   (with --append: test-results-<args>, runs/test-<suite>-<args>).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-guest.sh"

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
want_pti=$(grep -o '\bpti=[a-z]*' <<<"$append" | tail -1 | cut -d= -f2 || true)
case "$want_pti" in
"") ;;
on|off) ;;
*) die "--append: pti=$want_pti is not checked here (pti=on or pti=off)" ;;
esac

# boot_line PATTERN RUN: the last boot-log line matching PATTERN, with
# PATTERN's text removed ("" when the kernel never printed one).
boot_line() {
	local line
	line=$(grep -Fh "$1" "$2/console.log" "$2/dmesg.log" 2>/dev/null | tail -1 | tr -d '\r' || true)
	[ -z "$line" ] || echo "${line##*"$1"}"
}

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
	verdict=$(suite_verdict "$s" $rc)
	checks=("$verdict")
	if [ -n "$want_preempt" ]; then
		# The kernel prints its preemption model at boot.
		got=$(boot_line 'Dynamic Preempt: ' "$run" | cut -d' ' -f1)
		if [ "$got" = "$want_preempt" ]; then
			checks+=("ok - suite $s: booted with preemption '$got'")
		else
			checks+=("not ok - suite $s: preemption: got '${got:-no Dynamic Preempt line}', want '$want_preempt'")
		fi
	fi
	if [ -n "$want_pti" ]; then
		# arch/x86/mm/pti.c says whether page-table isolation is on.
		got=$(boot_line 'Kernel/User page tables isolation: ' "$run")
		state=off
		[ "$got" != enabled ] || state=on
		if [ "$state" = "$want_pti" ]; then
			checks+=("ok - suite $s: page-table isolation $state")
		else
			checks+=("not ok - suite $s: page-table isolation: got $state ('${got:-no isolation line}'), want $want_pti")
		fi
	fi
	{
		echo "1..${#checks[@]}"
		n=0
		for c in "${checks[@]}"; do
			n=$((n + 1))
			sed -E "s/^(not ok|ok) (1 )?- /\1 $n - /" <<<"$c"
		done
	} >"$results/$s.guest.tap"
	echo "$verdict ($(( $(date +%s) - start )) s)"
	[ ${#checks[@]} = 1 ] || printf '%s\n' "${checks[@]:1}"
	files+=("$results/$s.tap" "$results/$s.guest.tap")
done
"$REPO/scripts/tap-summary.sh" "${files[@]}"
