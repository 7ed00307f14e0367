/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ADIMALLOC_OPTIONS list, one line per numeric option.  It is expanded
 * into struct am_options (internal.h), its defaults and parse table
 * (options.c) and the option list of adirun --help, so a new option is
 * one line here.
 *
 * X(name, type, default, min, max, suffix, syntax, meaning):
 * name is both the option and the field of am_opt; suffix: the value may
 * end in k, m or g; syntax is shown by --help and by the message for a
 * malformed value.
 */
#ifndef ADIMALLOC_OPTIONS_LIST_H
#define ADIMALLOC_OPTIONS_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define AM_REPORT_EXIT	86	/* default exit status after a report */
#define AM_CONFIG_EXIT	2	/* bad options, no ADI */
#define AM_STACK_MAX	16	/* frames recorded per malloc/free */
/* sample=N of mode=sample without a rate (see the benchmark in README.md). */
#define AM_DEFAULT_SAMPLE 10000
#define AM_QUARANTINE_MB 1	/* default quarantine, in MiB */
/* Default address space kept PROT_NONE for freed large blocks, in GiB. */
#define AM_ADDRESS_QUARANTINE_GB 1
/*
 * Sampled mode's bounds (README.md, "Sampled mode"): live sampled blocks
 * at most, and the largest request sampled, in KiB.  The size cannot go
 * above the largest slot (AM_SMALL_MAX, internal.h): every sampled block
 * then lives in the one reserved region, so that free() tells glibc's
 * blocks from ours by address, without a lock.
 */
#define AM_SAMPLE_MAX_LIVE	16
#define AM_SAMPLE_MAX_SIZE_KB	16

#define AM_STR_(x)	#x
#define AM_STR(x)	AM_STR_(x)	/* a number macro as a string */

/* mode= is not a number: it sets sample (options.c). */
#define AM_MODE_SYNTAX	"mode=full|sample"
#define AM_MODE_MEANING	"sample alone: sample=" AM_STR(AM_DEFAULT_SAMPLE)
/* log_path= is a path, not a number (options.c, log.c). */
#define AM_LOG_PATH_SYNTAX	"log_path=PATH"
#define AM_LOG_PATH_MEANING	"reports to PATH.PID (no ',' or ':')"

#define AM_OPTIONS(X)							\
	X(sample, unsigned long, 1, 1, 1000000000UL, false,		\
	  "sample=N (1..10^9)", "version one allocation in N (1: all)")	\
	X(sample_max_live, unsigned long, AM_SAMPLE_MAX_LIVE, 1, 1000000,	\
	  false, "sample_max_live=N (1..10^6)",				\
	  "sampled blocks live at once, at most (" AM_STR(AM_SAMPLE_MAX_LIVE) ")") \
	X(sample_max_size, size_t, (size_t)AM_SAMPLE_MAX_SIZE_KB << 10,	\
	  1, (size_t)AM_SAMPLE_MAX_SIZE_KB << 10, true,			\
	  "sample_max_size=BYTES[k] (1.." AM_STR(AM_SAMPLE_MAX_SIZE_KB) "k)", \
	  "largest request sampled (" AM_STR(AM_SAMPLE_MAX_SIZE_KB) "k)")	\
	X(quarantine, size_t, (size_t)AM_QUARANTINE_MB << 20,		\
	  0, 1UL << 40, true,						\
	  "quarantine=BYTES[k|m|g]",					\
	  "freed memory held back (" AM_STR(AM_QUARANTINE_MB) "m)")	\
	X(address_quarantine, size_t,					\
	  (size_t)AM_ADDRESS_QUARANTINE_GB << 30, 0, 1UL << 46, true,	\
	  "address_quarantine=BYTES[k|m|g]",				\
	  "freed large blocks' ranges kept PROT_NONE ("		\
	  AM_STR(AM_ADDRESS_QUARANTINE_GB) "g)")				\
	X(halt_on_error, bool, true, 0, 1, false,			\
	  "halt_on_error=0|1", "0: let the access happen, go on")	\
	X(abort_on_error, bool, false, 0, 1, false,			\
	  "abort_on_error=0|1", "abort() instead of exit")		\
	X(exitcode, int, AM_REPORT_EXIT, 1, 255, false,			\
	  "exitcode=1..255",						\
	  "exit status after a report (" AM_STR(AM_REPORT_EXIT) ")")	\
	X(stack, int, AM_STACK_MAX, 0, AM_STACK_MAX, false,		\
	  "stack=0.." AM_STR(AM_STACK_MAX),				\
	  "frames kept per malloc and free (" AM_STR(AM_STACK_MAX) ")")	\
	X(stats, bool, false, 0, 1, false,				\
	  "stats=0|1", "peak requested vs mapped at exit")		\
	X(detect_leaks, bool, false, 0, 1, false,			\
	  "detect_leaks=0|1",						\
	  "at exit, report blocks no pointer reaches; exitcode")	\
	X(syscall_signal, int, -1, 0, 1, false,				\
	  "syscall_signal=0|1", "signal mismatches in system calls (auto)") \
	X(seed, unsigned long, 0, 0, ~0UL, false,			\
	  "seed=N", "versions and sampling seed (0: random)")		\
	X(verbose, bool, false, 0, 1, false,				\
	  "verbose=0|1", "one line at start-up")			\
	X(symbolize, bool, true, 0, 1, false,				\
	  "symbolize=0|1", "stacks: file:line, all names (eu-addr2line)") \
	X(check_printf, bool, true, 0, 1, false,			\
	  "check_printf=0|1",						\
	  "full mode: check printf's %s strings (printf is slower)")

/*
 * How both readers of ADIMALLOC_OPTIONS (options.c, and adirun.c, which
 * must know the mode before it execs) walk it: the item at *@s runs to the
 * next ',' or ':'; its length is returned and *@s moves past it and its
 * separator.  An empty item has length 0.
 */
static inline size_t am_options_next(const char **s)
{
	size_t len = strcspn(*s, ",:");

	*s += len;
	if (**s)
		(*s)++;
	return len;
}

/*
 * The sampling rate after mode=@v (@vlen bytes), the rate so far being
 * @sample: full is 1; sample keeps a rate above 1 or takes the default.
 * 0: not a mode.
 */
static inline unsigned long am_mode_sample(const char *v, size_t vlen, unsigned long sample)
{
	if (vlen == 4 && !memcmp(v, "full", 4))
		return 1;
	if (vlen == 6 && !memcmp(v, "sample", 6))
		return sample > 1 ? sample : AM_DEFAULT_SAMPLE;
	return 0;
}

#endif
