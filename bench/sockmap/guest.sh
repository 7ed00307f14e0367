#!/bin/bash
# In the guest: sockmsg TOOL ROUNDS COUNT1K COUNT64K.  Each run sends COUNT
# messages (the defaults make a run last seconds under TCG, not
# milliseconds); the setups' order rotates from round to round.  Prints,
# per size and setup, the median and min-max of MB/s across rounds, the
# median messages/s, the shortest run, and the median and min-max of the
# per-round ratio to plain TCP ("none" of the same round).
set -euo pipefail
T=$1 rounds=$2 c1k=$3 c64k=$4
res=$(mktemp)
setups=("none|--unmap-after 0" "pass|--pass" "redirect|--redirect")
for r in $(seq "$rounds"); do
	for sz in 1024 65536; do
		n=$c1k; [ "$sz" = 65536 ] && n=$c64k
		for k in 0 1 2; do
			s=${setups[$(((k + r) % 3))]}
			IFS='|' read -r name opts <<<"$s"
			"$T" --json --size "$sz" --count "$n" --wait-ms 1000 $opts |
				jq -r --arg n "$name" --arg r "$r" \
				'"\(.size) \($n) \($r) \(.mb_per_s) \(.msgs_per_s) \(.recv_peer + .recv_other) \(.sent_bytes) \(.seconds)"' >>"$res"
		done
	done
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
minmax() { sort -g | awk 'NR==1 {lo=$1} {hi=$1} END {printf "%.3g-%.3g", lo, hi}'; }
# ratio of setup N to "none" in each round, one line per round
ratios() {
	awk -v s="$1" -v n="$2" '$1==s && $2=="none" {b[$3]=$4} $1==s && $2==n {v[$3]=$4}
		END {for (r in v) print v[r] / b[r]}' "$res"
}
echo "| message | setup | MB/s median (min-max) | messages/s | shortest run | vs none: median (min-max) |"
echo "|---|---|---|---|---|---|"
for sz in 1024 65536; do
	for name in none pass redirect; do
		sel() { awk -v s="$sz" -v n="$name" -v f="$1" '$1==s && $2==n {print $f}' "$res"; }
		bad=$(awk -v s="$sz" -v n="$name" '$1==s && $2==n && $6!=$7' "$res" | wc -l)
		printf '| %s B | %s | %.1f (%s) | %.0f | %.2f s | %.3f (%s) |%s\n' "$sz" "$name" \
			"$(sel 4 | median)" "$(sel 4 | minmax)" "$(sel 5 | median)" \
			"$(sel 8 | sort -g | head -1)" \
			"$(ratios "$sz" "$name" | median)" "$(ratios "$sz" "$name" | minmax)" \
			"$([ "$bad" = 0 ] || echo " $bad runs lost bytes")"
	done
done
echo
echo "raw runs (size setup round MB/s msgs/s received sent seconds):"
cat "$res"
