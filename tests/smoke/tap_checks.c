// SPDX-License-Identifier: GPL-2.0
/*
 * tests/lib/tap.h's got/want checks, on themselves: each passes once and
 * fails once, and the smoke suite compares the lines with what they must
 * say (a failing check that does not say what it saw is the defect these
 * helpers exist to remove).  Exits 1: three of its checks fail on purpose.
 */
#include <fcntl.h>

#include "tap.h"

int main(void)
{
	int fd;

	tap_init();
	tap_eq_long(3, 3, "long %s", "equal");
	tap_eq_long(-2, 3, "long %s", "different");
	tap_eq_str("abc", "abc", "string equal");
	tap_eq_str(NULL, "b", "string NULL");
	fd = open("/nonexistent/lk417", O_RDONLY);
	tap_errno(fd, ENOENT, "open of a missing file");
	tap_errno(0, EBADF, "a call that succeeded");
	return tap_done();
}
