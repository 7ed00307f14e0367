#!/bin/bash
# Boot the built kernel in QEMU on the host's root (9p, read-only) and run
# one command in the guest; exit with the command's status.
#
# Usage: scripts/qemu-run.sh [options] [--] COMMAND [ARG...]
#        scripts/qemu-run.sh [options] --shell
#
#   --variant V      kernel build to boot: default, debug or noadi
#                    (default: default)
#   --kernel FILE    boot this bzImage instead
#   --mem SIZE       guest memory, e.g. 2G or 1536M (default: 2G)
#   --smp N          vCPUs (default: 2)
#   --numa           split memory and vCPUs into two NUMA nodes
#   --swap SIZE      attach a sparse virtio-blk disk of SIZE for swap; the
#                    guest sees its device in $LK417_SWAP_DEV
#   --accel A        auto, kvm or tcg (default: auto, or $LK417_ACCEL).
#                    auto uses KVM only after a probe proved that it boots
#                    our kernel (verdict cached per machine), else TCG
#   --timeout SEC    hard limit for the whole run (default: 600)
#   --out DIR        keep the run's files here (default: build/runs/<time>)
#   --append ARGS    extra kernel command line
#   --shell          interactive guest shell on this terminal
#   --quiet          do not stream the command's output
#
# The run directory holds console.log (kernel console), output.log (the
# command's stdout and stderr), dmesg.log and status.  Any Oops, BUG,
# WARNING, KASAN report, panic or call trace in the console or dmesg fails
# the run (exit 3) even if the command succeeded.  Exit 124: timeout;
# 125: the guest ended without reporting a status (crash, panic).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-guest.sh"

usage() { usage_from_header "$0"; }

variant=default kernel="" mem=2G smp=2 numa=0 swap="" accel=${LK417_ACCEL:-auto}
timeout_s=600 out="" append="" shell=0 quiet=0
while [ $# -gt 0 ]; do
	case "$1" in
	--variant) variant=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--numa) numa=1; shift ;;
	--swap) swap=$2; shift 2 ;;
	--accel) accel=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--shell) shell=1; shift ;;
	--quiet) quiet=1; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option '$1' (try --help)" ;;
	*) break ;;
	esac
done
[ $shell = 1 ] || [ $# -gt 0 ] || die "no command given (try --help)"
[ -n "$kernel" ] || kernel=$(kobj "$variant")/arch/x86/boot/bzImage
[ -f "$kernel" ] || die "no kernel at $kernel: build it first (make kernel)"
case "$accel" in auto|kvm|tcg) ;; *) die "--accel must be auto, kvm or tcg" ;; esac
[[ "$timeout_s" =~ ^[0-9]+$ ]] || die "--timeout takes seconds"
[[ "$smp" =~ ^[1-8]$ ]] || die "--smp takes 1 to 8"

mem_mib=$(to_mib "$mem")
[[ "$mem_mib" =~ ^[0-9]+$ ]] && [ "$mem_mib" -ge 256 ] || die "--mem: bad size '$mem' (at least 256M)"
if [ -n "$swap" ]; then
	swap_mib=$(to_mib "$swap")
	[[ "$swap_mib" =~ ^[0-9]+$ ]] && [ "$swap_mib" -ge 16 ] || die "--swap: bad size '$swap' (at least 16M)"
fi

[ -n "$out" ] || out=$BUILD/runs/$(date +%Y%m%d-%H%M%S)-$$
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

qemu=(qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot
	-m "$mem_mib"
	-virtfs "local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$out,mount_tag=scratch,security_model=none,multidevs=remap")
cmdline="console=ttyS0 loglevel=5 panic=-1 root=root rootfstype=9p"
cmdline+=" rootflags=trans=virtio,version=9p2000.L,cache=loose,msize=262144 ro"
cmdline+=" init=$REPO/guest/init.sh"
# KASAN and lockdep under TCG boot tens of times slower than hardware: at
# the default 21 s, RCU warns of a stalled grace-period start during boot
# (twice in five debug boots here).  The longest limit RCU accepts keeps
# real stalls reported.
if [ "$variant" = debug ]; then cmdline+=" rcupdate.rcu_cpu_stall_timeout=300"; fi
cmdline+=" $append"

# KVM verdict per machine (and QEMU version): a probe boot with a short
# limit.  On these machines /dev/kvm may be served by a PVM module that
# only boots PVM guests, so its mere presence proves nothing.
kvm_verdict() {
	local cache=/var/cache/lk417/kvm-verdict id probe rc
	id="$(cat /etc/machine-id 2>/dev/null) $(qemu-system-x86_64 --version | head -1)"
	if [ -f "$cache" ] && [ "$(head -1 "$cache")" = "$id" ]; then
		tail -1 "$cache"
		return
	fi
	if [ ! -w /dev/kvm ]; then
		echo no
		return
	fi
	say "probing KVM (one boot, at most 20 s; the verdict is cached in $cache)"
	probe=$(mktemp -d "$BUILD/kvm-probe.XXXXXX")
	printf 'true\n' >"$probe/cmd"
	echo "LK417_ACCEL=kvm" >"$probe/env"
	rc=0
	timeout -k 5 20 "${qemu[@]/$out/$probe}" -accel kvm -cpu host,-arch-capabilities \
		-serial "file:$probe/console.log" -kernel "$kernel" -append "$cmdline" \
		</dev/null >/dev/null 2>&1 || rc=$?
	mkdir -p "$(dirname "$cache")"
	if [ -f "$probe/status" ]; then
		printf '%s\nyes\n' "$id" >"$cache"
	else
		printf '%s\nno\n' "$id" >"$cache"
	fi
	rm -rf "$probe"
	tail -1 "$cache"
}

case "$accel" in
kvm) ;;
tcg) ;;
auto) if [ "$(kvm_verdict)" = yes ]; then accel=kvm; else accel=tcg; fi ;;
esac
if [ "$accel" = kvm ]; then
	# "-cpu max" and plain "host" abort on some hosts (MSR 0x10a).
	qemu+=(-accel kvm -cpu host,-arch-capabilities)
	accel_desc="KVM"
else
	qemu+=(-accel tcg,thread=multi -cpu max)
	accel_desc="TCG (multi-threaded, no KVM)"
fi

qemu_add_cpus "$smp" "$mem_mib" "$numa"
{
	echo "LK417_ACCEL='$accel_desc'"
	echo "LK417_NUMA=$numa"
	echo "LK417_REPO='$REPO'"
	# make stress: suites run their long variants.
	echo "LK417_STRESS='${LK417_STRESS:-0}'"
} >"$out/env"
if [ -n "$swap" ]; then
	truncate -s "${swap_mib}M" "$out/swap.img"
	qemu+=(-drive "file=$out/swap.img,if=virtio,format=raw,cache=unsafe")
	echo "LK417_SWAP_DEV=/dev/vda" >>"$out/env"
fi

if [ $shell = 1 ]; then
	echo "LK417_INTERACTIVE=1" >>"$out/env"
	if sz=$(stty size 2>/dev/null); then
		echo "LK417_ROWS=${sz% *} LK417_COLS=${sz#* }" >>"$out/env"
	fi
	say "booting $(basename "$kernel") under $accel_desc, interactive shell (Ctrl-A X quits QEMU)"
	rc=0
	timeout -k 5 "$timeout_s" "${qemu[@]}" -serial mon:stdio \
		-kernel "$kernel" -append "$cmdline" || rc=$?
	[ $rc -ne 124 ] || say "timed out after $timeout_s s"
	exit $rc
fi

guest_cmd "$out" "$@"
say "booting $(basename "$kernel") under $accel_desc, ${mem_mib} MiB, $smp vCPU(s)$([ $numa = 1 ] && echo ", 2 NUMA nodes")$([ -n "$swap" ] && echo ", ${swap_mib} MiB swap disk"); limit ${timeout_s} s; logs in ${out#$REPO/}"
boot_and_judge "$out" "$timeout_s" "$quiet" ", $accel_desc" -kernel "$kernel" -append "$cmdline"
