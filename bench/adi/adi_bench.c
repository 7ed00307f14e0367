// SPDX-License-Identifier: GPL-2.0
/*
 * adi-bench: what ADI costs, measured in one process.
 *
 *   --checked   ns per checked load and store and per byte of a versioned
 *               memcpy, each against the same work through plain pointers
 *   --baseline  ns per getppid(), per 64-byte pread() and per page
 *               fault, for comparing a kernel with ADI on against one
 *               booted with adi=off
 *
 * Every figure is the median of several rounds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "libadi.h"

#define ROUNDS 5

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static __attribute__((noinline)) uint64_t loads(volatile uint64_t *p, long n)
{
	uint64_t sum = 0;

	for (long i = 0; i < n; i++)
		sum += p[i & 63];
	return sum;
}

static __attribute__((noinline)) void stores(volatile uint64_t *p, long n)
{
	for (long i = 0; i < n; i++)
		p[i & 63] = i;
}

/* ns per operation of fn over n operations, median of ROUNDS. */
#define TIME_PER(n, stmt) ({						\
	double t_[ROUNDS];						\
	for (int r_ = 0; r_ < ROUNDS; r_++) {				\
		double s_ = now_ns();					\
		stmt;							\
		t_[r_] = (now_ns() - s_) / (n);				\
	}								\
	median(t_, ROUNDS);						\
})

static int checked(void)
{
	size_t len = 64 * 1024;
	char *mem = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE | PROT_ADI,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *plain = malloc(2 * len);
	uint64_t *v = adi_make_ptr(mem, 5);
	double a, b;
	long n = 2000;

	if (mem == MAP_FAILED || adi_set_version(mem, 2 * len, 5)) {
		perror("adi-bench: ADI memory");
		return 1;
	}
	memset(mem, 1, 2 * len);
	memset(plain, 1, 2 * len);
	printf("%-34s %12s %12s %10s\n", "operation", "plain ns", "checked ns", "ratio");
	a = TIME_PER(n * 50, loads((uint64_t *)plain, n * 50));
	b = TIME_PER(n, loads(v, n));
	printf("%-34s %12.1f %12.1f %10.0f\n", "8-byte load", a, b, b / a);
	a = TIME_PER(n * 50, stores((uint64_t *)plain, n * 50));
	b = TIME_PER(n, stores(v, n));
	printf("%-34s %12.1f %12.1f %10.0f\n", "8-byte store", a, b, b / a);
	a = TIME_PER(len * 20, for (int k = 0; k < 20; k++) memcpy(plain + len, plain, len));
	b = TIME_PER(len, memcpy(adi_make_ptr(mem + len, 5), v, len));
	printf("%-34s %12.3f %12.3f %10.0f\n", "memcpy 64 KiB, per byte", a, b, b / a);
	return 0;
}

static int baseline(void)
{
	size_t len = 32 << 20;
	long n = 20000;
	double sc, rd, pf;
	char buf[64];
	int fd = memfd_create("adi-bench", 0);

	sc = TIME_PER(n, for (long i = 0; i < n; i++) syscall(SYS_getppid));
	/* A copy to user memory: access_ok() and copy_to_user() paths. */
	if (fd < 0 || ftruncate(fd, 4096)) {
		perror("memfd");
		return 1;
	}
	rd = TIME_PER(n, for (long i = 0; i < n; i++)
		if (pread(fd, buf, sizeof(buf), 0) != sizeof(buf))
			abort());
	pf = TIME_PER(len / 4096, {
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		for (size_t o = 0; o < len; o += 4096)
			m[o] = 1;
		munmap(m, len);
	});
	printf("getppid_ns %.1f\npread64_ns %.1f\npagefault_ns %.1f\n", sc, rd, pf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--checked"))
		return checked();
	if (argc == 2 && !strcmp(argv[1], "--baseline"))
		return baseline();
	fprintf(stderr, "usage: adi-bench --checked | --baseline\n");
	return 2;
}
