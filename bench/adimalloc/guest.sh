#!/bin/bash
# adimalloc benchmark, guest side.  Tools: glibc (plain), full, sample=N,
# memcheck, efence.  PARTS: "detection slowdown" (default) or one of them;
# ROUNDS (default 5) rounds of the sampled modes; SMALL_LINES and BIG_LINES
# (default 1000 and 50000) size the inputs of the two slowdown tables;
# RUN_LIMIT (default 60) bounds each timed run, in seconds.
b=$LK417_BENCHBIN
ROUNDS=${ROUNDS:-5}
PARTS=${PARTS:-detection slowdown}
RUN_LIMIT=${RUN_LIMIT:-60}
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
	# Every tool but memcheck starts the program through env(1), glibc
	# too, so that no column pays for one exec more than another.
	glibc) echo "env" ;;
	full) echo "env LD_PRELOAD=$b/libadimalloc.so ADIMALLOC_OPTIONS=mode=full" ;;
	sample=*) echo "env LD_PRELOAD=$b/libadimalloc.so ADIMALLOC_OPTIONS=$1" ;;
	memcheck) echo "valgrind -q --error-exitcode=99" ;;
	efence) echo "env LD_PRELOAD=$efence" ;;
	esac
}

detection() {
echo "== detection of the planted bugs (x: caught; sampled modes: caught/5 runs)"
printf "%-16s" bug; for tool in $tools; do printf " %-11s" "$tool"; done; echo
for bug in $("$b/bugs"); do
	printf "%-16s" "$bug"
	for tool in $tools; do
		runs=1
		case $tool in sample=*) runs=5 ;; esac
		caught=0
		for ((i = 0; i < runs; i++)); do
			# Bounded: a tool that hangs on a bug has not caught it.
			# The subshell (two commands: bash does not exec the
			# last) keeps bash's "Aborted" job notices out.
			# shellcheck disable=SC2046
			(timeout 120 $(prefix "$tool") "$b/bugs" "$bug" >"$t/out" 2>"$t/err" </dev/null
			 exit $?) 2>/dev/null
			rc=$?
			[ $rc -eq 124 ] && echo "$tool on $bug: no result within 120 s" >>"$t/hung"
			# Caught, once per run, by any way a tool reports: our
			# report (86), memcheck's error status (99) or its error
			# summary, a crash (SIGSEGV, 139), Electric Fence's abort on
			# an allocator error (it kills itself with SIGILL, 132), or
			# glibc's own abort (134).
			case $rc in
			86 | 99 | 132 | 134 | 139) caught=$((caught + 1)) ;;
			*) grep -q "ERROR SUMMARY: [1-9]" "$t/err" && caught=$((caught + 1)) ;;
			esac
		done
		if [ $runs -gt 1 ]; then printf " %-11s" "$caught/$runs"
		elif [ $caught -gt 0 ]; then printf " %-11s" x
		else printf " %-11s" -; fi
	done
	echo
done
[ -f "$t/hung" ] && sed 's/^/# /' "$t/hung"
}

# The slowdown half: three unmodified programs that allocate a lot.  Full
# mode traps on every heap access (hundreds of times slower under TCG), so
# it is measured on a small input, next to glibc, memcheck and Electric
# Fence on the same input (Electric Fence spends a page or two per
# allocation); the sampled modes, which are meant to run close
# to 1x, on an input on which glibc takes about a second.  Rounds go
# tool after tool, so a slow spell of the machine hits every tool alike; a
# tool already 2x slower than glibc after its first round is not repeated
# (it is no 1.1x candidate).  Median wall time, highest peak RSS.
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# perf_table LINES ROUNDS TOOL...: one table on an input of LINES lines.
perf_table() {
	local lines=$1 rounds=$2 prog name tool r sec kib base_s base_m; shift 2
	local in=$t/in.$lines
	cat >"$t/q.sql" <<SQL
create table t(a, b);
with recursive c(x) as (select 1 union all select x + 1 from c where x < $lines)
insert into t select x, 'k' || x from c;
create index i on t(b);
select count(*), sum(a) from t where b like 'k1%';
SQL
	seq 1 "$lines" | awk '{ printf "%d line %x %s\n", ($1 * 7919) % 1013, $1 * 31, substr("qwertyuiopasdfghjkl", $1 % 17) }' >"$in"
	# A program is its words: no quoting inside (awk's text is in a file).
	echo '{ w[NR] = $3 $2; n[$1]++ } END { for (k in n) c++; print c, length(w[1]) }' >"$t/prog.awk"
	local progs=("sort -k1,1n -k3 $in"
		     "sqlite3 -init $t/q.sql :memory: .quit"
		     "mawk -f $t/prog.awk $in")
	echo
	echo "== $lines input lines: median wall time of up to $rounds rounds, peak RSS; ratios to glibc malloc"
	echo "   (>=: a round hit the ${RUN_LIMIT} s limit and counts as ${RUN_LIMIT} s; its peak RSS is not known)"
	printf "%-8s %-13s %9s %9s %8s %7s\n" program tool seconds "peak KiB" "time x" "mem x"
	for prog in "${progs[@]}"; do
		name=${prog%% *}
		rm -f "$t"/times.* "$t"/mem.* "$t"/capped.*	# a new program: new figures
		for ((r = 0; r < rounds; r++)); do
			for tool in "$@"; do
				if [ "$r" -gt 0 ] && [ "$tool" != glibc ] &&
				   [ "$(echo "$(head -1 "$t/times.$tool") > 2 * $(head -1 "$t/times.glibc")" | bc)" = 1 ]; then
					continue
				fi
				# shellcheck disable=SC2046,SC2086
				(timeout "$RUN_LIMIT" /usr/bin/time -f "%e %M" -o "$t/time" $(prefix "$tool") $prog \
					>/dev/null 2>"$t/err"; exit $?) 2>/dev/null
				rc=$?
				if [ $rc -eq 124 ]; then
					# A sampled hot allocation: every access to it traps.
					echo "$RUN_LIMIT 0" >"$t/time"
					touch "$t/capped.$tool"
				elif [ $rc -ne 0 ]; then
					echo "# $name under $tool: exit status $rc ($(tail -1 "$t/err"))"
				fi
				read -r sec kib <"$t/time"
				echo "$sec" >>"$t/times.$tool"
				echo "$kib" >>"$t/mem.$tool"
			done
		done
		base_s=$(median <"$t/times.glibc") base_m=$(sort -n "$t/mem.glibc" | tail -1)
		# time(1) counts in hundredths: never divide by a zero.
		[ "$(echo "$base_s < 0.01" | bc)" = 1 ] && base_s=0.01
		for tool in "$@"; do
			sec=$(median <"$t/times.$tool") kib=$(sort -n "$t/mem.$tool" | tail -1)
			[ -f "$t/capped.$tool" ] && sec=">=$sec"
			printf "%-8s %-13s %9s %9s %8.2f %7.2f\n" "$name" "$tool" "$sec" "$kib" \
				"$(echo "${sec#>=} / $base_s" | bc -l)" "$(echo "$kib / $base_m" | bc -l)"
		done
	done
}

slowdown() {
slow="glibc full"
command -v valgrind >/dev/null && slow="$slow memcheck"
[ -n "$efence" ] && slow="$slow efence"
# shellcheck disable=SC2086
perf_table "${SMALL_LINES:-1000}" 1 $slow
fast="glibc sample=10 sample=100 sample=1000 sample=10000"
# shellcheck disable=SC2086
perf_table "${BIG_LINES:-50000}" "$ROUNDS" $fast
}

for part in $PARTS; do
	case $part in
	detection | slowdown) "$part" ;;
	*) echo "unknown part '$part' (PARTS: detection slowdown)"; exit 2 ;;
	esac
done
rm -rf "$t"
