// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ADIMALLOC_OPTIONS: "name=value" pairs separated by ',' or ':'.  A name we
 * do not know or a value we cannot parse stops the program with a message:
 * a debugging allocator that silently ignores a typo would let the user
 * believe a check is on when it is not.  Nothing here may call malloc (we
 * run inside the first malloc call), so messages go out through write().
 */
#include <errno.h>
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

static void __attribute__((noreturn)) bad(const char *what, const char *item,
					  size_t len)
{
	am_printf("adimalloc: %s '%.*s' in ADIMALLOC_OPTIONS\n"
		  "adimalloc: known options: %s\n", what, (int)len, item, known);
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

static bool parse_bool(const char *v, size_t len, bool *out)
{
	if (len == 1 && (v[0] == '0' || v[0] == '1')) {
		*out = v[0] == '1';
		return true;
	}
	return false;
}

static bool is(const char *name, size_t nlen, const char *want)
{
	return nlen == strlen(want) && !memcmp(name, want, nlen);
}

static void parse_one(const char *item, size_t len)
{
	const char *eq = memchr(item, '=', len);
	size_t nlen, vlen;
	const char *v;
	unsigned long n;
	bool b;

	if (!eq)
		bad("option without '=value'", item, len);
	nlen = (size_t)(eq - item);
	v = eq + 1;
	vlen = len - nlen - 1;
	if (is(item, nlen, "mode")) {
		if (vlen == 4 && !memcmp(v, "full", 4))
			am_opt.sample = 1;
		else if (vlen == 6 && !memcmp(v, "sample", 6))
			am_opt.sample = am_opt.sample > 1 ? am_opt.sample : 1000;
		else
			bad("malformed value (mode is full or sample)", item, len);
	} else if (is(item, nlen, "sample")) {
		if (!parse_num(v, vlen, false, &n) || n < 1 || n > 1000000000UL)
			bad("malformed value (sample=N, N from 1 to 10^9)", item, len);
		am_opt.sample = n;
	} else if (is(item, nlen, "quarantine")) {
		if (!parse_num(v, vlen, true, &n) || n > (1UL << 40))
			bad("malformed value (quarantine=BYTES, k/m/g suffix)", item, len);
		am_opt.quarantine = n;
	} else if (is(item, nlen, "halt_on_error")) {
		if (!parse_bool(v, vlen, &b))
			bad("malformed value (0 or 1)", item, len);
		am_opt.halt = b;
	} else if (is(item, nlen, "abort_on_error")) {
		if (!parse_bool(v, vlen, &b))
			bad("malformed value (0 or 1)", item, len);
		am_opt.abort_on_error = b;
	} else if (is(item, nlen, "exitcode")) {
		if (!parse_num(v, vlen, false, &n) || n < 1 || n > 255)
			bad("malformed value (exitcode=1..255)", item, len);
		am_opt.exitcode = (int)n;
	} else if (is(item, nlen, "stack")) {
		if (!parse_num(v, vlen, false, &n) || n > AM_STACK_MAX)
			bad("malformed value (stack=0..16)", item, len);
		am_opt.stack_depth = (int)n;
	} else if (is(item, nlen, "stats")) {
		if (!parse_bool(v, vlen, &b))
			bad("malformed value (0 or 1)", item, len);
		am_opt.stats = b;
	} else if (is(item, nlen, "syscall_signal")) {
		if (!parse_bool(v, vlen, &b))
			bad("malformed value (0 or 1)", item, len);
		am_opt.syscall_signal = b;
	} else if (is(item, nlen, "seed")) {
		if (!parse_num(v, vlen, false, &n))
			bad("malformed value (seed=N)", item, len);
		am_opt.seed = n;
	} else if (is(item, nlen, "verbose")) {
		if (!parse_bool(v, vlen, &b))
			bad("malformed value (0 or 1)", item, len);
		am_opt.verbose = b;
	} else {
		bad("unknown option", item, len);
	}
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
