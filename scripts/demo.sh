#!/bin/bash
# The demonstration behind "make run": boot our kernel in QEMU, run the ADI
# demonstration, then show which 4.17 systems the kernel offers.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
khdr=$(kobj default)/usr/include
say "building the demonstration programs"
make -s -C "$REPO/demo" OUT="$BUILD/demo" KHDR="$khdr"
exec "$REPO/scripts/qemu-run.sh" --timeout 300 -- \
	bash -c "'$BUILD/demo/adi_demo'; s=\$?; echo; '$BUILD/demo/features' || s=1; exit \$s"
