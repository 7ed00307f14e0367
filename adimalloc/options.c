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

#define AM_OPTION_DEFAULT(name, type, def, ...)	.name = def,
struct am_options am_opt = {
	AM_OPTIONS(AM_OPTION_DEFAULT)
};

#define AM_OPTION_KNOWN(name, type, def, min, max, suffix, syntax, ...) ", " syntax
static const char known[] = AM_MODE_SYNTAX ", " AM_LOG_PATH_SYNTAX
	AM_OPTIONS(AM_OPTION_KNOWN);

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

/* The numeric options: what each accepts and where it goes. */
struct option_spec {
	const char *name;
	bool suffix;			/* k/m/g allowed */
	unsigned long min, max;
	void (*store)(unsigned long n);	/* n already range-checked */
	const char *syntax;		/* shown when the value is malformed */
};

#define AM_OPTION_STORE(name, type, ...)				\
	static void store_##name(unsigned long n) { am_opt.name = (type)n; }
AM_OPTIONS(AM_OPTION_STORE)

#define AM_OPTION_SPEC(name, type, def, min, max, suffix, syntax, ...)	\
	{ #name, suffix, min, max, store_##name, syntax },
static const struct option_spec numeric[] = {
	AM_OPTIONS(AM_OPTION_SPEC)
};

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
		n = am_mode_sample(v, vlen, am_opt.sample);
		if (!n)
			bad("malformed value", item, len, AM_MODE_SYNTAX);
		am_opt.sample = n;
		return;
	}
	if (is(item, nlen, "log_path")) {
		if (!vlen || vlen >= AM_LOG_PATH_MAX)
			bad("malformed value", item, len, AM_LOG_PATH_SYNTAX
			    ", PATH of 1 to 255 bytes");
		am_log_set_path(v, vlen);
		return;
	}
	for (i = 0; i < sizeof(numeric) / sizeof(numeric[0]); i++) {
		const struct option_spec *o = &numeric[i];

		if (!is(item, nlen, o->name))
			continue;
		if (!parse_num(v, vlen, o->suffix, &n) || n < o->min || n > o->max)
			bad("malformed value", item, len, o->syntax);
		o->store(n);
		return;
	}
	bad("unknown option", item, len, NULL);
}

void am_options_parse(const char *s)
{
	while (s && *s) {
		const char *item = s;
		size_t len = am_options_next(&s);

		if (len)
			parse_one(item, len);
	}
}
