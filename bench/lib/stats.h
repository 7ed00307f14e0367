/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The statistics every benchmark reports: the median of a run's rounds and
 * their spread (min-max).  One copy, so that every table in bench/README.md
 * means the same thing by "median (min-max)".
 */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stdlib.h>
#include <string.h>

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Median of @n values (the mean of the middle two when @n is even), from a
 * sorted copy: @v keeps the rounds' order.  @min and @max may be NULL.
 * @n must be 1-256.
 */
static inline double bench_median(const double *v, int n, double *min, double *max)
{
	double s[256];

	if (n < 1 || n > 256)
		abort();
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), bench_cmp_double);
	if (min)
		*min = s[0];
	if (max)
		*max = s[n - 1];
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

#endif
