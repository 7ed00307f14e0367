#!/bin/bash
# PID 1 of the QEMU guest (scripts/qemu-run.sh boots the kernel with
# init=<repo>/guest/init.sh on the host's root, shared read-only over 9p).
#
# Mounts the usual pseudo filesystems and the writable scratch share, runs
# the command the host put in /run/scratch/cmd (or an interactive shell),
# records its exit status and the kernel log there, and powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=${TERM:-linux}
S=/run/scratch

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# What udev would add: programs (the kselftest runner among them) write
# to /dev/stdout and read /dev/fd/N.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
# Keep a view of the host root: the tmpfs mounts below may cover the
# checkout (a clone in /tmp or /root), which is bound back from here.
mkdir -p /run/lk417-hostroot
mount --bind / /run/lk417-hostroot
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /root 2>/dev/null || true
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
mount -t bpf bpf /sys/fs/bpf
mkdir -p $S
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=262144 scratch $S || {
	echo "lk417-init: cannot mount the scratch share" >/dev/console
	echo o >/proc/sysrq-trigger; sleep 10; exit 1
}
ip link set lo up 2>/dev/null
hostname lk417
read -r up _ </proc/uptime
echo "$up" >$S/boot-seconds

# Settings from the host: LK417_* variables (accelerator, swap device, ...).
set -a
[ -r $S/env ] && . $S/env
set +a
if [ -n "${LK417_REPO:-}" ] && [ ! -e "$LK417_REPO/guest/init.sh" ]; then
	mkdir -p "$LK417_REPO"
	mount --bind "/run/lk417-hostroot$LK417_REPO" "$LK417_REPO"
fi

if [ "${LK417_INTERACTIVE:-0}" = 1 ]; then
	[ -n "${LK417_ROWS:-}" ] && stty -F /dev/ttyS0 rows "$LK417_ROWS" cols "$LK417_COLS"
	echo "lk417 guest shell: $(uname -r), ${LK417_ACCEL}; the host's root is read-only at /," \
		"scratch at $S; exit or Ctrl-D powers off" >/dev/ttyS0
	setsid -c /bin/bash -l </dev/ttyS0 >/dev/ttyS0 2>&1
	status=$?
else
	/bin/bash $S/cmd </dev/null >$S/output.log 2>&1
	status=$?
fi
echo "$status" >$S/status
dmesg >$S/dmesg.log 2>&1
sync
echo o >/proc/sysrq-trigger
sleep 10
echo b >/proc/sysrq-trigger
sleep 10
