// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * adirun: run a program under libadimalloc.so (the copy next to this
 * executable), with options on the command line instead of in the
 * environment, and a clear message when it cannot work.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "libadi.h"
#include "options_list.h"

static const char usage[] =
"Usage: adirun [OPTION...] [--] PROGRAM [ARG...]\n"
"Run PROGRAM with libadimalloc.so preloaded: every heap allocation gets\n"
"an ADI version of its own, so a heap overflow, underflow or use after free\n"
"traps at the faulting access and is reported (AddressSanitizer-style) on\n"
"stderr; double and invalid frees are reported too.  Needs a kernel with\n"
"x86 ADI (the lk417 series); only programs using the C library's malloc\n"
"(dynamically linked) are covered.\n"
"\n"
"  --full            version every allocation (default; slow: every heap\n"
"                    access through a versioned pointer costs a trap)\n"
"  --sample N        version one allocation in N at random; the others are\n"
"                    glibc's and cost nothing; at most sample_max_live are\n"
"                    versioned at once, none above sample_max_size (see\n"
"                    below).  On a kernel without ADI the program runs\n"
"                    unchecked, after one warning (full mode refuses:\n"
"                    exit 2)\n"
"  --continue        after a report, let the access happen and go on\n"
"                    (halt_on_error=0)\n"
"  --stats           print peak requested vs peak mapped memory at exit\n"
"  --options STR     more library options, e.g. quarantine=4m,stack=8\n"
"  --help            this text\n"
"\n"
"Options are passed to the library in ADIMALLOC_OPTIONS (appended to any\n"
"value already there), as name=value items separated by ',' or ':'.  An\n"
"unknown option or bad value stops the program with a message (exit\n"
"status " AM_STR(AM_CONFIG_EXIT) "):\n";

/* The library's options, from the one list of them (options_list.h). */
#define AM_OPTION_HELP(name, type, def, min, max, suffix, syntax, meaning) \
	{ syntax, meaning },
static const char *const options_help[][2] = {
	{ AM_MODE_SYNTAX, AM_MODE_MEANING },
	{ AM_LOG_PATH_SYNTAX, AM_LOG_PATH_MEANING },
	AM_OPTIONS(AM_OPTION_HELP)
};

static const char usage_tail[] =
"\n"
"adirun adds " ADI_GLIBC_HWCAPS ADI_GLIBC_HWCAPS_NO_AVX512 "\n"
"to GLIBC_TUNABLES (in front of any hwcaps value there): the kernel cannot\n"
"check glibc's AVX-512 (EVEX) string functions yet, so on a CPU with\n"
"AVX-512 glibc must use its AVX2 ones; elsewhere this changes nothing.\n"
"\n"
"Exit status: PROGRAM's own; " AM_STR(AM_REPORT_EXIT) " (or exitcode=N) after a report; "
AM_STR(AM_CONFIG_EXIT) " for a\n"
"usage error, a bad option or a kernel without ADI; 127 if PROGRAM cannot\n"
"be run.  See adimalloc/README.md.\n";

static void print_usage(FILE *f)
{
	size_t i;

	fputs(usage, f);
	for (i = 0; i < sizeof(options_help) / sizeof(options_help[0]); i++)
		fprintf(f, "  %-26s %s\n", options_help[i][0], options_help[i][1]);
	fputs(usage_tail, f);
}

static void __attribute__((noreturn)) fail(const char *msg)
{
	fprintf(stderr, "adirun: %s\n", msg);
	exit(2);
}

/*
 * Keep glibc off its AVX-512 string functions, which the kernel cannot
 * check yet (libadi.h): our mask goes first in every glibc.cpu.hwcaps item
 * of GLIBC_TUNABLES (glibc takes the last one), or in an item of its own.
 */
static void steer_glibc_off_avx512(void)
{
	const char *old = getenv("GLIBC_TUNABLES");
	size_t pfx = strlen(ADI_GLIBC_HWCAPS), n = old ? strlen(old) : 0;
	char *buf, *out, *item, *save;
	bool seen = false;

	/* Worst case: every item is a hwcaps item and grows by our mask. */
	buf = malloc((n + 1) * (strlen(ADI_GLIBC_HWCAPS_NO_AVX512) + 2) + pfx + 2);
	out = malloc(n + 1);
	if (!buf || !out)
		fail("out of memory");
	*buf = 0;
	strcpy(out, old ? old : "");
	for (item = strtok_r(out, ":", &save); item; item = strtok_r(NULL, ":", &save)) {
		if (*buf)
			strcat(buf, ":");
		if (!strncmp(item, ADI_GLIBC_HWCAPS, pfx)) {
			seen = true;
			strcat(buf, ADI_GLIBC_HWCAPS ADI_GLIBC_HWCAPS_NO_AVX512);
			if (item[pfx])
				strcat(strcat(buf, ","), item + pfx);
			continue;
		}
		strcat(buf, item);
	}
	if (!seen)
		strcat(strcat(buf, *buf ? ":" : ""),
		       ADI_GLIBC_HWCAPS ADI_GLIBC_HWCAPS_NO_AVX512);
	if (setenv("GLIBC_TUNABLES", buf, 1))
		fail("cannot set the environment");
	free(out);
	free(buf);
}

/*
 * Does @opts (ADIMALLOC_OPTIONS' syntax) ask for sampled mode?  Walked and
 * read as the library's parser does (options_list.h); a bad value is left
 * for the library to refuse.
 */
static bool wants_sampled(const char *opts)
{
	unsigned long sample = 1, n;
	const char *o = opts;

	while (o && *o) {
		const char *item = o;
		size_t len = am_options_next(&o);

		if (len > 5 && !strncmp(item, "mode=", 5)) {
			n = am_mode_sample(item + 5, len - 5, sample);
			sample = n ? n : sample;
		} else if (len > 7 && !strncmp(item, "sample=", 7)) {
			sample = strtoul(item + 7, NULL, 10);
		}
	}
	return sample > 1;
}

static void add_option(char *buf, size_t len, const char *opt)
{
	if (strlen(buf) + strlen(opt) + 2 > len)
		fail("options too long");
	if (*buf)
		strcat(buf, ",");
	strcat(buf, opt);
}

int main(int argc, char **argv)
{
	char opts[4096] = "", lib[PATH_MAX + 32], self[PATH_MAX], tmp[64], *slash;
	const char *old = getenv("ADIMALLOC_OPTIONS"), *pre;
	char *preload;
	ssize_t n;
	int i;

	if (old && strlen(old) < sizeof(opts))
		strcpy(opts, old);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			print_usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--full")) {
			add_option(opts, sizeof(opts), "mode=full");
		} else if (!strcmp(argv[i], "--sample") && i + 1 < argc) {
			char *end;
			unsigned long v = strtoul(argv[++i], &end, 10);

			if (!*argv[i] || *end || v < 1)
				fail("--sample needs a positive number");
			snprintf(tmp, sizeof(tmp), "sample=%lu", v);
			add_option(opts, sizeof(opts), tmp);
		} else if (!strcmp(argv[i], "--continue")) {
			add_option(opts, sizeof(opts), "halt_on_error=0");
		} else if (!strcmp(argv[i], "--stats")) {
			add_option(opts, sizeof(opts), "stats=1");
		} else if (!strcmp(argv[i], "--options") && i + 1 < argc) {
			add_option(opts, sizeof(opts), argv[++i]);
		} else {
			fprintf(stderr, "adirun: unknown option '%s' (see adirun --help)\n",
				argv[i]);
			return 2;
		}
	}
	if (i >= argc) {
		print_usage(stderr);
		return AM_CONFIG_EXIT;
	}
	/* ADIMALLOC_TEST_NO_ADI: pretend, so the test suite can check this
	 * message on a kernel that has ADI. */
	if (!getauxval(AT_ADI_BLKSZ) || getenv("ADIMALLOC_TEST_NO_ADI")) {
		/* Sampled mode is for production: run the program as it is. */
		if (wants_sampled(opts)) {
			fprintf(stderr, "adirun: this kernel has no ADI: running %s "
				"unchecked (sampled mode)\n", argv[i]);
			execvp(argv[i], argv + i);
			fprintf(stderr, "adirun: cannot run %s: %s\n", argv[i],
				strerror(errno));
			return 127;
		}
		fail("this kernel has no ADI (no AT_ADI_BLKSZ in the aux vector: "
		     "not an lk417 kernel with CONFIG_X86_ADI, or booted with adi=off); "
		     "adimalloc cannot check anything here");
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		fail("cannot find my own executable (/proc/self/exe)");
	self[n] = 0;
	slash = strrchr(self, '/');
	*slash = 0;
	snprintf(lib, sizeof(lib), "%s/libadimalloc.so", self);
	if (access(lib, R_OK)) {
		fprintf(stderr, "adirun: %s: %s (it must be next to adirun)\n", lib,
			strerror(errno));
		return 2;
	}
	pre = getenv("LD_PRELOAD");
	if (pre && *pre) {
		preload = malloc(strlen(lib) + strlen(pre) + 2);
		if (!preload)
			fail("out of memory");
		sprintf(preload, "%s:%s", lib, pre);
	} else {
		preload = lib;
	}
	if (setenv("LD_PRELOAD", preload, 1) || setenv("ADIMALLOC_OPTIONS", opts, 1))
		fail("cannot set the environment");
	steer_glibc_off_avx512();
	execvp(argv[i], argv + i);
	fprintf(stderr, "adirun: cannot run %s: %s\n", argv[i], strerror(errno));
	return 127;
}
