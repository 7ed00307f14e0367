#!/bin/bash
# Boot the packaged kernel as Debian boots it and run one command in it:
# the kernel and initramfs that dpkg and update-initramfs installed in
# build/distro/root (scripts/distro-root.sh), the root on /dev/vda (an ext4
# image of that root, used as a snapshot: no run changes it), systemd as
# init, 9p loaded from the package's modules.  The host's checkout is
# shared as qemu-run.sh shares it (the host root read-only over 9p, a
# writable scratch share); exit with the command's status.
#
# Usage: scripts/distro-run.sh [options] [--] COMMAND [ARG...]
#        scripts/distro-run.sh [options] --suite NAME
#        scripts/distro-run.sh [options] --shell
#
#   --suite NAME     run tests/NAME/run (guest/run-suite.sh) with the QEMU
#                    options and time limit of its suite.conf; its programs
#                    come from build/distro/tests (built here for this kernel)
#   --mem SIZE       guest memory (default: 2G)
#   --smp N          vCPUs (default: 2)
#   --numa           two NUMA nodes
#   --swap SIZE      a second virtio disk (/dev/vdb) for swap, in $LK417_SWAP_DEV
#   --append ARGS    extra kernel command line
#   --timeout SEC    hard limit for the whole run (default: 900)
#   --out DIR        the run's files (default: build/distro/runs/<time>)
#   --shell          serial console login (root, no password; Ctrl-A X quits)
#   LK417_TCG_THREAD=multi  run the vCPUs on host threads of their own
#                    (default: single, one host thread for all vCPUs).  With
#                    multi-threaded TCG, QEMU 7.2 lets a vCPU run code that
#                    another vCPU is patching with text_poke_bp() (the
#                    breakpoint byte after the patch is done): Debian's
#                    kernel dies of "Oops: int3" within a minute of static
#                    key flips, the function tracer's (no ADI) or ADI's
#                    own; single-threaded, 62 ADI key flips in 90 s passed.
#
# Always TCG (KVM here cannot boot our kernels).  The run directory holds
# console.log, output.log, dmesg.log, lsmod.log and status; an Oops, BUG,
# WARNING, KASAN report, panic or call trace fails the run (exit 3).
# Exit 124: timeout; 125: the guest ended without a status.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-guest.sh"

usage() { usage_from_header "$0"; }

D=$BUILD/distro
mem=2G smp=2 numa=0 swap="" append="" timeout_s=900 out="" shell=0 suite=""
opt_mem="" opt_timeout=""
while [ $# -gt 0 ]; do
	case "$1" in
	--suite) suite=$2; shift 2 ;;
	--mem) opt_mem=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--numa) numa=1; shift ;;
	--swap) swap=$2; shift 2 ;;
	--append) append+=" $2"; shift 2 ;;
	--timeout) opt_timeout=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--shell) shell=1; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option '$1' (try --help)" ;;
	*) break ;;
	esac
done

if [ -n "$suite" ]; then
	[ -x "$REPO/tests/$suite/run" ] || die "no suite '$suite'"
	read_suite_conf "$suite" 900
	# suite.conf speaks qemu-run.sh's options; this runner takes the same.
	set -- $QEMU_ARGS
	while [ $# -gt 0 ]; do
		case "$1" in
		--mem) mem=$2; shift 2 ;;
		--numa) numa=1; shift ;;
		--swap) swap=$2; shift 2 ;;
		--append) append+=" $2"; shift 2 ;;
		--smp) smp=$2; shift 2 ;;
		*) die "suite $suite: suite.conf option '$1' not known to this runner" ;;
		esac
	done
	# suite.conf's limit is for qemu-run.sh's boot straight into the
	# command; systemd and udev take minutes more under TCG on a loaded
	# host (227 s to the command seen with 1 vCPU beside a kernel build).
	timeout_s=$((TIMEOUT + 300))
	# The suite's programs, built against this kernel's uapi headers.
	khdr=$D/obj/usr/include
	[ -d "$khdr/linux" ] || die "no uapi headers in ${khdr#$REPO/}: make check-distro first"
	if [ -f "$REPO/tests/$suite/Makefile" ]; then
		say "building suite $suite into ${D#$REPO/}/tests/$suite"
		make -s -C "$REPO/tests/$suite" OUT="$D/tests/$suite" KHDR="$khdr" ||
			die "building suite $suite failed"
	fi
	mkdir -p "$BUILD/tests"	# the guest binds build/distro/tests over it
	set -- "$REPO/guest/run-suite.sh" "$suite"
fi
[ -z "$opt_mem" ] || mem=$opt_mem
[ -z "$opt_timeout" ] || timeout_s=$opt_timeout
[ $shell = 1 ] || [ $# -gt 0 ] || die "no command given (try --help)"
[[ "$timeout_s" =~ ^[0-9]+$ ]] || die "--timeout takes seconds"
[[ "$smp" =~ ^[1-8]$ ]] || die "--smp takes 1 to 8"

[ -f "$D/boot/version" ] || die "no packaged kernel installed in the distro root: make distro-root"
version=$(cat "$D/boot/version")
img=$D/root.img
[ -f "$img" ] || die "no ${img#$REPO/}: make distro-root"

mem_mib=$(to_mib "$mem")
tcg_thread=${LK417_TCG_THREAD:-single}
case "$tcg_thread" in single|multi) ;; *) die "LK417_TCG_THREAD must be single or multi" ;; esac
[[ "$mem_mib" =~ ^[0-9]+$ ]] && [ "$mem_mib" -ge 512 ] || die "--mem: bad size '$mem' (at least 512M: systemd and an initramfs)"

[ -n "$out" ] || out=$D/runs/$(date +%Y%m%d-%H%M%S)-${suite:-cmd}-$$
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The same shares as qemu-run.sh: the host root read-only, the run
# directory writable.  The root disk is a snapshot: writes go to a
# temporary file QEMU drops at exit.
qemu=(qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot
	-m "$mem_mib" -accel tcg,thread=$tcg_thread -cpu max
	-kernel "$D/boot/vmlinuz-$version" -initrd "$D/boot/initrd.img-$version"
	-drive "file=$img,if=virtio,format=raw,snapshot=on"
	-virtfs "local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$out,mount_tag=scratch,security_model=none,multidevs=remap")
# panic=-1: a panic ends QEMU at once (-no-reboot) instead of hanging.
cmdline="root=/dev/vda ro console=ttyS0 panic=-1$append"
qemu_add_cpus "$smp" "$mem_mib" "$numa"
{
	echo "LK417_ACCEL='TCG ($tcg_thread-threaded, no KVM), distro boot'"
	echo "LK417_NUMA=$numa"
	echo "LK417_REPO='$REPO'"
	echo "LK417_STRESS='${LK417_STRESS:-0}'"
	echo "LK417_DISTRO=1"
} >"$out/env"
if [ -n "$swap" ]; then
	swap_mib=$(to_mib "$swap")
	truncate -s "${swap_mib}M" "$out/swap.img"
	qemu+=(-drive "file=$out/swap.img,if=virtio,format=raw,cache=unsafe")
	echo "LK417_SWAP_DEV=/dev/vdb" >>"$out/env"
fi

if [ $shell = 1 ]; then
	echo "LK417_INTERACTIVE=1" >>"$out/env"
	say "booting $version (distro: initramfs, /dev/vda, systemd) under TCG; log in as root; Ctrl-A X quits"
	rc=0
	timeout -k 5 "$timeout_s" "${qemu[@]}" -serial mon:stdio -append "$cmdline" || rc=$?
	exit $rc
fi

guest_cmd "$out" "$@"
say "booting $version (distro: initramfs, /dev/vda, systemd) under TCG, ${mem_mib} MiB, $smp vCPU(s)$([ $numa = 1 ] && echo ", 2 NUMA nodes")$([ -n "$swap" ] && echo ", ${swap_mib} MiB swap disk"); limit ${timeout_s} s; logs in ${out#$REPO/}"
boot_and_judge "$out" "$timeout_s" 0 "" -append "$cmdline"
