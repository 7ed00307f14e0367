#!/bin/bash
# Make the Debian 12 system that the packaged kernel boots as a distribution
# boots it: build/distro/root (debootstrap), our linux-image package
# installed into it with dpkg inside a chroot, its initramfs made by
# Debian's initramfs-tools inside the chroot, then build/distro/root.img,
# an ext4 image of that root for QEMU's /dev/vda.
#
# Usage: scripts/distro-root.sh [bootstrap|kernel|image]...
#   (default: all three, in that order)
#   bootstrap  debootstrap bookworm into build/distro/root (once; delete
#              build/distro/root to start over)
#   kernel     dpkg -i the newest build/distro/linux-image-*.deb (make deb)
#              in the chroot, initramfs with virtio and 9p modules; copies
#              vmlinuz and initrd.img to build/distro/boot/
#   image      build/distro/root.img (ext4, sparse) from the root
#
# The mirror is the one this host's apt uses for bookworm/main (override
# with DISTRO_MIRROR=URL).  Nothing of this touches the host's own system:
# the package is installed only inside the chroot.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

D=$BUILD/distro
root=$D/root
suite=bookworm
# What the guest runs besides a minimal Debian: initramfs-tools (Debian's
# initramfs builder), systemd as init, and the commands the ADI suites use
# (tests/adi-syscall: mkswap, swapon, losetup; tests/adimalloc: python3,
# sqlite3, gzip, apt-config; tests/lib: awk, sed, grep).
include=initramfs-tools,kmod,udev,systemd-sysv,util-linux,mount,e2fsprogs,procps,iproute2
include+=,python3,sqlite3,gzip,mawk,sed,grep,less

what=("$@")
[ ${#what[@]} -gt 0 ] || what=(bootstrap kernel image)
case "${what[0]}" in -h|--help) usage_from_header "$0"; exit 0 ;; esac
[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap and chroot need it)"

mirror() {
	if [ -n "${DISTRO_MIRROR:-}" ]; then echo "$DISTRO_MIRROR"; return; fi
	# "500 http://deb.debian.org/debian bookworm/main amd64 Packages"
	apt-cache policy | awk -v s="$suite/main" '$3 == s && $4 == "amd64" { print $2; exit }' |
		grep . || die "apt has no $suite/main source here: set DISTRO_MIRROR"
}

# /proc, /sys and /dev of the chroot, for dpkg's maintainer scripts and
# update-initramfs; always unmounted on exit, so that an rm -rf of the
# root can never reach the host's /dev.
mounted=()
chroot_mounts() {
	mount -t proc proc "$root/proc"; mounted=("$root/proc" "${mounted[@]}")
	mount -t sysfs sysfs "$root/sys"; mounted=("$root/sys" "${mounted[@]}")
	mount --bind /dev "$root/dev"; mounted=("$root/dev" "${mounted[@]}")
}
chroot_umounts() {
	local m
	for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
	mounted=()
}
trap chroot_umounts EXIT

bootstrap() {
	if [ -f "$root/.lk417-bootstrapped" ]; then
		say "bootstrap: $root exists (delete it to start over)"
		return
	fi
	if findmnt -rn -o TARGET | grep -q "^$root/"; then
		die "something is mounted under $root: unmount it first"
	fi
	rm -rf "$root"
	mkdir -p "$root"
	local m start
	m=$(mirror)
	say "debootstrap $suite (minbase + ${include//,/ }) from $m into ${root#$REPO/}"
	start=$(date +%s)
	if ! debootstrap --variant=minbase --include="$include" "$suite" "$root" "$m" \
		>"$D/debootstrap.log" 2>&1; then
		tail -20 "$D/debootstrap.log" >&2
		die "debootstrap failed, see ${D#$REPO/}/debootstrap.log"
	fi
	# The guest's identity and root filesystem; root logs in without a
	# password on the serial console (a test machine, never networked).
	echo lk417-distro >"$root/etc/hostname"
	printf '/dev/vda / ext4 errors=remount-ro 0 1\n' >"$root/etc/fstab"
	chroot "$root" passwd -d root >/dev/null
	# The checkout is mounted over 9p at its host path (scripts/distro-run.sh).
	mkdir -p "$root$REPO"
	touch "$root/.lk417-bootstrapped"
	say "bootstrap: done in $(( $(date +%s) - start )) s ($(du -sh "$root" | cut -f1))"
}

kernel() {
	[ -f "$root/.lk417-bootstrapped" ] || die "no root yet: run '$0 bootstrap' first"
	local deb version start
	deb=$(ls -t "$D"/linux-image-*.deb 2>/dev/null | grep -v -- '-dbg_' | head -1) ||
		true
	[ -n "$deb" ] || die "no linux-image package in ${D#$REPO/}: make deb first"
	version=$(dpkg-deb -f "$deb" Package)
	version=${version#linux-image-}
	say "installing $(basename "$deb") in the chroot (kernel $version)"
	start=$(date +%s)
	# The root device is virtio-blk and the checkout comes over 9p: the
	# initramfs must carry virtio_blk/ext4, and 9p is loaded later from
	# /lib/modules.  MODULES=dep would look at the build host's devices.
	cat >"$root/etc/initramfs-tools/modules" <<-'EOF'
	# lk417 (scripts/distro-root.sh): QEMU's virtio disk and the 9p shares.
	virtio_pci
	virtio_blk
	ext4
	9pnet_virtio
	9p
	EOF
	# The root has no zstd (Debian's default compressor): gzip, said
	# instead of warned.
	sed -i 's/^MODULES=.*/MODULES=most/; s/^COMPRESS=.*/COMPRESS=gzip/' \
		"$root/etc/initramfs-tools/initramfs.conf"
	cp "$deb" "$root/tmp/"
	: >"$D/kernel-install.log"
	chroot_mounts
	# Older builds of ours go first, so /boot and /lib/modules hold one.
	local old
	for old in $(chroot "$root" dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 'linux-image-*' 2>/dev/null |
		awk '$1 == "ii" { print $2 }'); do
		[ "$old" = "linux-image-$version" ] && continue
		say "removing the older $old from the chroot"
		chroot "$root" dpkg --purge "$old" >>"$D/kernel-install.log" 2>&1
	done
	# dpkg runs the package's postinst, which runs /etc/kernel/postinst.d/
	# initramfs-tools: update-initramfs, as on a real installation (with
	# the modules file above already in place).
	if ! chroot "$root" dpkg -i "/tmp/$(basename "$deb")" >>"$D/kernel-install.log" 2>&1; then
		tail -20 "$D/kernel-install.log" >&2
		die "dpkg -i in the chroot failed, see ${D#$REPO/}/kernel-install.log"
	fi
	chroot_umounts
	rm -f "$root/tmp/$(basename "$deb")"
	[ -f "$root/boot/initrd.img-$version" ] || die "no initrd.img-$version in the chroot's /boot"
	local m missing=()
	chroot "$root" lsinitramfs "/boot/initrd.img-$version" >"$D/initramfs.list"
	for m in virtio_blk ext4 9p 9pnet_virtio; do
		# Built in (modules.builtin) or in the initramfs.
		grep -q "/$m.ko" "$root/lib/modules/$version/modules.builtin" ||
			grep -q "/$m.ko" "$D/initramfs.list" || missing+=("$m")
	done
	[ ${#missing[@]} -eq 0 ] || die "the initramfs lacks ${missing[*]}"
	mkdir -p "$D/boot"
	rm -f "$D"/boot/vmlinuz-* "$D"/boot/initrd.img-*
	cp "$root/boot/vmlinuz-$version" "$root/boot/initrd.img-$version" "$D/boot/"
	echo "$version" >"$D/boot/version"
	say "kernel: $version installed, initramfs $(du -h "$D/boot/initrd.img-$version" | cut -f1) in $(( $(date +%s) - start )) s"
}

image() {
	[ -f "$D/boot/version" ] || die "no kernel installed in the root yet: run '$0 kernel' first"
	local img=$D/root.img size_mib t
	# The guest side of scripts/distro-run.sh, started by systemd once the
	# root is up; timers that would start apt or fstrim in the middle of
	# a suite are masked.
	install -m 755 "$REPO/guest/distro-guest.sh" "$root/usr/local/sbin/lk417-guest"
	cat >"$root/etc/systemd/system/lk417-guest.service" <<-'EOF'
	[Unit]
	Description=lk417: run the host's command (scripts/distro-run.sh)
	After=local-fs.target systemd-modules-load.service systemd-udevd.service

	[Service]
	Type=oneshot
	ExecStart=/usr/local/sbin/lk417-guest
	RemainAfterExit=yes
	TimeoutStartSec=infinity
	Delegate=yes
	StandardOutput=journal+console

	[Install]
	WantedBy=multi-user.target
	EOF
	mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
	ln -sf ../lk417-guest.service "$root/etc/systemd/system/multi-user.target.wants/lk417-guest.service"
	for t in apt-daily apt-daily-upgrade e2scrub_all fstrim dpkg-db-backup; do
		ln -sf /dev/null "$root/etc/systemd/system/$t.timer"
	done
	# The root's size plus room for the suites' files (the runs use a
	# snapshot: the image itself is never written by a guest).
	size_mib=$(( $(du -sm "$root" | cut -f1) + 1024 ))
	say "making ${img#$REPO/}: ext4, ${size_mib} MiB (sparse), from ${root#$REPO/}"
	rm -f "$img"
	truncate -s "${size_mib}M" "$img"
	mkfs.ext4 -q -F -L lk417-root -d "$root" "$img" >"$D/mkfs.log" 2>&1 ||
		{ cat "$D/mkfs.log" >&2; die "mkfs.ext4 failed"; }
	say "image: done"
}

for w in "${what[@]}"; do
	case "$w" in
	bootstrap|kernel|image) "$w" ;;
	*) die "unknown step '$w' (bootstrap, kernel or image)" ;;
	esac
done
