// SPDX-License-Identifier: GPL-2.0
/*
 * How ADI's version storage scales, in the guest (bench/adi-scale/run).
 *
 *   adi_scale plain SECONDS [BG_PROCS [adi|plain]]
 *	one process that never uses ADI maps 64 pages, writes one byte per
 *	page (a page fault each) and unmaps them, again and again for
 *	SECONDS; with BG_PROCS > 0 that many other processes churn pages
 *	meanwhile: versioned pages ("adi", the default), which keeps ADI's
 *	paths on, or plain ones ("plain"), the control that loads the CPUs
 *	the same way.  Prints "plain_pages_per_s N" and "paths_on 0|1|-1"
 *	(-1: no ADI debugfs).
 *   adi_scale adi SECONDS PROCS
 *	PROCS processes each map 64 PROT_ADI pages, give them versions with
 *	one PR_ADI_SET_VERSION, write one byte per page through a plain
 *	pointer (a fault each; the pages are freed with their records on
 *	unmap) and unmap them, for SECONDS.  Prints "adi_pages_per_s N"
 *	(the sum) and "adi_pages_per_s_per_proc N".
 *   adi_scale procs SECONDS PROCS
 *	the same without PROT_ADI: the control for how PROCS processes
 *	share the CPUs at all.
 *
 * The loop is the same in both modes but for PROT_ADI and the one prctl:
 * the difference is what a versioned page costs to set up, fault and free.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adi_test.h"
#include "libadi.h"

#define PAGES	64
#define PAGE	4096UL

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Map, (version,) fault in and unmap PAGES pages until @until; pages done. */
static long churn(int adi, double until)
{
	int prot = PROT_READ | PROT_WRITE | (adi ? PROT_ADI : 0);
	long pages = 0;

	while (now() < until) {
		char *p = mmap(NULL, PAGES * PAGE, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			exit(2);
		}
		if (adi && adi_set_version(p, PAGES * PAGE, 1 + pages % 14)) {
			perror("PR_ADI_SET_VERSION");
			exit(2);
		}
		for (unsigned long i = 0; i < PAGES; i++)
			p[i * PAGE] = 1;
		munmap(p, PAGES * PAGE);
		pages += PAGES;
	}
	return pages;
}

/* @n children churning pages until @until; their counts go to @out. */
static void start_workers(int n, int adi, double until, int out)
{
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			exit(2);
		}
		if (pid == 0) {
			long pages = churn(adi, until);

			if (write(out, &pages, sizeof(pages)) != sizeof(pages))
				_exit(2);
			_exit(0);
		}
	}
}

static long collect(int n, int in)
{
	long sum = 0, pages;
	int status, bad = 0;

	for (int i = 0; i < n; i++) {
		if (read(in, &pages, sizeof(pages)) != sizeof(pages))
			bad = 1;
		else
			sum += pages;
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad = 1;
	if (bad) {
		fprintf(stderr, "adi_scale: a worker failed\n");
		exit(2);
	}
	return sum;
}

int main(int argc, char **argv)
{
	double seconds, until;
	int procs, fds[2];

	const char *mode = argc > 1 ? argv[1] : "";
	int bg_adi = argc < 5 || !strcmp(argv[4], "adi");

	if (argc < 3 || (strcmp(mode, "plain") && strcmp(mode, "adi") && strcmp(mode, "procs")) ||
	    (argc > 4 && strcmp(argv[4], "adi") && strcmp(argv[4], "plain"))) {
		fprintf(stderr, "usage: adi_scale plain SECONDS [BG_PROCS [adi|plain]] | adi SECONDS PROCS | procs SECONDS PROCS\n");
		return 2;
	}
	seconds = atof(argv[2]);
	procs = argc > 3 ? atoi(argv[3]) : 0;
	if (seconds <= 0 || procs < 0 || procs > 64 || (strcmp(mode, "plain") && !procs)) {
		fprintf(stderr, "adi_scale: bad SECONDS or PROCS\n");
		return 2;
	}
	if (pipe(fds)) {
		perror("pipe");
		return 2;
	}
	until = now() + seconds;
	if (!strcmp(mode, "plain")) {
		long pages;

		start_workers(procs, bg_adi, until, fds[1]);
		/* Let the ADI processes switch the paths on first. */
		usleep(procs ? 200000 : 0);
		printf("paths_on %ld\n", adi_counter("paths_on"));
		pages = churn(0, until);
		printf("plain_pages_per_s %.0f\n", pages / (seconds - (procs ? 0.2 : 0)));
		collect(procs, fds[0]);
	} else {
		long pages;

		start_workers(procs, !strcmp(mode, "adi"), until, fds[1]);
		pages = collect(procs, fds[0]);
		printf("%s_pages_per_s %.0f\n%s_pages_per_s_per_proc %.0f\n",
		       mode, pages / seconds, mode, pages / seconds / procs);
	}
	return 0;
}
