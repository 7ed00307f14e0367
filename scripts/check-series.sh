#!/bin/bash
# Check that every patch of the series builds on its own: apply the series
# one patch at a time in a separate work tree (build/series-check) and
# build after each, incrementally, with the default variant's .config,
# copied again before each build: olddefconfig drops the symbols a patch
# does not know yet (CONFIG_X86_ADI before the patch that adds it), and a
# config carried over would build every later patch without them.
# Reports each patch's result and compiler warnings; exit 1 on any failure.
#
# Usage: scripts/check-series.sh [--objects] [FIRST [LAST]]
#   FIRST..LAST   the patches to build (default: all); earlier patches
#                 are applied without a build
#   --objects     instead of the whole kernel, compile after each patch
#                 the objects of the .c files it changes, every ADI object,
#                 and up to 4 objects that include each header it changes
#                 (found in the default build's dependency files): minutes
#                 instead of hours, and it catches what a patch breaks in
#                 the files it touches and their nearest users, not what
#                 only a link or a distant user would show
set -euo pipefail
. "$(dirname "$0")/lib.sh"
setup_ccache
case "${1:-}" in -h|--help) usage_from_header "$0"; exit 0 ;; esac
objects=0
if [ "${1:-}" = --objects ]; then objects=1; shift; fi
first=${1:-1}
last=${2:-9999}
case "$first$last" in *[!0-9]*) die "FIRST and LAST are patch numbers" ;; esac
[ "$first" -ge 1 ] && [ "$last" -ge "$first" ] || die "need 1 <= FIRST <= LAST (got $first $last)"
tree=$BUILD/series-check
obj=$BUILD/obj-series
[ -f "$(kobj default)/.config" ] || die "build the default kernel first (make kernel)"
[ -d "$KSRC/.git" ] || die "no work tree (make tree)"

mapfile -t patches < <(grep -v '^#' "$KPATCHES/series" | grep .)
[ "$first" -le ${#patches[@]} ] || die "FIRST $first is past the last patch (${#patches[@]})"

# --objects: what to compile after the patch at HEAD of work tree $1.
patch_objects() {
	local t=$1 ref f o u d b users
	ref=$(kobj default)
	for f in $(git -C "$t" diff --name-only HEAD~1 HEAD); do
		case $f in
		*.c) o=${f%.c}.o; [ -f "$ref/$o" ] && echo "$o" ;;
		*.h)
			mapfile -t users < <(grep -l -- "/$f" $(find "$ref" -name '.*.o.cmd') 2>/dev/null | head -4)
			for u in "${users[@]}"; do
				u=${u#"$ref"/} d=$(dirname "$u") b=$(basename "$u" .cmd)
				b=${b#.}
				[ -f "$t/$d/${b%.o}.c" ] && echo "$d/$b"
			done
			;;
		esac
	done
	for f in "$t"/arch/x86/kernel/adi*.c; do
		[ -e "$f" ] || continue
		f=${f#"$t"/}
		echo "${f%.c}.o"
	done
}
rm -rf "$tree"
git -C "$KSRC" worktree prune
git -C "$KSRC" worktree add -q --detach "$tree" lk417-base
mkdir -p "$obj"
cp "$(kobj default)/.config" "$obj/.config"
fail=0 n=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	git -C "$tree" -c user.name=check -c user.email=check@lk417.invalid \
		am -q --committer-date-is-author-date "$KPATCHES/$p"
	[ "$n" -ge "$first" ] || continue
	[ "$n" -le "$last" ] || break
	start=$(date +%s)
	cp "$(kobj default)/.config" "$obj/.config"
	targets=(bzImage)
	[ $objects = 0 ] || mapfile -t targets < <(patch_objects "$tree")
	if make -C "$tree" O="$obj" -j"$(nproc)" CC="$KCC" HOSTCC="$KCC" LOCALVERSION= \
		olddefconfig >"$obj/build-$n.log" 2>&1 &&
	   make -C "$tree" O="$obj" -j"$(nproc)" CC="$KCC" HOSTCC="$KCC" LOCALVERSION= \
		"${targets[@]}" >>"$obj/build-$n.log" 2>&1; then
		w=$(grep -c 'warning:' "$obj/build-$n.log" || true)
		what=builds
		[ $objects = 0 ] || what="${#targets[@]} objects compile"
		say "patch $n ($p): $what, $w warning(s), $(( $(date +%s) - start )) s"
		[ "$w" -eq 0 ] || { grep 'warning:' "$obj/build-$n.log" | head -5 >&2; fail=1; }
	else
		say "patch $n ($p): BUILD FAILED, see ${obj#$REPO/}/build-$n.log"
		grep -E 'error' "$obj/build-$n.log" | head -5 >&2
		fail=1
	fi
done
git -C "$KSRC" worktree remove --force "$tree"
exit $fail
