// SPDX-License-Identifier: GPL-2.0
/*
 * ADI versions through the life of memory: copy-on-write after fork,
 * swap (anonymous, memfd, SysV shm), NUMA migration, THP split and
 * collapse, hugetlbfs, KSM, and no saved versions left behind.
 */
#include <fcntl.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adi_test.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

#define PG 4096UL

static long counter(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/adi/%s", name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Block b of a region gets version 1 + b % 14, data derived from b. */
static void version_region(char *p, size_t len)
{
	for (size_t b = 0; b < len / BLK; b++) {
		must_set_version(p + b * BLK, BLK, 1 + b % 14);
		*(uint64_t *)adi_make_ptr(p + b * BLK, 1 + b % 14) = b * 3 + 1;
	}
}

/* Every block: the version reads back and the data reads through it. */
static int verify_region(char *p, size_t len)
{
	for (size_t b = 0; b < len / BLK; b++) {
		unsigned int v = 1 + b % 14;

		if (adi_get_version(p + b * BLK) != (int)v)
			return 0;
		if (*(volatile uint64_t *)adi_make_ptr(p + b * BLK, v) != b * 3 + 1)
			return 0;
	}
	return 1;
}

static int mismatch_caught(char *p)
{
	int sig = TRY((void)*(volatile uint64_t *)adi_make_ptr(p, 15 - (1 % 14)));

	return sig == SIGSEGV && caught.code == SEGV_ADIPERR;
}

static int resident_pages(char *p, size_t len)
{
	unsigned char vec[512];
	int n = 0;

	if (mincore(p, len, vec))
		return -1;
	for (size_t i = 0; i < len / PG; i++)
		n += vec[i] & 1;
	return n;
}

static void test_cow(void)
{
	size_t len = 4 * PG;
	char *p = adi_map(len);
	int status = -1;
	pid_t pid;

	version_region(p, len);
	pid = fork();
	if (pid == 0) {
		int ok;

		p[8] = 1;		/* copy the first page on write */
		ok = verify_region(p, len) && mismatch_caught(p);
		if (ok && fork() == 0) {
			p[PG + 8] = 2;	/* a grandchild copies another page */
			_exit(verify_region(p, len) ? 0 : 1);
		}
		wait(&status);
		_exit(ok && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1);
	}
	p[2 * PG + 8] = 3;		/* the parent writes first on another page */
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "fork: the child's and grandchild's copies on write keep every version");
	tap_ok(verify_region(p, len) && mismatch_caught(p),
	       "fork: the parent's copies on write keep every version");
}

static void pageout_and_verify(const char *what, char *p, size_t len)
{
	long restored = counter("swap_restored");

	version_region(p, len);
	madvise(p, len, MADV_PAGEOUT);
	tap_ok(resident_pages(p, len) == 0 && counter("swap_saved") > 0,
	       "%s: MADV_PAGEOUT pushed the pages out (resident %d, saved versions %ld)",
	       what, resident_pages(p, len), counter("swap_saved"));
	tap_ok(verify_region(p, len) && mismatch_caught(p) &&
	       counter("swap_restored") > restored,
	       "%s: back from swap with every version and byte", what);
}

static void test_swap(void)
{
	size_t len = 16 * PG;
	char *anon = adi_map(len), *m;
	int fd, id;

	if (!getenv("LK417_SWAP_DEV")) {
		tap_skip("no swap disk", "swap");
		return;
	}
	pageout_and_verify("anonymous", anon, len);

	fd = memfd_create("adi-swap", 0);
	if (ftruncate(fd, len))
		tap_diag("ftruncate: %s", strerror(errno));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_ADI, MAP_SHARED, fd, 0);
	pageout_and_verify("memfd (shmem)", m, len);

	id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
	m = shmat(id, NULL, 0);
	mprotect(m, len, PROT_READ | PROT_WRITE | PROT_ADI);
	shmctl(id, IPC_RMID, NULL);
	pageout_and_verify("SysV shm", m, len);
	{
		char *other = shmat(id, NULL, 0);

		(void)other;
	}
}

static void test_no_leak(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		size_t len = 8 * PG;
		char *p = adi_map(len);

		version_region(p, len);
		madvise(p, len, MADV_PAGEOUT);
		_exit(counter("swap_saved") > 0 ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a process with swapped-out versions exits");
	tap_ok(counter("swap_saved") == 0,
	       "no saved versions left once the swapped-out memory is gone (%ld)", counter("swap_saved"));
}

static void test_move_pages(void)
{
	size_t len = 8 * PG;
	char *p = adi_map(len);
	void *pages[8];
	int nodes[8], status[8], ok = 1;

	if (!getenv("LK417_NUMA") || strcmp(getenv("LK417_NUMA"), "1")) {
		tap_skip("one NUMA node", "move_pages");
		return;
	}
	version_region(p, len);
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 8; i++) {
			pages[i] = p + i * PG;
			nodes[i] = (round + 1) % 2;
		}
		if (syscall(SYS_move_pages, 0, 8, pages, nodes, status, MPOL_MF_MOVE))
			ok = 0;
		for (int i = 0; i < 8; i++)
			ok &= status[i] == (round + 1) % 2;
		ok &= verify_region(p, len);
	}
	tap_ok(ok, "move_pages back and forth between two nodes keeps every version");
}

static void test_thp(void)
{
	size_t len = 4 << 20;
	char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_ADI,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = (char *)(((uintptr_t)raw + (2 << 20) - 1) & ~((2UL << 20) - 1));
	size_t hlen = 2 << 20;
	int ret;

	madvise(p, hlen, MADV_HUGEPAGE);
	version_region(p, hlen);
	tap_ok(verify_region(p, hlen), "THP region versioned");
	/* Split the huge page: mprotect half of it. */
	mprotect(p, hlen / 2, PROT_READ | PROT_ADI);
	mprotect(p, hlen / 2, PROT_READ | PROT_WRITE | PROT_ADI);
	tap_ok(verify_region(p, hlen), "after a split by partial mprotect");
	ret = madvise(p, hlen, MADV_COLLAPSE);
	tap_ok(verify_region(p, hlen) && mismatch_caught(p),
	       "after MADV_COLLAPSE (%s)", ret ? strerror(errno) : "collapsed");
}

static void test_hugetlb(void)
{
	size_t len = 2 << 20;
	char *p;
	int status = -1, fd;
	pid_t pid;

	fd = open("/proc/sys/vm/nr_hugepages", O_WRONLY);
	if (fd < 0 || write(fd, "4", 1) != 1) {
		tap_skip("cannot reserve huge pages", "hugetlbfs");
		return;
	}
	close(fd);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_ADI,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	tap_ok(p != MAP_FAILED, "PROT_ADI on a MAP_HUGETLB mapping (2 MiB)");
	if (p == MAP_FAILED)
		return;
	version_region(p, 64 * PG);
	tap_ok(verify_region(p, 64 * PG) && mismatch_caught(p), "hugetlb page versioned and checked");
	pid = fork();
	if (pid == 0) {
		p[8] = 1;
		_exit(verify_region(p, 64 * PG) ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && verify_region(p, 64 * PG),
	       "hugetlb copy-on-write after fork keeps every version");
	munmap(p, len);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_ADI,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	{
		int fresh = 1;

		for (size_t b = 0; p != MAP_FAILED && b < 64 * PG / BLK; b++)
			fresh &= adi_get_version(p + b * BLK) == 0;
		tap_ok(p != MAP_FAILED && fresh, "a hugetlb page from the pool comes back with version 0");
	}
}

static long ksm_value(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/ksm/%s", name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void ksm_write(const char *name, const char *value)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/ksm/%s", name);
	f = fopen(path, "w");
	if (f) {
		fputs(value, f);
		fclose(f);
	}
}

static void test_ksm(void)
{
	size_t len = 32 * PG;
	char *adi, *plain;
	long full;

	if (prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0)) {
		tap_skip("no KSM", "ksm");
		return;
	}
	adi = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_ADI, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tap_ok(adi != MAP_FAILED, "PROT_ADI works in a process with KSM merging enabled for all memory");
	for (size_t i = 0; i < len; i += PG) {
		memset(adi + i, 0x5a, PG);
		must_set_version(adi + i, PG, 3);
	}
	ksm_write("pages_to_scan", "1000");
	ksm_write("sleep_millisecs", "10");
	ksm_write("run", "1");
	full = ksm_value("full_scans");
	while (ksm_value("full_scans") < full + 3)
		usleep(20000);
	tap_ok(ksm_value("pages_shared") == 0 && ksm_value("pages_sharing") == 0 && verify_region(adi, 0) &&
	       adi_get_version(adi + PG) == 3,
	       "ksmd never merged the identical ADI pages (shared %ld)", ksm_value("pages_shared"));
	/* Control: identical plain pages in the same process are merged. */
	plain = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(plain, 0x5a, len);
	full = ksm_value("full_scans");
	while (ksm_value("full_scans") < full + 3)
		usleep(20000);
	tap_ok(ksm_value("pages_sharing") > 0, "control: ksmd merges identical plain pages (sharing %ld)",
	       ksm_value("pages_sharing"));
	ksm_write("run", "2");
}

int main(void)
{
	tap_init();
	if (getenv("LK417_SWAP_DEV")) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "mkswap -q %s >/dev/null && swapon %s",
			 getenv("LK417_SWAP_DEV"), getenv("LK417_SWAP_DEV"));
		if (system(cmd))
			tap_diag("could not enable swap on %s", getenv("LK417_SWAP_DEV"));
	}
	tap_group("cow", test_cow);
	tap_group("swap", test_swap);
	tap_group("no-leak", test_no_leak);
	tap_group("move-pages", test_move_pages);
	tap_group("thp", test_thp);
	tap_group("hugetlb", test_hugetlb);
	tap_group("ksm", test_ksm);
	if (getenv("LK417_SWAP_DEV")) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "swapoff %s", getenv("LK417_SWAP_DEV"));
		tap_ok(system(cmd) == 0 && counter("swap_saved") == 0,
		       "swapoff: no saved versions left (%ld)", counter("swap_saved"));
	}
	return tap_done();
}
