#!/bin/bash
# Run the kernel's checkpatch.pl --strict on every patch of the series.
# Exit 1 when any patch has errors, warnings or checks.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# spdxcheck.py needs Debian's python3 (with python3-ply and python3-git),
# not another python3 that may come first in PATH.
export PATH=/usr/bin:$PATH
bad=0 n=0
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	if out=$(cd "$KSRC" && ./scripts/checkpatch.pl --strict --quiet \
		"$KPATCHES/$p" 2>&1); then
		echo "clean: $p"
	else
		echo "$out"
		bad=1
	fi
done <"$KPATCHES/series"
say "checkpatch --strict on $n patch(es): $([ $bad = 0 ] && echo clean || echo PROBLEMS)"
exit $bad
