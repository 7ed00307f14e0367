// SPDX-License-Identifier: GPL-2.0
/*
 * adi-bench: what ADI costs, measured in one run.
 *
 *   --checked   ns per checked access of each kind the checker handles
 *               differently (a mov done by the #GP handler, an SSE load
 *               that the CPU single-steps, string copies done whole, a
 *               compare loop stepped per element), against two floors
 *               measured in the same run: getppid() (one system call) and
 *               UMIP's in-kernel emulation of smsw (one #GP, a decode, no
 *               lock: the least any trap-based checker can cost), timed
 *               in a child forked before the ADI memory is mapped, so in
 *               a process that does not use ADI; smsw in this process
 *               (where ADI's handler decodes first) is a row of its
 *               own.  Rounds rotate the order; each figure is the median of the rounds
 *               with min-max, and the ratios are medians of per-round
 *               ratios.  Ends with "checked-load/umip: R".
 *   --baseline  ns per getppid(), per 64-byte pread() and per page
 *               fault, for comparing a kernel with ADI on against one
 *               booted with adi=off; says whether ADI's paths were on
 *               (/sys/kernel/debug/adi/paths_on) before and after.
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "adi_test.h"
#include "libadi.h"
#include "../lib/stats.h"

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

static void sse_loads(const char *p, long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile("movdqu (%0), %%xmm0" : : "r"(p + 16 * (i & 63)) : "xmm0", "memory");
}

static void rep_movsb(char *dst, const char *src, size_t len, long n)
{
	for (long i = 0; i < n; i++) {
		char *d = dst;
		const char *s = src;
		size_t c = len;

		__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(c) : : "memory");
	}
}

/* repe cmpsb over @len equal bytes: the CPU steps it element by element. */
static void cmpsb(const char *a, const char *b, size_t len, long n)
{
	for (long i = 0; i < n; i++) {
		const char *x = a, *y = b;
		size_t c = len;

		__asm__ volatile("repe cmpsb" : "+S"(x), "+D"(y), "+c"(c) : : "memory", "cc");
		if (c)
			abort();
	}
}

static void getppids(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* smsw from user mode: with UMIP the kernel emulates it in its #GP handler. */
static void smsws(long n)
{
	for (long i = 0; i < n; i++) {
		unsigned long msw;

		__asm__ volatile("smsw %k0" : "=r"(msw));
	}
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per operation of stmt over n operations, median of 5 timings. */
#define TIME_PER(n, stmt) ({						\
	double t_[5];							\
	for (int r_ = 0; r_ < 5; r_++) {				\
		double s_ = now_ns();					\
		stmt;							\
		t_[r_] = (now_ns() - s_) / (n);				\
	}								\
	bench_median(t_, 5, NULL, NULL);					\
})

#define MAX_ROUNDS 31

enum op { GETPPID, UMIP, UMIP_ADI, LOAD, STORE, MOVDQU, MOVSB64, MOVSB4K, CMPSB, PLAIN_LOAD, NR_OPS };

static const char *const op_name[NR_OPS] = {
	[GETPPID] = "getppid()",
	[UMIP] = "UMIP smsw",
	[UMIP_ADI] = "UMIP smsw, in an ADI process",
	[LOAD] = "checked 8-byte load (mov)",
	[STORE] = "checked 8-byte store (mov)",
	[MOVDQU] = "checked movdqu load",
	[MOVSB64] = "checked rep movsb 64 B",
	[MOVSB4K] = "checked rep movsb 4 KiB",
	[CMPSB] = "checked repe cmpsb, per byte",
	[PLAIN_LOAD] = "plain 8-byte load",
};

struct bench_mem {
	char *adi;		/* 64 KiB of ADI memory, version 5 */
	char *plain;		/* 64 KiB of ordinary memory */
};

/*
 * The UMIP floor in a process without ADI: a child forked before the ADI
 * memory is mapped times smsw loops on request (n in, ns per smsw out).
 */
static int umip_req[2] = { -1, -1 }, umip_resp[2] = { -1, -1 };

static int umip_child_start(void)
{
	long n;

	if (pipe(umip_req) || pipe(umip_resp))
		return -1;
	switch (fork()) {
	case -1:
		return -1;
	case 0:
		while (read(umip_req[0], &n, sizeof(n)) == sizeof(n)) {
			double t = now_ns();

			smsws(n);
			t = (now_ns() - t) / n;
			if (write(umip_resp[1], &t, sizeof(t)) != sizeof(t))
				break;
		}
		_exit(0);
	}
	return 0;
}

static double umip_child_time(long n)
{
	double t;

	if (write(umip_req[1], &n, sizeof(n)) != sizeof(n) ||
	    read(umip_resp[0], &t, sizeof(t)) != sizeof(t)) {
		perror("adi-bench: the UMIP child");
		exit(1);
	}
	return t;
}

/* ns per operation of @op, one timing. */
static double time_op(enum op op, const struct bench_mem *m)
{
	char *v = adi_make_ptr(m->adi, 5);
	long n;
	double t;

	switch (op) {
	case GETPPID: n = 20000; break;
	case PLAIN_LOAD: n = 1000000; break;
	case CMPSB: n = 20; break;		/* 20 x 64 elements */
	default: n = 2000;
	}
	t = now_ns();
	switch (op) {
	case GETPPID: getppids(n); break;
	case UMIP: return umip_child_time(n);
	case UMIP_ADI: smsws(n); break;
	case LOAD: loads((uint64_t *)v, n); break;
	case STORE: stores((uint64_t *)v, n); break;
	case MOVDQU: sse_loads(v, n); break;
	case MOVSB64: rep_movsb(v + 32768, v, 64, n); break;
	case MOVSB4K: rep_movsb(v + 32768, v, 4096, n); break;
	case CMPSB: cmpsb(v + 32768, v, 64, n); break;
	case PLAIN_LOAD: loads((uint64_t *)m->plain, n); break;
	case NR_OPS: break;
	}
	t = now_ns() - t;
	return t / (op == CMPSB ? n * 64 : n);
}

static int checked(int rounds)
{
	size_t len = 64 * 1024;
	struct bench_mem m;
	double ns[NR_OPS][MAX_ROUNDS], per_getppid[NR_OPS][MAX_ROUNDS], per_umip[NR_OPS][MAX_ROUNDS];
	double lo, hi, umip;
	cpu_set_t cpu0;
	int r, i;

	/*
	 * One CPU for the process and the child it forks: under TCG each
	 * vCPU is a host thread of its own, and the floor must be timed on
	 * the same one as the accesses it is compared with.
	 */
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0)) {
		perror("adi-bench: sched_setaffinity");
		return 1;
	}
	/* Then: the child must not inherit an mm that uses ADI. */
	if (umip_child_start()) {
		perror("adi-bench: starting the UMIP child");
		return 1;
	}
	m.adi = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_ADI,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	m.plain = malloc(len);
	if (m.adi == MAP_FAILED || !m.plain || adi_set_version(m.adi, len, 5)) {
		perror("adi-bench: ADI memory");
		return 1;
	}
	memset(m.adi, 1, len);
	memset(m.plain, 1, len);
	for (r = 0; r < rounds; r++) {
		/* Rotate the order, so no operation always runs first. */
		for (i = 0; i < NR_OPS; i++) {
			enum op op = (i + r) % NR_OPS;

			ns[op][r] = time_op(op, &m);
		}
		for (i = 0; i < NR_OPS; i++) {
			per_getppid[i][r] = ns[i][r] / ns[GETPPID][r];
			per_umip[i][r] = ns[i][r] / ns[UMIP][r];
		}
	}
	/* Without UMIP smsw runs in user mode: there is no floor to compare. */
	umip = bench_median(ns[UMIP], rounds, NULL, NULL);
	if (umip < 20) {
		fprintf(stderr, "adi-bench: smsw took %.1f ns: UMIP is not on (no trap to compare with)\n",
			umip);
		return 1;
	}
	printf("%d rounds, order rotated each round; median (min-max) of the rounds\n", rounds);
	printf("%-32s %20s %18s %18s\n", "operation", "ns", "/ getppid()", "/ UMIP smsw");
	for (i = 0; i < NR_OPS; i++) {
		double med = bench_median(ns[i], rounds, &lo, &hi), g, glo, ghi, u, ulo, uhi;

		g = bench_median(per_getppid[i], rounds, &glo, &ghi);
		u = bench_median(per_umip[i], rounds, &ulo, &uhi);
		printf("%-32s %8.1f (%.0f-%.0f) %6.2f (%.2f-%.2f) %6.2f (%.2f-%.2f)\n",
		       op_name[i], med, lo, hi, g, glo, ghi, u, ulo, uhi);
	}
	bench_median(per_umip[LOAD], rounds, &lo, &hi);
	printf("checked-store/umip: %.2f\n", bench_median(per_umip[STORE], rounds, NULL, NULL));
	printf("checked-load/umip spread: %.2f-%.2f\n", lo, hi);
	printf("checked-load/umip: %.2f\n", bench_median(per_umip[LOAD], rounds, NULL, NULL));
	return 0;
}

/* ADI's paths_on and in_use counters, one line each ("-1" without debugfs). */
static void print_adi_state(const char *when)
{
	printf("adi_paths_on_%s %ld\n", when, adi_counter("paths_on"));
	printf("adi_in_use_%s %ld\n", when, adi_counter("in_use"));
}

static int baseline(void)
{
	size_t len = 32 << 20;
	long n = 20000;
	double sc, rd, pf;
	char buf[64];
	int fd = memfd_create("adi-bench", 0);

	print_adi_state("before");
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
	print_adi_state("after");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--checked")) {
		int rounds = argc == 3 ? atoi(argv[2]) : 9;

		if (argc > 3 || rounds < 1 || rounds > MAX_ROUNDS) {
			fprintf(stderr, "adi-bench: rounds must be 1-%d\n", MAX_ROUNDS);
			return 2;
		}
		return checked(rounds);
	}
	if (argc == 2 && !strcmp(argv[1], "--baseline"))
		return baseline();
	fprintf(stderr, "usage: adi-bench --checked [ROUNDS] | --baseline\n");
	return 2;
}
