// SPDX-License-Identifier: GPL-2.0
/*
 * adi-mm-bench: what keeping versions costs the memory manager.  Swap-out
 * plus swap-in and move_pages() throughput of versioned pages against the
 * same work on pages without versions, alternating rounds in one process;
 * prints medians and the ratio.
 */
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libadi.h"

#define PG 4096UL
#define PAGES 2048
#define ROUNDS 5

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static char *region(int versioned)
{
	char *p = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE | PROT_ADI,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	memset(p, 1, PAGES * PG);
	for (size_t i = 0; versioned && i < PAGES; i++)
		if (adi_set_version(p + i * PG, PG, 1 + i % 14)) {
			perror("adi_set_version");
			exit(1);
		}
	return p;
}

static int resident(char *p)
{
	static unsigned char vec[PAGES];
	int n = 0;

	mincore(p, PAGES * PG, vec);
	for (int i = 0; i < PAGES; i++)
		n += vec[i] & 1;
	return n;
}

/* Pages per second through swap: out (until gone), then back in. */
static double swap_round(char *p, const char *reclaim)
{
	double t = now();
	volatile char sum = 0;

	for (int i = 0; i < 500 && resident(p); i++) {
		FILE *f = fopen(reclaim, "w");

		madvise(p, PAGES * PG, MADV_PAGEOUT);
		if (f) {
			fputs("64M", f);
			fclose(f);
		}
	}
	for (size_t i = 0; i < PAGES; i++)
		sum += p[i * PG];
	return PAGES / (now() - t);
}

static double move_round(char *p, int node)
{
	static void *pages[PAGES];
	static int nodes[PAGES], status[PAGES];
	double t = now();

	for (int i = 0; i < PAGES; i++) {
		pages[i] = p + i * PG;
		nodes[i] = node;
	}
	syscall(SYS_move_pages, 0, PAGES, pages, nodes, status, MPOL_MF_MOVE);
	return PAGES / (now() - t);
}

int main(int argc, char **argv)
{
	const char *reclaim = argc > 1 ? argv[1] : "/sys/fs/cgroup/memory.reclaim";
	char *plain = region(0), *ver = region(1);
	double sp[ROUNDS], sv[ROUNDS], mp[ROUNDS], mv[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		sp[r] = swap_round(plain, reclaim);
		sv[r] = swap_round(ver, reclaim);
		mp[r] = move_round(plain, (r + 1) % 2);
		mv[r] = move_round(ver, (r + 1) % 2);
	}
	qsort(sp, ROUNDS, sizeof(double), cmp);
	qsort(sv, ROUNDS, sizeof(double), cmp);
	qsort(mp, ROUNDS, sizeof(double), cmp);
	qsort(mv, ROUNDS, sizeof(double), cmp);
	printf("%-32s %14s %14s %10s\n", "pages per second (median of 5)", "no versions", "versioned",
	       "plain/ver");
	printf("%-32s %14.0f %14.0f %10.3f\n", "swap out + swap in", sp[ROUNDS / 2], sv[ROUNDS / 2],
	       sp[ROUNDS / 2] / sv[ROUNDS / 2]);
	printf("%-32s %14.0f %14.0f %10.3f\n", "move_pages between nodes", mp[ROUNDS / 2], mv[ROUNDS / 2],
	       mp[ROUNDS / 2] / mv[ROUNDS / 2]);
	return 0;
}
