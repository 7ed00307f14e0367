#!/bin/bash
# The rawtp tool from the command line: options, output, errors, and that
# it leaves nothing attached however it ends.  Prints TAP.
. "$LK417_REPO/tests/lib/tap.sh"
T=$LK417_TESTBIN/rawtp
BPFTOOL=$(command -v bpftool || echo /usr/sbin/bpftool)
out=$(mktemp -d)
plan 20

# Count what bpftool lists (OBJECT: link or prog) that matches the jq
# filter.  bpftool must exit 0 and print a JSON array: anything else is an
# error (status 1, said on stderr), so a broken bpftool can never read as
# "nothing left".
bpf_count() { # OBJECT JQ-FILTER
	local json n
	if ! json=$("$BPFTOOL" -j "$1" show 2>&1); then
		echo "# bpftool $1 show failed: $json" >&2
		return 1
	fi
	if ! n=$(jq -e "if type == \"array\" then [.[] | select($2)] | length else error(\"not an array\") end" \
		<<<"$json" 2>&1) || [[ ! "$n" =~ ^[0-9]+$ ]]; then
		echo "# bpftool $1 show: no JSON array ($n): ${json:0:200}" >&2
		return 1
	fi
	echo "$n"
}
raw_links() { bpf_count link '.type == "raw_tracepoint"'; }
# Raw tracepoint links and rawtp programs the kernel still holds: "L P".
leftovers() {
	local links progs
	links=$(raw_links) && progs=$(bpf_count prog '.name == "rawtp_event"') &&
		echo "$links $progs"
}
nothing_left() {
	local left
	left=$(leftovers) || return 1
	[ "$left" = "0 0" ] || { diag "left: $left raw_tracepoint link(s) and rawtp_event program(s)"; return 1; }
}

# The counting itself: a bpftool that fails, or prints no JSON, is an error.
check "leftover check: a bpftool that fails (false) is an error, not 'nothing left'" \
	bash -c "$(declare -f bpf_count raw_links leftovers nothing_left diag); ! BPFTOOL=false nothing_left 2>/dev/null"
check "leftover check: a bpftool that prints nothing (true) is an error too" \
	bash -c "$(declare -f bpf_count raw_links leftovers nothing_left diag); ! BPFTOOL=true nothing_left 2>/dev/null"

# Every long option getopt knows is in --help.
check "--help documents every option" bash -c "
	h=\$('$T' --help) || exit 1
	for o in list duration interval pid json top args str-arg stacks verbose help; do
		grep -q -- \"--\$o\" <<<\"\$h\" || { echo \"# --\$o missing\"; exit 1; }
	done"
check "--list shows raw tracepoints (task_rename, sched_switch, sys_enter), not per-syscall events" bash -c "
	'$T' --list >$out/list &&
	grep -qx task_rename $out/list && grep -qx sched_switch $out/list &&
	grep -qx sys_enter $out/list && ! grep -q '^sys_enter_' $out/list"

# A command renaming itself 100 times from dash builtins (no fork/exec):
# 100 renames plus the one exec does.
loop100='i=0; while [ $i -lt 100 ]; do printf rtp-loop >/proc/self/comm; i=$((i+1)); done'
"$T" --json -d 60 task_rename sys_enter -- sh -c "$loop100" >$out/count.json 2>$out/count.err
rc=$?
check "-- COMMAND: exactly 101 task_rename events (100 renames + exec), exit 0" bash -c "
	[ $rc -eq 0 ] && tail -1 $out/count.json | grep -q '\"type\":\"summary\".*\"task_rename\":101[,}]'"
check "--json: the summary counts per process add up to the tracepoint totals" bash -c "
	tail -1 $out/count.json | python3 -c '
import json, sys
s = json.loads(sys.stdin.read())
for tp, n in s[\"tracepoints\"].items():
    assert n == sum(t[\"count\"] for t in s[\"tasks\"] if t[\"tracepoint\"] == tp), tp
assert s[\"tracepoints\"][\"sys_enter\"] >= 100
'"

"$T" --json --args 2 --str-arg 1 -d 60 task_rename -- \
	sh -c 'for n in one two three; do printf rtp-$n >/proc/self/comm; done' >$out/args.json 2>&1
check "--args 2 --str-arg 1: each new comm streamed in order, raw kernel pointers, 0 lost" \
	python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ev = [l for l in lines if l["type"] == "event"]
assert [e["str"] for e in ev] == ["sh", "rtp-one", "rtp-two", "rtp-three"], ev
assert all(len(e["args"]) == 2 and int(e["args"][0], 16) >= 0xffff800000000000 for e in ev)
assert len({e["args"][0] for e in ev}) == 1, "args[0] is the task: always the same"
assert lines[-1]["type"] == "summary" and lines[-1]["lost"] == 0
' $out/args.json

# comm is bytes, not UTF-8: a name with bytes 0xe9, 0x22 (") and 0x01 must
# still give valid JSON, each byte read as the code point of its value.
"$T" --json --args 1 --str-arg 1 -d 60 task_rename -- \
	sh -c 'printf "r\351\042\001" >/proc/self/comm' >$out/bytes.json 2>&1
check "--json with comm bytes 0xe9, 0x22, 0x01: valid JSON, the name read back as U+00E9, U+0022, U+0001" \
	python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ev = [l for l in lines if l["type"] == "event"]
assert [e["str"] for e in ev][-1] == "r\u00e9\"\u0001", ev
' $out/bytes.json

"$T" --stacks task_rename -- sh -c 'echo rtp-stack >/proc/self/comm' >$out/stacks.txt 2>&1
check "--stacks: symbolized stacks through __set_task_comm from comm_write and from exec" bash -c "
	grep -q '__set_task_comm+' $out/stacks.txt && grep -q 'comm_write+' $out/stacks.txt &&
	grep -q 'begin_new_exec+' $out/stacks.txt && grep -q 'do_syscall_64+' $out/stacks.txt"

# Errors: one clear line, the kernel's errno named, exit 1 (usage: 2).
"$T" -d 1 rawtp_no_such_tp >$out/e1 2>&1; rc=$?
check "unknown tracepoint: exit 1, says ENOENT" bash -c "
	[ $rc -eq 1 ] && grep -q \"no tracepoint 'rawtp_no_such_tp'.*ENOENT\" $out/e1"
"$T" -d 1 --args 3 task_rename >$out/e2 2>&1; rc=$?
check "--args 3 on task_rename (2 arguments): refused at attach, exit 1, says EINVAL" bash -c "
	[ $rc -eq 1 ] && grep -q 'fewer than 3 arguments.*EINVAL' $out/e2"
setpriv --reuid=65534 --regid=65534 --clear-groups "$T" -d 1 task_rename >$out/e3 2>&1; rc=$?
check "unprivileged: exit 1, says EPERM and what is needed" bash -c "
	[ $rc -eq 1 ] && grep -q 'permission denied (EPERM).*CAP_BPF' $out/e3"
"$T" --args 13 task_rename >$out/e4 2>&1; rc1=$?
"$T" 'bad name' >>$out/e4 2>&1; rc2=$?
"$T" -d 1 task_rename -- >>$out/e4 2>&1; rc3=$?
check "bad options and names: exit 2 with a message" bash -c "
	[ $rc1 -eq 2 ] && [ $rc2 -eq 2 ] && [ $rc3 -eq 2 ] && [ \$(grep -c '^rawtp: ' $out/e4) -eq 3 ]"
check "no error left anything attached" nothing_left

# However the tool ends, the kernel detaches: SIGINT, SIGTERM, SIGKILL.
for sig in INT TERM KILL; do
	"$T" -i 0 task_rename sys_enter sched_switch >$out/sig.$sig 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		[ "$(raw_links)" -ge 3 ] 2>/dev/null && break
		sleep 0.1
	done
	n=$(raw_links) || n="bpftool failed"
	kill -$sig $pid
	wait $pid 2>/dev/null	# no "Killed" note from bash
	rc=$?
	case $sig in
	KILL) check "SIG$sig: 3 links while running (got $n), none after (the kernel closes the fds)" \
		bash -c "[ '$n' = 3 ] && [ $rc -eq 137 ]" ;;
	*) check "SIG$sig: 3 links while running (got $n), clean exit 0 with final counts" \
		bash -c "[ '$n' = 3 ] && [ $rc -eq 0 ] && grep -q 'final counts' $out/sig.$sig" ;;
	esac
	check "after SIG$sig: bpftool lists no raw_tracepoint link and no rawtp program" nothing_left
done
rm -rf "$out"
