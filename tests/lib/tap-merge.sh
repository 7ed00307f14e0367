#!/bin/bash
# Run several TAP programs and print one TAP stream: every result
# renumbered, one plan at the end.  A program that exits non-zero, prints
# no plan, or fewer results than its plan adds a failed result, so a
# crash can never look like a pass.
#
# Usage: tap-merge.sh COMMAND [COMMAND...]   (each COMMAND one word or a
# quoted string run by bash)
n=0
result() { # status text
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
for cmd in "$@"; do
	out=$(mktemp)
	bash -c "$cmd" >"$out" 2>&1
	rc=$?
	plan="" seen=0
	while IFS= read -r line; do
		case "$line" in
		"1.."*) plan=${line#1..}; plan=${plan%% *} ;;
		"ok "*|"not ok "*)
			seen=$((seen + 1))
			text=$(sed -E 's/^(not )?ok [0-9]+ ?(- )?//' <<<"$line")
			case "$line" in
			ok*) result ok "$text" ;;
			*) result fail "$text" ;;
			esac
			;;
		*) echo "$line" ;;
		esac
	done <"$out"
	rm -f "$out"
	if [ -z "$plan" ]; then
		result fail "$cmd: printed no plan (exit $rc)"
	elif [ "$seen" -ne "$plan" ]; then
		result fail "$cmd: planned $plan results, printed $seen (exit $rc)"
	elif [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		result fail "$cmd: exited with status $rc"
	fi
done
echo "1..$n"
