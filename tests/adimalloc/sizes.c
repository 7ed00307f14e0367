// SPDX-License-Identifier: GPL-2.0
/*
 * Requests no allocator can meet: every entry point of the malloc family
 * with the largest sizes, sizes whose product or rounding wraps, and bad
 * alignments.  Each must fail, with ENOMEM for a size and EINVAL for an
 * alignment (posix_memalign returns the code instead), and a failed
 * realloc must leave the old block alone.  One line per case:
 *     PASS|FAIL CASE: got RESULT, want RESULT
 * Sizes go through a volatile so that the compiler neither folds the calls
 * nor warns about them.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile size_t max = SIZE_MAX;
static int failed;

static const char *errname(int e)
{
	const char *s = e ? strerrorname_np(e) : "0";

	return s ? s : "?";
}

/* One line for a call that returns a pointer and sets errno. */
static void want_null(const char *what, void *p, int err, int want_err)
{
	int good = !p && err == want_err;

	failed += !good;
	if (p)
		printf("%s %s: got %p, want NULL (%s)\n", good ? "PASS" : "FAIL",
		       what, p, errname(want_err));
	else
		printf("%s %s: got NULL (%s), want NULL (%s)\n", good ? "PASS" : "FAIL",
		       what, errname(err), errname(want_err));
	free(p);	/* a wrong success must not leak into the next case */
}

/* One line for posix_memalign, which returns its error. */
static void want_code(const char *what, int got, int want)
{
	int good = got == want;

	failed += !good;
	printf("%s %s: got %s, want %s\n", good ? "PASS" : "FAIL", what,
	       errname(got), errname(want));
}

#define NULL_CASE(call, want_err) do {			\
	void *p_;					\
	int e_;						\
	errno = 0;					\
	p_ = (call);					\
	e_ = errno;					\
	want_null(#call, p_, e_, want_err);		\
} while (0)

static void plain_sizes(void)
{
	NULL_CASE(malloc(max), ENOMEM);
	NULL_CASE(malloc(max - 4095), ENOMEM);
	NULL_CASE(malloc(max / 2 + 1), ENOMEM);
	NULL_CASE(calloc(1, max), ENOMEM);
	NULL_CASE(calloc(max, 1), ENOMEM);
	NULL_CASE(calloc(2, max / 2 + 1), ENOMEM);	/* the product wraps */
	NULL_CASE(valloc(max), ENOMEM);
	NULL_CASE(pvalloc(max), ENOMEM);		/* page rounding wraps */
	NULL_CASE(pvalloc(max - 4095), ENOMEM);
}

static void aligned_sizes(void)
{
	void *q = &q;

	NULL_CASE(memalign(16, max), ENOMEM);
	NULL_CASE(memalign(4096, max - 100), ENOMEM);
	NULL_CASE(memalign(max / 2 + 2, 16), EINVAL);	/* no power of two above */
	NULL_CASE(aligned_alloc(16, max), ENOMEM);
	NULL_CASE(aligned_alloc(24, 48), EINVAL);
	NULL_CASE(aligned_alloc(0, 16), EINVAL);
	want_code("posix_memalign(&q, 16, max)", posix_memalign(&q, 16, max), ENOMEM);
	want_code("posix_memalign(&q, 4096, max - 100)",
		  posix_memalign(&q, 4096, max - 100), ENOMEM);
	want_code("posix_memalign(&q, 24, 16)", posix_memalign(&q, 24, 16), EINVAL);
	want_code("posix_memalign(&q, 4, 16)", posix_memalign(&q, 4, 16), EINVAL);
	want_code("posix_memalign(&q, 0, 16)", posix_memalign(&q, 0, 16), EINVAL);
	failed += q != &q;
	printf("%s posix_memalign failures leave *out alone: got %s, want unchanged\n",
	       q == &q ? "PASS" : "FAIL", q == &q ? "unchanged" : "changed");
}

/* A failed realloc returns NULL and the old block stays valid and intact. */
static void realloc_sizes(void)
{
	char *p = malloc(40);
	int good;

	memset(p, 'r', 40);
	NULL_CASE(realloc(p, max), ENOMEM);
	NULL_CASE(realloc(p, max / 2 + 1), ENOMEM);
	NULL_CASE(reallocarray(p, 2, max / 2 + 1), ENOMEM);
	NULL_CASE(reallocarray(p, 1, max), ENOMEM);
	good = p[0] == 'r' && p[39] == 'r';
	failed += !good;
	printf("%s the block after failed reallocs: got %s, want intact\n",
	       good ? "PASS" : "FAIL", good ? "intact" : "changed");
	free(p);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);	/* lines before a crash survive */
	plain_sizes();
	aligned_sizes();
	realloc_sizes();
	printf("%d failed\n", failed);
	return failed ? 1 : 0;
}
