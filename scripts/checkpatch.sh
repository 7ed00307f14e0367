#!/bin/bash
# Run the kernel's checkpatch.pl --strict on every patch of the series.
# Exit 1 when any patch has errors, warnings or checks, except the types
# kernel/patches/checkpatch.exceptions accepts for a patch (each one is
# explained in that patch's message).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# spdxcheck.py needs Debian's python3 (with python3-ply and python3-git),
# not another python3 that may come first in PATH.
export PATH=/usr/bin:$PATH
bad=0 n=0
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	ignore=$(awk -v p="$p" '$1 == p { print $2 }' "$KPATCHES/checkpatch.exceptions" 2>/dev/null)
	if out=$(cd "$KSRC" && ./scripts/checkpatch.pl --strict --quiet \
		${ignore:+--ignore "$ignore"} "$KPATCHES/$p" 2>&1); then
		echo "clean: $p${ignore:+ (accepted: $ignore, see its message)}"
	else
		echo "$out"
		bad=1
	fi
done <"$KPATCHES/series"
say "checkpatch --strict on $n patch(es): $([ $bad = 0 ] && echo clean || echo PROBLEMS)"
exit $bad
