// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Messages go out with vsnprintf() into a stack buffer and write(2), never
 * stdio: we print from inside malloc (before the heap exists, at start-up)
 * and from the SIGSEGV handler (when the heap is what just went wrong), and
 * stdio could allocate or take its own locks.  A message longer than the
 * buffer is cut, not split.
 *
 * With log_path=PATH they go to PATH.PID instead, opened at the first
 * message of each process (a fork()ed child gets a file of its own), as
 * AddressSanitizer's log_path does; if that file cannot be opened they
 * stay on stderr.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static char log_path[AM_LOG_PATH_MAX];
static pid_t log_pid;
static int log_fd = STDERR_FILENO;

void am_log_set_path(const char *path, size_t len)
{
	memcpy(log_path, path, len);
	log_path[len] = 0;
}

/* stderr, or this process's PATH.PID (async-signal-safe: open(2) only). */
static int log_fd_here(void)
{
	pid_t pid = getpid();
	char name[AM_LOG_PATH_MAX + 16];
	int fd;

	if (!log_path[0] || log_pid == pid)
		return log_fd;
	log_pid = pid;
	snprintf(name, sizeof(name), "%s.%d", log_path, (int)pid);
	fd = open(name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	log_fd = fd >= 0 ? fd : STDERR_FILENO;
	return log_fd;
}

void am_printf(const char *fmt, ...)
{
	int fd = log_fd_here();
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	for (int off = 0; off < n; ) {
		ssize_t w = write(fd, buf + off, (size_t)(n - off));

		if (w <= 0)
			break;
		off += (int)w;
	}
}
