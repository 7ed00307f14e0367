// SPDX-License-Identifier: GPL-2.0
/*
 * Freeing a 1 GiB hugetlb page whose every 4 KiB page has versions
 * (issue 43, item 3): the page goes back to its pool through
 * free_huge_folio(), which drops its version records.  Is that a long
 * stall, for the freeing process and for another CPU that needs
 * hugetlb_lock meanwhile?  In the guest (bench/adi-hugetlb/run):
 *
 *   adi_hugetlb_free ROUNDS
 *
 * A prober process on CPU 1 maps, touches and unmaps a 2 MiB huge page
 * again and again (its fault and its unmap each take hugetlb_lock),
 * logging when each iteration began and how long it took; a process of
 * its own, so that it shares no mmap_lock with the main one.  The main
 * process on CPU 0 maps the 1 GiB page, touches it, versions all of it
 * (or not: the control), lets the prober finish an iteration begun after
 * that (its faults wait while the 1 GiB page is zeroed, versions or
 * not), and unmaps it, timing the unmap.  Rounds
 * alternate versioned and plain.  Prints per round
 *     round N versioned|plain munmap_ms X prober_wait_ms Y
 * where Y is the longest prober iteration that overlapped the unmap, and
 * last "prober_median_ms Z" over all its iterations.  Under TCG the times
 * are not the hardware's: compare versioned with plain.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adi_test.h"
#include "libadi.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#define MAP_HUGE_1GB_FLAG (30 << MAP_HUGE_SHIFT)
#define MAP_HUGE_2MB_FLAG (21 << MAP_HUGE_SHIFT)
#define GIB (1UL << 30)
#define MIB2 (2UL << 20)
#define LOG 65536

/* The prober's log, shared with the main process. */
static struct shared {
	atomic_int stop;
	atomic_long n;			/* iterations logged */
	long start_ns[LOG], took_ns[LOG];
} *sh;

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void prober(void)
{
	pin(1);
	while (!atomic_load(&sh->stop)) {
		long t0 = now_ns(), i;
		char *p = mmap(NULL, MIB2, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB_FLAG,
			       -1, 0);

		if (p == MAP_FAILED) {
			fprintf(stderr, "prober: mmap 2 MiB huge page: %s\n", strerror(errno));
			_exit(2);
		}
		p[0] = 1;
		munmap(p, MIB2);
		i = atomic_load(&sh->n);
		if (i < LOG) {
			sh->start_ns[i] = t0;
			sh->took_ns[i] = now_ns() - t0;
			atomic_store(&sh->n, i + 1);
		}
	}
	_exit(0);
}

/*
 * Wait until the prober has finished an iteration that began after
 * @since: one it started earlier may still be waiting on the main
 * process's touch of the 1 GiB page (zeroing it, seconds under TCG),
 * and would be blamed on the unmap.
 */
static void prober_settle(long since)
{
	for (int ms = 0; ms < 20000; ms++) {
		long n = atomic_load(&sh->n);

		if (n && sh->start_ns[n - 1] >= since)
			return;
		usleep(1000);
	}
}

/* The longest prober iteration that overlapped [from, to]; waits for it to end. */
static long longest_overlap(long from, long to)
{
	long longest = 0, n;

	/* The iteration running at @to must finish before it is logged. */
	for (int ms = 0; ms < 20000; ms++) {
		n = atomic_load(&sh->n);
		if (n && sh->start_ns[n - 1] + sh->took_ns[n - 1] >= to)
			break;
		usleep(1000);
	}
	n = atomic_load(&sh->n);
	for (long i = 0; i < n; i++)
		if (sh->start_ns[i] < to && sh->start_ns[i] + sh->took_ns[i] > from &&
		    sh->took_ns[i] > longest)
			longest = sh->took_ns[i];
	return longest;
}

static void one_round(int round, int versioned)
{
	char *p = mmap(NULL, GIB, PROT_READ | PROT_WRITE | (versioned ? PROT_ADI : 0),
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_1GB_FLAG, -1, 0);
	long t0, t1;

	if (p == MAP_FAILED) {
		fprintf(stderr, "mmap 1 GiB huge page%s: %s\n", versioned ? " PROT_ADI" : "",
			strerror(errno));
		exit(2);
	}
	p[0] = 1;
	if (versioned && adi_set_version(p, GIB, 5)) {
		fprintf(stderr, "PR_ADI_SET_VERSION on 1 GiB: %s\n", strerror(errno));
		exit(2);
	}
	prober_settle(now_ns());
	t0 = now_ns();
	munmap(p, GIB);
	t1 = now_ns();
	printf("round %d %s munmap_ms %.3f prober_wait_ms %.3f\n", round,
	       versioned ? "versioned" : "plain", (t1 - t0) / 1e6,
	       longest_overlap(t0, t1) / 1e6);
	fflush(stdout);
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 0, status = 0;
	long n;
	pid_t pid;

	if (rounds < 1) {
		fprintf(stderr, "usage: adi_hugetlb_free ROUNDS\n");
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0)
		prober();
	pin(0);
	usleep(200000);
	for (int i = 0; i < 2 * rounds; i++)
		one_round(i / 2 + 1, (i + i / 2) % 2);	/* P V, V P, P V, ... */
	atomic_store(&sh->stop, 1);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "prober failed (status %#x)\n", status);
		return 2;
	}
	n = atomic_load(&sh->n);
	qsort(sh->took_ns, n, sizeof(long), cmp_long);
	printf("prober_median_ms %.3f over %ld iterations\n", n ? sh->took_ns[n / 2] / 1e6 : 0.0,
	       n);
	return 0;
}
