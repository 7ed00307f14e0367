// SPDX-License-Identifier: GPL-2.0
/*
 * Read-ahead ranges: glibc's string functions on strings that end at every
 * offset of a block whose neighbours carry another version.  With libc's
 * text registered nothing is reported and every result is right; without
 * it, glibc's read-ahead is reported.  Stores and the program's own loads
 * stay checked either way.
 */
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

/* Every function, every length 0..MAXLEN: counts of wrong and reported. */
static void sweep(int *wrong, int *reported, int *first_fn, size_t *first_len)
{
	*wrong = *reported = 0;
	*first_fn = -1;
	for (int fn = 0; fn < NR_FN; fn++)
		for (size_t len = 0; len <= MAXLEN; len++) {
			int r = one_call(fn, len);

			if (r == 0)
				(*wrong)++;
			if (r < 0 && (*reported)++ == 0) {
				*first_fn = fn;
				*first_len = len;
			}
		}
}

static void test_sweep(void)
{
	int wrong, reported, first_fn, n;
	size_t first_len = 0;
	long before;

	sweep(&wrong, &reported, &first_fn, &first_len);
	tap_ok(reported > 0, "without read-ahead ranges glibc's read-ahead is reported (%d of %d calls; first: %s, length %zu)",
	       reported, NR_FN * (MAXLEN + 1), first_fn >= 0 ? fn_name[first_fn] : "-", first_len);

	n = adi_register_libc();
	tap_ok(n > 0, "adi_register_libc() registers libc's text (%d range(s))", n);
	before = adi_readahead_count();
	sweep(&wrong, &reported, &first_fn, &first_len);
	tap_ok(reported == 0 && wrong == 0,
	       "with libc registered: %d calls of %d functions, lengths 0-%d, all right (%d wrong) and none reported (%d; first: %s, length %zu)",
	       NR_FN * (MAXLEN + 1), NR_FN, MAXLEN, wrong, reported,
	       first_fn >= 0 ? fn_name[first_fn] : "-", first_len);
	tap_ok(adi_readahead_count() > before, "the let-through counter rose (%ld -> %ld)",
	       before, adi_readahead_count());
}

static void test_still_checked(void)
{
	char *d, *s;
	int sig;

	adi_register_libc();
	adi_set_precise(true);
	s = lay_out(rs, 128, 200);
	fill_string(s, 150);

	/* The destination has room for 64 bytes; the next block is V_OTHER. */
	d = lay_out(rd, 128, 64);
	sig = TRY(strcpy(d, s));
	tap_ok(sig == SIGSEGV && caught.code == SEGV_ADIPERR &&
	       adi_ptr_version(caught.addr) == V_STR &&
	       (char *)adi_strip_ptr(caught.addr) >= rd + 192 &&
	       (char *)adi_strip_ptr(caught.addr) < rd + 128 + 151 && rd[192] == 0,
	       "store overflow through strcpy still reported, at an address past the room (%p)",
	       caught.addr);
	d = lay_out(rd, 128, 64);
	sig = TRY(memcpy(d, s, 100));
	tap_ok(sig == SIGSEGV && caught.code == SEGV_ADIPERR &&
	       (char *)adi_strip_ptr(caught.addr) >= rd + 192 && rd[192] == 0,
	       "store overflow through memcpy still reported (%p)", caught.addr);
	d = lay_out(rd, 128, 64);
	sig = TRY(memset(d, 'x', 100));
	tap_ok(sig == SIGSEGV && caught.code == SEGV_ADIPERR &&
	       (char *)adi_strip_ptr(caught.addr) >= rd + 192 && rd[192] == 0,
	       "store overflow through memset still reported (%p)", caught.addr);

	/* Our own code reading one byte past the string's block. */
	s = lay_out(rs, 128, 64);
	sig = TRY((void)*(volatile char *)(s + 64));
	tap_ok(sig == SIGSEGV && caught.code == SEGV_ADIPERR && caught.addr == s + 64,
	       "a load overflow by the program's own code is still reported");
	adi_set_precise(false);
}

static void test_strict(void)
{
	long before;
	int r = 1;
	size_t len;

	adi_register_libc();
	tap_ok(adi_set_readahead_strict(true) == 0, "strict mode on");
	before = adi_readahead_count();
	for (len = 0; len <= MAXLEN && r >= 0; len++)
		r = one_call(STRLEN, len);
	tap_ok(r < 0 && caught.code == SEGV_ADIPERR,
	       "strict mode reports glibc's read-ahead (strlen, length %zu)", len - 1);
	tap_ok(adi_readahead_count() > before, "and still counts it");
	tap_ok(adi_set_readahead_strict(false) == 0 && prctl(PR_ADI_SET_READAHEAD_STRICT, 2, 0, 0, 0) == -1 &&
	       errno == EINVAL, "strict mode off; a mode other than 0/1: EINVAL");
}

static char data_page[4096] __attribute__((aligned(4096)));

static void test_bad_input(void)
{
	char *text = (char *)&strlen;	/* somewhere in libc's text */
	int i, ok = 1;

	text = (char *)((unsigned long)text & ~4095UL);
	errno = 0;
	tap_ok(adi_add_readahead(text, 0) == -1 && errno == EINVAL, "add: zero length: EINVAL");
	tap_ok(prctl(PR_ADI_ADD_READAHEAD, (unsigned long)text, -4096UL, 0, 0) == -1 && errno == EINVAL,
	       "add: overflowing range: EINVAL");
	tap_ok(adi_add_readahead(data_page, 64) == -1 && errno == EINVAL,
	       "add: a range that is not executable (data): EINVAL");
	tap_ok(adi_add_readahead((void *)0x1000, 64) == -1 && errno == EINVAL,
	       "add: an unmapped range: EINVAL");
	tap_ok(prctl(PR_ADI_ADD_READAHEAD, (unsigned long)text, 64, 1, 0) == -1 && errno == EINVAL,
	       "add: non-zero unused argument: EINVAL");
	for (i = 0; i < PR_ADI_MAX_READAHEAD; i++)
		ok &= adi_add_readahead(text + 64 * i, 64) == 0;
	tap_ok(ok, "add: %d ranges accepted", PR_ADI_MAX_READAHEAD);
	tap_ok(adi_add_readahead(text + 64 * i, 64) == -1 && errno == ENOSPC,
	       "add: one range too many: ENOSPC");
	tap_ok(adi_clear_readahead(text + 64 * i, 64) == -1 && errno == EINVAL,
	       "clear: the refused range was never added (EINVAL)");
	tap_ok(adi_clear_readahead(text, 0) == -1 && errno == EINVAL,
	       "clear: start without length: EINVAL");
	for (ok = 1, i = 0; i < PR_ADI_MAX_READAHEAD; i++)
		ok &= adi_clear_readahead(text + 64 * i, 64) == 0;
	tap_ok(ok, "clear: each added range removed by its start and length");
	tap_ok(adi_add_readahead(text, 64) == 0 && adi_clear_readahead(NULL, 0) == 0 &&
	       adi_clear_readahead(text, 64) == -1, "clear (0, 0) removes every range");
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
	int status = -1;
	pid_t pid;

	adi_register_libc();
	pid = fork();
	if (pid == 0)
		_exit(readahead_reported() ? 1 : 0);
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "fork: the child keeps the read-ahead ranges");

	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "adi_readahead", "--after-exec", NULL);
		_exit(3);
	}
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "execve: the new program starts without ranges and with count 0 (status %d)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
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
	if (argc > 1 && !strcmp(argv[1], "--after-exec"))
		return adi_readahead_count() == 0 && readahead_reported() ? 0 : 1;

	tap_init();
	tap_group("sweep", test_sweep);
	tap_group("still-checked", test_still_checked);
	tap_group("strict", test_strict);
	tap_group("bad-input", test_bad_input);
	tap_group("inherit", test_inherit);
	return tap_done();
}
