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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libadi.h"
#include "../lib/stats.h"

#define PG 4096UL
#define PAGES 2048
#define ROUNDS 9

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define CGROUP "/sys/fs/cgroup/adi-mm-bench"

static void write_file(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(value, f) < 0 || fclose(f)) {
		fprintf(stderr, "adi-mm-bench: cannot write '%s' to %s\n", value, path);
		exit(1);
	}
}

/*
 * Each region is charged to a memory cgroup of its own (charges stay with
 * the cgroup a page was first touched in, through swap too), so that
 * reclaim pushing one region out leaves the other alone.
 */
static void enter_cgroup(const char *leaf)
{
	char path[128], pid[32];

	mkdir(CGROUP, 0755);
	write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	write_file(CGROUP "/cgroup.subtree_control", "+memory");
	snprintf(path, sizeof(path), CGROUP "/%s", leaf);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), CGROUP "/%s/cgroup.procs", leaf);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	write_file(path, pid);
}

static char *region(int versioned)
{
	char *p;

	enter_cgroup(versioned ? "versioned" : "plain");
	p = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE | PROT_ADI,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	memset(p, 1, PAGES * PG);
	for (size_t i = 0; i < PAGES; i++) {
		if (versioned && adi_set_version(p + i * PG, PG, 1 + i % 14)) {
			perror("adi_set_version");
			exit(1);
		}
		*(uint64_t *)adi_make_ptr(p + i * PG, versioned ? 1 + i % 14 : 0) = i;
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

static void fault_in(char *p)
{
	for (size_t i = 0; i < PAGES; i++)
		(void)*(volatile char *)(p + i * PG + 8);
}

/*
 * MADV_PAGEOUT writes the pages to swap, but they stay in the swap cache
 * until reclaim comes back for them: reclaim the region's own cgroup
 * until they are gone.
 */
static void page_out(char *p, int versioned)
{
	const char *reclaim = versioned ? CGROUP "/versioned/memory.reclaim" :
					  CGROUP "/plain/memory.reclaim";

	for (int i = 0; i < 500 && resident(p); i++) {
		FILE *f = fopen(reclaim, "w");

		madvise(p, PAGES * PG, MADV_PAGEOUT);
		if (f) {
			fputs("64M", f);
			fclose(f);	/* EAGAIN when less than 64M was there */
		}
	}
	if (resident(p)) {
		fprintf(stderr, "adi-mm-bench: %d pages stayed in memory after MADV_PAGEOUT\n",
			resident(p));
		exit(1);
	}
}

/* Pages per second through swap: out, then back in, from a resident region. */
static double swap_round(char *p, int versioned)
{
	double t;

	fault_in(p);
	t = now();
	page_out(p, versioned);
	fault_in(p);
	return PAGES / (now() - t);
}

/* Move every page to @node; all of them must get there. */
static double move_round(char *p, int node)
{
	static void *pages[PAGES];
	static int nodes[PAGES], status[PAGES];
	double t, rate;
	int stayed = 0;

	fault_in(p);
	for (int i = 0; i < PAGES; i++) {
		pages[i] = p + i * PG;
		nodes[i] = node;
	}
	t = now();
	if (syscall(SYS_move_pages, 0, PAGES, pages, nodes, status, MPOL_MF_MOVE)) {
		perror("move_pages");
		exit(1);
	}
	rate = PAGES / (now() - t);
	for (int i = 0; i < PAGES; i++)
		stayed += status[i] != node;
	if (stayed) {
		fprintf(stderr, "adi-mm-bench: %d of %d pages did not move to node %d (first status %d)\n",
			stayed, PAGES, node, status[0]);
		exit(1);
	}
	return rate;
}

/* The work was real: every page still has its data and versions. */
static void verify(char *p, int versioned)
{
	for (size_t i = 0; i < PAGES; i++) {
		unsigned int v = versioned ? 1 + i % 14 : 0;

		if (adi_get_version(p + i * PG + PG - 64) != (int)v ||
		    *(uint64_t *)adi_make_ptr(p + i * PG, v) != i) {
			fprintf(stderr, "adi-mm-bench: page %zu lost its %s\n", i,
				adi_get_version(p + i * PG) != (int)v ? "version" : "data");
			exit(1);
		}
	}
}

static double median(const double *v)
{
	return bench_median(v, ROUNDS, NULL, NULL);
}

/* Median of the per-round ratios: neighbouring rounds share the host's noise. */
static double ratio(const double *plain, const double *ver)
{
	double r[ROUNDS];

	for (int i = 0; i < ROUNDS; i++)
		r[i] = plain[i] / ver[i];
	return median(r);
}

int main(void)
{
	char *plain = region(0), *ver = region(1);
	double sp[ROUNDS], sv[ROUNDS], mp[ROUNDS], mv[ROUNDS], move_ratio, swap_ratio;

	/* Start both on node 0: round r then moves every page to node (r + 1) % 2. */
	move_round(plain, 0);
	move_round(ver, 0);
	for (int r = 0; r < ROUNDS; r++) {
		mp[r] = move_round(plain, (r + 1) % 2);
		mv[r] = move_round(ver, (r + 1) % 2);
	}
	for (int r = 0; r < ROUNDS; r++) {
		sp[r] = swap_round(plain, 0);
		sv[r] = swap_round(ver, 1);
	}
	verify(plain, 0);
	verify(ver, 1);
	move_ratio = ratio(mp, mv);
	swap_ratio = ratio(sp, sv);
	printf("%-32s %12s %12s %10s\n", "pages per second, 9 rounds", "no versions", "versioned",
	       "plain/ver");
	printf("%-32s %12.0f %12.0f %10.3f\n", "move_pages between nodes", median(mp), median(mv),
	       move_ratio);
	printf("%-32s %12.0f %12.0f %10.3f\n", "swap out + swap in", median(sp), median(sv),
	       swap_ratio);
	printf("(rates: medians; plain/ver: median of the 9 per-round ratios)\n");
	printf("every move reached its node; after all rounds every page has its data and versions\n");
	return 0;
}
