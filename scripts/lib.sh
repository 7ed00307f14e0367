# Shared settings and helpers for the build, run and test scripts.
# Sourced, not executed.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$REPO/build}
KSRC=$BUILD/linux			# patched kernel work tree (git)
KPATCHES=$REPO/kernel/patches
KCONFIGS=$REPO/kernel/config
TARBALL=/usr/src/linux-source-6.12.tar.xz
SOURCE_PKG=linux-source-6.12

# Object directory of a variant: "" (default) or "debug".
kobj() {
	if [ -n "${1:-}" ] && [ "$1" != default ]; then
		echo "$BUILD/obj-$1"
	else
		echo "$BUILD/obj"
	fi
}

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# --help of every script: its leading comment block (after the #! line, up
# to the first line that is not a comment), without the comment marks.
usage_from_header() {
	awk 'NR == 1 && /^#!/ { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$1"
}

# A compiler cache kept outside the checkout, so a clean clone rebuilds the
# kernel from cache hits.  CCACHE_BASEDIR makes the cache independent of
# where the clone lives.
setup_ccache() {
	if command -v ccache >/dev/null; then
		export CCACHE_DIR=${CCACHE_DIR:-/var/cache/lk417-ccache}
		export CCACHE_BASEDIR=$REPO
		export CCACHE_NOHASHDIR=1
		export CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime
		mkdir -p "$CCACHE_DIR"
		ccache -M 8G >/dev/null
		KCC="ccache gcc"
	else
		KCC=gcc
	fi
}
