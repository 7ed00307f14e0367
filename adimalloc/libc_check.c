// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The C library's mem/str family, checked at the call.  glibc's own loads
 * run in read-ahead ranges (its vector code reads past the end of strings,
 * harmlessly), so the kernel lets every load made by libc code through: a
 * memcpy() that reads past the end of a heap block, a strlen() of an
 * unterminated one, would go unseen.  Calls the program makes through
 * these names come here first: each argument's byte range is checked
 * against the allocation its pointer was made for (the heap knows each
 * one's requested size), a range that leaves it is reported as a READ or
 * WRITE heap-buffer-overflow (or -underflow, or use-after-free) at its
 * first bad byte, and then glibc's function runs.  glibc's internal calls
 * do not come through here: they keep the read-ahead exemption.
 *
 * Programs built with _FORTIFY_SOURCE (most of Debian) call the __*_chk
 * forms of the copies instead: those are checked the same way, then glibc's
 * own __*_chk runs (and still aborts on a too small destination it knows).
 *
 * Pointers without a version are not ours (stack, globals, glibc's heap in
 * sampled mode) and cost one test.  glibc's functions are found with
 * dlsym() at start-up; before that (a constructor that runs before ours)
 * a plain byte loop stands in.
 */
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* The plain loops below must not be turned back into calls to us. */
#define PLAIN __attribute__((optimize("no-tree-loop-distribute-patterns")))

#define LIBC_FUNCS(X)							\
	X(memcpy, void *, (void *, const void *, size_t))		\
	X(memmove, void *, (void *, const void *, size_t))		\
	X(memset, void *, (void *, int, size_t))			\
	X(memcmp, int, (const void *, const void *, size_t))		\
	X(memchr, void *, (const void *, int, size_t))			\
	X(strlen, size_t, (const char *))				\
	X(strnlen, size_t, (const char *, size_t))			\
	X(strcmp, int, (const char *, const char *))			\
	X(strncmp, int, (const char *, const char *, size_t))		\
	X(strchr, char *, (const char *, int))				\
	X(strrchr, char *, (const char *, int))				\
	X(strcpy, char *, (char *, const char *))			\
	X(stpcpy, char *, (char *, const char *))			\
	X(strncpy, char *, (char *, const char *, size_t))		\
	X(strcat, char *, (char *, const char *))			\
	X(strdup, char *, (const char *))				\
	X(strstr, char *, (const char *, const char *))		\
	X(__memcpy_chk, void *, (void *, const void *, size_t, size_t))	\
	X(__memmove_chk, void *, (void *, const void *, size_t, size_t)) \
	X(__memset_chk, void *, (void *, int, size_t, size_t))		\
	X(__strcpy_chk, char *, (char *, const char *, size_t))	\
	X(__stpcpy_chk, char *, (char *, const char *, size_t))	\
	X(__strncpy_chk, char *, (char *, const char *, size_t, size_t)) \
	X(__strcat_chk, char *, (char *, const char *, size_t))

#define LIBC_POINTER(name, ret, args) static ret (*libc_##name) args;
LIBC_FUNCS(LIBC_POINTER)

void am_libc_check_init(void)
{
#define LIBC_RESOLVE(name, ret, args)					\
	libc_##name = (ret (*) args)dlsym(RTLD_NEXT, #name);
	LIBC_FUNCS(LIBC_RESOLVE)
}

/* ---- plain stand-ins, for calls before am_libc_check_init() ---- */

static PLAIN size_t plain_strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

static PLAIN size_t plain_strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

static PLAIN void *plain_memmove(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;

	if (dp < sp)
		for (size_t i = 0; i < n; i++)
			dp[i] = sp[i];
	else
		for (size_t i = n; i > 0; i--)
			dp[i - 1] = sp[i - 1];
	return d;
}

static PLAIN void *plain_memset(void *d, int c, size_t n)
{
	unsigned char *dp = d;

	for (size_t i = 0; i < n; i++)
		dp[i] = (unsigned char)c;
	return d;
}

static PLAIN int plain_memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] - y[i];
	return 0;
}

static PLAIN void *plain_memchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;

	for (size_t i = 0; i < n; i++)
		if (p[i] == (unsigned char)c)
			return (void *)(p + i);
	return NULL;
}

static PLAIN int plain_strncmp(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];

		if (x != y || !x)
			return x - y;
	}
	return 0;
}

static PLAIN char *plain_strrchr(const char *s, int c)
{
	const char *last = NULL;

	do {
		if (*s == (char)c)
			last = s;
	} while (*s++);
	return (char *)last;
}

static PLAIN char *plain_strstr(const char *h, const char *n)
{
	size_t ln = plain_strlen(n);

	for (; *h; h++)
		if (!plain_strncmp(h, n, ln))
			return (char *)h;
	return ln ? NULL : (char *)h;
}

/* ---- the check ---- */

/*
 * The allocation @p was made for: the one that holds it if the versions
 * agree (the common case, one lookup), else the nearest of its version.
 * Not looked up (false) when this thread holds the heap lock already: a
 * signal handler that interrupted the allocator may call memcpy(), which
 * is async-signal-safe.
 */
static bool owner(const void *p, struct am_chunk *c)
{
	uintptr_t a = am_strip(p);
	bool found;

	if (am_heap_held_here() || am_passing_through())
		return false;
	am_heap_lock();
	found = am_heap_find_containing(a, c) && c->version == am_pver(p);
	if (!found)
		found = am_heap_find_nearest(a, am_pver(p), c);
	am_heap_unlock();
	return found;
}

/* Check @len bytes at @p, which @fn reads or writes; report if they stray. */
static void check_range(const char *fn, const void *p, size_t len, bool write)
{
	uintptr_t a = am_strip(p), bad;
	struct am_chunk c;

	if (!len || !am_pver(p) || !owner(p, &c))
		return;
	if (c.state != AM_LIVE)
		bad = a;
	else if (a < c.start || a >= c.start + c.size)
		bad = a;	/* starts outside (in the block's slack) */
	else if (len > c.start + c.size - a)
		bad = c.start + c.size;
	else
		return;
	am_report_libc(fn, write, p, len, bad, &c);
}

/* A string's bytes with its terminator, checked up to @max bytes. */
size_t am_checked_strlen(const char *fn, const char *s, size_t max)
{
	size_t n = libc_strnlen ? libc_strnlen(s, max) : plain_strnlen(s, max);

	check_range(fn, s, n < max ? n + 1 : n, false);
	return n;
}

#define CALL(name, ...) (libc_##name ? libc_##name(__VA_ARGS__) : plain_##name(__VA_ARGS__))
#define plain_memcpy plain_memmove

void *memcpy(void *d, const void *s, size_t n)
{
	check_range("memcpy", s, n, false);
	check_range("memcpy", d, n, true);
	return CALL(memcpy, d, s, n);
}

void *memmove(void *d, const void *s, size_t n)
{
	check_range("memmove", s, n, false);
	check_range("memmove", d, n, true);
	return CALL(memmove, d, s, n);
}

void *memset(void *d, int c, size_t n)
{
	check_range("memset", d, n, true);
	return CALL(memset, d, c, n);
}

/* memcmp and strncmp may stop at the first difference, so they are
 * checked only as far as they read. */
int memcmp(const void *a, const void *b, size_t n)
{
	int r = CALL(memcmp, a, b, n);
	size_t i = 0;

	if (r && (am_pver(a) || am_pver(b)))
		while (i < n && ((const unsigned char *)am_strip(a))[i] ==
				((const unsigned char *)am_strip(b))[i])
			i++;
	else
		i = n ? n - 1 : 0;
	check_range("memcmp", a, n ? i + 1 : 0, false);
	check_range("memcmp", b, n ? i + 1 : 0, false);
	return r;
}

void *memchr(const void *s, int c, size_t n)
{
	void *r = CALL(memchr, s, c, n);

	check_range("memchr", s, r ? (size_t)((const char *)r - (const char *)s) + 1 : n, false);
	return r;
}

size_t strlen(const char *s)
{
	return am_checked_strlen("strlen", s, AM_NO_LIMIT);
}

size_t strnlen(const char *s, size_t max)
{
	return am_checked_strlen("strnlen", s, max);
}

/* The bytes strncmp(a, b, n) reads from each: up to the first difference
 * or terminator. */
static size_t compared(const char *a, const char *b, size_t n)
{
	const char *x = (const char *)am_strip(a), *y = (const char *)am_strip(b);
	size_t i = 0;

	while (i < n && x[i] == y[i] && x[i])
		i++;
	return i < n ? i + 1 : n;
}

int strcmp(const char *a, const char *b)
{
	size_t n = compared(a, b, AM_NO_LIMIT);

	check_range("strcmp", a, n, false);
	check_range("strcmp", b, n, false);
	return CALL(strncmp, a, b, AM_NO_LIMIT);
}

int strncmp(const char *a, const char *b, size_t max)
{
	size_t n = compared(a, b, max);

	check_range("strncmp", a, n, false);
	check_range("strncmp", b, n, false);
	return CALL(strncmp, a, b, max);
}

char *strchr(const char *s, int c)
{
	const char *r = (const char *)am_strip(s);
	size_t n;

	while (*r != (char)c && *r)
		r++;
	n = (size_t)(r - (const char *)am_strip(s)) + 1;
	check_range("strchr", s, n, false);
	return *r == (char)c ? (char *)s + n - 1 : NULL;
}

char *strrchr(const char *s, int c)
{
	am_checked_strlen("strrchr", s, AM_NO_LIMIT);
	return CALL(strrchr, s, c);
}

char *strcpy(char *d, const char *s)
{
	size_t n = am_checked_strlen("strcpy", s, AM_NO_LIMIT);

	check_range("strcpy", d, n + 1, true);
	return CALL(memmove, d, s, n + 1);
}

char *stpcpy(char *d, const char *s)
{
	size_t n = am_checked_strlen("stpcpy", s, AM_NO_LIMIT);

	check_range("stpcpy", d, n + 1, true);
	CALL(memmove, d, s, n + 1);
	return d + n;
}

char *strncpy(char *d, const char *s, size_t max)
{
	size_t n = am_checked_strlen("strncpy", s, max);

	check_range("strncpy", d, max, true);
	CALL(memmove, d, s, n);
	CALL(memset, d + n, 0, max - n);
	return d;
}

char *strcat(char *d, const char *s)
{
	size_t dn = am_checked_strlen("strcat", d, AM_NO_LIMIT);
	size_t sn = am_checked_strlen("strcat", s, AM_NO_LIMIT);

	check_range("strcat", d, dn + sn + 1, true);
	CALL(memmove, d + dn, s, sn + 1);
	return d;
}

char *strdup(const char *s)
{
	size_t n = am_checked_strlen("strdup", s, AM_NO_LIMIT);
	char *d = malloc(n + 1);

	if (d)
		CALL(memmove, d, s, n + 1);
	return d;
}

char *strstr(const char *h, const char *n)
{
	am_checked_strlen("strstr", h, AM_NO_LIMIT);
	am_checked_strlen("strstr", n, AM_NO_LIMIT);
	return CALL(strstr, h, n);
}

/* ---- the _FORTIFY_SOURCE forms: checked, then glibc's own ---- */

/* Before am_libc_check_init(), glibc's check is skipped: the plain copy. */
#define CHK(name, plain, ...) (libc_##name ? libc_##name(__VA_ARGS__) : (plain))

void *__memcpy_chk(void *d, const void *s, size_t n, size_t dlen)
{
	check_range("memcpy", s, n, false);
	check_range("memcpy", d, n, true);
	return CHK(__memcpy_chk, plain_memmove(d, s, n), d, s, n, dlen);
}

void *__memmove_chk(void *d, const void *s, size_t n, size_t dlen)
{
	check_range("memmove", s, n, false);
	check_range("memmove", d, n, true);
	return CHK(__memmove_chk, plain_memmove(d, s, n), d, s, n, dlen);
}

void *__memset_chk(void *d, int c, size_t n, size_t dlen)
{
	check_range("memset", d, n, true);
	return CHK(__memset_chk, plain_memset(d, c, n), d, c, n, dlen);
}

char *__strcpy_chk(char *d, const char *s, size_t dlen)
{
	size_t n = am_checked_strlen("strcpy", s, AM_NO_LIMIT);

	check_range("strcpy", d, n + 1, true);
	return CHK(__strcpy_chk, plain_memmove(d, s, n + 1), d, s, dlen);
}

char *__stpcpy_chk(char *d, const char *s, size_t dlen)
{
	size_t n = am_checked_strlen("stpcpy", s, AM_NO_LIMIT);

	check_range("stpcpy", d, n + 1, true);
	return CHK(__stpcpy_chk, (char *)plain_memmove(d, s, n + 1) + n, d, s, dlen);
}

char *__strncpy_chk(char *d, const char *s, size_t max, size_t dlen)
{
	am_checked_strlen("strncpy", s, max);
	check_range("strncpy", d, max, true);
	return CHK(__strncpy_chk, strncpy(d, s, max), d, s, max, dlen);
}

char *__strcat_chk(char *d, const char *s, size_t dlen)
{
	size_t dn = am_checked_strlen("strcat", d, AM_NO_LIMIT);
	size_t sn = am_checked_strlen("strcat", s, AM_NO_LIMIT);

	check_range("strcat", d, dn + sn + 1, true);
	return CHK(__strcat_chk, strcat(d, s), d, s, dlen);
}
