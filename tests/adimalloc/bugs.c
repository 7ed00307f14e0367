// SPDX-License-Identifier: GPL-2.0
/*
 * Planted heap bugs for the adimalloc suite, one per name:
 *     bugs NAME        commits the bug
 *     bugs NAME ok     runs the same code without it
 * Before the bug, stderr gets "bug: ptr=P size=S at=A" (A: the address
 * the report must name), so the suite can check the report's numbers.
 * stdout gets deterministic text only, to compare with glibc malloc's run.
 * Linked with -rdynamic: the report's stacks then show these functions.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile char sink;
static int ok;

static void note(const void *p, size_t size, const void *at)
{
	fprintf(stderr, "bug: ptr=%p size=%zu at=%p\n", p, size, at);
	fflush(stdout);
}

NOINLINE void plant_overflow1(void)
{
	char *p = malloc(48);

	memset(p, 'a', 48);
	note(p, 48, p + 48);
	p[ok ? 47 : 48] = 'x';	/* one byte past the end */
	printf("overflow1 %c\n", p[47]);
	free(p);
}

NOINLINE void plant_overflow_block(void)
{
	char *p = malloc(64);

	memset(p, 'b', 64);
	note(p, 64, p + 64 + 63);
	sink = p[ok ? 63 : 64 + 63];	/* read, the last byte of the next block */
	printf("overflow_block %c\n", sink);
	free(p);
}

NOINLINE void plant_underflow(void)
{
	long *p = malloc(128);

	memset(p, 0, 128);
	note(p, 128, p - 1);
	p[ok ? 0 : -1] = 42;	/* eight bytes before the start */
	printf("underflow %ld\n", p[0]);
	free(p);
}

NOINLINE void plant_uaf_read(void)
{
	char *p = malloc(40), *q = ok ? malloc(40) : p;

	strcpy(p, "hello");
	if (ok)
		strcpy(q, "hello");
	free(p);
	note(q, 40, q + 3);
	sink = q[3];
	printf("uaf_read %c\n", sink);
	if (ok)
		free(q);
}

NOINLINE void plant_uaf_write(void)
{
	char *p = malloc(40), *q = ok ? malloc(40) : p;

	free(p);
	note(q, 40, q + 8);
	q[8] = 'w';
	printf("uaf_write done\n");
	if (ok)
		free(q);
}

NOINLINE void plant_double_free(void)
{
	char *p = malloc(24);

	note(p, 24, p);
	free(p);
	if (!ok)
		free(p);
	printf("double_free done\n");
}

static char not_heap[32];

NOINLINE void plant_invalid_free(void)
{
	char *p = ok ? malloc(32) : not_heap;

	note(p, 32, p);
	free(p);
	printf("invalid_free done\n");
}

NOINLINE void plant_interior_free(void)
{
	char *p = malloc(80);

	note(p, 80, p + 16);
	free(ok ? p : p + 16);
	printf("interior_free done\n");
	if (!ok)
		free(p);
}

NOINLINE void plant_realloc_freed(void)
{
	char *p = malloc(30), *q;

	note(p, 30, p);
	if (!ok)
		free(p);
	q = realloc(p, 100);
	printf("realloc_freed done\n");
	free(q);
}

NOINLINE void plant_memcpy(void)
{
	char src[256], *p = malloc(96);

	memset(src, 'm', sizeof(src));
	note(p, 96, p + 96);
	memcpy(p, src, ok ? 96 : 97);
	printf("memcpy %c\n", p[95]);
	free(p);
}

NOINLINE void plant_strcpy(void)
{
	const char *s = "0123456789abcdef0123456789abcdef";	/* 32 + NUL */
	char *p = malloc(ok ? 33 : 32);

	note(p, 32, p + 32);
	strcpy(p, s);
	printf("strcpy %zu\n", strlen(p));
	free(p);
}

NOINLINE void plant_memset(void)
{
	char *p = malloc(192);

	note(p, 192, p + 192);
	memset(p, 's', ok ? 192 : 193);
	printf("memset %c\n", p[191]);
	free(p);
}

/* read() into a 64-byte buffer: 100 bytes are waiting. */
NOINLINE void plant_read(void)
{
	char *p = malloc(64), data[100];
	int fds[2];
	ssize_t n;

	memset(data, 'r', sizeof(data));
	if (pipe(fds) || write(fds[1], data, sizeof(data)) != sizeof(data))
		exit(3);
	note(p, 64, p + 64);
	n = read(fds[0], p, ok ? 64 : 100);
	printf("read returned %zd%s\n", n, n < 0 && errno == EFAULT ? " EFAULT" : "");
	free(p);
}

void *thread_body(void *arg);

void *thread_body(void *arg)
{
	(void)arg;
	plant_overflow1();
	return NULL;
}

NOINLINE void plant_thread(void)
{
	pthread_t t;

	pthread_create(&t, NULL, thread_body, NULL);
	pthread_join(t, NULL);
	printf("thread done\n");
}

static volatile int spin = 1;

static void *churn(void *arg)
{
	(void)arg;
	while (spin)
		free(malloc(100));
	return NULL;
}

/* A threaded parent forks; the child allocates and overflows. */
NOINLINE void plant_fork(void)
{
	pthread_t t;
	int status;
	pid_t pid;

	pthread_create(&t, NULL, churn, NULL);
	usleep(1000);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		plant_overflow1();
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	spin = 0;
	pthread_join(t, NULL);
	printf("fork child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

NOINLINE void plant_large(void)
{
	char *p = malloc(100000);

	memset(p, 'L', 100000);
	note(p, 100000, p + 100000);
	p[ok ? 99999 : 100000] = 0;
	printf("large %c\n", p[99998]);
	free(p);
}

NOINLINE void plant_large_uaf(void)
{
	char *p = malloc(200000);

	memset(p, 'U', 200000);
	free(p);
	if (ok)
		p = calloc(1, 200000);
	note(p, 200000, p + 4096);
	sink = p[4096];
	printf("large_uaf done\n");
	if (ok)
		free(p);
}

/*
 * One block larger than the whole quarantine (1 MiB by default) is freed
 * after a small one: the small one must stay quarantined, so that the
 * next allocations of its size do not reuse its slot and the stale read
 * is still a use-after-free.
 */
NOINLINE void plant_uaf_big_free(void)
{
	char *p = malloc(40), *q, *big, *again[64];

	strcpy(p, "hello");
	free(p);
	big = malloc(2 << 20);
	free(big);
	for (int i = 0; i < 64; i++)
		again[i] = malloc(40);
	q = ok ? again[0] : p;
	note(q, 40, q + 3);
	sink = q[3];
	printf("uaf_big_free done\n");
	for (int i = 0; i < 64; i++)
		free(again[i]);
}

/*
 * A use-after-free after the slot was handed to another allocation: the
 * stale pointer mismatches the new owner (its version differs from the
 * slot's last), and the nearest block with the stale version is some
 * unrelated neighbour.  The read is 100 bytes into the 200-byte block,
 * farther than a block's length from any neighbour's bytes.
 */
NOINLINE void plant_uaf_reused(void)
{
	const uintptr_t addr_bits = ~(0xfUL << 60);
	char *p = malloc(200), *q = NULL;
	uintptr_t at = ((uintptr_t)p & addr_bits) + 100;

	memset(p, 'r', 200);
	free(p);
	/*
	 * Cycle the quarantine until malloc(200) hands p's slot out again:
	 * the first block that covers p + 100 (placement in the slot is
	 * drawn per allocation, so not always at p).  The first, so that
	 * p's is the version the slot had last, which q's differs from.
	 */
	for (int i = 0; i < 200000 && !q; i++) {
		char *x = malloc(200);
		uintptr_t xa = (uintptr_t)x & addr_bits;

		if (xa <= at && at < xa + 200)
			q = x;
		else
			free(x);
	}
	if (!q) {
		printf("uaf_reused: the slot was not reused in 200000 allocations\n");
		exit(3);
	}
	q[at - ((uintptr_t)q & addr_bits)] = 'q';
	note(p, 200, p + 100);
	sink = ok ? q[at - ((uintptr_t)q & addr_bits)] : p[100];
	printf("uaf_reused done\n");
	free(q);
}

/*
 * Large blocks have a PROT_NONE guard page on each side of their mapping.
 * For 256 KiB the mapping is 65 pages: the block sits 64 bytes from its
 * start or from its end (drawn per allocation), and the rest of the last
 * page, 4032 bytes, lies after it or before it.  So 4096 bytes past its
 * end, and 4100 before its start, are in a guard page either way: the
 * access is a page fault there, never a mismatch in the fence.
 */
#define GUARDED_SIZE	(256 << 10)

NOINLINE void plant_large_guard(void)
{
	char *p = malloc(GUARDED_SIZE);

	memset(p, 'G', GUARDED_SIZE);
	note(p, GUARDED_SIZE, p + GUARDED_SIZE + 4096);
	p[ok ? GUARDED_SIZE - 1 : GUARDED_SIZE + 4096] = 'x';
	printf("large_guard %c\n", p[GUARDED_SIZE - 2]);
	free(p);
}

NOINLINE void plant_large_guard_under(void)
{
	char *p = malloc(GUARDED_SIZE);

	memset(p, 'g', GUARDED_SIZE);
	note(p, GUARDED_SIZE, p - 4100);
	sink = p[ok ? 0 : -4100];
	printf("large_guard_under %c\n", sink);
	free(p);
}

/*
 * A large block used after it has left the quarantine (1 MiB by default):
 * sixteen blocks of its size freed after it (4 MiB) push it out.  Its
 * range stays reserved PROT_NONE (the address-space quarantine): no other
 * mapping takes it, and the read is a page fault there.
 */
NOINLINE void plant_large_released_uaf(void)
{
	char *p = malloc(GUARDED_SIZE), *q = ok ? malloc(GUARDED_SIZE) : p;

	memset(p, 'R', GUARDED_SIZE);
	if (ok)
		memset(q, 'R', GUARDED_SIZE);
	free(p);
	for (int i = 0; i < 16; i++)
		free(malloc(GUARDED_SIZE));
	note(q, GUARDED_SIZE, q + 4096);
	sink = q[4096];
	printf("large_released_uaf %c\n", sink);
	if (ok)
		free(q);
}

/* An overflow that skips the redzone and lands inside another live
 * allocation: what redzone-based checkers miss. */
NOINLINE void plant_neighbour(void)
{
	char *a = malloc(64), *b = malloc(64);

	memset(a, 0, 64);
	memset(b, 0, 64);
	note(a, 64, a + 64 + 100);
	a[ok ? 10 : 64 + 100] = 1;
	printf("neighbour done\n");
	free(a);
	free(b);
}

/* An odd size: the byte written past the end shares the last block. */
NOINLINE void plant_overflow_odd(void)
{
	char *p = malloc(13);

	memset(p, 'o', 13);
	note(p, 13, p + 13);
	p[ok ? 12 : 13] = 0;	/* the classic: a NUL one past the end */
	printf("overflow_odd %c\n", p[0]);
	free(p);
}

/* The same, found when realloc() lets go of the block. */
NOINLINE void plant_overflow_realloc(void)
{
	char *p = malloc(13), *q;

	memset(p, 'r', 13);
	note(p, 13, p + 13);
	p[ok ? 12 : 13] = 'x';
	q = realloc(p, 100);
	printf("overflow_realloc %c\n", q[0]);
	free(q);
}

/* A new user's underflow: a[-1] of an int array, inside the first block. */
NOINLINE void plant_underflow_short(void)
{
	int *a = malloc(40 * sizeof(int));

	memset(a, 0, 40 * sizeof(int));
	note(a, 40 * sizeof(int), a - 1);
	a[ok ? 0 : -1] = 7;
	printf("underflow_short %d\n", a[0]);
	free(a);
}

/*
 * The read of a[-1]: seen at the access only when the block was placed at
 * the start of its slot (one in two, at random); sixteen tries.
 */
NOINLINE void plant_underflow_short_read(void)
{
	int sum = 0;

	for (int i = 0; i < 16; i++) {
		int *a = malloc(40 * sizeof(int));

		memset(a, 0, 40 * sizeof(int));
		note(a, 40 * sizeof(int), a - 1);
		sum += ((volatile int *)a)[ok ? 0 : -1];
		free(a);
	}
	printf("underflow_short_read done\n");
	(void)sum;
}

/* Heartbleed's shape: a copy that reads past the end of a heap block. */
NOINLINE void plant_memcpy_read(void)
{
	char *p = malloc(10), out[20];

	memset(p, 'h', 10);
	note(p, 10, p + 10);
	memcpy(out, p, ok ? 10 : 20);
	printf("memcpy_read %c\n", out[9]);
	free(p);
}

/* memcpy() from past the end, still in the block's last 64 bytes. */
NOINLINE void plant_memcpy_past_end(void)
{
	char *p = malloc(10), out[4];

	memset(p, 'e', 10);
	note(p, 10, p + 12);
	memcpy(out, ok ? p + 2 : p + 12, 4);
	printf("memcpy_past_end %c\n", ok ? out[0] : 'e');
	free(p);
}

/* strlen() of a heap buffer with no terminator in it. */
NOINLINE void plant_strlen_read(void)
{
	char *p = malloc(16);

	memset(p, 'u', 16);
	if (ok)
		p[15] = 0;
	note(p, 16, p + 16);
	printf("strlen_read %s\n", strlen(p) >= 15 ? "long" : "short");
	free(p);
}

/*
 * printf("%s") of a heap buffer with no terminator in it (glibc's own
 * strlen reads it, inside the C library).  "%.16s" of the same buffer
 * needs no terminator: never a report, ok or not.
 */
NOINLINE void plant_printf_read(void)
{
	char *p = malloc(16);

	memset(p, 'f', 16);
	printf("printf_read %.16s\n", p);
	if (ok)
		p[15] = 0;
	note(p, 16, p + 16);
	printf("printf_read %s\n", p);
	free(p);
}

/*
 * Leaks, for detect_leaks=1 at exit: a block no pointer reaches (direct),
 * a small and a large block only that one points to (indirect), and one a
 * global keeps (no leak).  "ok" frees the lost ones.
 */
static void *volatile kept;

NOINLINE void plant_leak(void)
{
	void **lost = malloc(40);

	lost[0] = malloc(100);
	lost[1] = malloc(64 << 10);
	kept = malloc(24);
	if (ok) {
		free(lost[1]);
		free(lost[0]);
		free(lost);
	}
	printf("leak done\n");
}

/* Dead frames below main's may still hold the lost pointer: zero them. */
NOINLINE static void scrub_stack(void)
{
	volatile char junk[64 * 1024];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0;
}

static void plant_leak_scrubbed(void)
{
	plant_leak();
	scrub_stack();
}

/*
 * A leak, and a private file mapping whose file was truncated: reading it
 * raises SIGBUS, which the leak check at exit must survive.
 */
static void *volatile lost_bus;

NOINLINE void plant_leak_sigbus(void)
{
	char path[] = "/tmp/adimalloc-bus.XXXXXX";
	int fd = mkstemp(path);
	char *map;

	if (fd < 0 || ftruncate(fd, 8192)) {
		perror("leak_sigbus: temporary file");
		exit(1);
	}
	map = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED || ftruncate(fd, 0)) {
		perror("leak_sigbus: mapping");
		exit(1);
	}
	unlink(path);
	close(fd);
	/* Stored and overwritten: no pointer to it is left. */
	lost_bus = malloc(48);
	if (ok)
		free(lost_bus);
	lost_bus = NULL;
	printf("leak_sigbus done\n");
}

/* No leak: a global reaches a block, which reaches another; an interior
 * pointer reaches a third. */
static void *volatile roots[2];

NOINLINE void plant_leak_none(void)
{
	void **a = malloc(40);

	a[0] = malloc(100);
	roots[0] = a;
	roots[1] = (char *)malloc(64) + 10;
	printf("leak_none done\n");
}

static const struct {
	const char *name;
	void (*fn)(void);
} bugs[] = {
	{ "overflow1", plant_overflow1 },
	{ "overflow_block", plant_overflow_block },
	{ "underflow", plant_underflow },
	{ "uaf_read", plant_uaf_read },
	{ "uaf_write", plant_uaf_write },
	{ "double_free", plant_double_free },
	{ "invalid_free", plant_invalid_free },
	{ "interior_free", plant_interior_free },
	{ "realloc_freed", plant_realloc_freed },
	{ "memcpy", plant_memcpy },
	{ "strcpy", plant_strcpy },
	{ "memset", plant_memset },
	{ "read", plant_read },
	{ "thread", plant_thread },
	{ "fork", plant_fork },
	{ "large", plant_large },
	{ "large_uaf", plant_large_uaf },
	{ "uaf_big_free", plant_uaf_big_free },
	{ "uaf_reused", plant_uaf_reused },
	{ "large_guard", plant_large_guard },
	{ "large_guard_under", plant_large_guard_under },
	{ "large_released_uaf", plant_large_released_uaf },
	{ "neighbour", plant_neighbour },
	{ "overflow_odd", plant_overflow_odd },
	{ "overflow_realloc", plant_overflow_realloc },
	{ "underflow_short", plant_underflow_short },
	{ "underflow_short_read", plant_underflow_short_read },
	{ "memcpy_read", plant_memcpy_read },
	{ "memcpy_past_end", plant_memcpy_past_end },
	{ "strlen_read", plant_strlen_read },
	{ "printf_read", plant_printf_read },
	{ "leak", plant_leak_scrubbed },
	{ "leak_none", plant_leak_none },
	{ "leak_sigbus", plant_leak_sigbus },
};

/* A SIGCHLD handler that reaps every child, as many servers have. */
static volatile sig_atomic_t reaped;

static void reap_all(int sig)
{
	int saved = errno;

	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		reaped++;
	errno = saved;
}

/*
 * BUGS_SIGCHLD=ignore or reap: the program ignores SIGCHLD (children are
 * reaped by the kernel) or reaps every child itself, before the bug: the
 * report's symbolizer child must still be waited for, or given up.
 */
static void set_sigchld(void)
{
	const char *how = getenv("BUGS_SIGCHLD");
	struct sigaction sa = { .sa_handler = reap_all };

	if (!how)
		return;
	if (!strcmp(how, "ignore"))
		sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
}

int main(int argc, char **argv)
{
	set_sigchld();
	if (argc < 2) {
		for (size_t i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++)
			printf("%s\n", bugs[i].name);
		return 0;
	}
	ok = argc > 2 && !strcmp(argv[2], "ok");
	for (size_t i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++)
		if (!strcmp(argv[1], bugs[i].name)) {
			bugs[i].fn();
			return 0;
		}
	fprintf(stderr, "bugs: no bug named %s\n", argv[1]);
	return 2;
}
