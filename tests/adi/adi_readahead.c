// SPDX-License-Identifier: GPL-2.0
/*
 * Read-ahead ranges: glibc's string functions on strings that end at every
 * offset of a block whose neighbours carry another version.  With libc's
 * text registered nothing is reported and every result is right; without
 * it, glibc's read-ahead is reported.  Stores and the program's own loads
 * stay checked either way.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adi_test.h"

#define V_STR	1
#define V_OTHER	2
#define REGION	(3 * 4096)
#define MAXLEN	300

/* Three regions: s and t (sources), d (destination). */
static char *rs, *rt, *rd;

/* Version [p, p + len) V_STR and the rest of its region V_OTHER. */
static void *lay_out(char *region, size_t off, size_t len)
{
	must_set_version(region, REGION, V_OTHER);
	must_set_version(region + off, (len + 63) & ~63UL, V_STR);
	return adi_make_ptr(region + off, V_STR);
}

static void fill_string(char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = 'a' + i % 26;
	p[len] = 0;
}

enum fn { STRLEN, STRNLEN, STRCHR, STRRCHR, MEMCHR, RAWMEMCHR, STRCMP, STRNCMP,
	  STRCASECMP, STRCPY, STPCPY, STRCAT, STRDUP, STRSTR, MEMCMP, NR_FN };
static const char *const fn_name[NR_FN] = {
	"strlen", "strnlen", "strchr", "strrchr", "memchr", "rawmemchr", "strcmp",
	"strncmp", "strcasecmp", "strcpy", "stpcpy", "strcat", "strdup", "strstr", "memcmp",
};

/*
 * Call @fn on a string of @len bytes laid out as described; compare with
 * the same call on plain copies.  Returns 1 if right, 0 if wrong, and -1
 * if a signal was raised.
 */
static int one_call(enum fn fn, size_t len)
{
	char *s = lay_out(rs, 128, len + 1), *t = lay_out(rt, 128, len + 1);
	char *d = lay_out(rd, 128, len + 1);
	char plain_s[MAXLEN + 1];
	volatile long got = 0;
	long want = 0;
	int sig;

	fill_string(s, len);
	fill_string(t, len);
	fill_string(plain_s, len);
	d[0] = 0;
	switch (fn) {
	case STRLEN: want = strlen(plain_s); break;
	case STRNLEN: want = strnlen(plain_s, len + 100); break;
	case STRCHR: want = !!strchr(plain_s, 'z'); break;
	case STRRCHR: want = strrchr(plain_s, 'a') ? strrchr(plain_s, 'a') - plain_s : -1; break;
	case MEMCHR: want = !!memchr(plain_s, 'z', len + 1); break;
	case RAWMEMCHR: want = (char *)rawmemchr(plain_s, 0) - plain_s; break;
	case STRCMP: case STRNCMP: case STRCASECMP: case MEMCMP: want = 0; break;
	case STRCPY: case STPCPY: case STRCAT: case STRDUP: want = len; break;
	case STRSTR: want = 0; break;
	default: break;
	}
	sig = TRY({
		switch (fn) {
		case STRLEN: got = strlen(s); break;
		case STRNLEN: got = strnlen(s, len + 100); break;
		case STRCHR: got = !!strchr(s, 'z'); break;
		case STRRCHR: got = strrchr(s, 'a') ? strrchr(s, 'a') - s : -1; break;
		case MEMCHR: got = !!memchr(s, 'z', len + 1); break;
		case RAWMEMCHR: got = (char *)rawmemchr(s, 0) - s; break;
		case STRCMP: got = strcmp(s, t) != 0; break;
		case STRNCMP: got = strncmp(s, t, len + 50) != 0; break;
		case STRCASECMP: got = strcasecmp(s, t) != 0; break;
		case MEMCMP: got = memcmp(s, t, len + 1) != 0; break;
		case STRCPY: strcpy(d, s); got = strlen(adi_strip_ptr(d)); break;
		case STPCPY: got = stpcpy(d, s) - d; break;
		case STRCAT: strcat(d, s); got = strlen(adi_strip_ptr(d)); break;
		case STRDUP: { char *c = strdup(s); got = strlen(c); free(c); break; }
		case STRSTR: got = strstr(s, "zz") != NULL; break;
		default: break;
		}
	});
	if (sig)
		return -1;
	if (fn == STRCPY || fn == STPCPY || fn == STRCAT)
		if (memcmp(adi_strip_ptr(d), plain_s, len + 1))
			return 0;
	return got == want;
}

/*
 * @got in [@lo, @hi), one claim; @hi LONG_MAX: no upper bound.  In the
 * style of tap.h's tap_eq_long(): the TAP line ends in what was seen and
 * what was wanted, so that a failure in the guest says which condition
 * failed without a rerun.
 */
__attribute__((format(printf, 4, 5)))
static int expect_range(long got, long lo, long hi, const char *fmt, ...)
{
	char tail[96];
	va_list ap;
	int ok;

	if (hi == LONG_MAX)
		snprintf(tail, sizeof(tail), "got %ld, want at least %ld", got, lo);
	else
		snprintf(tail, sizeof(tail), "got %ld, want %ld..%ld", got, lo, hi - 1);
	va_start(ap, fmt);
	ok = tap_ok_tail(got >= lo && got < hi, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/* What a sweep saw: counts, and the first call of each kind. */
struct sweep {
	int wrong, reported;
	char first_wrong[48], first_reported[48];
};

/* Every function, every length 0..MAXLEN: counts of wrong and reported. */
static void sweep(struct sweep *sw)
{
	*sw = (struct sweep){ .first_wrong = "none", .first_reported = "none" };
	for (int fn = 0; fn < NR_FN; fn++)
		for (size_t len = 0; len <= MAXLEN; len++) {
			int r = one_call(fn, len);

			if (r == 0 && sw->wrong++ == 0)
				snprintf(sw->first_wrong, sizeof(sw->first_wrong),
					 "%s, length %zu", fn_name[fn], len);
			if (r < 0 && sw->reported++ == 0)
				snprintf(sw->first_reported, sizeof(sw->first_reported),
					 "%s, length %zu", fn_name[fn], len);
		}
}

#define CALLS	(NR_FN * (MAXLEN + 1))

static void test_sweep(void)
{
	struct sweep sw;
	long before;
	int n;

	sweep(&sw);
	tap_ok(sw.reported > 0,
	       "no read-ahead ranges: glibc's read-ahead is reported (%d of %d calls; first: %s)",
	       sw.reported, CALLS, sw.first_reported);

	n = adi_register_libc();
	tap_ok(n >= 2, "adi_register_libc() registers libc's and ld.so's text (%d range(s), want 2 or more)",
	       n);
	before = adi_readahead_count();
	sweep(&sw);
	/* Every function of fn_name[] at every length 0..MAXLEN. */
	tap_eq_long(sw.wrong, 0, "with libc registered: wrong results in %d calls (first: %s)",
		    CALLS, sw.first_wrong);
	tap_eq_long(sw.reported, 0, "with libc registered: reports in %d calls (first: %s)",
		    CALLS, sw.first_reported);
	tap_grew(before, adi_readahead_count(), "the let-through counter rose");
}

/*
 * A store from the 64-byte room at rd + 128 into the V_OTHER block after
 * it, just run by TRY(): reported, at an offset past the room (below @end;
 * LONG_MAX: no bound), and the first byte past the room left unwritten.
 */
static void expect_store_overflow(const char *fn, long end)
{
	long off = (long)((uintptr_t)adi_strip_ptr(caught.addr) - (uintptr_t)rd);

	adi_expect_perr("store overflow through %s still reported", fn);
	expect_range(off, 192, end, "store overflow through %s: reported address's offset in rd",
		     fn);
	tap_eq_long(rd[192], 0, "store overflow through %s: the byte past the room", fn);
}

static void test_still_checked(void)
{
	char *d, *s;

	adi_register_libc();
	adi_set_precise(true);
	s = lay_out(rs, 128, 200);
	fill_string(s, 150);

	/* The destination has room for 64 bytes; the next block is V_OTHER. */
	d = lay_out(rd, 128, 64);
	TRY(strcpy(d, s));
	/* The string's 151 bytes go to rd + 128..278: the fault is among them. */
	expect_store_overflow("strcpy", 128 + 151);
	tap_eq_long(adi_ptr_version(caught.addr), V_STR,
		    "store overflow through strcpy: the reported address's version");
	d = lay_out(rd, 128, 64);
	TRY(memcpy(d, s, 100));
	expect_store_overflow("memcpy", LONG_MAX);
	d = lay_out(rd, 128, 64);
	TRY(memset(d, 'x', 100));
	expect_store_overflow("memset", LONG_MAX);

	/* Our own code reading one byte past the string's block. */
	s = lay_out(rs, 128, 64);
	TRY((void)*(volatile char *)(s + 64));
	adi_expect_perr("a load overflow by the program's own code is still reported");
	tap_eq_hex((uintptr_t)caught.addr, (uintptr_t)(s + 64),
		   "a load overflow by the program's own code: the address");
	adi_set_precise(false);
}

static void test_strict(void)
{
	const char *what = "strict mode reports glibc's read-ahead (strlen)";
	long before, ret;
	int r = 1;
	size_t len;

	adi_register_libc();
	tap_eq_long(adi_set_readahead_strict(true), 0, "strict mode on");
	before = adi_readahead_count();
	for (len = 0; len <= MAXLEN && r >= 0; len++)
		r = one_call(STRLEN, len);
	/*
	 * 'caught' is the last call's: the signal it raised when r < 0, else
	 * none (TRY() clears it), which fails as "got no signal".
	 */
	if (r < 0)
		adi_expect_perr("%s: the report at length %zu", what, len - 1);
	else
		adi_expect_perr("%s: at lengths 0-%d", what, MAXLEN);
	tap_grew(before, adi_readahead_count(), "and still counts it");
	tap_eq_long(adi_set_readahead_strict(false), 0, "strict mode off");
	ret = prctl(PR_ADI_SET_READAHEAD_STRICT, 2, 0, 0, 0);
	tap_errno(ret, EINVAL, "strict mode: a mode other than 0/1 is refused");
}

static char data_page[4096] __attribute__((aligned(4096)));

static void test_bad_input(void)
{
	char *text = (char *)&strlen;	/* somewhere in libc's text */
	int i, n;
	long ret;

	text = (char *)((unsigned long)text & ~4095UL);
	errno = 0;
	/* Each tap_errno() right after its call: it reads that call's errno. */
	ret = adi_add_readahead(text, 0);
	tap_errno(ret, EINVAL, "add: zero length is refused");
	ret = prctl(PR_ADI_ADD_READAHEAD, (unsigned long)text, -4096UL, 0, 0);
	tap_errno(ret, EINVAL, "add: an overflowing range is refused");
	ret = adi_add_readahead(data_page, 64);
	tap_errno(ret, EINVAL, "add: a range that is not executable (data) is refused");
	ret = adi_add_readahead((void *)0x1000, 64);
	tap_errno(ret, EINVAL, "add: an unmapped range is refused");
	ret = prctl(PR_ADI_ADD_READAHEAD, (unsigned long)text, 64, 1, 0);
	tap_errno(ret, EINVAL, "add: a non-zero unused argument is refused");
	for (n = 0, i = 0; i < PR_ADI_MAX_READAHEAD; i++)
		n += adi_add_readahead(text + 64 * i, 64) == 0;
	tap_eq_long(n, PR_ADI_MAX_READAHEAD, "add: ranges accepted up to the limit");
	ret = adi_add_readahead(text + 64 * i, 64);
	tap_errno(ret, ENOSPC, "add: one range too many is refused");
	ret = adi_clear_readahead(text + 64 * i, 64);
	tap_errno(ret, EINVAL, "clear: the refused range was never added");
	ret = adi_clear_readahead(text, 0);
	tap_errno(ret, EINVAL, "clear: a start without a length is refused");
	for (n = 0, i = 0; i < PR_ADI_MAX_READAHEAD; i++)
		n += adi_clear_readahead(text + 64 * i, 64) == 0;
	tap_eq_long(n, PR_ADI_MAX_READAHEAD,
		    "clear: added ranges removed each by its start and length");
	tap_eq_long(adi_add_readahead(text, 64), 0, "clear (0, 0): one range added back for it");
	tap_eq_long(adi_clear_readahead(NULL, 0), 0, "clear (0, 0) succeeds");
	/* EINVAL, as for the range never added above: nothing to clear. */
	ret = adi_clear_readahead(text, 64);
	tap_errno(ret, EINVAL,
		  "clear (0, 0) removed every range: clearing the range added before it fails");
}

/* A call known to read ahead: strlen of a string ending early in a block. */
static int readahead_reported(void)
{
	for (size_t len = 0; len <= MAXLEN; len++)
		if (one_call(STRLEN, len) < 0)
			return 1;
	return 0;
}

static void test_inherit(void)
{
	pid_t pid;

	adi_register_libc();
	pid = fork();
	if (pid == 0)
		_exit(readahead_reported() ? 1 : 0);
	/* Checks fork() and waitpid() too: no stale status can pass. */
	tap_wait_exit0(pid, "fork: the child keeps the read-ahead ranges (%s)",
		       "exit 1: read-ahead reported");

	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "adi_readahead", "--after-exec", NULL);
		_exit(3);
	}
	tap_wait_exit0(pid, "execve: the new program starts without ranges and with count 0 (%s)",
		       "exit 1: count not 0, 2: read-ahead not reported, 3: exec failed");
}

static void map_regions(void)
{
	rs = adi_map(REGION);
	rt = adi_map(REGION);
	rd = adi_map(REGION);
}

int main(int argc, char **argv)
{
	map_regions();
	if (argc > 1 && !strcmp(argv[1], "--after-exec")) {
		/* The exit status says which failed (test_inherit's message). */
		if (adi_readahead_count() != 0)
			return 1;
		return readahead_reported() ? 0 : 2;
	}

	tap_init();
	tap_group("sweep", test_sweep);
	tap_group("still-checked", test_still_checked);
	tap_group("strict", test_strict);
	tap_group("bad-input", test_bad_input);
	tap_group("inherit", test_inherit);
	return tap_done();
}
