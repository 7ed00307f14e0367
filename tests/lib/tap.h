/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TAP output for C tests run in the guest.
 *
 *   tap_init();                 once, first
 *   tap_group("name", fn);      run fn() in a child process: a crash or an
 *                               unexpected signal there is one failed test,
 *                               and the next group still runs; with
 *                               TAP_GROUPS="a,b" in the environment only
 *                               the groups named there run (development),
 *                               each other one is a result of its own,
 *                               "ok N - name # SKIP not in TAP_GROUPS", so
 *                               a filtered run counts skips and never looks
 *                               like a complete pass
 *   tap_ok(cond, fmt, ...);     one test
 *   tap_eq_long(got, want, fmt, ...);   one test, "...: got G, want W"
 *   tap_eq_str(got, want, fmt, ...);    the same for strings ('...'/NULL)
 *   tap_errno(ret, want, fmt, ...);     a call that must fail with errno
 *                               @want: "...: got R (errno text), want -1
 *                               (want's text)"; read errno right after the
 *                               call, before anything can change it
 *   tap_eq_hex(got, want, fmt, ...);    tap_eq_long() in hex, for data
 *                               words and addresses: a wrong byte or a
 *                               pointer's version shows
 *   tap_grew(before, after, fmt, ...);  a counter that must have risen:
 *                               "...: got B -> A, want an increase"
 *   tap_exit0(status, fmt, ...);        a wait status (or system()'s) that
 *                               must be "exited with 0"; -1: no status was
 *                               reaped; the message says what the child did
 *   tap_wait_exit0(pid, fmt, ...);      reap child @pid, just forked, and
 *                               tap_exit0() its status; a failed fork()
 *                               (@pid -1) or waitpid() is a failure that
 *                               names errno, never a stale status; call it
 *                               right after the fork() when @pid may be -1
 *   tap_eq_mem(got, want, len, fmt, ...);  @len bytes equal; a failure
 *                               names the first byte that differs
 *                               (tap_mem_diff() builds that text for checks
 *                               of one's own)
 *   tap_errname(err);           "EINVAL", "0", or "?": errno for messages
 *   tap_skip(why, fmt, ...);    one skipped test
 *   return tap_done();          prints the plan (at the end, as TAP allows)
 *
 * Counters live in shared memory so that results from group children are
 * numbered and counted in order.
 */
#ifndef LK417_TAP_H
#define LK417_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct tap_state {
	int count;
	int failed;
};

static struct tap_state *tap;

static inline void tap_init(void)
{
	tap = mmap(NULL, sizeof(*tap), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tap == MAP_FAILED) {
		perror("tap_init: mmap");
		exit(2);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static inline void tap_vresult(const char *status, const char *directive,
			       const char *fmt, va_list ap)
{
	int n = __atomic_add_fetch(&tap->count, 1, __ATOMIC_SEQ_CST);

	printf("%s %d - ", status, n);
	vprintf(fmt, ap);
	printf("%s\n", directive);
	fflush(stdout);
}

__attribute__((format(printf, 2, 3)))
static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	if (!cond)
		__atomic_add_fetch(&tap->failed, 1, __ATOMIC_SEQ_CST);
	va_start(ap, fmt);
	tap_vresult(cond ? "ok" : "not ok", "", fmt, ap);
	va_end(ap);
	return cond;
}

/* tap_ok() with "fmt...: got ..., want ..." built from @ap and @tail. */
static inline int tap_ok_tail(int cond, const char *tail, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	return tap_ok(cond, "%s: %s", msg, tail);
}

__attribute__((format(printf, 3, 4)))
static inline int tap_eq_long(long got, long want, const char *fmt, ...)
{
	char tail[96];
	va_list ap;
	int ok;

	snprintf(tail, sizeof(tail), "got %ld, want %ld", got, want);
	va_start(ap, fmt);
	ok = tap_ok_tail(got == want, tail, fmt, ap);
	va_end(ap);
	return ok;
}

__attribute__((format(printf, 3, 4)))
static inline int tap_eq_str(const char *got, const char *want, const char *fmt, ...)
{
	char tail[512];
	va_list ap;
	int ok = got && want ? !strcmp(got, want) : got == want;

	snprintf(tail, sizeof(tail), "got %s%.200s%s, want %s%.200s%s", got ? "'" : "",
		 got ? got : "NULL", got ? "'" : "", want ? "'" : "", want ? want : "NULL",
		 want ? "'" : "");
	va_start(ap, fmt);
	ok = tap_ok_tail(ok, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/* errno @err's name for a message: "EINVAL"; "0" for none, "?" if unknown. */
static inline const char *tap_errname(int err)
{
	const char *name = err ? strerrorname_np(err) : "0";

	return name ? name : "?";
}

__attribute__((format(printf, 3, 4)))
static inline int tap_errno(long ret, int want, const char *fmt, ...)
{
	int err = errno;	/* first: nothing below may change it first */
	char tail[160];
	va_list ap;
	int ok;

	if (ret == -1)
		snprintf(tail, sizeof(tail), "got -1 (%s), want -1 (%s)", tap_errname(err),
			 tap_errname(want));
	else
		snprintf(tail, sizeof(tail), "got %ld (success), want -1 (%s)", ret,
			 tap_errname(want));
	va_start(ap, fmt);
	ok = tap_ok_tail(ret == -1 && err == want, tail, fmt, ap);
	va_end(ap);
	return ok;
}

__attribute__((format(printf, 3, 4)))
static inline int tap_eq_hex(uint64_t got, uint64_t want, const char *fmt, ...)
{
	char tail[96];
	va_list ap;
	int ok;

	snprintf(tail, sizeof(tail), "got %#llx, want %#llx", (unsigned long long)got,
		 (unsigned long long)want);
	va_start(ap, fmt);
	ok = tap_ok_tail(got == want, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/*
 * A counter read as -1 when it is missing gives "-1 -> -1": a failure that
 * says so, not a pass.
 */
__attribute__((format(printf, 3, 4)))
static inline int tap_grew(long before, long after, const char *fmt, ...)
{
	char tail[96];
	va_list ap;
	int ok;

	snprintf(tail, sizeof(tail), "got %ld -> %ld, want an increase", before, after);
	va_start(ap, fmt);
	ok = tap_ok_tail(after > before, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/* "got exit 3, want exit 0" and the like into @tail; 1 if @status is exit 0. */
static inline int tap_exit0_tail(char *tail, size_t size, int status)
{
	/* -1 is no wait status: it would read as "stopped by signal 255". */
	if (status == -1)
		snprintf(tail, size, "got no child status (fork or waitpid failed), want exit 0");
	else if (WIFEXITED(status))
		snprintf(tail, size, "got exit %d, want exit 0", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(tail, size, "got killed by signal %d (%s), want exit 0",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(tail, size, "got wait status %#x, want exit 0", status);
	return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

__attribute__((format(printf, 2, 3)))
static inline int tap_exit0(int status, const char *fmt, ...)
{
	char tail[128];
	va_list ap;
	int ok;

	ok = tap_exit0_tail(tail, sizeof(tail), status);
	va_start(ap, fmt);
	ok = tap_ok_tail(ok, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/*
 * Without its own checks, a caller's waitpid(-1, ...) after a failed
 * fork() reaps nothing (ECHILD) and leaves whatever status was there
 * before, which can read as a pass.
 */
__attribute__((format(printf, 2, 3)))
static inline int tap_wait_exit0(pid_t pid, const char *fmt, ...)
{
	int err = errno;	/* first: fork()'s errno when @pid is -1 */
	char tail[128];
	int status, ok = 0;
	va_list ap;

	if (pid < 0) {
		snprintf(tail, sizeof(tail), "got no child (fork failed: %s), want exit 0",
			 tap_errname(err));
	} else if (waitpid(pid, &status, 0) != pid) {
		err = errno;
		snprintf(tail, sizeof(tail), "got no child status (waitpid failed: %s), "
			 "want exit 0", tap_errname(err));
	} else {
		ok = tap_exit0_tail(tail, sizeof(tail), status);
	}
	va_start(ap, fmt);
	ok = tap_ok_tail(ok, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/*
 * The index of the first byte where the @len bytes at @got and @want
 * differ, or -1; @desc gets "byte I of N: got 0xG, want 0xW", or "all N
 * bytes as expected".
 */
static inline long tap_mem_diff(char *desc, size_t size, const void *got, const void *want,
				size_t len)
{
	const unsigned char *g = got, *w = want;

	for (size_t i = 0; i < len; i++)
		if (g[i] != w[i]) {
			snprintf(desc, size, "byte %zu of %zu: got 0x%02x, want 0x%02x", i, len,
				 g[i], w[i]);
			return (long)i;
		}
	snprintf(desc, size, "all %zu bytes as expected", len);
	return -1;
}

__attribute__((format(printf, 4, 5)))
static inline int tap_eq_mem(const void *got, const void *want, size_t len, const char *fmt,
			     ...)
{
	char tail[128];
	va_list ap;
	int ok;

	ok = tap_mem_diff(tail, sizeof(tail), got, want, len) < 0;
	va_start(ap, fmt);
	ok = tap_ok_tail(ok, tail, fmt, ap);
	va_end(ap);
	return ok;
}

__attribute__((format(printf, 2, 3)))
static inline void tap_skip(const char *why, const char *fmt, ...)
{
	char directive[256];
	va_list ap;

	snprintf(directive, sizeof(directive), " # SKIP %s", why);
	va_start(ap, fmt);
	tap_vresult("ok", directive, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2)))
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* 1 when $TAP_GROUPS is unset or empty, or names @name in its comma list. */
static inline int tap_group_selected(const char *name)
{
	const char *list = getenv("TAP_GROUPS");
	size_t len = strlen(name);

	if (!list || !*list)
		return 1;
	for (;;) {
		if (!strncmp(list, name, len) && (list[len] == ',' || !list[len]))
			return 1;
		list = strchr(list, ',');
		if (!list)
			return 0;
		list++;
	}
}

static inline void tap_group(const char *name, void (*fn)(void))
{
	int status;
	pid_t pid;

	if (!tap_group_selected(name)) {
		tap_skip("not in TAP_GROUPS", "%s", name);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		tap_ok(0, "%s: fork failed", name);
		return;
	}
	if (pid == 0) {
		fn();
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0)
		tap_ok(0, "%s: waitpid failed", name);
	else if (WIFSIGNALED(status))
		tap_ok(0, "%s: died of signal %d (%s)", name, WTERMSIG(status),
		       strsignal(WTERMSIG(status)));
	else if (WEXITSTATUS(status))
		tap_ok(0, "%s: exited with status %d", name, WEXITSTATUS(status));
}

static inline int tap_done(void)
{
	printf("1..%d\n", tap->count);
	fflush(stdout);
	return tap->failed ? 1 : 0;
}

#endif
