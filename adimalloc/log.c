// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Messages go out with vsnprintf() into a stack buffer and write(2), never
 * stdio: we print from inside malloc (before the heap exists, at start-up)
 * and from the SIGSEGV handler (when the heap is what just went wrong), and
 * stdio could allocate or take its own locks.  A message longer than the
 * buffer is cut, not split.
 */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"

void am_printf(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	for (int off = 0; off < n; ) {
		ssize_t w = write(STDERR_FILENO, buf + off, (size_t)(n - off));

		if (w <= 0)
			break;
		off += (int)w;
	}
}
