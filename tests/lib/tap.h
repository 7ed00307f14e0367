/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP output for C tests run in the guest.
 * tap_plan(n); tap_ok(cond, fmt, ...); tap_skip(why, fmt, ...); tap_done().
 */
#ifndef LK417_TAP_H
#define LK417_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_count, tap_failed;

static inline void tap_plan(int n)
{
	printf("1..%d\n", n);
	fflush(stdout);
}

__attribute__((format(printf, 2, 3)))
static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

__attribute__((format(printf, 2, 3)))
static inline void tap_skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	printf("ok %d - ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
	fflush(stdout);
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

static inline int tap_done(void)
{
	return tap_failed ? 1 : 0;
}

#endif
