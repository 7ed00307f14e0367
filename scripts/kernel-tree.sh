#!/bin/bash
# Make build/linux: a git work tree of the patched kernel.
#
# Commit 1 (tagged lk417-base) is the pristine source from Debian's
# linux-source-6.12 tarball; then one commit per patch of
# kernel/patches/series.  Developers edit and commit there, and
# scripts/export-patches.sh writes the commits back into kernel/patches/.
#
# Usage: scripts/kernel-tree.sh [--reset]
#   --reset  throw away the work tree's own commits and changes and
#            re-apply kernel/patches/ (asks for nothing: be sure).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

reset=0
case "${1:-}" in
--reset) reset=1 ;;
"") ;;
-h|--help) usage_from_header "$0"; exit 0 ;;
*) die "unknown option '$1' (try --help)" ;;
esac

gitk() { git -C "$KSRC" -c user.name="lk417 build" -c user.email=build@lk417.invalid "$@"; }

. "$REPO/scripts/series-id.sh"

apply_series() {
	local p n=0
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		[ -f "$KPATCHES/$p" ] || die "kernel/patches/series names $p, which does not exist"
		if ! gitk am -q --committer-date-is-author-date "$KPATCHES/$p"; then
			gitk am --abort || true
			installed=$(dpkg-query -W -f='${Version}' "$SOURCE_PKG")
			if [ "$installed" != "$(cat "$REPO/kernel/SOURCE_VERSION")" ]; then
				die "patch $p does not apply to $SOURCE_PKG $installed; the series was made against $(cat "$REPO/kernel/SOURCE_VERSION") (kernel/SOURCE_VERSION): install that version or rebase the series"
			fi
			die "patch $p does not apply to the pristine source"
		fi
		n=$((n + 1))
	done <"$KPATCHES/series"
	say "applied $n patch(es) from kernel/patches/series"
	series_id >"$KSRC/.git/lk417-series-id"
	gitk rev-parse HEAD >"$KSRC/.git/lk417-applied-head"
	# Files written in the same second as the index look "racily clean"
	# and make every later git status re-read them all; refresh the index
	# once the clock has moved on.
	sleep 1
	gitk update-index -q --refresh >/dev/null || true
}

[ -f "$TARBALL" ] || die "$TARBALL not found: install $SOURCE_PKG (scripts/deps.sh)"
installed=$(dpkg-query -W -f='${Version}' "$SOURCE_PKG")
pinned=$(cat "$REPO/kernel/SOURCE_VERSION")
[ "$installed" = "$pinned" ] ||
	say "warning: $SOURCE_PKG $installed is installed, the series was made against $pinned"

if [ -d "$KSRC/.git" ] && [ -f "$KSRC/.git/lk417-series-id" ]; then
	want=$(series_id)
	have=$(cat "$KSRC/.git/lk417-series-id")
	if [ "$want" = "$have" ] && [ $reset -eq 0 ]; then
		exit 0
	fi
	head=$(gitk rev-parse HEAD)
	if [ $reset -eq 0 ]; then
		[ "$head" = "$(cat "$KSRC/.git/lk417-applied-head")" ] ||
			die "build/linux has commits that are not in kernel/patches/: export them (make export-patches) or discard them (make tree-reset)"
		[ -z "$(gitk status --porcelain --untracked-files=no)" ] ||
			die "build/linux has uncommitted changes: commit and export them, or discard them (make tree-reset)"
	fi
	if [ "$(gitk log -1 --format=%s lk417-base)" != "pristine $SOURCE_PKG $installed" ]; then
		say "installed source changed; extracting it again"
		rm -rf "$KSRC"
	else
		say "kernel/patches changed; re-applying the series to build/linux"
		gitk am --abort >/dev/null 2>&1 || true
		gitk reset -q --hard lk417-base
		gitk clean -qfdx
		apply_series
		exit 0
	fi
fi

rm -rf "$KSRC" "$KSRC.tmp"
mkdir -p "$KSRC.tmp"
say "extracting $TARBALL ($SOURCE_PKG $installed) into build/linux"
tar -C "$KSRC.tmp" --strip-components=1 -xJf "$TARBALL"
mv "$KSRC.tmp" "$KSRC"
say "recording the pristine source as the baseline commit (about 30 s)"
gitk init -q -b main
gitk config core.abbrev 12
gitk config gc.auto 0
# Debian's .gitignore ignores every top-level path (it versions debian/
# only); add the tree with -f, then drop those lines from the working
# copy so new files in the tree are visible to git.
gitk add -A -f
gitk commit -q -m "pristine $SOURCE_PKG $installed"
gitk tag lk417-base
sed -i '/^# Debian packaging: ignore everything/,$d' "$KSRC/.gitignore"
gitk update-index --skip-worktree .gitignore
apply_series
