// SPDX-License-Identifier: GPL-2.0
/*
 * tests/lib/tap.h's got/want checks, on themselves: each passes once and
 * fails once (or more: each way a failure can read), and the smoke suite
 * compares the lines with what they must say (a failing check that does
 * not say what it saw is the defect these helpers exist to remove).
 * tap_mem_diff() and tap_errname() build text for messages: their text is
 * checked through checks of one's own.  Exits 1: 14 of its 28 checks fail
 * on purpose.
 */
#include <fcntl.h>
#include <signal.h>

#include "tap.h"

int main(void)
{
	char desc[128];
	long at;
	pid_t pid;
	int fd;

	tap_init();
	tap_eq_long(3, 3, "long %s", "equal");
	tap_eq_long(-2, 3, "long %s", "different");
	tap_eq_str("abc", "abc", "string equal");
	tap_eq_str(NULL, "b", "string NULL");
	fd = open("/nonexistent/lk417", O_RDONLY);
	tap_errno(fd, ENOENT, "open of a missing file");
	tap_errno(0, EBADF, "a call that succeeded");

	tap_eq_hex(0x1000, 0x1000, "hex %s", "equal");
	tap_eq_hex(0x5000000000001000ULL, 0x1000, "hex, a pointer's version");

	tap_grew(3, 5, "counter %s", "rose");
	tap_grew(5, 5, "counter unchanged");
	tap_grew(-1, -1, "counter missing");

	tap_exit0(0, "status %s", "exit 0");
	tap_exit0(3 << 8, "status exit 3");
	tap_exit0(SIGKILL, "status killed");
	tap_exit0(-1, "no status");

	pid = fork();
	if (pid == 0)
		_exit(0);
	tap_wait_exit0(pid, "child %s", "exiting 0");
	pid = fork();
	if (pid == 0)
		_exit(3);
	tap_wait_exit0(pid, "child exiting 3");
	errno = EAGAIN;
	tap_wait_exit0(-1, "failed fork");
	tap_wait_exit0(getpid(), "not a child");

	tap_eq_mem("abcd", "abcd", 4, "memory %s", "equal");
	tap_eq_mem("abXd", "abcd", 4, "memory different");

	at = tap_mem_diff(desc, sizeof(desc), "abcd", "abcd", 4);
	tap_eq_long(at, -1, "tap_mem_diff, equal: the index");
	tap_ok(at < 0, "own memory check, equal: %s", desc);
	at = tap_mem_diff(desc, sizeof(desc), "abXd", "abcd", 4);
	tap_eq_long(at, 2, "tap_mem_diff, different: the index");
	tap_ok(at < 0, "own memory check, different: %s", desc);

	tap_eq_str(tap_errname(EINVAL), "EINVAL", "tap_errname of EINVAL");
	tap_eq_str(tap_errname(0), "0", "tap_errname of 0");
	tap_eq_str(tap_errname(100000), "?", "tap_errname of an unknown errno");
	return tap_done();
}
