// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ADIMALLOC_OPTIONS: "name=value" pairs separated by ',' or ':'.  A name we
 * do not know or a value we cannot parse stops the program with a message:
 * a debugging allocator that silently ignores a typo would let the user
 * believe a check is on when it is not.  Nothing here may call malloc (we
 * run inside the first malloc call), so messages go out through write().
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct am_options am_opt = {
	.sample = 1,
	.quarantine = 1UL << 20,
	.halt = true,
	.exitcode = AM_REPORT_EXIT,
	.stack_depth = AM_STACK_MAX,
	.syscall_signal = -1,
};

static const char known[] =
	"mode=full|sample, sample=N, quarantine=SIZE[k|m], halt_on_error=0|1, "
	"abort_on_error=0|1, exitcode=1..255, stack=0..16, stats=0|1, "
	"syscall_signal=0|1, seed=N, verbose=0|1";

/* @expect: what a value should look like, or NULL. */
static void __attribute__((noreturn)) bad(const char *what, const char *item,
					  size_t len, const char *expect)
{
	am_printf("adimalloc: %s '%.*s' in ADIMALLOC_OPTIONS%s%s%s\n"
		  "adimalloc: known options: %s\n", what, (int)len, item,
		  expect ? " (expected " : "", expect ? expect : "",
		  expect ? ")" : "", known);
	_exit(AM_CONFIG_EXIT);
}

/* Parse an unsigned decimal number with an optional k/m/g suffix. */
static bool parse_num(const char *v, size_t len, bool suffix, unsigned long *out)
{
	unsigned long n = 0, mul = 1;
	size_t i;

	if (len && suffix) {
		switch (v[len - 1]) {
		case 'k': case 'K': mul = 1UL << 10; len--; break;
		case 'm': case 'M': mul = 1UL << 20; len--; break;
		case 'g': case 'G': mul = 1UL << 30; len--; break;
		}
	}
	if (!len || len > 12)
		return false;
	for (i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		n = n * 10 + (unsigned long)(v[i] - '0');
	}
	*out = n * mul;
	return true;
}

static bool is(const char *name, size_t nlen, const char *want)
{
	return nlen == strlen(want) && !memcmp(name, want, nlen);
}

/* The numeric options: where each goes and what it accepts. */
struct option_spec {
	const char *name;
	bool suffix;			/* k/m/g allowed */
	unsigned long min, max;
	size_t offset, size;		/* the field in struct am_options */
	const char *expect;		/* shown when the value is malformed */
};

#define OPTION(name, suffix, min, max, field, expect)			\
	{ name, suffix, min, max, offsetof(struct am_options, field),	\
	  sizeof(am_opt.field), expect }

static const struct option_spec numeric[] = {
	OPTION("sample", false, 1, 1000000000UL, sample, "sample=N, N from 1 to 10^9"),
	OPTION("quarantine", true, 0, 1UL << 40, quarantine, "quarantine=BYTES, k/m/g suffix"),
	OPTION("halt_on_error", false, 0, 1, halt, "0 or 1"),
	OPTION("abort_on_error", false, 0, 1, abort_on_error, "0 or 1"),
	OPTION("exitcode", false, 1, 255, exitcode, "exitcode=1..255"),
	OPTION("stack", false, 0, AM_STACK_MAX, stack_depth, "stack=0..16"),
	OPTION("stats", false, 0, 1, stats, "0 or 1"),
	OPTION("syscall_signal", false, 0, 1, syscall_signal, "0 or 1"),
	OPTION("seed", false, 0, ~0UL, seed, "seed=N"),
	OPTION("verbose", false, 0, 1, verbose, "0 or 1"),
};

/* Store @n, already range-checked, into a bool, int or unsigned long. */
static void store(const struct option_spec *o, unsigned long n)
{
	char *field = (char *)&am_opt + o->offset;
	bool b = n;
	int i = (int)n;

	if (o->size == sizeof(b))
		memcpy(field, &b, sizeof(b));
	else if (o->size == sizeof(i))
		memcpy(field, &i, sizeof(i));
	else
		memcpy(field, &n, sizeof(n));
}

static void parse_one(const char *item, size_t len)
{
	const char *eq = memchr(item, '=', len);
	size_t nlen, vlen, i;
	const char *v;
	unsigned long n;

	if (!eq)
		bad("option without '=value'", item, len, NULL);
	nlen = (size_t)(eq - item);
	v = eq + 1;
	vlen = len - nlen - 1;
	if (is(item, nlen, "mode")) {
		if (vlen == 4 && !memcmp(v, "full", 4))
			am_opt.sample = 1;
		else if (vlen == 6 && !memcmp(v, "sample", 6))
			am_opt.sample = am_opt.sample > 1 ? am_opt.sample : AM_DEFAULT_SAMPLE;
		else
			bad("malformed value", item, len, "full or sample");
		return;
	}
	for (i = 0; i < sizeof(numeric) / sizeof(numeric[0]); i++) {
		const struct option_spec *o = &numeric[i];

		if (!is(item, nlen, o->name))
			continue;
		if (!parse_num(v, vlen, o->suffix, &n) || n < o->min || n > o->max)
			bad("malformed value", item, len, o->expect);
		store(o, n);
		return;
	}
	bad("unknown option", item, len, NULL);
}

void am_options_parse(const char *s)
{
	while (s && *s) {
		size_t len = strcspn(s, ",:");

		if (len)
			parse_one(s, len);
		s += len;
		if (*s)
			s++;
	}
}
