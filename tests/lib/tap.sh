# TAP helpers for shell suites.  Sourced by tests/*/run.
#   plan N; ok COND-STATUS "name"; skip "name" "why"; diag "text"
_tap_n=0
plan() { echo "1..$1"; }
# check "name" CMD...: runs CMD, ok when it exits 0.
check() {
	local name=$1; shift
	_tap_n=$((_tap_n + 1))
	if "$@"; then
		echo "ok $_tap_n - $name"
	else
		echo "not ok $_tap_n - $name"
	fi
}
skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP $2"
}
diag() { echo "# $*"; }
