// SPDX-License-Identifier: GPL-2.0
/*
 * ADI versions through the life of memory: copy-on-write after fork (and
 * the copy fork makes at once of a page pinned for DMA), swap (anonymous,
 * memfd, SysV shm), NUMA migration (of small and hugetlb pages), THP
 * split and collapse (anonymous and shmem), hugetlbfs, KSM, memory cgroup
 * limits and charges, and no saved versions left behind.
 */
#include <fcntl.h>
#include <linux/io_uring.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
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

/* The number in a sysfs file @dir/@name, or -1. */
static long read_number(const char *dir, const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
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

/*
 * Every block: the version reads back and the data reads through it.
 * The first block that fails, or -1; what it held goes to *@ver and
 * *@data (the data is read only through the right version: a load
 * through another one would fault).
 */
static long first_bad_block(char *p, size_t len, int *ver, uint64_t *data)
{
	for (size_t b = 0; b < len / BLK; b++) {
		unsigned int v = 1 + b % 14;

		*data = 0;
		*ver = adi_get_version(p + b * BLK);
		if (*ver != (int)v)
			return b;
		*data = *(volatile uint64_t *)adi_make_ptr(p + b * BLK, v);
		if (*data != b * 3 + 1)
			return b;
	}
	return -1;
}

static int verify_region(char *p, size_t len)
{
	uint64_t data;
	int ver;

	return first_bad_block(p, len, &ver, &data) < 0;
}

/*
 * A load from block 0 of a region version_region() set up (version 1)
 * through another version: TRY()'s value, details in 'caught'.
 */
static int mismatch_load(char *p)
{
	return TRY((void)*(volatile uint64_t *)adi_make_ptr(p, 15 - (1 % 14)));
}

static int mismatch_caught(char *p)
{
	return mismatch_load(p) == SIGSEGV && caught.code == SEGV_ADIPERR;
}

/*
 * Local checks in the style of tap.h's tap_eq_long(): each prints one TAP
 * line that ends in what was seen and what was wanted, so that a failure
 * in the guest says which condition failed without a rerun.
 */

/* verify_region() as a check: a failure names the first wrong block. */
__attribute__((format(printf, 3, 4)))
static int expect_region(char *p, size_t len, const char *fmt, ...)
{
	char tail[128];
	uint64_t data;
	va_list ap;
	long b;
	int ver, ok;

	b = first_bad_block(p, len, &ver, &data);
	if (b < 0)
		snprintf(tail, sizeof(tail), "got all %zu blocks right", len / BLK);
	else if (ver != (int)(1 + b % 14))
		snprintf(tail, sizeof(tail), "block %ld of %zu: got version %d, want %ld",
			 b, len / BLK, ver, 1 + b % 14);
	else
		snprintf(tail, sizeof(tail), "block %ld of %zu: got data %#llx, want %#lx",
			 b, len / BLK, (unsigned long long)data, (unsigned long)b * 3 + 1);
	va_start(ap, fmt);
	ok = tap_ok_tail(b < 0, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/*
 * mismatch_caught() as a check: the load, then adi_expect_perr() on what
 * it raised, at any address, as mismatch_caught() (the message shows
 * signal, si_code and address).
 */
__attribute__((format(printf, 2, 3)))
static int expect_mismatch_caught(char *p, const char *fmt, ...)
{
	va_list ap;
	int ok;

	mismatch_load(p);
	va_start(ap, fmt);
	ok = adi_expect_code_v(SEGV_ADIPERR, fmt, ap);
	va_end(ap);
	return ok;
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
		/* The exit status says which step failed (the parent's message). */
		p[8] = 1;		/* copy the first page on write */
		if (!verify_region(p, len))
			_exit(1);
		if (!mismatch_caught(p))
			_exit(2);
		if (fork() == 0) {
			p[PG + 8] = 2;	/* a grandchild copies another page */
			_exit(verify_region(p, len) ? 0 : 1);
		}
		wait(&status);
		_exit(WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 3);
	}
	p[2 * PG + 8] = 3;		/* the parent writes first on another page */
	tap_wait_exit0(pid, "fork: the child's and grandchild's copies on write keep every "
		       "version (%s)",
		       "exit 1: child's versions, 2: child's mismatch, 3: grandchild's versions");
	expect_region(p, len, "fork: the parent's copies on write keep every version");
	expect_mismatch_caught(p, "fork: the parent's copies on write still catch a mismatch");
}

#define CGROUP "/sys/fs/cgroup/adi-mm"

/* Write @value to @path: 0, or -1 when it cannot be opened or written. */
static int write_file(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(value, f);
	return fclose(f);
}

/* Run in a memory cgroup of our own, so that memory.reclaim reaches us. */
static void join_cgroup(void)
{
	char pid[32];

	/* Processes live in leaves: adi-mm/main, adi-mm/pressure. */
	mkdir(CGROUP, 0755);
	write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	mkdir(CGROUP "/main", 0755);
	write_file(CGROUP "/cgroup.subtree_control", "+memory");
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	write_file(CGROUP "/main/cgroup.procs", pid);
}

/*
 * MADV_PAGEOUT writes the pages to swap, but they stay in the swap cache
 * until reclaim comes back for them: ask the cgroup to reclaim until they
 * are gone.
 */
static int push_out_tries(char *p, size_t len, int tries)
{
	for (int i = 0; i < tries && resident_pages(p, len) > 0; i++) {
		FILE *f = fopen(CGROUP "/memory.reclaim", "w");

		madvise(p, len, MADV_PAGEOUT);
		usleep(20000);
		if (f) {
			fputs("64M", f);
			fclose(f);
		}
	}
	return resident_pages(p, len);
}

static int push_out(char *p, size_t len)
{
	return push_out_tries(p, len, 250);
}

static void pageout_and_verify(const char *what, char *p, size_t len)
{
	long restored = adi_counter("swap_restored"), saved;
	int resident;

	version_region(p, len);
	resident = push_out(p, len);
	saved = adi_counter("swap_saved");
	tap_eq_long(resident, 0, "%s: the versioned pages left memory for swap: pages resident",
		    what);
	tap_ok(saved > 0, "%s: their versions were saved: got %ld saved, want at least 1",
	       what, saved);
	expect_region(p, len, "%s: back from swap with every version and byte", what);
	expect_mismatch_caught(p, "%s: back from swap, a mismatch is still caught", what);
	tap_grew(restored, adi_counter("swap_restored"), "%s: versions restored from swap",
		 what);
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
}

/*
 * Make every allocation from the version store's slab cache fail, or stop
 * that.  Needs CONFIG_FAILSLAB with its debugfs files and a cache of its
 * own (the suite boots with slab_nomerge; a merged cache refuses).  Quiet:
 * a stack dump per failure would count as a kernel splat.
 */
static int fail_version_allocations(int on)
{
	static const char *const setup[][2] = {
		{ "/sys/kernel/debug/failslab/verbose", "0" },
		{ "/sys/kernel/debug/failslab/cache-filter", "Y" },
		{ "/sys/kernel/debug/failslab/ignore-gfp-wait", "N" },
		{ "/sys/kernel/debug/failslab/task-filter", "N" },
		{ "/sys/kernel/debug/failslab/interval", "1" },
		{ "/sys/kernel/debug/failslab/times", "-1" },
		{ "/sys/kernel/debug/failslab/probability", "100" },
	};

	if (!on)
		return write_file("/sys/kernel/slab/adi_tags/failslab", "0");
	for (size_t i = 0; i < sizeof(setup) / sizeof(setup[0]); i++)
		if (write_file(setup[i][0], setup[i][1]))
			return -1;
	return write_file("/sys/kernel/slab/adi_tags/failslab", "1");
}

/*
 * A process whose access waits for a refused swap-in (the fault is
 * retried) must still die at once on SIGKILL: the retry may not be a loop
 * a signal cannot end.  @p is on swap and the records cannot be allocated.
 */
static void expect_killable(char *p, const char *what)
{
	int status = 0, ms;
	pid_t pid = fork(), got = 0;

	if (pid == 0) {
		(void)*(volatile char *)(p + PG);
		_exit(0);
	}
	if (pid < 0) {
		tap_ok(0, "%s: fork for SIGKILL (%s)", what, tap_errname(errno));
		return;
	}
	usleep(500000);
	kill(pid, SIGKILL);
	for (ms = 0; ms < 2000 && (got = waitpid(pid, &status, WNOHANG)) == 0; ms += 10)
		usleep(10000);
	if (!got) {
		tap_ok(0, "%s: SIGKILL ends an access that waits: still running 2 s later", what);
		waitpid(pid, &status, 0);
		return;
	}
	tap_ok(got == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	       "%s: SIGKILL ends an access that waits: got status %#x after %d ms, want SIGKILL within 2000 ms",
	       what, status, ms);
}

/* No memory to save versions for swap: the pages must stay in memory. */
static void test_swap_save_failure(void)
{
	size_t len = 16 * PG;
	char *p = adi_map(len);
	long failures = adi_counter("swap_save_failures");
	int resident;

	if (!getenv("LK417_SWAP_DEV")) {
		tap_skip("no swap disk", "swap save failure");
		return;
	}
	version_region(p, len);
	if (fail_version_allocations(1)) {
		fail_version_allocations(0);
		tap_skip("no slab fault injection for the adi_tags cache (CONFIG_FAILSLAB, slab_nomerge)",
			 "swap save failure");
		return;
	}
	resident = push_out_tries(p, len, 20);
	fail_version_allocations(0);
	tap_eq_long(resident, len / PG,
		    "no memory for saved versions: the versioned pages stay: pages resident");
	tap_grew(failures, adi_counter("swap_save_failures"),
		 "no memory for saved versions: save failures counted");
	expect_region(p, len, "those pages keep every version and byte");
	expect_mismatch_caught(p, "those pages still catch a mismatch");
	resident = push_out(p, len);
	tap_eq_long(resident, 0, "with memory back they go to swap: pages resident");
	expect_region(p, len, "with memory back they return from swap with every version");
	expect_mismatch_caught(p, "with memory back, back from swap, a mismatch is still caught");
}

/*
 * No memory to give a page read back from swap its versions: the page
 * must not be mapped without them.  A child touches the swapped-out
 * region through a plain pointer while every version-record allocation
 * fails; its fault is refused and retried, so after 2 s it must still be
 * waiting, not running with version 0.  With memory back it completes
 * and finds every version and byte.
 */
static void test_swap_restore_failure(void)
{
	size_t len = 16 * PG;
	char *p = adi_map(len);
	long failures = adi_counter("swap_restore_failures");
	int status = 0;
	pid_t pid, got;

	if (!getenv("LK417_SWAP_DEV")) {
		tap_skip("no swap disk", "swap restore failure");
		return;
	}
	version_region(p, len);
	if (!tap_eq_long(push_out(p, len), 0,
			 "restore failure: the versioned pages went to swap: pages resident"))
		return;
	if (fail_version_allocations(1)) {
		fail_version_allocations(0);
		tap_skip("no slab fault injection for the adi_tags cache (CONFIG_FAILSLAB, slab_nomerge)",
			 "swap restore failure");
		return;
	}
	pid = fork();
	if (pid == 0) {
		(void)*(volatile char *)p;
		_exit(verify_region(p, len) ? 0 : 1);
	}
	sleep(2);
	got = waitpid(pid, &status, WNOHANG);
	tap_ok(got == 0,
	       "no memory to restore a page's versions: its access waits instead of running unversioned (waitpid got %d, status %#x; want 0: still waiting)",
	       got, status);
	tap_grew(failures, adi_counter("swap_restore_failures"),
		 "no memory to restore a page's versions: refused swap-ins counted");
	expect_killable(p, "no memory to restore a page's versions");
	fail_version_allocations(0);
	if (got == 0)
		tap_wait_exit0(pid, "with memory back the access completes with every version and byte (exit 1: a version or byte wrong)");
	else
		tap_ok(0, "with memory back the access completes: the child had already exited");
}

/* @key's value in @cgroup's @file (memory.stat, memory.events), or -1. */
static long memcg_key(const char *cgroup, const char *file, const char *key)
{
	char path[256], name[64];
	long value, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cgroup, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", name, &value) == 2)
		if (!strcmp(name, key))
			found = value;
	fclose(f);
	return found;
}

static long memcg_stat(const char *cgroup, const char *key)
{
	return memcg_key(cgroup, "memory.stat", key);
}

/*
 * Version records are memory of the cgroup whose pages they describe,
 * also while the pages are on swap and when the reclaim that sends them
 * there runs in another cgroup: a child in adi-mm/owner versions 32 MiB,
 * this process, in adi-mm/main, pushes it out through owner's
 * memory.reclaim, and owner's slab must still hold the records.
 */
static void test_memcg_swap_charge(void)
{
	const char *owner = CGROUP "/owner";
	size_t len = 32UL << 20, pages = len / PG;
	long slab, anon = -1;
	int go[2], ready[2];
	char c = 0;
	pid_t pid;

	if (!getenv("LK417_SWAP_DEV")) {
		tap_skip("no swap disk", "memcg swap charge");
		return;
	}
	mkdir(owner, 0755);
	if (pipe(go) || pipe(ready)) {
		tap_ok(0, "memcg swap charge: pipe (%s)", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		char me[32], *p;

		snprintf(me, sizeof(me), "%d\n", getpid());
		if (write_file(CGROUP "/owner/cgroup.procs", me))
			_exit(10);
		p = adi_map(len);
		must_set_version(p, len, 3);
		for (size_t i = 0; i < pages; i++)
			*(volatile long *)adi_make_ptr(p + i * PG, 3) = i;
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(11);
		for (size_t i = 0; i < pages; i++)
			if (adi_get_version(p + i * PG) != 3 ||
			    *(volatile long *)adi_make_ptr(p + i * PG, 3) != (long)i)
				_exit(12);
		_exit(mismatch_load(p) == SIGSEGV ? 0 : 13);
	}
	if (read(ready[0], &c, 1) != 1) {
		tap_wait_exit0(pid, "memcg swap charge: the child versions 32 MiB in adi-mm/owner");
		return;
	}
	for (int i = 0; i < 100; i++) {
		char path[256];

		anon = memcg_stat(owner, "anon");
		if (anon >= 0 && anon < (long)len / 16)
			break;
		snprintf(path, sizeof(path), "%s/memory.reclaim", owner);
		write_file(path, "64M");
	}
	sleep(3);	/* let the per-CPU statistics reach memory.stat */
	slab = memcg_stat(owner, "slab_unreclaimable");
	tap_ok(anon >= 0 && anon < (long)len / 16,
	       "memcg swap charge: owner's versioned memory went to swap: anon got %ld bytes, want below %zu",
	       anon, len / 16);
	tap_ok(slab >= (long)pages * 32,
	       "memcg swap charge: the saved versions are owner's memory: slab_unreclaimable got %ld bytes, want at least %zu (32 a page)",
	       slab, pages * 32);
	if (write(go[1], &c, 1) != 1)
		tap_diag("memcg swap charge: cannot wake the child");
	tap_wait_exit0(pid, "memcg swap charge: back from swap, every page has its version and data (exit 10-13: cgroup, pipe, a page, no mismatch)");
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	rmdir(owner);
}

static void test_no_leak(void)
{
	pid_t pid;

	/* Without a swap disk nothing goes out: exit 1 would say nothing. */
	if (!getenv("LK417_SWAP_DEV")) {
		tap_skip("no swap disk", "no leak");
		return;
	}
	pid = fork();
	if (pid == 0) {
		size_t len = 8 * PG;
		char *p = adi_map(len);

		version_region(p, len);
		/* The exit status says which failed (the parent's message). */
		if (push_out(p, len) != 0)
			_exit(1);
		_exit(adi_counter("swap_saved") > 0 ? 0 : 2);
	}
	/* Its swap entries are freed in batches; swapoff at the end checks. */
	tap_wait_exit0(pid, "a process exits with versions of its memory on swap (%s)",
		       "exit 1: pages stayed resident, 2: no versions saved");
}

static int two_nodes(const char *what)
{
	if (getenv("LK417_NUMA") && !strcmp(getenv("LK417_NUMA"), "1"))
		return 1;
	tap_skip("one NUMA node", "%s", what);
	return 0;
}

static void test_move_pages(void)
{
	size_t len = 8 * PG;
	char *p = adi_map(len);
	void *pages[8];
	int nodes[8], status[8], ok = 1;

	if (!two_nodes("move_pages"))
		return;
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

/* 1 when every page of @p..@p+@n pages is on @node. */
static int all_on_node(char *p, int n, int node)
{
	void *pages[64];
	int status[64], ok = 1;

	for (int i = 0; i < n; i++)
		pages[i] = p + i * PG;
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0))
		return 0;
	for (int i = 0; i < n; i++)
		ok &= status[i] == node;
	return ok;
}

static int move_by_mbind(char *p, size_t len, int node)
{
	unsigned long mask = 1UL << node;

	return syscall(SYS_mbind, p, len, MPOL_BIND, &mask, 8 * sizeof(mask),
		       MPOL_MF_MOVE | MPOL_MF_STRICT) == 0;
}

/* The whole process, as cpuset and numactl --migrate do. */
static int move_by_migrate_pages(char *p, size_t len, int node)
{
	unsigned long from = 1UL << (1 - node), to = 1UL << node;

	(void)p;
	(void)len;
	return syscall(SYS_migrate_pages, 0, 8 * sizeof(from), &from, &to) >= 0;
}

/* A versioned region, moved to node 1, 0, 1, 0 by @move; checked each time. */
static int bounce_between_nodes(int (*move)(char *p, size_t len, int node))
{
	size_t len = 8 * PG;
	char *p = adi_map(len);
	int ok = 1;

	version_region(p, len);
	for (int round = 0; round < 4; round++) {
		int node = (round + 1) % 2;

		ok &= move(p, len, node);
		ok &= all_on_node(p, 8, node) && verify_region(p, len);
	}
	return ok;
}

static void test_mbind(void)
{
	if (two_nodes("mbind"))
		tap_ok(bounce_between_nodes(move_by_mbind),
		       "mbind(MPOL_BIND, MPOL_MF_MOVE) back and forth keeps every version");
}

static void test_migrate_pages(void)
{
	if (two_nodes("migrate_pages"))
		tap_ok(bounce_between_nodes(move_by_migrate_pages),
		       "migrate_pages of the whole process back and forth keeps every version");
}

/* The page frame of each page of @p (0 when not readable). */
static void pfns(char *p, int n, uint64_t *pfn)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);

	for (int i = 0; i < n; i++) {
		uint64_t e = 0;

		if (fd < 0 || pread(fd, &e, 8, ((uintptr_t)p / PG + i) * 8) != 8)
			e = 0;
		pfn[i] = e & ((1ULL << 55) - 1);
	}
	if (fd >= 0)
		close(fd);
}

/* Try to put the pages of @p..@p+@len on @node only (a hint, no move). */
static void prefer_node(char *p, size_t len, int node)
{
	unsigned long mask = 1UL << node;

	if (getenv("LK417_NUMA") && !strcmp(getenv("LK417_NUMA"), "1"))
		syscall(SYS_mbind, p, len, MPOL_PREFERRED, &mask, 8 * sizeof(mask), 0);
}

static int compact_node0(void)
{
	int fd = open("/sys/devices/system/node/node0/compact", O_WRONLY);

	if (fd < 0)
		fd = open("/proc/sys/vm/compact_memory", O_WRONLY);
	if (fd < 0)
		return -1;
	if (write(fd, "1", 1) != 1) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/*
 * The compactor moves the used pages at the bottom of a zone into free
 * pages at its top.  Spread the region thin: fault its pages in one by
 * one between large fillers, then free the fillers, so that the region's
 * pages sit among free memory over a wide span of node 0 and those in
 * the lower part must move.
 */
static void test_compaction(void)
{
	enum { N = 64 };
	size_t len = N * PG, gap = 3UL << 20;
	uint64_t before[N], after[N];
	char *p = adi_map(len), *fill;
	int moved = 0, tries;

	fill = mmap(NULL, N * gap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fill == MAP_FAILED) {
		tap_ok(0, "compaction: map %zu MiB of filler (%s)", N * gap >> 20, strerror(errno));
		return;
	}
	/*
	 * Small pages, like the region's: with transparent huge pages
	 * "always" (Debian's default) the fillers came as huge pages from
	 * the buddy allocator while the region's pages came together from
	 * the per-CPU lists, and compaction found nothing to move (0 of 64
	 * on Debian's configuration).
	 */
	madvise(fill, N * gap, MADV_NOHUGEPAGE);
	prefer_node(fill, N * gap, 0);
	prefer_node(p, len, 0);
	for (int i = 0; i < N; i++) {
		memset(fill + i * gap, 1, gap);
		p[i * PG] = 0;
	}
	version_region(p, len);
	munmap(fill, N * gap);
	pfns(p, N, before);
	/* A page on a per-CPU LRU batch is not isolated: a second pass gets it. */
	for (tries = 0; tries < 3 && !moved; tries++) {
		if (compact_node0()) {
			tap_skip("no compaction control in sysfs or procfs", "compaction");
			return;
		}
		pfns(p, N, after);
		for (int i = 0; i < N; i++)
			moved += before[i] && after[i] && before[i] != after[i];
	}
	tap_ok(moved > 0, "compaction moved %d of the %d spread-out versioned pages (%d pass(es))",
	       moved, N, tries);
	expect_region(p, len, "after compaction every block keeps its version and data");
	expect_mismatch_caught(p, "after compaction a mismatch is still caught");
}

/*
 * Matching loads from every 4 KiB of [p, p + len), versioned by
 * version_region(), are decided on the page tables alone: "lockless"
 * counts each of them (a page table walk that stopped at the huge entry
 * would send them all to the locked path).
 */
static void expect_lockless_loads(char *p, size_t len, const char *what)
{
	long loads = 0, lockless = adi_counter("lockless");
	uint64_t sum = 0, want = 0;

	if (lockless < 0) {
		tap_skip("no /sys/kernel/debug/adi/lockless", "%s: lockless loads", what);
		return;
	}
	for (size_t off = 0; off < len; off += 4096, loads++) {
		size_t b = off / BLK;

		sum += *(volatile uint64_t *)adi_make_ptr(p + off, 1 + b % 14);
		want += b * 3 + 1;
	}
	tap_eq_long(adi_counter("lockless") - lockless, loads,
		    "%s: every matching load decided without a lock", what);
	tap_eq_long(sum, want, "%s: and the loads read the data", what);
}

/* AnonHugePages of the mapping at @p, in kB. */
static long anon_huge_kb(char *p)
{
	char line[256], want[32];
	long kb = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, want, strlen(want)))
			in = 1;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	if (f)
		fclose(f);
	return kb;
}

static void test_thp(void)
{
	size_t hlen = 2UL << 20;
	char *raw = mmap(NULL, 2 * hlen, PROT_READ | PROT_WRITE | PROT_ADI,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = (char *)(((uintptr_t)raw + hlen - 1) & ~(hlen - 1));
	int ret, err;
	long kb;

	/* Small pages first, so that the collapse copies them. */
	munmap(raw, p - raw);
	munmap(p + hlen, raw + 2 * hlen - (p + hlen));
	madvise(p, hlen, MADV_NOHUGEPAGE);
	version_region(p, hlen);
	madvise(p, hlen, MADV_HUGEPAGE);
	ret = madvise(p, hlen, MADV_COLLAPSE);
	err = errno;	/* before anon_huge_kb()'s stdio can change it */
	kb = anon_huge_kb(p);
	tap_eq_long(ret, 0, "MADV_COLLAPSE of the versioned small pages succeeds (%s)",
		    ret ? tap_errname(err) : "ok");
	tap_eq_long(kb, 2048, "MADV_COLLAPSE made a huge page of them: AnonHugePages in kB");
	expect_region(p, hlen, "the collapsed huge page keeps every version");
	expect_mismatch_caught(p, "the collapsed huge page still catches a mismatch");
	expect_lockless_loads(p, hlen, "the collapsed huge page");
	/* Split it again: mprotect half of it. */
	mprotect(p, hlen / 2, PROT_READ | PROT_ADI);
	mprotect(p, hlen / 2, PROT_READ | PROT_WRITE | PROT_ADI);
	kb = anon_huge_kb(p);
	expect_region(p, hlen, "after a split by partial mprotect (AnonHugePages now %ld kB)", kb);
	expect_mismatch_caught(p, "after a split by partial mprotect a mismatch is still caught");
}

static void test_hugetlb(void)
{
	size_t len = 2 << 20;
	char *p, first[48] = "none";
	int fd;
	long stale = 0;
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
	expect_region(p, 64 * PG, "hugetlb page versioned");
	expect_mismatch_caught(p, "hugetlb page checked: a mismatch is caught");
	pid = fork();
	if (pid == 0) {
		p[8] = 1;
		_exit(verify_region(p, 64 * PG) ? 0 : 1);
	}
	tap_wait_exit0(pid, "hugetlb copy-on-write after fork keeps every version in the child");
	expect_region(p, 64 * PG,
		      "hugetlb copy-on-write after fork keeps every version in the parent");
	munmap(p, len);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_ADI,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (!tap_ok(p != MAP_FAILED, "a hugetlb page from the pool maps again (%s)",
		    p == MAP_FAILED ? tap_errname(errno) : "ok"))
		return;
	for (size_t b = 0; b < 64 * PG / BLK; b++) {
		int v = adi_get_version(p + b * BLK);

		if (v != 0 && stale++ == 0)
			snprintf(first, sizeof(first), "block %zu, version %d", b, v);
	}
	/* Blocks with another version: want none. */
	tap_eq_long(stale, 0,
		    "a hugetlb page from the pool comes back with version 0 (first other: %s)",
		    first);
}

/*
 * fork() cannot share a page pinned for DMA copy-on-write: it copies it
 * for the child at once (copy_present_page(), under the page table
 * locks, where the versions' record cannot be allocated with sleeping).
 * io_uring's registered buffers are such a pin.
 */
static void test_pinned_fork(void)
{
	size_t len = 4 * PG;
	char *p = adi_map(len);
	struct iovec iov = { p, len };
	struct io_uring_params params = { 0 };
	uint64_t parent_pfn[4];
	int ring;
	pid_t pid;

	ring = syscall(__NR_io_uring_setup, 4, &params);
	if (ring < 0) {
		tap_skip("no io_uring", "io_uring_setup: %s", strerror(errno));
		return;
	}
	version_region(p, len);
	if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1)) {
		tap_ok(0, "io_uring pins the versioned buffer (got %s, want success)", strerror(errno));
		close(ring);
		return;
	}
	pfns(p, 4, parent_pfn);
	pid = fork();
	if (pid == 0) {
		uint64_t child_pfn[4];
		int copied = 1;

		pfns(p, 4, child_pfn);
		for (int i = 0; i < 4; i++)
			copied &= child_pfn[i] && child_pfn[i] != parent_pfn[i];
		if (!copied)
			_exit(2);
		if (!verify_region(p, len))
			_exit(1);
		_exit(mismatch_caught(p) ? 0 : 3);
	}
	tap_wait_exit0(pid, "a pinned page copied at fork keeps every version in the child (%s)",
		       "exit 2: not copied, 1: versions lost, 3: mismatch not caught");
	expect_region(p, len, "and the parent's pinned pages keep theirs");
	close(ring);
}

/* khugepaged's file path: small shmem pages copied into a new huge page. */
static void test_shmem_collapse(void)
{
	size_t hlen = 2UL << 20;
	char *raw = mmap(NULL, 2 * hlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = (char *)(((uintptr_t)raw + hlen - 1) & ~(hlen - 1));
	int fd = memfd_create("adi-collapse", 0), ret;

	if (raw == MAP_FAILED || fd < 0 || ftruncate(fd, hlen)) {
		tap_ok(0, "memfd of 2 MiB (%s)", strerror(errno));
		return;
	}
	/* File offset 0 at a 2 MiB boundary, so the huge page can be mapped. */
	p = mmap(p, hlen, PROT_READ | PROT_WRITE | PROT_ADI, MAP_SHARED | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED) {
		tap_ok(0, "PROT_ADI on the memfd (%s)", strerror(errno));
		return;
	}
	version_region(p, hlen);
	ret = madvise(p, hlen, MADV_COLLAPSE);
	tap_ok(ret == 0, "MADV_COLLAPSE made a huge page of versioned shmem pages (got %s, want success)",
	       ret ? strerror(errno) : "success");
	expect_region(p, hlen, "the collapsed shmem huge page keeps every version");
	expect_mismatch_caught(p, "the collapsed shmem huge page still catches a mismatch");
	munmap(raw, 2 * hlen);
	close(fd);
}

/* A hugetlb page moved to the other node: 512 small copies, one record each. */
static void test_hugetlb_migrate(void)
{
	size_t len = 2UL << 20;
	int moves = 0, failed_moves = 0, lost = 0;
	char first_failure[64] = "none";
	void *page;
	char *p;

	if (!two_nodes("hugetlb migration"))
		return;
	write_file("/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "2");
	write_file("/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages", "2");
	p = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_ADI,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED) {
		tap_skip("no huge pages", "hugetlb migration: %s", strerror(errno));
		return;
	}
	version_region(p, len);
	page = p;
	for (int round = 0; round < 4; round++) {
		/*
		 * status starts as -1, never a node: a call that does not write
		 * it fails the round, and none reads the round before's.
		 */
		int node = round % 2, before = -1, status = -1;
		long ret;

		syscall(SYS_move_pages, 0, 1, &page, NULL, &before, 0);
		ret = syscall(SYS_move_pages, 0, 1, &page, &node, &status, MPOL_MF_MOVE);
		if ((ret || status != node) && failed_moves++ == 0)
			snprintf(first_failure, sizeof(first_failure),
				 "round %d: returned %ld (%s), status %d, want node %d",
				 round, ret, ret ? tap_errname(errno) : "ok", ret ? -1 : status,
				 node);
		moves += before != node && status == node;
		lost += !verify_region(p, len);
	}
	tap_eq_long(failed_moves, 0,
		    "move_pages of a versioned hugetlb page: failed moves (first: %s)",
		    first_failure);
	tap_eq_long(lost, 0, "move_pages of a versioned hugetlb page: rounds that lost a version");
	tap_ok(moves >= 2, "move_pages of a versioned hugetlb page: got %d real moves, want 2+",
	       moves);
	munmap(p, len);
}

static long ksm_value(const char *name)
{
	return read_number("/sys/kernel/mm/ksm", name);
}

static void ksm_write(const char *name, const char *value)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/mm/ksm/%s", name);
	if (write_file(path, value))
		tap_diag("ksm: cannot write %s to %s", value, path);
}

/* How long ksmd may take for three full scans of this small process. */
#define KSM_WAIT_S	60

/*
 * Wait until ksmd has completed three more full scans.  Bounded: with
 * ksmd not running (its run file not written) or full_scans unreadable
 * (-1), the count never reaches the target and an unbounded wait would
 * hang the suite until its timeout.  0 after a failed test that says so.
 */
static int ksm_wait_full_scans(const char *why)
{
	long full = ksm_value("full_scans"), now;
	int waited = 0;

	while ((now = ksm_value("full_scans")) < full + 3 && waited < KSM_WAIT_S * 1000) {
		usleep(20000);
		waited += 20;
	}
	if (now >= full + 3)
		return 1;
	return tap_ok(0, "%s: ksmd does 3 full scans in %d s: got %ld -> %ld, want %ld", why,
		      KSM_WAIT_S, full, now, full + 3);
}

/*
 * Pages of @p..@p+@n pages that share their frame with another page of
 * the range: merged by KSM.  (6.12's /proc/kpageflags cannot tell: it
 * reports KPF_KSM for every anonymous page.)
 */
static int ksm_pages_in(char *p, int n)
{
	uint64_t pfn[64];
	int count = 0;

	if (n > 64)
		return -1;
	pfns(p, n, pfn);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (j != i && pfn[i] && pfn[i] == pfn[j]) {
				count++;
				break;
			}
	return count;
}

/*
 * In a process with KSM on for all its memory, mprotect(PROT_ADI) on
 * plain memory that ksmd has merged takes it out of KSM: the pages are
 * unmerged, take versions of their own and are never merged again.
 */
static void unmerge_by_mprotect(char *plain, size_t len)
{
	int n = len / PG, merged = ksm_pages_in(plain, n), ret, err, bad = 0;
	char first_bad[96] = "none";

	ret = mprotect(plain, len, PROT_READ | PROT_WRITE | PROT_ADI);
	err = errno;	/* before anything below can change it */
	tap_ok(merged > 0, "ksmd had merged the plain pages: got %d merged, want at least 1",
	       merged);
	tap_eq_long(ret, 0, "mprotect(PROT_ADI) on merged pages of a merge-all process (%s)",
		    ret ? tap_errname(err) : "ok");
	tap_eq_long(ksm_pages_in(plain, n), 0, "mprotect(PROT_ADI) unmerges them: pages merged");
	for (int i = 0; i < n; i++)
		must_set_version(plain + i * PG, PG, 1 + i % 14);
	if (!ksm_wait_full_scans("PROT_ADI pages after unmerging"))
		return;
	for (int i = 0; i < n; i++) {
		/* The data is read only through the right version: else it faults. */
		int v = adi_get_version(plain + i * PG + PG - BLK);
		uint64_t data = 0;

		if (v == 1 + i % 14)
			data = *(volatile uint64_t *)adi_make_ptr(plain + i * PG, 1 + i % 14);
		if ((v != 1 + i % 14 || data != 0x5a5a5a5a5a5a5a5aULL) && bad++ == 0)
			snprintf(first_bad, sizeof(first_bad),
				 "page %d: version %d, data %#llx; want version %d, data 0x5a..5a",
				 i, v, (unsigned long long)data, 1 + i % 14);
	}
	tap_eq_long(bad, 0, "those pages keep their own versions and data: wrong (first: %s)",
		    first_bad);
	tap_eq_long(ksm_pages_in(plain, n), 0, "and ksmd leaves them alone: pages merged");
}

static void test_ksm(void)
{
	size_t len = 32 * PG;
	char *adi, *plain;
	long shared, sharing;
	int version;

	if (prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0)) {
		tap_skip("no KSM", "ksm");
		return;
	}
	adi = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_ADI, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* Nothing below can run without it: memset() would write to MAP_FAILED. */
	if (!tap_ok(adi != MAP_FAILED,
		    "PROT_ADI works in a process with KSM merging enabled for all memory (%s)",
		    adi == MAP_FAILED ? tap_errname(errno) : "ok"))
		return;
	for (size_t i = 0; i < len; i += PG) {
		memset(adi + i, 0x5a, PG);
		must_set_version(adi + i, PG, 3);
	}
	ksm_write("pages_to_scan", "1000");
	ksm_write("sleep_millisecs", "10");
	ksm_write("run", "1");
	if (!ksm_wait_full_scans("identical ADI pages"))
		goto out;
	shared = ksm_value("pages_shared");
	sharing = ksm_value("pages_sharing");
	version = adi_get_version(adi + PG);
	tap_eq_long(shared, 0, "ksmd never merged the identical ADI pages: pages_shared");
	tap_eq_long(sharing, 0, "ksmd never merged the identical ADI pages: pages_sharing");
	tap_eq_long(version, 3, "the identical ADI pages keep their version after ksmd's scans");
	/* Control: identical plain pages in the same process are merged. */
	plain = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!tap_ok(plain != MAP_FAILED, "control: plain memory maps (%s)",
		    plain == MAP_FAILED ? tap_errname(errno) : "ok"))
		goto out;
	memset(plain, 0x5a, len);
	if (!ksm_wait_full_scans("identical plain pages"))
		goto out;
	sharing = ksm_value("pages_sharing");
	tap_ok(sharing > 0, "control: ksmd merges identical plain pages: got %ld, want > 0",
	       sharing);
	unmerge_by_mprotect(plain, len);
out:
	ksm_write("run", "2");
}

/* Page i of a region: version 1 + i % 14 on all its blocks, data i. */
static void version_pages(char *p, size_t len)
{
	for (size_t i = 0; i < len / PG; i++) {
		must_set_version(p + i * PG, PG, 1 + i % 14);
		*(volatile uint64_t *)adi_make_ptr(p + i * PG + 8 * (i % 500), 1 + i % 14) = i;
	}
}

static size_t verify_pages(char *p, size_t len)
{
	size_t bad = 0;

	for (size_t i = 0; i < len / PG; i++) {
		unsigned int v = 1 + i % 14;

		if (adi_get_version(p + i * PG + 64 * (i % 64)) != (int)v ||
		    *(volatile uint64_t *)adi_make_ptr(p + i * PG + 8 * (i % 500), v) != i)
			bad++;
	}
	return bad;
}

/*
 * memory.max holds for versioned memory: a process in a cgroup of its own
 * (memory.max 16 MiB, memory.oom.group on, a swap limit per case) that
 * versions more than fits, copies versioned pages on write or sends them
 * to swap must be stopped by the cgroup's OOM killer (or an ENOMEM from
 * PR_ADI_SET_VERSION), and memory.peak may pass memory.max only by what
 * the forced charges of version records add: 32 bytes a page copy, whose
 * next allocation reclaims, so MAX_SLACK is generous.
 */
#define MAX_LIMIT	(16UL << 20)
#define MAX_SLACK	(256UL << 10)

enum max_case { MAX_VERSIONING, MAX_COW, MAX_SWAP };

/* Version @len bytes page by page, each page written through its version. */
static void grow_versioned(char *p, size_t len)
{
	for (size_t i = 0; i < len / PG; i++) {
		if (adi_set_version(p + i * PG, PG, 1 + i % 14))
			_exit(errno == ENOMEM ? 20 : 21);
		*(volatile long *)adi_make_ptr(p + i * PG, 1 + i % 14) = i;
	}
}

static void max_child(enum max_case c)
{
	size_t len = c == MAX_COW ? 12UL << 20 : 64UL << 20;
	char *p = adi_map(len);
	int status;
	pid_t pid;

	grow_versioned(p, len);
	if (c != MAX_COW)
		_exit(0);
	/* 12 MiB versioned; its copies on write need 12 MiB more. */
	pid = fork();
	if (pid == 0) {
		for (size_t i = 0; i < len / PG; i++)
			*(volatile long *)adi_make_ptr(p + i * PG, 1 + i % 14) = -1;
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		_exit(22);
	_exit(WIFSIGNALED(status) ? 23 : 0);
}

static void memcg_max_case(enum max_case c, const char *name, const char *swap_max)
{
	char cgroup[128], path[192], me[32];
	long peak, swap_peak, ooms;
	int status = -1;
	pid_t pid;

	snprintf(cgroup, sizeof(cgroup), CGROUP "/max-%d", c);
	rmdir(cgroup);
	if (mkdir(cgroup, 0755)) {
		tap_ok(0, "%s: mkdir %s (%s)", name, cgroup, tap_errname(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/memory.max", cgroup);
	snprintf(me, sizeof(me), "%lu", MAX_LIMIT);
	write_file(path, me);
	snprintf(path, sizeof(path), "%s/memory.swap.max", cgroup);
	write_file(path, swap_max);
	snprintf(path, sizeof(path), "%s/memory.oom.group", cgroup);
	write_file(path, "1");
	pid = fork();
	if (pid == 0) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
		snprintf(me, sizeof(me), "%d\n", getpid());
		if (write_file(path, me))
			_exit(24);
		max_child(c);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		tap_ok(0, "%s: fork or wait (%s)", name, tap_errname(errno));
		return;
	}
	peak = read_number(cgroup, "memory.peak");
	swap_peak = read_number(cgroup, "memory.swap.peak");
	ooms = memcg_key(cgroup, "memory.events", "oom_kill");
	tap_ok((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && ooms > 0) ||
	       (WIFEXITED(status) && WEXITSTATUS(status) == 20),
	       "%s: stopped at memory.max: got status %#x, %ld OOM kills; want SIGKILL by the cgroup's OOM killer, or exit 20 (ENOMEM from PR_ADI_SET_VERSION)",
	       name, status, ooms);
	tap_ok(peak > 0 && peak <= (long)(MAX_LIMIT + MAX_SLACK),
	       "%s: memory.peak got %ld, want <= %lu (memory.max + %lu)",
	       name, peak, MAX_LIMIT + MAX_SLACK, MAX_SLACK);
	if (strcmp(swap_max, "0"))
		tap_ok(swap_peak >= 0 && swap_peak <= atol(swap_max),
		       "%s: memory.swap.peak got %ld, want <= %s (memory.swap.max)",
		       name, swap_peak, swap_max);
	rmdir(cgroup);
}

static void test_memcg_max(void)
{
	memcg_max_case(MAX_VERSIONING, "memory.max: versioning 64 MiB", "0");
	memcg_max_case(MAX_COW, "memory.max: copies on write of 12 MiB versioned", "0");
	if (!getenv("LK417_SWAP_DEV")) {
		tap_skip("no swap disk", "memory.max: versioning 64 MiB through 8 MiB of swap");
		return;
	}
	memcg_max_case(MAX_SWAP, "memory.max: versioning 64 MiB through 8 MiB of swap",
		       "8388608");
}

/* A working set three times the cgroup's memory limit goes through swap. */
static void test_memcg_pressure(void)
{
	size_t len = 48UL << 20;
	char *p;
	size_t bad;
	long restored = adi_counter("swap_restored");
	struct sysinfo si;

	if (!getenv("LK417_SWAP_DEV")) {
		tap_skip("no swap disk", "memory cgroup pressure");
		return;
	}
	/*
	 * Without swap (swapon failed in main()) nothing over memory.high can
	 * be reclaimed and the kernel throttles each charge over it for up to
	 * two seconds: 32 MiB over takes minutes, near the suite's timeout.
	 */
	if (sysinfo(&si) || !si.totalswap) {
		tap_ok(0, "memory cgroup pressure: swap is on: got none, want %s",
		       getenv("LK417_SWAP_DEV"));
		return;
	}
	mkdir(CGROUP "/pressure", 0755);
	/* memory.high reclaims and throttles; memory.max would OOM-kill. */
	write_file(CGROUP "/pressure/memory.high", "16M");
	{
		char pid[32];

		snprintf(pid, sizeof(pid), "%d\n", getpid());
		write_file(CGROUP "/pressure/cgroup.procs", pid);
	}
	p = adi_map(len);
	version_pages(p, len);
	bad = verify_pages(p, len);
	tap_eq_long(bad, 0, "48 MiB versioned under a 16 MiB memory.high: pages wrong after swap");
	tap_grew(restored, adi_counter("swap_restored"),
		 "48 MiB versioned under a 16 MiB memory.high: versions restored from swap");
}

/*
 * Stress: processes version random regions with random versions while
 * others push memory out, migrate it between nodes and fork.  At the end
 * every page must have what its owner last gave it.
 */
static void stress_worker(unsigned int seed, int seconds)
{
	size_t len = 64 * PG;
	char *p = adi_map(len);
	unsigned char ver[64];
	time_t end = time(NULL) + seconds;
	size_t bad = 0;

	srand(seed);
	for (int i = 0; i < 64; i++) {
		ver[i] = 1 + rand() % 14;
		must_set_version(p + i * PG, PG, ver[i]);
		*(volatile uint64_t *)adi_make_ptr(p + i * PG, ver[i]) = i;
	}
	while (time(NULL) < end) {
		int i = rand() % 64, action = rand() % 4;
		void *page = p + i * PG;
		int node = rand() % 2, status;

		if (action == 0) {
			ver[i] = 1 + rand() % 14;
			must_set_version(page, PG, ver[i]);
			*(volatile uint64_t *)adi_make_ptr(page, ver[i]) = i;
		} else if (action == 1) {
			madvise(page, PG, MADV_PAGEOUT);
		} else if (action == 2) {
			syscall(SYS_move_pages, 0, 1, &page, &node, &status, MPOL_MF_MOVE);
		} else {
			pid_t pid = fork();

			if (pid == 0) {
				*(volatile uint64_t *)adi_make_ptr(page, ver[i]) = i;
				_exit(adi_get_version(page) == ver[i] ? 0 : 1);
			}
			/* No child or no status: a failure, not a stale status read. */
			if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
			    WEXITSTATUS(status))
				bad++;
		}
	}
	for (int i = 0; i < 64; i++)
		if (adi_get_version(p + i * PG) != ver[i] ||
		    *(volatile uint64_t *)adi_make_ptr(p + i * PG, ver[i]) != (uint64_t)i)
			bad++;
	_exit(bad ? 1 : 0);
}

static void test_stress(void)
{
	const char *stress = getenv("LK417_STRESS");
	int seconds = stress && !strcmp(stress, "1") ? 600 : 30, failed = 0;
	unsigned int seed = (unsigned int)time(NULL);
	pid_t pid[4];

	tap_diag("stress: 4 processes for %d s, seed %u", seconds, seed);
	for (int w = 0; w < 4; w++) {
		pid[w] = fork();
		if (pid[w] == 0)
			stress_worker(seed + w, seconds);
	}
	/*
	 * Each worker by its pid: a worker that never started is a failed
	 * one, and no wait() can return an earlier worker's status for it.
	 */
	for (int w = 0; w < 4; w++) {
		int status = -1;

		failed += pid[w] < 0 || waitpid(pid[w], &status, 0) != pid[w] ||
			  !WIFEXITED(status) || WEXITSTATUS(status);
	}
	tap_ok(failed == 0, "stress (versioning, pageout, migration, fork for %d s, seed %u): no version lost (%d of 4 workers failed)",
	       seconds, seed, failed);
}

int main(void)
{
	tap_init();
	join_cgroup();
	if (getenv("LK417_SWAP_DEV")) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "mkswap -q %s >/dev/null && swapon %s",
			 getenv("LK417_SWAP_DEV"), getenv("LK417_SWAP_DEV"));
		if (system(cmd))
			tap_diag("could not enable swap on %s", getenv("LK417_SWAP_DEV"));
	}
	tap_group("cow", test_cow);
	tap_group("swap", test_swap);
	tap_group("swap-save-failure", test_swap_save_failure);
	tap_group("swap-restore-failure", test_swap_restore_failure);
	tap_group("memcg-swap-charge", test_memcg_swap_charge);
	tap_group("no-leak", test_no_leak);
	tap_group("move-pages", test_move_pages);
	tap_group("mbind", test_mbind);
	tap_group("migrate-pages", test_migrate_pages);
	tap_group("compaction", test_compaction);
	tap_group("thp", test_thp);
	tap_group("hugetlb", test_hugetlb);
	tap_group("hugetlb-migrate", test_hugetlb_migrate);
	tap_group("pinned-fork", test_pinned_fork);
	tap_group("shmem-collapse", test_shmem_collapse);
	tap_group("ksm", test_ksm);
	tap_group("memcg-pressure", test_memcg_pressure);
	tap_group("memcg-max", test_memcg_max);
	tap_group("stress", test_stress);
	if (getenv("LK417_SWAP_DEV")) {
		char cmd[256];

		long saved;
		int ret;

		snprintf(cmd, sizeof(cmd), "swapoff %s", getenv("LK417_SWAP_DEV"));
		ret = system(cmd);
		saved = adi_counter("swap_saved");
		/* system()'s status: 0 exactly when the shell exited with 0. */
		tap_exit0(ret, "after the processes exit, %s succeeds", cmd);
		tap_eq_long(saved, 0, "after the processes exit and swapoff, saved versions left");
	}
	return tap_done();
}
