#!/bin/bash
# Long runs on the debug kernel (KASAN, KFENCE, lockdep, DEBUG_VM): every
# suite, then each suite's stress mode where it has one (LK417_STRESS=1).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export LK417_STRESS=1
exec "$REPO/scripts/test.sh" --variant debug "$@"
