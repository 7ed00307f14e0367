#!/bin/bash
# Two kernels, one guest boot each per turn, in ABBA order (the host's
# drift falls on both alike): adi_bench --checked ROUNDS in each boot.
# Prints every boot's table and the median of the boots' medians.
#
# Usage: bench/adi/ab-kernels.sh A_BZIMAGE B_BZIMAGE [PAIRS [ROUNDS]]
#   e.g. bench/adi/ab-kernels.sh build/obj-p43/arch/x86/boot/bzImage \
#            build/obj/arch/x86/boot/bzImage 2 9
# Build adi_bench first (make -C bench/adi OUT=$PWD/build/bench/adi).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { sed -n '2,9p' "$0"; exit 2; }
a=$1 b=$2 pairs=${3:-2} rounds=${4:-9}
for f in "$a" "$b" build/bench/adi/adi_bench; do
	[ -f "$f" ] || { echo "ab-kernels: no $f" >&2; exit 2; }
done
order=()
for _ in $(seq "$pairs"); do order+=(A B B A); done
n=0
for k in "${order[@]}"; do
	n=$((n + 1))
	img=$a; [ "$k" = B ] && img=$b
	out=build/runs/ab-$n-$k
	echo "== boot $n of ${#order[@]}: kernel $k ($img)" >&2
	scripts/qemu-run.sh --quiet --kernel "$img" --mem 1G --timeout 600 --out "$out" \
		-- build/bench/adi/adi_bench --checked "$rounds" >/dev/null
	echo "== boot $n kernel $k ($img)"
	cat "$out/output.log"
done | tee build/runs/ab-all.log
echo "== median of the boots' checked-load/umip and checked-store/umip"
for k in A B; do
	for what in load store; do
		vals=$(awk -v k="$k" -v w="checked-$what/umip:" '
			/^== boot/ { cur = ($5 == k) } cur && $1 == w { print $2 }' build/runs/ab-all.log |
			sort -n | tr '\n' ' ')
		echo "kernel $k $what: $vals-> median $(echo "$vals" | awk '{ n = split($0, v, " ");
			print (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }')"
	done
done
