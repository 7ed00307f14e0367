#!/bin/bash
# adimalloc benchmark, guest side (bench/adimalloc/run boots the guest).
#
# Tools: glibc (plain malloc), full (adimalloc mode=full), sample (mode=sample,
# the default rate: sample=N of AM_DEFAULT_SAMPLE), memcheck (Valgrind),
# efence (Electric Fence), scudo (LLVM's Scudo, preloaded) and, for
# detection only, asan (the case program built with -fsanitize=address: the
# reference for what is catchable; it needs a recompiled program, so it has
# no slowdown column).  A tool not installed is left out, with a line saying
# so.
#
# PARTS (default "detection slowdown"):
#   detection  bench/adimalloc/cases.c, one edge-case bug per run, each
#              tool with its leak check on (ASan's default, memcheck
#              --leak-check=full, adimalloc detect_leaks=1)
#   planted    tests/adimalloc/bugs.c's planted bugs (the suite's own,
#              sizes in multiples of 16), same scoring, leak checks off and
#              its leak* bugs left out (cases.c has a leak case)
#   slowdown   sort, sqlite3 and mawk over an input sweep
#   threads    threads.sh: sampled mode against glibc with 16 threads (200
#              runs, about 20 minutes under TCG) and the catch rate per
#              trigger at the default rate; not in the default PARTS
# Knobs (environment):
#   CASES        detection cases to run (default: all of `cases`)
#   TOOLS        columns (default: all installed of the list above; also
#                efence1: Electric Fence with EF_ALIGNMENT=1)
#   SAMPLES      sampled columns (default "sample"; e.g. "sample sample=10")
#   SAMPLE_RUNS  runs per case of a sampled column (default 5)
#   FULL_RUNS    runs per case of full mode (default 3): where a block sits in
#                its 64-byte versioned block and its version are drawn per
#                allocation, so one run does not show how often it catches
#   CASE_LIMIT   seconds a detection run may take (default 120; more: "hang")
#   LINES        input lines of the light tools' sweep: glibc, sampled, scudo
#                (default "1000 10000 100000")
#   FULL_LINES   input lines of full mode (default "1000 4000")
#   HEAVY_LINES  input lines of memcheck and efence (default "1000 16000
#                100000": under TCG Valgrind's start-up, about 8 s, is most of
#                its time up to 16000 lines)
#   ROUNDS       slowdown rounds (default 5); HEAVY_ROUNDS: at most that many
#                of them for full, memcheck and efence (default 3)
#   RUN_LIMIT    seconds a timed run may take (default 60; the row says
#                "capped", the time is a lower bound)
#   LOGDIR       raw logs (default /run/scratch/adimalloc: the --out
#                directory of scripts/qemu-run.sh, kept on the host)
set -u
b=$LK417_BENCHBIN
PARTS=${PARTS:-detection slowdown}
SAMPLES=${SAMPLES:-sample}
SAMPLE_RUNS=${SAMPLE_RUNS:-5}
FULL_RUNS=${FULL_RUNS:-3}
CASE_LIMIT=${CASE_LIMIT:-120}
LINES=${LINES:-1000 10000 100000}
FULL_LINES=${FULL_LINES:-1000 4000}
HEAVY_LINES=${HEAVY_LINES:-1000 16000 100000}
ROUNDS=${ROUNDS:-5}
HEAVY_ROUNDS=${HEAVY_ROUNDS:-3}
RUN_LIMIT=${RUN_LIMIT:-60}
t=$(mktemp -d /tmp/adibench.XXXXXX)
cd "$t" || exit 1
LOGDIR=${LOGDIR:-/run/scratch/adimalloc}
if ! mkdir -p "$LOGDIR" 2>/dev/null || [ ! -w "$LOGDIR" ]; then
	echo "# $LOGDIR is not writable: raw logs go to $t/logs (kept)"
	LOGDIR=$t/logs
	mkdir -p "$LOGDIR"
	keep_t=1
fi

# shellcheck disable=SC2012	# fixed system paths
efence=$(ls /usr/lib/libefence.so* /usr/lib/x86_64-linux-gnu/libefence.so* 2>/dev/null | head -1)
# shellcheck disable=SC2012
scudo=$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.scudo_standalone-x86_64.so 2>/dev/null | head -1)
# The rate of mode=sample, as the library itself states it.
default_rate=$("$b/adirun" --help 2>&1 | sed -n 's/.*sample alone: sample=\([0-9]*\).*/\1/p')
all_tools="glibc full $SAMPLES memcheck efence scudo asan"
[ -z "$efence" ] && { echo "# electric-fence is not installed (Debian package electric-fence): left out"; all_tools=${all_tools/ efence/}; }
[ -z "$scudo" ] && { echo "# Scudo is not installed (Debian package libclang-rt-14-dev): left out"; all_tools=${all_tools/ scudo/}; }
command -v valgrind >/dev/null || { echo "# valgrind is not installed: memcheck left out"; all_tools=${all_tools/ memcheck/}; }
[ -x "$b/cases-asan" ] || { echo "# no $b/cases-asan (the Makefile builds it): asan left out"; all_tools=${all_tools/ asan/}; }
TOOLS=${TOOLS:-$all_tools}

is_sampled() { case $1 in sample | sample=*) return 0 ;; esac; return 1; }
is_adimalloc() { [ "$1" = full ] || is_sampled "$1"; }
# Runs per case in the detection tables: the tools that draw at random.
runs_of() {
	if is_sampled "$1"; then echo "$SAMPLE_RUNS"
	elif [ "$1" = full ]; then echo "$FULL_RUNS"
	else echo 1; fi
}

# prefix TOOL LEAK: the command words that put a program under TOOL; LEAK=1
# turns on the tool's leak check.  Every tool but memcheck starts the
# program through env(1), glibc too, so no column pays for one exec more.
prefix() {
	local leak=$2 ao mc=""
	case $1 in
	full) ao=mode=full ;;
	sample) ao=mode=sample ;;
	sample=*) ao=$1 ;;
	esac
	[ "$leak" = 1 ] && [ -n "${ao:-}" ] && ao="$ao,detect_leaks=1"
	[ "$leak" = 1 ] && mc="--leak-check=full"
	# Marker lines around each memcheck error: an error counts even when
	# valgrind dies after it (its own arena overrun by the bug, as read()
	# past a block does) and prints no error summary and no
	# --error-exitcode status.
	case $1 in
	glibc | asan) echo "env" ;;
	full | sample*) echo "env LD_PRELOAD=$b/libadimalloc.so ADIMALLOC_OPTIONS=$ao" ;;
	memcheck) echo "valgrind -q --error-exitcode=99 --error-markers=MEMCHECK-ERROR,MEMCHECK-END $mc" ;;
	efence) echo "env LD_PRELOAD=$efence" ;;
	# Electric Fence with byte alignment: a block then ends at its guard
	# page whatever its size (its manual's advice for catching every
	# overflow; pointers are then unaligned).  Not a default column.
	efence1) echo "env LD_PRELOAD=$efence EF_ALIGNMENT=1" ;;
	scudo) echo "env LD_PRELOAD=$scudo" ;;
	esac
}

# How TOOL's own report shows in its stderr (one grep pattern).
report_re() {
	case $1 in
	full | sample*) echo "ERROR: adimalloc" ;;
	memcheck) echo "== MEMCHECK-ERROR$\|ERROR SUMMARY: [1-9]" ;;
	asan) echo "ERROR: \(AddressSanitizer\|LeakSanitizer\)" ;;
	scudo) echo "Scudo ERROR" ;;
	efence*) echo "ElectricFence Aborting" ;;
	# glibc has no report of its own: its heap checks abort (abrt).
	glibc) echo "^never: glibc has no report line$" ;;
	esac
}

# how TOOL RC ERRFILE MARKER: the short code of how a run ended.  Caught:
#   rep   the tool's own report (adimalloc's, exit 86; a memcheck error;
#         ASan's or LeakSanitizer's report; Scudo's "Scudo ERROR" and
#         abort; Electric Fence's "ElectricFence Aborting", SIGILL)
#   segv abrt ill bus fpe   killed by that signal with no report of the
#         tool (Electric Fence's guard pages; glibc's own heap checks,
#         which abort)
# Not caught:
#   -     exit 0, no report     eN   exit N, no report (not a catch)
#   hang  no end within CASE_LIMIT seconds
#   pre   a report or crash before the "bug next" line (MARKER): not the
#         planted bug, a false positive (checked when MARKER is set)
how() {
	local tool=$1 rc=$2 err=$3 marker=$4 re code at mk
	re=$(report_re "$tool")
	[ "$rc" -eq 124 ] && { echo hang; return; }
	if at=$(grep -n -m1 "$re" "$err" | cut -d: -f1) && [ -n "$at" ]; then
		code=rep
	else
		case $rc in
		0) echo -; return ;;
		86) is_adimalloc "$tool" && code=rep || code=e86 ;;	# report lost
		99) [ "$tool" = memcheck ] && code=rep || code=e99 ;;
		132) code=ill ;; 134) code=abrt ;; 135) code=bus ;;
		136) code=fpe ;; 139) code=segv ;;
		*) echo "e$rc"; return ;;
		esac
		at=$(wc -l <"$err")
	fi
	if [ -n "$marker" ]; then
		mk=$(grep -n -m1 "$marker" "$err" | cut -d: -f1)
		# The marker must come before the report (for a crash: be there).
		if [ -z "$mk" ] || { [ "$code" = rep ] && [ "$at" -lt "$mk" ]; }; then
			code=pre
		fi
	fi
	echo $code
}

is_caught() { case $1 in rep | segv | abrt | ill | bus | fpe) return 0 ;; esac; return 1; }

# detect PART PROG PROG_ASAN LEAK MARKER CASE...: one table.
detect() {
	local part=$1 prog=$2 prog_asan=$3 leak=$4 marker=$5; shift 5
	local cases=("$@") c tool runs i rc code bin cell n_bug=0 dir t0 secs
	local -A caught runsum fp codes
	dir=$LOGDIR/$part
	mkdir -p "$dir"
	: >"$dir/results.tsv"
	echo
	echo "== $part: one bug per run; a cell says how the tool caught it (legend below);"
	echo "   full and sampled columns: caught/runs. Raw logs: $dir/CASE/TOOL[.RUN].log"
	printf "%-20s" case
	for tool in $TOOLS; do printf " %-10s" "$tool"; done
	echo
	for c in "${cases[@]}"; do
		[ "$c" = ok ] || n_bug=$((n_bug + 1))
		mkdir -p "$dir/$c"
		printf "%-20s" "$c"
		for tool in $TOOLS; do
			runs=$(runs_of "$tool")
			bin=$prog
			[ "$tool" = asan ] && bin=$prog_asan
			codes[$tool]="" cell=0
			for ((i = 0; i < runs; i++)); do
				local log=$dir/$c/$tool.log
				[ "$runs" -gt 1 ] && log=$dir/$c/$tool.$i.log
				# Bounded: a tool that hangs has not caught the bug.
				# The subshell (two commands: bash does not exec
				# the last) keeps bash's "Aborted" notices out.
				t0=$EPOCHREALTIME
				# shellcheck disable=SC2046
				(timeout -k 10 "$CASE_LIMIT" $(prefix "$tool" "$leak") "$bin" "$c" \
					>"$t/out" 2>"$t/err" </dev/null; exit $?) 2>/dev/null
				rc=$?
				secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
				code=$(how "$tool" "$rc" "$t/err" "$marker")
				{
					echo "# $(prefix "$tool" "$leak") $bin $c"
					echo "# exit status $rc, scored: $code, $secs s"
					echo "--- stdout"; cat "$t/out"
					echo "--- stderr"; cat "$t/err"
				} >"$log"
				printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$tool" "$i" "$rc" "$code" "$secs" >>"$dir/results.tsv"
				if is_caught "$code"; then
					cell=$((cell + 1))
					case " ${codes[$tool]} " in *" $code "*) ;; *) codes[$tool]="${codes[$tool]} $code" ;; esac
				elif [ "$code" != - ]; then
					case " ${codes[$tool]} " in *" $code "*) ;; *) codes[$tool]="${codes[$tool]} $code" ;; esac
				fi
				[ "$code" = pre ] && fp[$tool]=$((${fp[$tool]:-0} + 1))
			done
			if [ "$c" = ok ]; then
				fp[$tool]=$((${fp[$tool]:-0} + cell))
			else
				caught[$tool]=$((${caught[$tool]:-0} + (cell == runs ? 1 : 0)))
				runsum[$tool]=$((${runsum[$tool]:-0} + cell))
			fi
			codes[$tool]=${codes[$tool]# }
			if [ "$runs" -gt 1 ]; then
				cell="$cell/$runs${codes[$tool]:+ ${codes[$tool]// /+}}"
			else
				cell=${codes[$tool]:--}
			fi
			printf " %-10s" "$cell"
		done
		echo
	done
	printf "%-20s" "caught, of $n_bug"
	for tool in $TOOLS; do
		if [ "$(runs_of "$tool")" -gt 1 ]; then
			printf " %-10s" "$(awk -v s="${runsum[$tool]:-0}" -v r="$(runs_of "$tool")" 'BEGIN { printf "%.1f", s / r }')"
		else
			printf " %-10s" "${caught[$tool]:-0}"
		fi
	done
	echo
	printf "%-20s" "false positives"
	for tool in $TOOLS; do printf " %-10s" "${fp[$tool]:-0}"; done
	echo
	for tool in $TOOLS; do
		runs=$(runs_of "$tool")
		if [ "$runs" -gt 1 ]; then
			echo "# $tool: caught in ${runsum[$tool]:-0} of $((n_bug * runs)) runs ($runs per case): $(awk -v s="${runsum[$tool]:-0}" -v r="$runs" 'BEGIN { printf "%.1f", s / r }') of $n_bug cases on average, ${caught[$tool]:-0} in every run; ${fp[$tool]:-0} false positive(s)"
		else
			echo "# $tool: caught ${caught[$tool]:-0} of $n_bug cases, ${fp[$tool]:-0} false positive(s)"
		fi
	done
	echo "# rep: the tool's report; segv/abrt/ill/bus/fpe: killed by that signal"
	echo "#   without a report of the tool (Electric Fence's guard page: segv;"
	echo "#   glibc's own heap checks: abrt); not caught: - (exit 0), eN (exit N),"
	echo "#   hang (over ${CASE_LIMIT} s), pre (report before the bug: false positive)"
	[ "$part" = planted ] && echo "#   e3: bugs.c could not set the bug up (uaf_reused: the slot never came back)"
	echo "# Raw: $dir/results.tsv (case tool run exit code seconds) and the logs"
	[ "$part" = detection ] && "$b/cases" --describe | awk -F'\t' -v run=" ${cases[*]} " \
		'index(run, " " $1 " ") { printf "#   %-17s %s\n", $1, $2 }'
	awk -F'\t' -v l="$CASE_LIMIT" '$5 == "hang" { print "# " $2 " on " $1 ": no result within " l " s" }' "$dir/results.tsv"
	return 0
}

detection() {
	local cs
	# shellcheck disable=SC2206	# names are words
	cs=(${CASES:-$("$b/cases")})
	echo "# sample: mode=sample = sample=${default_rate:-?} (AM_DEFAULT_SAMPLE); efence: its defaults"
	echo "#   (EF_ALIGNMENT, EF_PROTECT_BELOW unset); scudo: $scudo, its defaults"
	detect detection "$b/cases" "$b/cases-asan" 1 "cases: [a-z0-9_]*: bug next:" "${cs[@]}"
}

planted() {
	local cs
	# shellcheck disable=SC2207
	cs=($("$b/bugs" | grep -v '^leak'))
	detect planted "$b/bugs" "$b/bugs-asan" 0 "" "${cs[@]}"
}

# --- slowdown ---------------------------------------------------------

# stats: "median min max" of the numbers on stdin, one a line.
# FORMAT (printf's, default %.3g) for the three.
stats() {
	sort -g | awk -v f="${1:-%.3g}" '$1 != "-" { v[++n] = $1 }
		END { if (!n) { print "- - -"; exit }
		      m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		      printf f " " f " " f "\n", m, v[1], v[n] }'
}

in_list() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }

# The inputs and programs of LINES lines, as words (no quoting inside).
make_inputs() {
	local lines=$1
	seq 1 "$lines" | awk '{ printf "%d line %x %s\n", ($1 * 7919) % 1013, $1 * 31, substr("qwertyuiopasdfghjkl", $1 % 17) }' >"$t/in.$lines"
	cat >"$t/q.$lines.sql" <<SQL
create table t(a, b);
with recursive c(x) as (select 1 union all select x + 1 from c where x < $lines)
insert into t select x, 'k' || x from c;
create index i on t(b);
select count(*), sum(a) from t where b like 'k1%';
SQL
}

# timed_run TOOL LINES PROG ROUND: one timed run; appends to runs.tsv.
timed_run() {
	local tool=$1 lines=$2 name=$3 r=$4 cmd rc sec kib sum capped=0 err
	case $name in
	sort) cmd="sort -k1,1n -k3 $t/in.$lines" ;;
	sqlite3) cmd="sqlite3 -init $t/q.$lines.sql :memory: .quit" ;;
	mawk) cmd="mawk -f $t/prog.awk $t/in.$lines" ;;
	true) cmd=/bin/true ;;
	esac
	err=$LOGDIR/slowdown/$name.$lines.$tool.r$r.err
	rm -f "$t/time"
	# shellcheck disable=SC2046,SC2086
	(timeout -k 10 "$RUN_LIMIT" "$b/timeit" "$t/time" $(prefix "$tool" 0) $cmd \
		>"$t/out" 2>"$err" </dev/null; exit $?) 2>/dev/null
	rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		capped=1 sec=$RUN_LIMIT kib=-
	elif ! read -r sec kib <"$t/time" 2>/dev/null; then
		sec=- kib=-	# timeit itself failed: the row says "exit"
	fi
	# The output must be the same under every tool (glibc's is the
	# reference): a tool that changes what the program computes is not
	# measured, it is broken.
	sum=$(md5sum <"$t/out" | cut -c1-12)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$lines" "$tool" "$r" "$sec" "$kib" "$rc" "$capped" "$sum" \
		>>"$LOGDIR/slowdown/runs.tsv"
	[ -s "$err" ] || rm -f "$err"
	echo $capped
}

# sweep_row NAME LINES TOOL: the row of TOOL, from runs.tsv.
sweep_row() {
	local name=$1 lines=$2 tool=$3 f=$LOGDIR/slowdown/runs.tsv
	local n cap secs ratio mem mratio note="" bad
	awk -F'\t' -v p="$name" -v l="$lines" -v tl="$tool" '$1 == p && $2 == l && $3 == tl' "$f" >"$t/rows"
	n=$(wc -l <"$t/rows")
	[ "$n" -eq 0 ] && return
	cap=$(awk -F'\t' '$8 == 1' "$t/rows" | wc -l)
	secs=$(cut -f5 "$t/rows" | stats)
	# Per round: this tool's time over glibc's of the same round.
	ratio=$(awk -F'\t' -v p="$name" -v l="$lines" '$1 == p && $2 == l && $3 == "glibc" && $5 != "-" { g[$4] = $5 }
		$1 == p && $2 == l && $3 == "'"$tool"'" { t[$4] = $5; m[$4] = $6 }
		END { for (r in t) if ((r in g) && g[r] > 0 && t[r] != "-") printf "%.4g\n", t[r] / g[r] }' "$f" | stats)
	mem=$(awk -F'\t' '$6 != "-" { print $6 }' "$t/rows" | stats %d)
	mratio=$(awk -F'\t' -v p="$name" -v l="$lines" '$1 == p && $2 == l && $3 == "glibc" && $6 != "-" { g[$4] = $6 }
		$1 == p && $2 == l && $3 == "'"$tool"'" && $6 != "-" { t[$4] = $6 }
		END { for (r in t) if ((r in g) && g[r] > 0) printf "%.4g\n", t[r] / g[r] }' "$f" | stats %.2f)
	bad=$(awk -F'\t' '$7 != 0 && $8 == 0 { print $7 }' "$t/rows" | sort -u | tr '\n' ' ')
	[ "$cap" -gt 0 ] && note="capped $cap of $n at ${RUN_LIMIT} s (time and ratio: at least);"
	[ -n "$bad" ] && note="$note exit ${bad% };"
	local gsum
	gsum=$(awk -F'\t' -v p="$name" -v l="$lines" '$1 == p && $2 == l && $3 == "glibc" { print $9; exit }' "$f")
	if [ "$tool" != glibc ] && [ "$name" != true ] &&
	   awk -F'\t' -v s="$gsum" '$8 == 0 && $9 != s { bad = 1 } END { exit !bad }' "$t/rows"; then
		note="$note output differs from glibc's;"
	fi
	# shellcheck disable=SC2086	# "median min max": three words
	fmt3() { set -- $1; if [ "$1" = - ]; then echo -; elif [ "$2" = "$3" ]; then echo "$1"; else echo "$1 ($2-$3)"; fi; }
	local ge=""
	[ "$cap" -gt 0 ] && ge=">="
	# /bin/true reads no input: its row shows "-" lines.
	printf "%-8s %7s %-12s %2s  %-26s %-22s %-24s %s\n" "$name" "${lines/#0/-}" "$tool" "$n" \
		"$ge$(fmt3 "$secs")" "$([ "$tool" = glibc ] && echo 1 || echo "$ge$(fmt3 "$ratio")")" \
		"$(fmt3 "$mem") / $(fmt3 "$mratio" | cut -d' ' -f1)" "${note%;}"
}

slowdown() {
	local light="glibc" heavy="" tool lines name r i n order all_lines capped
	local -A capped_at
	for tool in $TOOLS; do
		case $tool in
		glibc | asan) ;;
		full | memcheck | efence*) heavy="$heavy $tool" ;;
		*) light="$light $tool" ;;
		esac
	done
	mkdir -p "$LOGDIR/slowdown"
	: >"$LOGDIR/slowdown/runs.tsv"
	# shellcheck disable=SC2016	# awk's text
	echo '{ w[NR] = $3 $2; n[$1]++ } END { for (k in n) c++; print c, length(w[1]) }' >"$t/prog.awk"
	all_lines=$(echo "$LINES $FULL_LINES $HEAVY_LINES" | tr ' ' '\n' | sed '/^$/d' | sort -n -u | tr '\n' ' ')
	echo
	echo "== slowdown: wall time of sort, sqlite3 (a table and an index) and mawk (an array"
	echo "   of strings) over an input sweep; per row: rounds run, seconds median (min-max),"
	echo "   time / glibc's of the same round median (min-max), peak RSS KiB median (min-max)"
	echo "   / its ratio to glibc's (median). The tools' order rotates each round."
	echo "   Light tools (${light# }) on ${LINES// /, } lines, ${ROUNDS} rounds; full on ${FULL_LINES// /, }"
	echo "   (every heap access traps under TCG), memcheck and efence on ${HEAVY_LINES// /, } lines, at most"
	echo "   ${HEAVY_ROUNDS} rounds. One of these capped at ${RUN_LIMIT} s is not run again on that input or a larger one."
	echo "   asan: not applicable (it needs the program recompiled). Start-up: /bin/true."
	echo "   Raw runs: $LOGDIR/slowdown/runs.tsv (program lines tool round seconds KiB exit capped md5)."
	printf "%-8s %7s %-12s %2s  %-26s %-22s %-24s %s\n" program lines tool n seconds "x glibc" "peak KiB / x glibc" note
	# /bin/true first: what starting the program under each tool costs.
	for name in true sort sqlite3 mawk; do
		for lines in $all_lines; do
			[ "$name" = true ] && lines=0
			make_inputs "$lines"
			local tools=""
			in_list "$lines" "$LINES" && tools="$light"
			[ "$name" = true ] && tools="$light"
			for tool in $heavy; do
				if [ "$tool" = full ]; then in_list "$lines" "$FULL_LINES"; else in_list "$lines" "$HEAVY_LINES"; fi ||
					[ "$name" = true ] || continue
				tools="$tools $tool"
			done
			tools=$(echo "$tools" | tr ' ' '\n' | awk 'NF && !s[$0]++' | tr '\n' ' ')
			[ "${tools/glibc/}" = "$tools" ] && tools="glibc $tools"
			# An input only glibc would run (its tools left out by TOOLS).
			[ "${tools// /}" = glibc ] && continue
			# shellcheck disable=SC2206
			local arr=($tools)
			n=${#arr[@]}
			for ((r = 0; r < ROUNDS; r++)); do
				order=""
				for ((i = 0; i < n; i++)); do order="$order ${arr[(i + r) % n]}"; done
				for tool in $order; do
					in_list "$tool" "$heavy" && [ "$r" -ge "$HEAVY_ROUNDS" ] && continue
					[ -n "${capped_at[$name.$tool]:-}" ] && continue
					capped=$(timed_run "$tool" "$lines" "$name" "$r")
					# A heavy tool only gets slower with more input; a
					# sampled run is capped by chance (a hot block drawn).
					[ "$capped" = 1 ] && in_list "$tool" "$heavy" && capped_at[$name.$tool]=$lines
				done
			done
			for tool in $tools; do
				sweep_row "$name" "$lines" "$tool"
				if [ -n "${capped_at[$name.$tool]:-}" ] && [ "${capped_at[$name.$tool]}" != "$lines" ] &&
				   ! awk -F'\t' -v p="$name" -v l="$lines" -v tl="$tool" '$1 == p && $2 == l && $3 == tl { f = 1 } END { exit !f }' "$LOGDIR/slowdown/runs.tsv"; then
					printf "%-8s %7s %-12s %2s  %s\n" "$name" "$lines" "$tool" 0 "not run: capped at ${capped_at[$name.$tool]} lines"
				fi
			done
			[ "$name" = true ] && break
		done
	done
}

for part in $PARTS; do
	case $part in
	detection | planted | slowdown) "$part" ;;
	# Its own knobs (RUNS, K, CONTROL, ...): threads.sh says.
	threads) bash "$(dirname "$0")/threads.sh" ;;
	*) echo "unknown part '$part' (PARTS: detection planted slowdown threads)"; exit 2 ;;
	esac
done
echo
echo "# raw logs: $LOGDIR (in the guest; on the host: the run's --out directory, adimalloc/)"
[ -n "${keep_t:-}" ] || rm -rf "$t"
