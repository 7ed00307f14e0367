#!/bin/bash
# Install the Debian packages the build, the runner, the tests and the
# benchmarks need.
# Usage: scripts/deps.sh          (as root; quiet when everything is present)
#        scripts/deps.sh --list   print the packages, one a line
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# The list: package names separated by blanks, "#" starts a comment.  It is
# kept here only: scripts/check-deps.sh (make check-deps) reads it through
# --list and checks that these packages, with their dependencies and
# Debian's required packages, provide every command, library and header the
# repository uses.
want=$(sed 's/#.*//' <<'LIST' | tr -s ' \t' '\n' | sed '/^$/d'
linux-source-6.12 qemu-system-x86 ccache gcc make flex bison bc
libelf-dev libssl-dev cpio kmod xz-utils rsync git
clang llvm libbpf-dev bpftool iproute2 util-linux
e2fsprogs libext2fs-dev libcap-dev libnuma-dev python3-ply python3-git
g++ sqlite3 time valgrind electric-fence
elfutils	# eu-addr2line: adimalloc/symbolize.c runs it, out of process, for
		# report stacks (the QEMU guest runs from this root over 9p: sees it)
libjson-c-dev	# the BPF tools write their --json output with json-c
jq		# reads the sockmsg tool's JSON: tests/sockmap/run, bench/sockmap/guest.sh
libclang-rt-14-dev	# Scudo (libclang_rt.scudo_standalone-x86_64.so), preloaded as a
		# column of bench/adimalloc/guest.sh (libasan8, for its ASan column,
		# comes with gcc)
linux-config-6.12	# Debian's own kernel configuration: scripts/check-distro.sh
dpkg-dev debhelper	# make bindeb-pkg (dpkg-buildpackage, dh_*): scripts/distro-deb.sh
debootstrap	# the Debian 12 root the package is installed in: scripts/distro-root.sh
libstdc++6 libpython3.11 libssl3	# libstdc++.so.6, libpython3.11.so.1.0, libcrypto.so.3:
		# tests/adi-decoder decodes their instructions (with libc's and ld.so's)
LIST
)
if [ "${1:-}" = --list ]; then
	echo "$want"
	exit 0
fi
missing=()
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

[ "$(id -u)" -eq 0 ] || die "missing packages (${missing[*]}); run as root to install them"
pinned=$(cat "$REPO/kernel/SOURCE_VERSION")
args=()
for p in "${missing[@]}"; do
	# Ask for the version the patch series was made against when the
	# archive still has it; otherwise take the candidate and let the
	# series check say whether it applies.
	if [ "$p" = "$SOURCE_PKG" ] &&
	   apt-cache madison "$p" 2>/dev/null | grep -qF "| $pinned |"; then
		p="$p=$pinned"
	fi
	args+=("$p")
done
say "installing Debian packages: ${args[*]}"
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$BUILD"
if ! apt-get install -y --no-install-recommends "${args[@]}" >"$BUILD/apt.log" 2>&1; then
	say "apt-get install failed; updating the package lists and trying once more"
	apt-get update >>"$BUILD/apt.log" 2>&1 || true
	apt-get install -y --no-install-recommends "${args[@]}" >>"$BUILD/apt.log" 2>&1 ||
		die "apt-get install failed, see $BUILD/apt.log"
fi
say "packages installed"
