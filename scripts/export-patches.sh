#!/bin/bash
# Write the commits of build/linux after the pristine baseline back into
# kernel/patches/ (git format-patch files) and kernel/patches/series.
#
# Usage: scripts/export-patches.sh [--to DIR]
#   --to DIR   export into DIR instead (used by the round-trip test)
#
# The output is stable: zero commit ids, no signature, fixed abbreviation,
# so applying the series and exporting it again reproduces it byte for byte.
# The series' user documentation, Documentation/arch/x86/adi.rst, is copied
# to docs/adi.rst, so that it can be read without building the tree.
# kernel/cover-letter.txt (subject line, blank line, text) becomes
# 0000-cover-letter.patch with the shortlog and diffstat of the series;
# it is not in the series file, which lists what git am applies.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

dest=$KPATCHES
case "${1:-}" in
--to) dest=$2 ;;
"") ;;
-h|--help) usage_from_header "$0"; exit 0 ;;
*) die "unknown option '$1' (try --help)" ;;
esac
[ -d "$KSRC/.git" ] || die "no work tree at build/linux (make tree)"
gitk() { git -C "$KSRC" -c core.abbrev=12 "$@"; }
# Exporting into kernel/patches/ must not leave work behind; a copy
# elsewhere (the round-trip test) needs only the commits.
if [ "$dest" = "$KPATCHES" ]; then
	[ -z "$(gitk status --porcelain --untracked-files=no)" ] ||
		die "build/linux has uncommitted changes: commit them first"
fi

mkdir -p "$dest"
tmp=$(mktemp -d)
gitk format-patch -q --zero-commit --no-signature -o "$tmp" lk417-base..HEAD
rm -f "$dest"/*.patch
n=0
: >"$dest/series"
for p in "$tmp"/*.patch; do
	[ -e "$p" ] || continue
	cp "$p" "$dest/"
	basename "$p" >>"$dest/series"
	n=$((n + 1))
done
rm -rf "$tmp"
cover=$REPO/kernel/cover-letter.txt
if [ -f "$cover" ]; then
	tmp=$(mktemp -d)
	git -C "$KSRC" -c core.abbrev=12 -c user.name="lk417 developers" \
		-c user.email=dev@lk417.invalid format-patch -q --zero-commit \
		--no-signature --cover-letter -o "$tmp" lk417-base..HEAD
	date=$(gitk log -1 --format=%aD HEAD)
	COVER=$cover DATE=$date perl -0pi -e '
		open my $f, "<", $ENV{COVER} or die "$ENV{COVER}: $!";
		local $/; my $c = <$f>; my ($subj, $body) = split /\n\n/, $c, 2;
		s/^Date: .*$/Date: $ENV{DATE}/m;
		s/\*\*\* SUBJECT HERE \*\*\*/$subj/;
		s/\*\*\* BLURB HERE \*\*\*\n/$body/;
	' "$tmp/0000-cover-letter.patch"
	cp "$tmp/0000-cover-letter.patch" "$dest/"
	rm -rf "$tmp"
fi
if [ "$dest" = "$KPATCHES" ]; then
	# The tree now matches the series: record that, so the next build
	# does not think the tree is stale.
	. "$REPO/scripts/series-id.sh"
	series_id >"$KSRC/.git/lk417-series-id"
	gitk rev-parse HEAD >"$KSRC/.git/lk417-applied-head"
	mkdir -p "$REPO/docs"
	gitk show HEAD:Documentation/arch/x86/adi.rst >"$REPO/docs/adi.rst"
fi
say "exported $n patch(es) to ${dest#$REPO/}"
