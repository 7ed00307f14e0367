#!/bin/bash
# Run one test suite inside the guest: tests/<suite>/run with the suite's
# built programs in $LK417_TESTBIN.  Its TAP goes to stdout.
set -u
suite=$1
export LK417_TESTBIN=$LK417_REPO/build/tests/$suite
cd /tmp || exit 1
exec "$LK417_REPO/tests/$suite/run"
