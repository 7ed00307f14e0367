#!/bin/bash
# The demonstration behind "make run": boot our kernel in QEMU and show
# what it does.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
khdr=$(kobj default)/usr/include
make -s -C "$REPO/demo" OUT="$BUILD/demo" KHDR="$khdr"
exec "$REPO/scripts/qemu-run.sh" --timeout 300 -- "$BUILD/demo/features"
