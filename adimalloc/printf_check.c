// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * printf's %s, checked.  glibc formats a string argument with its own
 * internal strlen/strnlen, whose loads the kernel lets through (libc's
 * read-ahead ranges): printf("%s") of an unterminated heap buffer, the
 * over-read the mem/str checks (libc_check.c) cannot see, would go
 * unreported.  glibc lets a program replace a conversion with
 * register_printf_specifier(); a handler that returns -2 hands the
 * argument back to glibc's own code.  Ours checks the string's bytes with
 * its terminator (up to the precision, when there is one: "%.5s" needs no
 * NUL) against the allocation it points into, reports as libc_check.c
 * does, then returns -2, so the output is glibc's, byte for byte.
 *
 * The cost: once any conversion is registered, glibc formats every call of
 * the family (printf, fprintf, snprintf, syslog, err, dprintf, the
 * __*_chk forms...) through its slower positional path.  So this is full
 * mode only, and check_printf=0 turns it off.  Wide strings (%ls) are
 * left to glibc unchecked; so are vwprintf's narrow %s arguments, which
 * glibc converts with mbsrtowcs().  A program that registers its own %s
 * handler replaces ours.
 */
#include <printf.h>
#include <stdio.h>

#include "internal.h"

static int check_s(FILE *stream, const struct printf_info *info,
		   const void *const *args)
{
	const char *s = *(const char *const *)args[0];

	(void)stream;
	if (!info->is_long && s)
		am_checked_strlen("printf", s, info->prec >= 0 ? (size_t)info->prec : AM_NO_LIMIT);
	return -2;	/* glibc formats it */
}

/* One argument, a narrow or wide string: what glibc's own %s takes. */
static int s_arginfo(const struct printf_info *info, size_t n, int *argtypes,
		     int *size)
{
	(void)size;
	if (n >= 1)
		argtypes[0] = info->is_long ? PA_WSTRING : PA_STRING;
	return 1;
}

void am_printf_check_init(void)
{
	if (register_printf_specifier('s', check_s, s_arginfo))
		am_printf("adimalloc: printf's %%s not checked: register_printf_specifier failed\n");
}
