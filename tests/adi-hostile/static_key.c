// SPDX-License-Identifier: GPL-2.0
/*
 * Run first in a fresh boot.  The kernel's checks of user memory sit
 * behind a static key, kept on by counted references that
 * /sys/kernel/debug/adi/in_use shows: one for each process that has asked
 * for PROT_ADI.  A refused request takes none.  /sys/kernel/debug/adi/paths_on
 * shows the key itself: it goes off about a second after the count reaches
 * 0.  Versions need no reference: a page flag marks the pages that have
 * them, and /sys/kernel/debug/adi/tagged_pages counts those pages, which
 * keep their versions with the key off.
 *
 * This process never sets versions itself: every reference and versioned
 * page is a child's, so each count below is exact.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adi_test.h"
#include "libadi.h"
#include "tap.h"

#define PAGE 4096
#define SETTLE_MS 5000	/* the key goes off 1 s after its last reference */

static long in_use(void)
{
	return adi_counter("in_use");
}

static long paths_on(void)
{
	return adi_counter("paths_on");
}

/*
 * A page freed by munmap() or a segment's removal can still be held by
 * another CPU's batch of pages on their way to the LRU; dropping caches
 * drains every CPU's batch (lru_add_drain_all()) and frees it.
 */
static void drain_lru_batches(void)
{
	FILE *f = fopen("/proc/sys/vm/drop_caches", "w");

	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
}

/* Poll @name until it is @want or SETTLE_MS pass; returns the last value. */
static long settles_to(const char *name, long want, long *waited_ms)
{
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	long v = adi_counter(name);

	for (*waited_ms = 0; v != want && *waited_ms < SETTLE_MS; *waited_ms += 100) {
		if (*waited_ms % 1000 == 0)
			drain_lru_batches();
		nanosleep(&tick, NULL);
		v = adi_counter(name);
	}
	return v;
}

/* /sys/kernel/debug/adi/@name reaches @want within SETTLE_MS. */
static void reaches(const char *name, long want, const char *what)
{
	long waited, v = settles_to(name, want, &waited);

	tap_ok(v == want, "%s: %s (got %ld after %ld ms, want %ld within %d ms)",
	       what, name, v, waited, want, SETTLE_MS);
}

/* force_sig_fault() overrides SIG_IGN: catch the SEGV_ACCADI instead. */
static void ignore(int sig)
{
	(void)sig;
}

/* Right after the fork(): a failed one (@pid -1) is reported with its errno. */
static void wait_child(pid_t pid, const char *what)
{
	tap_wait_exit0(pid, "%s: exits 0", what);
}

/*
 * Child: a PROT_ADI mapping takes this process's reference (on the way
 * back from mmap()), before any version is set: a versioned pointer into
 * version-0 memory must work in system calls at once.  A set-version the
 * kernel refuses adds nothing to it.
 */
static int prot_adi_takes_reference(void)
{
	char *adi = mmap(NULL, PAGE, PROT_READ | PROT_ADI, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ret;

	if (adi == MAP_FAILED)
		return 1;
	tap_eq_long(in_use(), 1, "a PROT_ADI mapping holds its process's reference: in_use");
	tap_eq_long(paths_on(), 1, "a PROT_ADI mapping switches the paths on: paths_on");
	errno = 0;
	ret = adi_set_version(adi, 64, 5);
	tap_errno(ret, EACCES, "set-version on read-only ADI memory");
	tap_eq_long(in_use(), 1, "a refused set-version takes no further reference: in_use");
	return 0;
}

static void failed_requests_take_nothing(void)
{
	char *plain, *adi;
	pid_t pid;
	int fd, ret;

	tap_eq_long(in_use(), 0, "fresh boot: in_use");
	tap_eq_long(paths_on(), 0, "fresh boot: paths_on");
	plain = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = 0;
	ret = adi_set_version(plain, 64, 5);
	tap_errno(ret, EACCES, "set-version on plain memory");
	tap_eq_long(in_use(), 0, "a failed set-version takes no reference: in_use");
	/* Refused for its flags: PROT_ADI on a regular file's page cache. */
	fd = open("/proc/self/exe", O_RDONLY);
	adi = mmap(NULL, PAGE, PROT_READ | PROT_ADI, MAP_PRIVATE, fd, 0);
	close(fd);
	tap_ok(adi == MAP_FAILED, "PROT_ADI on a regular file is refused (got %s, want MAP_FAILED)",
	       adi == MAP_FAILED ? "MAP_FAILED" : "a mapping");
	tap_eq_long(in_use(), 0, "a refused PROT_ADI request takes no reference: in_use");
	tap_eq_long(paths_on(), 0, "failed and refused requests leave the paths off: paths_on");
	munmap(plain, PAGE);
	pid = fork();
	if (pid == 0)
		_exit(prot_adi_takes_reference());
	wait_child(pid, "child with a PROT_ADI mapping");
	reaches("in_use", 0, "the PROT_ADI child exited: its reference is gone");
	reaches("paths_on", 0, "the PROT_ADI child exited: the version paths are off again");
}

/* Child: version two pages, fork, unmap one page, exit. */
static int version_fork_unmap(void)
{
	char *adi = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE | PROT_ADI,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t pid;

	tap_eq_long(adi_set_version(adi, 2 * PAGE, 5), 0, "set-version on two ADI pages");
	tap_eq_long(in_use(), 1, "only the process holds a reference, not its versioned pages: in_use");
	tap_eq_long(adi_counter("tagged_pages"), 2, "two pages have versions: tagged_pages");
	tap_eq_long(paths_on(), 1, "a valid set-version switches the paths on: paths_on");
	pid = fork();
	if (pid == 0) {
		/* Copy-on-write shares the records: only the mm is new. */
		tap_eq_long(in_use(), 2, "a fork()ed child holds its own reference: in_use");
		_exit(0);
	}
	wait_child(pid, "forked child");
	/* exit_mmap() drops it before the parent hears of the exit. */
	tap_eq_long(in_use(), 1, "the forked child's exit drops its reference: in_use");
	munmap(adi, PAGE);
	reaches("tagged_pages", 1, "munmap() of a versioned page frees its record");
	return 0;
}

static void process_references(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(version_fork_unmap());
	wait_child(pid, "versioning child");
	reaches("tagged_pages", 0, "the last ADI process exited: its pages' records are freed");
	reaches("in_use", 0, "the last ADI process exited: no reference is left");
	reaches("paths_on", 0, "the last ADI process exited: the version paths are off again");
}

/* Child: attach @id, make it ADI memory and version it (or read it back). */
static int shm_child(int id, int set)
{
	char *p = shmat(id, NULL, 0);

	if (p == (void *)-1 || mprotect(p, PAGE, PROT_READ | PROT_WRITE | PROT_ADI))
		return 1;
	if (set)
		return adi_set_version(p, PAGE, 7) ? 2 : 0;
	tap_eq_long(adi_get_version(p + 64), 7,
		    "a later process reads the versions of the exited one's shared page");
	return 0;
}

static void shared_versions_outlive_their_process(void)
{
	int id = shmget(IPC_PRIVATE, PAGE, IPC_CREAT | 0600);
	pid_t pid;

	if (id < 0) {
		tap_skip("shmget failed", "SysV shared memory keeps its versions");
		return;
	}
	pid = fork();
	if (pid == 0)
		_exit(shm_child(id, 1));
	wait_child(pid, "child versioning a SysV segment");
	/* Its mm's reference went with it; the shared page keeps its versions. */
	tap_eq_long(in_use(), 0, "the segment's versioned page holds no reference after its process exited: in_use");
	reaches("paths_on", 0, "no ADI process is left: the paths are off");
	tap_eq_long(adi_counter("tagged_pages"), 1, "the segment's page keeps its versions with the paths off: tagged_pages");
	pid = fork();
	if (pid == 0)
		_exit(shm_child(id, 0));
	wait_child(pid, "child reading the segment's versions");
	shmctl(id, IPC_RMID, NULL);
	reaches("tagged_pages", 0, "removing the segment frees its versioned page and its record");
	reaches("in_use", 0, "removing the segment: no reference is left");
	reaches("paths_on", 0, "removing the segment: the paths are off again");
}

int main(void)
{
	tap_init();
	signal(SIGSEGV, ignore);	/* non-ADI memory raises SEGV_ACCADI */
	failed_requests_take_nothing();
	process_references();
	shared_versions_outlive_their_process();
	return tap_done();
}
