#!/bin/bash
# Run the README's two commands on a truly fresh Debian 12, as a new user
# would: debootstrap a minimal bookworm root in build/fresh/root (the
# packages a user must have to follow the README: make, and git to
# clone), clone this repository's HEAD into it, and run "make run" and
# then "make test" inside it (chroot, as root), with no compiler cache
# and no package beyond what scripts/deps.sh installs there.  Reports each
# step's time and result; the logs stay in build/fresh/.
#
# Usage: scripts/fresh-check.sh [--keep]
#   --keep   leave build/fresh/root in place afterwards (default: deleted
#            once the run is over, it holds a full build of its own)
#
# What the chroot shares with this host: the kernel (QEMU runs in it as
# an ordinary program, TCG), /proc, /sys, /dev, and the apt sources and
# settings in /etc/apt (the ones a machine of this site is given).  The
# run takes about as long as a cold "make kernel" plus "make test".
set -euo pipefail
. "$(dirname "$0")/lib.sh"

keep=0
case "${1:-}" in
-h|--help) usage_from_header "$0"; exit 0 ;;
--keep) keep=1 ;;
"") ;;
*) die "unknown argument '$1' (see --help)" ;;
esac
[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap and chroot need it)"
command -v debootstrap >/dev/null || die "no debootstrap: run scripts/deps.sh"

D=$BUILD/fresh
root=$D/root
suite=bookworm
user_pkgs=make,git,ca-certificates
clone=/root/lk417

mirror() {
	apt-cache policy | awk -v s="$suite/main" '$3 == s && $4 == "amd64" { print $2; exit }' |
		grep . || die "apt has no $suite/main source here"
}

# Mounted under the root while the commands run, unmounted on any exit
# (recursively and lazily), before the root may be deleted.
mounted=()
umount_all() {
	local m
	for m in "${mounted[@]}"; do umount -R -l "$m" 2>/dev/null || true; done
	mounted=()
}
cleanup() {
	umount_all
	if [ "$keep" -eq 0 ] && [ -d "$root" ] &&
	   ! findmnt -rn -o TARGET | grep -q "^$root/"; then
		rm -rf "$root"
	fi
}
trap cleanup EXIT

mkdir -p "$D"
if findmnt -rn -o TARGET | grep -q "^$root/"; then
	die "something is still mounted under ${root#$REPO/}: unmount it first"
fi
rm -rf "$root"
mkdir -p "$root"
report=$D/report.txt
: >"$report"
step() { # NAME SECONDS RESULT
	printf '%-12s %6d s  %s\n' "$1" "$2" "$3" | tee -a "$report" >&2
}

t0=$(date +%s)
m=$(mirror)
say "debootstrap $suite (minbase + ${user_pkgs//,/ }) from $m into ${root#$REPO/}"
if ! debootstrap --variant=minbase --include="$user_pkgs" "$suite" "$root" "$m" \
	>"$D/debootstrap.log" 2>&1; then
	tail -20 "$D/debootstrap.log" >&2
	die "debootstrap failed, see ${D#$REPO/}/debootstrap.log"
fi
# The machine's apt configuration, as any Debian 12 install of this site
# has it (sources with updates and security, the mirror's settings).
rm -f "$root/etc/apt/sources.list"
cp -a /etc/apt/sources.list.d/. "$root/etc/apt/sources.list.d/"
find "$root/etc/apt/sources.list.d" -name '*.disabled*' -delete
cp -a /etc/apt/apt.conf.d/. "$root/etc/apt/apt.conf.d/"
cp /etc/resolv.conf "$root/etc/resolv.conf"
step debootstrap $(( $(date +%s) - t0 )) "ok ($(du -sh "$root" | cut -f1))"

# HEAD of this checkout, as "git clone" gives it to a user: committed
# files only, nothing of build/.
t0=$(date +%s)
git clone -q --no-local "$REPO" "$root$clone"
git -C "$root$clone" log -1 --format='clone: %h %s' | tee -a "$report" >&2
step clone $(( $(date +%s) - t0 )) ok

for fs in proc sys dev; do
	case $fs in
	proc) mount -t proc proc "$root/proc" ;;
	sys) mount -t sysfs sysfs "$root/sys" ;;
	dev) mount --rbind /dev "$root/dev"; mount --make-rslave "$root/dev" ;;
	esac
	mounted=("$root/$fs" "${mounted[@]}")
done

fail=0
for target in run test; do
	say "chroot: make $target (log: ${D#$REPO/}/make-$target.log)"
	t0=$(date +%s)
	# A login environment as root's: no variable of this shell leaks in.
	if env -i HOME=/root TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		chroot "$root" /bin/bash -c "cd $clone && make $target" \
		>"$D/make-$target.log" 2>&1; then
		result=ok
	else
		result="FAILED (exit $?)"
		fail=1
	fi
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$D/make-$target.log" | tail -1 || true)
	step "make $target" $(( $(date +%s) - t0 )) "$result${summary:+; $summary}"
	[ "$fail" -eq 0 ] || { tail -30 "$D/make-$target.log" >&2; break; }
done
# The suites' TAP and guest consoles, kept when the root goes.
rm -rf "$D/test-results"
if [ -d "$root$clone/build/test-results" ]; then
	cp -a "$root$clone/build/test-results" "$D/test-results"
fi
say "report: ${report#$REPO/}"
cat "$report"
exit $fail
