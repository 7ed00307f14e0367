#!/bin/bash
# In the guest: sockmsg TOOL ROUNDS COUNT1K COUNT64K.  Prints a table of
# medians (MB/s and messages/s) and ratios to plain TCP.
set -euo pipefail
T=$1 rounds=$2 c1k=$3 c64k=$4
res=$(mktemp)
setups=("none|--unmap-after 0" "pass|--pass" "redirect|--redirect")
for r in $(seq "$rounds"); do
	for sz in 1024 65536; do
		n=$c1k; [ "$sz" = 65536 ] && n=$c64k
		for s in "${setups[@]}"; do
			IFS='|' read -r name opts <<<"$s"
			"$T" --json --size "$sz" --count "$n" --wait-ms 1000 $opts |
				jq -r --arg n "$name" --arg r "$r" \
				'"\(.size) \($n) \($r) \(.mb_per_s) \(.msgs_per_s) \(.recv_peer + .recv_other) \(.sent_bytes)"' >>"$res"
		done
	done
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "| message | setup | MB/s | messages/s | vs none (MB/s) |"
echo "|---|---|---|---|---|"
for sz in 1024 65536; do
	base=$(awk -v s="$sz" '$1==s && $2=="none" {print $4}' "$res" | median)
	for name in none pass redirect; do
		mb=$(awk -v s="$sz" -v n="$name" '$1==s && $2==n {print $4}' "$res" | median)
		ms=$(awk -v s="$sz" -v n="$name" '$1==s && $2==n {print $5}' "$res" | median)
		bad=$(awk -v s="$sz" -v n="$name" '$1==s && $2==n && $6!=$7' "$res" | wc -l)
		printf '| %s B | %s | %.1f | %.0f | %.3f |%s\n' "$sz" "$name" "$mb" "$ms" \
			"$(awk -v a="$mb" -v b="$base" 'BEGIN {print a/b}')" \
			"$([ "$bad" = 0 ] || echo " $bad runs lost bytes")"
	done
done
