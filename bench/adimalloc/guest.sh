#!/bin/bash
# adimalloc benchmark, guest side.  Tools: glibc (plain), full, sample=N,
# memcheck, efence.  Rounds: ROUNDS (default 3), median wall time.
b=$LK417_BENCHBIN
R=$b/adirun
ROUNDS=${ROUNDS:-3}
t=$(mktemp -d /tmp/adibench.XXXXXX)
cd "$t" || exit 1
efence=$(ls /usr/lib/libefence.so* /usr/lib/x86_64-linux-gnu/libefence.so* 2>/dev/null | head -1)
tools="glibc full sample=10 sample=100 sample=1000 memcheck"
[ -n "$efence" ] && tools="$tools efence"
[ -z "$efence" ] && echo "# electric-fence is not installed (Debian package electric-fence): its column is left out"
command -v valgrind >/dev/null || { echo "# valgrind is not installed: memcheck left out"; tools=${tools/ memcheck/}; }

# The command words that put a program under TOOL.
prefix() {
	case $1 in
	glibc) echo "" ;;
	full) echo "$R" ;;
	sample=*) echo "$R --sample ${1#sample=}" ;;
	memcheck) echo "valgrind -q --error-exitcode=99" ;;
	efence) echo "env LD_PRELOAD=$efence" ;;
	esac
}
# shellcheck disable=SC2046
with() { local tool=$1; shift; $(prefix "$tool") "$@"; }

echo "== detection of the planted bugs (x: caught; sampled modes: caught/5 runs)"
printf "%-16s" bug; for tool in $tools; do printf " %-11s" "$tool"; done; echo
for bug in $("$b/bugs"); do
	printf "%-16s" "$bug"
	for tool in $tools; do
		runs=1
		case $tool in sample=*) runs=5 ;; esac
		caught=0
		for ((i = 0; i < runs; i++)); do
			with "$tool" "$b/bugs" "$bug" >"$t/out" 2>"$t/err" </dev/null
			rc=$?
			# Caught: a report (86), memcheck's error status (99), or a
			# crash (efence: SIGSEGV); glibc's own abort (134) counts too.
			case $rc in 86 | 99 | 134 | 139) caught=$((caught + 1)) ;; esac
			grep -q "ERROR SUMMARY: [1-9]" "$t/err" && [ $rc -ne 86 ] && [ $rc -ne 99 ] && caught=$((caught + 1))
		done
		if [ $runs -gt 1 ]; then printf " %-11s" "$caught/$runs"
		elif [ $caught -gt 0 ]; then printf " %-11s" x
		else printf " %-11s" -; fi
	done
	echo
done

seq 1 2000 | awk '{ printf "%d line %x %s\n", ($1 * 7919) % 1013, $1 * 31, substr("qwertyuiopasdfghjkl", $1 % 17) }' >"$t/in.txt"
progs=("sort -k1,1n -k3 $t/in.txt" "gzip -c -6 $t/in.txt" "sed -e s/line/LINE/g -e s/[0-9]/#/ $t/in.txt")
echo
echo "== real programs: median wall time of $ROUNDS and peak RSS, ratios to glibc malloc"
printf "%-40s %-12s %10s %10s %8s %8s\n" program tool seconds "peak KiB" time× mem×
for prog in "${progs[@]}"; do
	base_s="" base_m=""
	for tool in $tools; do
		times=() mem=0
		for ((i = 0; i < ROUNDS; i++)); do
			# shellcheck disable=SC2046,SC2086
			/usr/bin/time -f "%e %M" -o "$t/time" $(prefix "$tool") $prog >/dev/null 2>"$t/err"
			read -r s m <"$t/time"
			times+=("$s")
			[ "$m" -gt "$mem" ] && mem=$m
		done
		med=$(printf "%s\n" "${times[@]}" | sort -n | sed -n "$(((ROUNDS + 1) / 2))p")
		[ "$tool" = glibc ] && base_s=$med && base_m=$mem
		printf "%-40s %-12s %10s %10s %8.2f %8.2f\n" "${prog%% *} ${prog#* }" "$tool" "$med" "$mem" \
			"$(echo "$med / ($base_s + 0.001)" | bc -l)" "$(echo "$mem / $base_m" | bc -l)" | sed "s|$t/||"
	done
done
rm -rf "$t"
