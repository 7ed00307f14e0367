#!/bin/bash
# Package the Debian-configured build of scripts/check-distro.sh
# (build/distro/obj) with the kernel's own `make bindeb-pkg`: the
# linux-image, linux-headers and linux-libc-dev packages of release
# 6.12.N-lk417-adi, written to build/distro/.
#
# Usage: scripts/distro-deb.sh   (after scripts/check-distro.sh; make deb runs both)
# Install on a real machine: README, "Running ADI on your own machine".
set -euo pipefail
. "$(dirname "$0")/lib.sh"
setup_ccache

D=$BUILD/distro
obj=$D/obj
[ -f "$obj/build-seconds" ] || die "no finished build in ${obj#$REPO/}: run scripts/check-distro.sh (make check-distro) first"
release=$(cat "$obj/include/config/kernel.release")

# Packages of an earlier run would be taken for this one's.
rm -f "$D"/*.deb "$D"/*.buildinfo "$D"/*.changes
say "packaging $release with make bindeb-pkg into ${D#$REPO/}/"
start=$(date +%s)
# Same CC and LOCALVERSION as the build, so that nothing but the build
# number in init/version.o is rebuilt.  dpkg-buildpackage writes the
# packages next to the object directory.
if ! make -C "$KSRC" O="$obj" -j"$(nproc)" CC="$KCC" HOSTCC="$KCC" LOCALVERSION= \
	KDEB_COMPRESS=xz bindeb-pkg >"$obj/deb.log" 2>&1; then
	tail -30 "$obj/deb.log" >&2
	die "bindeb-pkg failed, see ${obj#$REPO/}/deb.log"
fi
w=$(grep -ci 'warning:' "$obj/deb.log" || true)
[ "$w" -eq 0 ] || { grep -i 'warning:' "$obj/deb.log" | sort -u | head -20 >&2; die "$w warning(s) while packaging"; }
ls "$D"/linux-image-"$release"_*.deb >/dev/null 2>&1 || die "bindeb-pkg made no linux-image-$release package"
say "packages ($(( $(date +%s) - start )) s):"
for p in "$D"/*.deb; do
	printf '    %s  %s\n' "$(du -h "$p" | cut -f1)" "${p#$REPO/}" >&2
done
