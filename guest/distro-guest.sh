#!/bin/bash
# The distro guest's side of scripts/distro-run.sh.  Installed into the
# Debian root as /usr/local/sbin/lk417-guest (scripts/distro-root.sh) and
# started by systemd (lk417-guest.service) once the root is mounted: the
# guest has booted as Debian boots, from our packaged kernel, Debian's
# initramfs and /dev/vda.
#
# Loads 9p from the package's modules, mounts the host's root read-only at
# /run/lk417-hostroot and the writable scratch share at /run/scratch, binds
# the checkout to its host path (and the suites' programs built for this
# kernel, build/distro/tests, over build/tests, in the guest's view only),
# runs the host's command from /run/scratch/cmd, records its status, the
# kernel log and the loaded modules there, and powers off.  With
# LK417_INTERACTIVE=1 it only mounts and leaves the serial login to the user.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
S=/run/scratch
opts=trans=virtio,version=9p2000.L,msize=262144

die() {
	echo "lk417-guest: $*" >/dev/console
	echo o >/proc/sysrq-trigger
	exit 1
}

modprobe -a 9pnet_virtio 9p || die "cannot load the 9p modules"
mkdir -p $S /run/lk417-hostroot
mountpoint -q $S || mount -t 9p -o $opts,cache=none scratch $S || die "cannot mount the scratch share"
mountpoint -q /run/lk417-hostroot ||
	mount -t 9p -o $opts,cache=loose,ro root /run/lk417-hostroot || die "cannot mount the host root"
read -r up _ </proc/uptime
echo "$up" >$S/boot-seconds

set -a
[ -r $S/env ] && . $S/env
set +a
[ -n "${LK417_REPO:-}" ] || die "no LK417_REPO in $S/env"
mkdir -p "$LK417_REPO" 2>/dev/null
mountpoint -q "$LK417_REPO" || mount --bind "/run/lk417-hostroot$LK417_REPO" "$LK417_REPO" ||
	die "cannot bind the checkout to $LK417_REPO"
if [ -d "$LK417_REPO/build/distro/tests" ] && [ -d "$LK417_REPO/build/tests" ]; then
	mount --bind "$LK417_REPO/build/distro/tests" "$LK417_REPO/build/tests"
fi

if [ "${LK417_INTERACTIVE:-0}" = 1 ]; then
	echo "lk417 distro guest: $(uname -r); the checkout is at $LK417_REPO, scratch at $S; log in as root (no password)" >/dev/console
	exit 0
fi
/bin/bash $S/cmd </dev/null >$S/output.log 2>&1
status=$?
echo "$status" >$S/status
dmesg >$S/dmesg.log 2>&1
lsmod >$S/lsmod.log 2>&1
sync
echo o >/proc/sysrq-trigger
