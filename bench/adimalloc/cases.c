// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's own heap bugs, one per run, for every tool alike:
 *     cases            the names, one a line
 *     cases --describe name, a tab, what the case does
 *     cases NAME       runs that case
 * tests/adimalloc/bugs.c plants the suite's bugs at sizes that are
 * multiples of 16 (and underflows by 8 or more): the granule adimalloc
 * versions.  These probe the edges a granule hides: odd sizes, one byte
 * past or before, libc functions that read or write past the end, a stale
 * pointer used long after its free.  "ok" commits none of them while
 * doing the same kinds of work, for false positives.
 *
 * Right before the bug, stderr gets "cases: NAME: bug next: WHAT": a tool
 * report before that line is not a catch of the planted bug (guest.sh
 * checks the order).  After the bug, stdout gets "cases: NAME: done" when
 * the program went on.  Every case frees all it allocated (but "leak"), so
 * a leak checker that is on finds nothing elsewhere.
 *
 * Built twice by the Makefile: plain (the allocators and memcheck replace
 * malloc underneath it) and with -fsanitize=address (the reference: what
 * a compiler-instrumented checker catches).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static const char *cur;		/* the running case's name */
static volatile char sink;
static volatile int isink;
static volatile size_t zsink;

/*
 * The compiler must not see where a pointer or a size comes from, or it
 * may fold, move or drop a planted access (and warn about it at build
 * time): these pass a value through an empty asm it cannot look into.
 */
static void *hide(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

static size_t hide_n(size_t n)
{
	__asm__ volatile("" : "+r"(n));
	return n;
}

/* One byte at p[i], as a real load or store (volatile). */
static void wr(char *p, long i, char v)
{
	((volatile char *)hide(p))[i] = v;
}

static char rd(const char *p, long i)
{
	return ((const volatile char *)hide((void *)p))[i];
}

static void bug_next(const char *what)
{
	fprintf(stderr, "cases: %s: bug next: %s\n", cur, what);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(hide_n(n));

	if (!p) {
		perror("cases: malloc");
		exit(3);
	}
	return hide(p);
}

/* A string of n - 1 'c's and its NUL, built through the heap pointer. */
static char *heap_string(size_t n, char c)
{
	char *p = xmalloc(n);

	memset(p, c, n - 1);
	p[n - 1] = 0;
	return p;
}

/* --- overflows and underflows by a few bytes ------------------------- */

NOINLINE static void c_ovf13_write(void)
{
	char *p = xmalloc(13);

	memset(p, 'a', 13);
	bug_next("write p[13] of malloc(13)");
	wr(p, 13, 'x');
	free(p);
}

NOINLINE static void c_ovf13_read(void)
{
	char *p = xmalloc(13);

	memset(p, 'a', 13);
	bug_next("read p[13] of malloc(13)");
	sink = rd(p, 13);
	free(p);
}

NOINLINE static void c_ovf_int40(void)
{
	int *a = xmalloc(40 * sizeof(int));

	memset(a, 0, 40 * sizeof(int));
	bug_next("write a[40] of int a[40] (malloc(40 * sizeof(int)))");
	((volatile int *)hide(a))[40] = 1;
	free(a);
}

NOINLINE static void c_udf4_read(void)
{
	int *a = xmalloc(40 * sizeof(int));

	memset(a, 0, 40 * sizeof(int));
	bug_next("read a[-1] of int a[40]: 4 bytes before the block");
	isink = ((volatile int *)hide(a))[-1];
	free(a);
}

NOINLINE static void c_udf1_read(void)
{
	char *p = xmalloc(13);

	memset(p, 'a', 13);
	bug_next("read p[-1] of malloc(13)");
	sink = rd(p, -1);
	free(p);
}

/*
 * A 0 written one byte before the block, as a reverse loop's terminator
 * would: a 0 there leaves glibc's chunk size as it was (its top byte), so
 * glibc is not made to crash by the value; only the write is wrong.
 */
NOINLINE static void c_udf1_write(void)
{
	char *p = xmalloc(13);

	memset(p, 'a', 13);
	bug_next("write 0 at p[-1] of malloc(13)");
	wr(p, -1, 0);
	free(p);
}

/* One byte past the end of a block of n bytes, written. */
static void ovf1(size_t n)
{
	char *p = xmalloc(n);
	char what[64];

	memset(p, 'o', n);
	snprintf(what, sizeof(what), "write p[%zu] of malloc(%zu)", n, n);
	bug_next(what);
	wr(p, (long)hide_n(n), 'x');
	free(p);
}

NOINLINE static void c_ovf1_1(void) { ovf1(1); }
NOINLINE static void c_ovf1_7(void) { ovf1(7); }
NOINLINE static void c_ovf1_15(void) { ovf1(15); }
NOINLINE static void c_ovf1_17(void) { ovf1(17); }
NOINLINE static void c_ovf1_33(void) { ovf1(33); }
NOINLINE static void c_ovf1_100(void) { ovf1(100); }
NOINLINE static void c_ovf1_4095(void) { ovf1(4095); }
NOINLINE static void c_ovf1_4097(void) { ovf1(4097); }
NOINLINE static void c_ovf1_1m1(void) { ovf1((1 << 20) + 1); }

/* --- use after free -------------------------------------------------- */

/*
 * Many frees between the free and the stale access: 32768 blocks of
 * 1 KiB (32 MiB) allocated and freed, more than adimalloc's quarantine
 * (1 MiB) and memcheck's freed-block queue (--freelist-vol, 20 MB), less
 * than ASan's (256 MiB): a tool that has recycled the block's memory may
 * no longer know it was freed.  Every churn block is written once, so the
 * memory is really used.
 */
static void churn(void)
{
	for (int i = 0; i < 32768; i++) {
		char *q = xmalloc(1024);

		wr(q, i % 1024, 'c');
		free(q);
	}
}

/*
 * A 40-byte block, filled and freed; @late: then 32 MiB of churn.  The
 * stale accesses below are at offset 20: glibc keeps its tcache link and
 * key in the first 16 bytes of a freed chunk, and a write there would make
 * glibc itself crash later, which is not what is measured.
 */
static char *freed_block(int late)
{
	char *p = xmalloc(40);

	memset(p, 'u', 40);
	free(p);
	if (late)
		churn();
	return p;
}

NOINLINE static void c_uaf_read(void)
{
	char *p = freed_block(0);

	bug_next("read p[20] of a 40-byte block right after its free");
	sink = rd(p, 20);
}

NOINLINE static void c_uaf_write(void)
{
	char *p = freed_block(0);

	bug_next("write p[20] of a 40-byte block right after its free");
	wr(p, 20, 'x');
}

NOINLINE static void c_uaf_read_late(void)
{
	char *p = freed_block(1);

	bug_next("read p[20] of a 40-byte block after 32 MiB of later frees");
	sink = rd(p, 20);
}

NOINLINE static void c_uaf_write_late(void)
{
	char *p = freed_block(1);

	bug_next("write p[20] of a 40-byte block after 32 MiB of later frees");
	wr(p, 20, 'x');
}

/* --- allocator errors ------------------------------------------------ */

NOINLINE static void c_double_free(void)
{
	char *p = xmalloc(40);

	memset(p, 'd', 40);
	free(p);
	bug_next("free the same 40-byte block twice");
	free(hide(p));
}

NOINLINE static void c_invalid_free_interior(void)
{
	char *p = xmalloc(64);

	memset(p, 0, 64);
	bug_next("free(p + 16) of a 64-byte block");
	free((char *)hide(p) + 16);
	free(p);
}

NOINLINE static void c_invalid_free_stack(void)
{
	char local[64];

	memset(local, 0, sizeof(local));
	bug_next("free() of a stack array");
	free(hide(local));
	sink = local[0];
}

/* --- libc functions past the end ------------------------------------ */

NOINLINE static void c_memcpy_read(void)
{
	char *src = xmalloc(10), dst[20];

	memset(src, 's', 10);
	bug_next("memcpy(dst, malloc(10), 20): reads 10 bytes past");
	memcpy(dst, src, hide_n(20));
	sink = rd(dst, 19);
	free(src);
}

/* 13 bytes of 'a' and no NUL: the scan runs past the end. */
NOINLINE static void c_strlen_read(void)
{
	char *p = xmalloc(13);

	memset(p, 'a', 13);
	bug_next("strlen() of an unterminated malloc(13)");
	zsink = strlen(hide(p));
	free(p);
}

NOINLINE static void c_printf_read(void)
{
	char *p = xmalloc(13);

	memset(p, 'a', 13);
	bug_next("printf(\"%s\") of an unterminated malloc(13)");
	printf("cases: printf_read: [%s]\n", (char *)hide(p));
	fflush(stdout);
	free(p);
}

/* The classic: malloc(strlen(s)) and strcpy: the NUL lands at p[8]. */
NOINLINE static void c_strcpy_nul(void)
{
	const char *s = hide("12345678");
	char *p = xmalloc(8);

	bug_next("strcpy() of an 8-character string into malloc(8)");
	strcpy(p, s);
	sink = rd(p, 7);
	free(p);
}

NOINLINE static void c_memset_over(void)
{
	char *p = xmalloc(13);

	bug_next("memset(malloc(13), 0, 14)");
	memset(p, 0, hide_n(14));
	free(p);
}

/*
 * read() of 16 bytes into malloc(13) with 16 waiting in a pipe: the kernel
 * writes 3 bytes past the end, no user-space instruction touches them.
 */
NOINLINE static void c_read_over(void)
{
	char *p = xmalloc(13), data[16];
	int fds[2];
	ssize_t n;

	memset(data, 'r', sizeof(data));
	if (pipe(fds) || write(fds[1], data, sizeof(data)) != (ssize_t)sizeof(data)) {
		perror("cases: pipe");
		exit(3);
	}
	bug_next("read(fd, malloc(13), 16) with 16 bytes waiting");
	n = read(fds[0], p, hide_n(16));
	printf("cases: read_over: read returned %zd\n", n);
	close(fds[0]);
	close(fds[1]);
	free(p);
}

/* --- leak ------------------------------------------------------------ */

static void *volatile lost;

NOINLINE static void leak_one(void)
{
	lost = xmalloc(100);
	memset(lost, 'l', 100);
	lost = NULL;
}

/* Dead frames below main's may still hold the lost pointer: zero them. */
NOINLINE static void scrub_stack(void)
{
	volatile char junk[16 * 1024];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0;
}

/* Caught only by a tool whose leak check at exit is on (guest.sh turns
 * on each tool's own). */
NOINLINE static void c_leak(void)
{
	bug_next("lose the only pointer to a 100-byte block, exit");
	leak_one();
	scrub_stack();
}

/* --- no bug ---------------------------------------------------------- */

/*
 * The same kinds of work as the cases above, each within bounds: odd and
 * large sizes written to their last byte and read back, the libc calls
 * with the right sizes, read() of exactly the block, realloc, every block
 * freed once.  Any report here is a false positive.
 */
NOINLINE static void c_ok(void)
{
	static const size_t sizes[] = { 1, 7, 13, 15, 17, 33, 100, 160, 4095,
					4097, (1 << 20) + 1 };
	char *p, *q, dst[20];
	int fds[2];
	unsigned sum = 0;

	bug_next("none (a correct run)");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];

		p = xmalloc(n);
		memset(p, 'k', n);
		wr(p, (long)n - 1, 'z');
		sum += (unsigned char)rd(p, 0) + (unsigned char)rd(p, (long)n - 1);
		free(p);
	}
	p = xmalloc(40);
	memset(p, 'u', 40);
	sum += (unsigned char)rd(p, 20) + (unsigned char)rd(p, 39);
	free(p);
	p = xmalloc(10);
	memset(p, 's', 10);
	memcpy(dst, p, hide_n(10));
	free(p);
	p = heap_string(13, 'a');
	zsink = strlen(p);
	printf("cases: ok: [%s]\n", p);
	q = xmalloc(13);
	strcpy(q, p);
	memset(q, 0, hide_n(13));
	free(q);
	free(p);
	p = xmalloc(16);
	if (pipe(fds) || write(fds[1], dst, 10) != 10 || read(fds[0], p, 10) != 10) {
		perror("cases: pipe");
		exit(3);
	}
	close(fds[0]);
	close(fds[1]);
	q = realloc(p, 4097);
	if (!q)
		exit(3);
	wr(q, 4096, 'r');
	free(q);
	printf("cases: ok: checksum %u\n", sum);
}

static const struct {
	const char *name;
	void (*fn)(void);
	const char *what;
} cases[] = {
	{ "ok", c_ok, "no bug: the same kinds of work within bounds (false positives)" },
	{ "ovf13_write", c_ovf13_write, "write p[13] of malloc(13)" },
	{ "ovf13_read", c_ovf13_read, "read p[13] of malloc(13)" },
	{ "ovf_int40", c_ovf_int40, "write a[40] of malloc(40 * sizeof(int))" },
	{ "udf4_read", c_udf4_read, "read a[-1] of malloc(40 * sizeof(int)): 4 bytes before" },
	{ "udf1_read", c_udf1_read, "read p[-1] of malloc(13)" },
	{ "udf1_write", c_udf1_write, "write 0 at p[-1] of malloc(13)" },
	{ "ovf1_1", c_ovf1_1, "write p[1] of malloc(1)" },
	{ "ovf1_7", c_ovf1_7, "write p[7] of malloc(7)" },
	{ "ovf1_15", c_ovf1_15, "write p[15] of malloc(15)" },
	{ "ovf1_17", c_ovf1_17, "write p[17] of malloc(17)" },
	{ "ovf1_33", c_ovf1_33, "write p[33] of malloc(33)" },
	{ "ovf1_100", c_ovf1_100, "write p[100] of malloc(100)" },
	{ "ovf1_4095", c_ovf1_4095, "write p[4095] of malloc(4095)" },
	{ "ovf1_4097", c_ovf1_4097, "write p[4097] of malloc(4097)" },
	{ "ovf1_1m1", c_ovf1_1m1, "write p[N] of malloc(N), N = 1 MiB + 1" },
	{ "uaf_read", c_uaf_read, "read a 40-byte block right after its free" },
	{ "uaf_write", c_uaf_write, "write a 40-byte block right after its free" },
	{ "uaf_read_late", c_uaf_read_late, "read a freed 40-byte block after 32 MiB of later frees" },
	{ "uaf_write_late", c_uaf_write_late, "write a freed 40-byte block after 32 MiB of later frees" },
	{ "double_free", c_double_free, "free a 40-byte block twice" },
	{ "invalid_free_int", c_invalid_free_interior, "free(p + 16) of a 64-byte block" },
	{ "invalid_free_stk", c_invalid_free_stack, "free() of a stack array" },
	{ "memcpy_read", c_memcpy_read, "memcpy(dst, malloc(10), 20)" },
	{ "strlen_read", c_strlen_read, "strlen() of an unterminated malloc(13)" },
	{ "printf_read", c_printf_read, "printf(\"%s\") of an unterminated malloc(13)" },
	{ "strcpy_nul", c_strcpy_nul, "strcpy() of 8 characters into malloc(8) (the NUL past the end)" },
	{ "memset_over", c_memset_over, "memset(malloc(13), 0, 14)" },
	{ "read_over", c_read_over, "read(fd, malloc(13), 16), 16 bytes waiting (the kernel writes past)" },
	{ "leak", c_leak, "the only pointer to a 100-byte block lost (leak checkers on)" },
};

int main(int argc, char **argv)
{
	const size_t n = sizeof(cases) / sizeof(cases[0]);

	if (argc < 2 || !strcmp(argv[1], "--describe")) {
		for (size_t i = 0; i < n; i++)
			if (argc < 2)
				printf("%s\n", cases[i].name);
			else
				printf("%s\t%s\n", cases[i].name, cases[i].what);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(argv[1], cases[i].name)) {
			cur = cases[i].name;
			cases[i].fn();
			printf("cases: %s: done\n", cur);
			return 0;
		}
	fprintf(stderr, "cases: no case named %s\n", argv[1]);
	return 2;
}
