# Booting a guest and judging its run, shared by the two runners
# (qemu-run.sh: our kernel over 9p; distro-run.sh: the packaged kernel as
# Debian boots it) and the two suite drivers (test.sh, distro-test.sh).
# Sourced after lib.sh; defines functions only.

# Size in MiB from 512M / 2G / 2048.
to_mib() {
	case "$1" in
	*[Gg]) echo $(( ${1%[Gg]} * 1024 )) ;;
	*[Mm]) echo "${1%[Mm]}" ;;
	*) echo "$1" ;;
	esac
}

# qemu_add_cpus SMP MEM_MIB NUMA: append -smp to the array "qemu", and with
# NUMA=1 two nodes, each with half the vCPUs and half the memory.
qemu_add_cpus() {
	local smp=$1 mem_mib=$2 numa=$3 half
	if [ "$numa" = 0 ]; then
		qemu+=(-smp "$smp")
		return
	fi
	[ $((smp % 2)) -eq 0 ] || die "--numa needs an even --smp"
	half=$((mem_mib / 2))
	# One socket per node, or the scheduler warns that CPUs sharing a
	# cache sit on different nodes.
	qemu+=(-smp "$smp,sockets=2,cores=$((smp / 2)),threads=1"
		-object "memory-backend-ram,id=m0,size=${half}M"
		-object "memory-backend-ram,id=m1,size=$((mem_mib - half))M"
		-numa "node,nodeid=0,cpus=0-$((smp / 2 - 1)),memdev=m0"
		-numa "node,nodeid=1,cpus=$((smp / 2))-$((smp - 1)),memdev=m1")
}

# guest_cmd OUT COMMAND [ARG...]: OUT/cmd runs the command from the
# caller's directory with its arguments intact; OUT/output.log starts empty.
guest_cmd() {
	local out=$1
	shift
	{
		printf 'cd %q || exit 126\n' "$PWD"
		printf 'exec'
		printf ' %q' "$@"
		printf '\n'
	} >"$out/cmd"
	: >"$out/output.log"
}

# boot_and_judge OUT TIMEOUT QUIET TAIL [QEMU-ARG...]: run "${qemu[@]}"
# plus the arguments, the console to OUT/console.log, following
# OUT/output.log on stdout unless QUIET is 1; then judge the run and exit:
# 124 on timeout, 125 when the guest left no status, 3 on a kernel splat
# in the console or dmesg (whatever the command said), else the command's
# status.  TAIL ends the last line ("guest finished: ... run N s TAIL").
boot_and_judge() {
	local out=$1 timeout_s=$2 quiet=$3 tail_text=$4 start qpid tpid rc=0 status logs
	shift 4
	start=$(date +%s)
	timeout -k 5 "$timeout_s" "${qemu[@]}" -serial "file:$out/console.log" "$@" \
		</dev/null >"$out/qemu.log" 2>&1 &
	qpid=$!
	if [ "$quiet" = 0 ]; then
		tail -n +1 -F --pid=$qpid "$out/output.log" 2>/dev/null &
		tpid=$!
	fi
	wait $qpid || rc=$?
	if [ "$quiet" = 0 ]; then
		sleep 0.3
		kill $tpid 2>/dev/null || true
		wait $tpid 2>/dev/null || true
	fi
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		say "TIMEOUT: the guest did not finish within $timeout_s s; last console lines:"
		tail -15 "$out/console.log" >&2
		exit 124
	fi
	if [ ! -f "$out/status" ]; then
		say "the guest ended without a status (QEMU exit $rc); last console lines:"
		tail -25 "$out/console.log" >&2
		cat "$out/qemu.log" >&2
		exit 125
	fi
	status=$(cat "$out/status")
	logs=("$out/console.log")
	[ -f "$out/dmesg.log" ] && logs+=("$out/dmesg.log")
	if ! "$REPO/scripts/splat-check.sh" "${logs[@]}" 2>"$out/splats.log"; then
		say "KERNEL SPLAT in the guest (the run fails whatever the command said):"
		sed "s|$out/||" "$out/splats.log" >&2
		exit 3
	fi
	say "guest finished: status $status, boot to command $(cat "$out/boot-seconds") s (guest uptime), run $(( $(date +%s) - start )) s$tail_text"
	exit "$status"
}

# read_suite_conf SUITE DEFAULT-TIMEOUT: QEMU_ARGS (qemu-run.sh options),
# TIMEOUT (seconds) and HOST_ONLY (1: run on the host, no guest) from
# tests/SUITE/suite.conf, or their defaults.
read_suite_conf() {
	QEMU_ARGS="" TIMEOUT=$2 HOST_ONLY=0
	if [ -f "$REPO/tests/$1/suite.conf" ]; then
		# shellcheck disable=SC1090
		. "$REPO/tests/$1/suite.conf"
	fi
}

# suite_verdict SUITE STATUS [TIMEOUT]: the TAP line for a runner's exit
# status.
suite_verdict() {
	case $2 in
	0) echo "ok 1 - suite $1: finished, exit 0, no kernel splat" ;;
	3) echo "not ok 1 - suite $1: kernel splat in the guest log" ;;
	124) echo "not ok 1 - suite $1: timed out${3:+ after $3 s}" ;;
	125) echo "not ok 1 - suite $1: guest died without a status" ;;
	*) echo "not ok 1 - suite $1: exited with status $2" ;;
	esac
}
