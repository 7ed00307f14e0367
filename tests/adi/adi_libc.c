// SPDX-License-Identifier: GPL-2.0
/*
 * Versioned memory through real code: a linked list built and walked by
 * code compiled at -O0 and -O2, and glibc's string functions (the AVX2 or
 * SSE variants this CPU selects) on versioned buffers from 1 byte to
 * 1 MiB.  Each buffer and the slack around it carry one version, since
 * glibc reads ahead of its data (see the read-ahead ranges of the design).
 */
#include <stdio.h>
#include <stdlib.h>

#include "adi_test.h"

struct node;
struct node *list_O0_build(void *base, int n);
uint64_t list_O0_sum(const struct node *head);
struct node *list_O2_build(void *base, int n);
uint64_t list_O2_sum(const struct node *head);

#define NODES 200

/* The list's sum, unless the walk that computed it raised a signal. */
static void expect_sum(int sig, uint64_t got, uint64_t want, const char *what)
{
	if (sig)
		tap_ok(0, "%s: the sum: not run: the walk raised signal %d, want none", what, sig);
	else
		tap_eq_long((long)got, (long)want, "%s: the sum", what);
}

static void test_list(void)
{
	char *mem = adi_map(NODES * 64);
	uint64_t want = 0, got = 0;
	struct node *head;
	int i, sig;

	for (i = 0; i < NODES; i++) {
		must_set_version(mem + i * 64, 64, 1 + i % 14);
		want += (uint64_t)i * 3;
	}
	sig = TRY(head = list_O0_build(mem, NODES); got = list_O0_sum(head));
	adi_expect_no_signal(sig, "linked list, -O0 code: built and summed without a signal");
	expect_sum(sig, got, want, "linked list, -O0 code");
	sig = TRY(head = list_O2_build(mem, NODES); got = list_O2_sum(head));
	adi_expect_no_signal(sig, "linked list, -O2 code: built and summed without a signal");
	expect_sum(sig, got, want, "linked list, -O2 code");
	/* Re-version one node: walking into it with the old pointer is caught. */
	must_set_version(mem + 100 * 64, 64, 15 - 100 % 14);
	TRY(got = list_O2_sum(head));
	adi_expect_perr("a stale pointer to a re-versioned node is caught: SIGSEGV SEGV_ADIPERR");
	tap_eq_hex((uintptr_t)adi_strip_ptr(caught.addr) & ~63UL, (uintptr_t)(mem + 100 * 64),
		   "a stale pointer to a re-versioned node is caught at that node: si_addr's "
		   "block, unversioned");
}

/* glibc on a versioned buffer of @n bytes at the start of a versioned area. */
static int libc_round(size_t n, char *area, char *other)
{
	char *p = adi_make_ptr(area, 3), *q = adi_make_ptr(other, 3);
	volatile int wrong = 0;		/* the steps that went wrong, a bit each */
	int sig;

	sig = TRY({
		memset(p, 'a', n);
		p[n - 1] = 0;
		wrong |= (strlen(p) != n - 1) << 0;
		memcpy(q, p, n);
		wrong |= (memcmp(p, q, n) != 0) << 1;
		q[n / 2] ^= 1;
		wrong |= !(n < 2 || memcmp(p, q, n) != 0) << 2;
		strcpy(q, p);
		wrong |= (memcmp(p, q, n) != 0) << 3;
	});
	if (sig)
		tap_diag("size %zu: signal %d code %d at %p", n, sig, caught.code, caught.addr);
	if (wrong)
		tap_diag("size %zu: wrong result of%s%s%s%s", n, wrong & 1 ? " strlen" : "",
			 wrong & 2 ? " memcpy/memcmp" : "", wrong & 4 ? " memcmp after a change" : "",
			 wrong & 8 ? " strcpy/memcmp" : "");
	return !sig && !wrong;
}

static void test_libc(void)
{
	static const size_t sizes[] = { 1, 2, 7, 63, 64, 65, 127, 200, 1000, 4095, 4096,
					4097, 65536, 100000, 1 << 20 };
	size_t span = (1 << 20) + 8192;
	char *a = adi_map(span), *b = adi_map(span);
	int ok = 1;

	must_set_version(a, span, 3);
	must_set_version(b, span, 3);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		ok &= libc_round(sizes[i], a, b);
	tap_ok(ok, "memset/strlen/memcpy/memcmp/strcpy through versioned pointers, 1 B to 1 MiB");

	/* memcpy's destination overflowing into a block of another version. */
	must_set_version(b + 4096, 64, 4);
	b[4096] = 'Q';		/* an unversioned pointer: not checked */
	{
		char *q = adi_make_ptr(b, 3);
		int sig = TRY(memcpy(q + 4000, adi_make_ptr(a, 3), 200));

		adi_expect_caught(sig == SIGSEGV &&
			      (caught.code == SEGV_ADIDERR || caught.code == SEGV_ADIPERR),
			      "SIGSEGV code SEGV_ADIDERR or SEGV_ADIPERR",
			      "memcpy overflowing into a differently versioned block is caught");
		tap_eq_hex((unsigned char)b[4096], 'Q', "memcpy overflowing: the other block's "
			   "first byte is unchanged (want 'Q')");
	}
	{
		char *p = adi_make_ptr(b, 3);
		int sig = TRY(memset(p + 4000, 'z', 200));

		adi_expect_caught(sig == SIGSEGV, "SIGSEGV, any code", "memset overflowing likewise: "
			      "caught");
		tap_eq_hex((unsigned char)b[4096], 'Q', "memset overflowing: the other block's "
			   "first byte is unchanged (want 'Q')");
	}
}

/*
 * On a CPU with AVX-512, glibc's string functions are EVEX code the kernel
 * cannot check yet: libadi refuses to turn ADI on there unless GLIBC_TUNABLES
 * steered glibc off it (libadi.h).  TCG has no AVX-512: pretend.
 */
static void test_avx512_libc(void)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int rc, err;

	if (p == MAP_FAILED) {
		tap_diag("mmap: %s", strerror(errno));
		exit(1);
	}
	tap_diag("glibc here uses AVX-512: %d (TCG offers none)", adi_libc_uses_avx512());
	setenv("ADI_TEST_LIBC_AVX512", "1", 1);
	errno = 0;
	rc = adi_enable(p, 4096, PROT_READ | PROT_WRITE);
	tap_errno(rc, EOPNOTSUPP, "glibc on AVX-512 (pretended): adi_enable() refuses");
	rc = smaps_has_ad(p);
	tap_ok(rc == 0, "... and the range did not become ADI memory: smaps 'ad' got %d, "
	       "want 0", rc);
	setenv("ADI_TEST_LIBC_AVX512", "0", 1);
	rc = adi_enable(p, 4096, PROT_READ | PROT_WRITE);
	err = errno;
	tap_eq_long(rc, 0, "glibc steered off AVX-512 (pretended): adi_enable() succeeds (%s)",
		    rc ? tap_errname(err) : "no errno");
	tap_eq_long(smaps_has_ad(p), 1, "glibc steered off AVX-512 (pretended): the range is "
		    "ADI memory: smaps 'ad'");
	unsetenv("ADI_TEST_LIBC_AVX512");
	munmap(p, 4096);
}

int main(void)
{
	tap_init();
	tap_group("list", test_list);
	tap_group("libc", test_libc);
	tap_group("avx512-libc", test_avx512_libc);
	return tap_done();
}
