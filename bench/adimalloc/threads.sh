#!/bin/bash
# Sampled mode's cost and catch rate (issue 22), guest side.
#
# 1. bench/adimalloc/threads.c (NTHREADS threads of malloc/free/access of
#    mixed sizes) RUNS times, alternating glibc and the default sampled
#    mode (mode=sample) in ABAB order, each started through env(1) so that
#    neither pays for an exec more: per setup the median and the min-max
#    spread, the ratio of the medians, the largest ratio within a pair
#    (sampled run / the glibc run just before it) and how many pairs and
#    sampled runs are above 1.5x.  Both the program's own time of its
#    threaded work ("work") and the whole process's wall time ("wall",
#    library loading and start-up included) are shown.
# 2. The catch probability per bug trigger at the default rate: each of
#    BUGS (tests/adimalloc/bugs) K times under mode=sample; caught means
#    adimalloc's report (exit 86).
#
# Environment:
#   LK417_BENCHBIN  directory with libadimalloc.so, bugs and threads
#                   (bench/adimalloc/Makefile builds them; run it as
#                   make bench BENCH=adimalloc PARTS=threads)
#   THREADS_BIN     the threads program (default $LK417_BENCHBIN/threads)
#   RUNS            runs in all, both setups (default 200: 100 pairs)
#   K               runs of each planted bug (default 50; 0 skips part 2)
#   NTHREADS, OPS   threads.c's arguments (default 16, 20000)
#   BUGS            planted bugs (default: overflow1 overflow_block
#                   underflow uaf_read uaf_write)
#   CONTROL         1: then as many runs again, glibc against glibc in the
#                   same order, summarised the same way: the machine's own
#                   noise, to read the ratios against (default 0)
#   RAW             directory for the raw per-run times (default
#                   /run/scratch when writable, the run directory's
#                   scratch space in the guest; else a temporary one)
b=${LK417_BENCHBIN:?set LK417_BENCHBIN to the directory of libadimalloc.so and bugs}
prog=${THREADS_BIN:-$b/threads}
RUNS=${RUNS:-200}
K=${K:-50}
NTHREADS=${NTHREADS:-16}
OPS=${OPS:-20000}
BUGS=${BUGS:-overflow1 overflow_block underflow uaf_read uaf_write}
CONTROL=${CONTROL:-0}
if [ -z "${RAW:-}" ]; then
	RAW=/run/scratch
	[ -d "$RAW" ] && [ -w "$RAW" ] || RAW=$(mktemp -d /tmp/threads.XXXXXX)
fi
times=$RAW/threads-times.txt
[ -x "$prog" ] || { echo "threads.sh: no $prog (bench/adimalloc/Makefile builds it)" >&2; exit 2; }

setup_cmd() { # glibc|sampled (control: glibc again)
	if [ "$1" = glibc ] || [ "$CONTROL_RUN" = 1 ]; then
		echo env
	else
		echo "env LD_PRELOAD=$b/libadimalloc.so ADIMALLOC_OPTIONS=mode=sample"
	fi
}

now_ns() { date +%s%N; }

# One run: "work_seconds wall_seconds", or nothing if it failed.
one_run() { # setup
	local t0 t1 out
	t0=$(now_ns)
	# shellcheck disable=SC2046
	out=$($(setup_cmd "$1") "$prog" "$NTHREADS" "$OPS" 2>&1) || { echo "$out" >&2; return 1; }
	t1=$(now_ns)
	echo "$out" | awk -v w=$(((t1 - t0) / 1000)) '/^elapsed/ { printf "%s %.6f\n", $2, w / 1e6 }'
}

measure() {
	echo "# run setup pair work_s wall_s ($NTHREADS threads x $OPS operations$([ "$CONTROL_RUN" = 1 ] && echo "; control: both setups are glibc"))" >"$times"
	for ((i = 0; i < RUNS; i++)); do
		if ((i % 2 == 0)); then s=glibc; else s=sampled; fi
		r=$(one_run $s) || { echo "threads.sh: run $i ($s) failed" >&2; exit 1; }
		echo "$i $s $((i / 2)) $r" >>"$times"
	done
}

# summary COLUMN NAME: the statistics of one time column of $times.
summary() {
	awk -v col="$1" -v name="$2" '
	function median(a, n,    i, j, t) {
		for (i = 2; i <= n; i++)	# insertion sort: n is small
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	/^#/ { next }
	{
		v = $col
		if ($2 == "glibc") { g[++ng] = v; gp[$3] = v; gmin = ng == 1 || v < gmin ? v : gmin; gmax = v > gmax ? v : gmax }
		else { s[++ns] = v; sp[$3] = v; smin = ns == 1 || v < smin ? v : smin; smax = v > smax ? v : smax }
	}
	END {
		if (!ng || !ns) { print "no complete pair"; exit 1 }
		mg = median(g, ng); ms = median(s, ns)
		for (p in sp) {
			if (!(p in gp) || gp[p] <= 0)
				continue
			r = sp[p] / gp[p]; pairs++
			if (r > maxr) { maxr = r; maxp = p }
			if (r > 1.5) over++
		}
		for (i = 1; i <= ns; i++)
			if (s[i] > 1.5 * mg) above++
		printf "%s: glibc median %.4f s (%.4f-%.4f, %d runs), sampled median %.4f s (%.4f-%.4f, %d runs)\n",
			name, mg, gmin, gmax, ng, ms, smin, smax, ns
		printf "%s: ratio of medians %.3f; largest pair ratio %.3f (pair %d); pairs above 1.5x: %d of %d; sampled runs above 1.5x glibc median: %d\n",
			name, ms / mg, maxr, maxp, over + 0, pairs, above + 0
	}' "$times"
}

catch_rate() {
	local bug k rc caught other
	echo "== catch probability per trigger, mode=sample (1 allocation in 10000 sampled): caught/K"
	for bug in $BUGS; do
		caught=0 other=0
		for ((k = 0; k < K; k++)); do
			# The subshell (two commands: bash does not exec the
			# last) keeps bash's "Aborted" job notices out: glibc
			# aborts on some bugs in the blocks it keeps.
			# shellcheck disable=SC2046
			($(setup_cmd sampled) "$b/bugs" "$bug" >/dev/null 2>"$RAW/bug.err" </dev/null
			 exit $?) 2>/dev/null
			rc=$?
			case $rc in 86) caught=$((caught + 1)) ;; 0) ;; *) other=$((other + 1)) ;; esac
		done
		printf "%-16s %d/%d caught%s\n" "$bug" "$caught" "$K" \
			"$([ $other -gt 0 ] && echo " ($other other non-zero exits)")"
		echo "$bug $caught $K $other" >>"$RAW/threads-catch.txt"
	done
}

CONTROL_RUN=0
echo "== threads.c, $NTHREADS threads x $OPS operations: glibc vs mode=sample, $RUNS runs (ABAB)"
echo "# $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; raw times in $times"
measure
summary 4 work
summary 5 wall
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
if [ "$CONTROL" = 1 ]; then
	CONTROL_RUN=1
	times=$RAW/threads-control.txt
	echo "== control: glibc against glibc, $RUNS runs in the same order (\"sampled\" below is glibc too); raw times in $times"
	measure
	summary 4 work
	summary 5 wall
fi
: >"$RAW/threads-catch.txt"
[ "$K" -gt 0 ] && catch_rate
exit 0
