// SPDX-License-Identifier: GPL-2.0
/*
 * ADI core contract: aux vectors, PROT_ADI, the version prctl()s and
 * their bad input, load and store checks, precise mode and its
 * inheritance, version 0/0xf, tagged pointers into non-ADI memory.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adi_test.h"

static void test_caps(void)
{
	struct adi_caps caps;

	tap_ok(adi_get_caps(&caps) == 0, "aux vectors present (AT_ADI_BLKSZ)");
	tap_ok(caps.block_size == 64, "AT_ADI_BLKSZ is 64 (got %lu)", caps.block_size);
	tap_ok(caps.version_bits == 4, "AT_ADI_NBITS is 4 (got %lu)", caps.version_bits);
	tap_ok(caps.ue_version == 0, "AT_ADI_UEONADI is 0 (got %lu)", caps.ue_version);
}

static void test_prot(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *p, *q;
	int fd, ret;

	p = mmap(NULL, pg, PROT_READ | PROT_WRITE | PROT_ADI,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tap_ok(p != MAP_FAILED, "mmap PROT_ADI on private anonymous memory");
	tap_ok(smaps_has_ad(p), "smaps VmFlags shows 'ad' on the ADI mapping");
	tap_ok(mprotect(p, pg, PROT_READ | PROT_WRITE) == 0 && !smaps_has_ad(p),
	       "mprotect without PROT_ADI clears it");
	tap_ok(mprotect(p, pg, PROT_READ | PROT_WRITE | PROT_ADI) == 0 && smaps_has_ad(p),
	       "mprotect with PROT_ADI sets it again");
	tap_ok(mprotect(p, pg, PROT_READ | 0x20) == -1 && errno == EINVAL,
	       "an unknown PROT_ bit is still refused with EINVAL");
	munmap(p, pg);

	q = mmap(NULL, pg, PROT_READ | PROT_WRITE | PROT_ADI,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	tap_ok(q != MAP_FAILED, "mmap PROT_ADI on shared anonymous memory");
	munmap(q, pg);

	fd = memfd_create("adi", 0);
	ret = fd >= 0 ? ftruncate(fd, pg) : -1;
	q = ret ? MAP_FAILED : mmap(NULL, pg, PROT_READ | PROT_WRITE | PROT_ADI,
				    MAP_SHARED, fd, 0);
	tap_ok(q != MAP_FAILED, "mmap PROT_ADI on a memfd (shmem)");
	if (q != MAP_FAILED)
		munmap(q, pg);
	if (fd >= 0)
		close(fd);

	/* Our own executable: a regular file in the page cache (9p root). */
	fd = open("/proc/self/exe", O_RDONLY);
	q = fd < 0 ? MAP_FAILED : mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fd, 0);
	tap_ok(q != MAP_FAILED && mprotect(q, pg, PROT_READ | PROT_ADI) == -1 && errno == EINVAL,
	       "mprotect PROT_ADI on a regular-file mapping: EINVAL");
	if (q != MAP_FAILED)
		munmap(q, pg);
	q = fd < 0 ? MAP_FAILED : mmap(NULL, pg, PROT_READ | PROT_ADI, MAP_PRIVATE, fd, 0);
	tap_ok(q == MAP_FAILED && errno == EINVAL,
	       "mmap PROT_ADI of a regular file: EINVAL");
	if (fd >= 0)
		close(fd);

	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ret = madvise(p, pg, MADV_MERGEABLE);
	tap_ok(ret == 0 && mprotect(p, pg, PROT_READ | PROT_WRITE | PROT_ADI) == -1 &&
	       errno == EINVAL, "mprotect PROT_ADI on KSM-mergeable memory: EINVAL");
	munmap(p, pg);
}

static void *vvar_address(void)
{
	char line[256];
	unsigned long start = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vvar]"))
			sscanf(line, "%lx-", &start);
	if (f)
		fclose(f);
	return (void *)start;
}

static void test_prot_special(void)
{
	void *vvar = vvar_address();

	tap_ok(vvar && mprotect(vvar, 4096, PROT_READ | PROT_ADI) == -1 && errno == EINVAL,
	       "mprotect PROT_ADI on [vvar] (VM_PFNMAP): EINVAL");
}

static void test_shm(void)
{
	int id = shmget(IPC_PRIVATE, 8192, IPC_CREAT | 0600);
	char *a, *b;
	int ok;

	a = id >= 0 ? shmat(id, NULL, 0) : (void *)-1;
	tap_ok(a != (void *)-1 && mprotect(a, 8192, PROT_READ | PROT_WRITE | PROT_ADI) == 0,
	       "mprotect PROT_ADI on a SysV shm segment");
	b = shmat(id, NULL, 0);
	mprotect(b, 8192, PROT_READ | PROT_WRITE | PROT_ADI);
	must_set_version(a + 4096, 128, 9);
	ok = adi_get_version(b + 4096) == 9 && adi_get_version(b + 4096 + 64) == 9 &&
	     adi_get_version(b + 4096 + 128) == 0;
	tap_ok(ok, "a second attachment of the segment sees the same versions");
	shmdt(a);
	shmdt(b);
	shmctl(id, IPC_RMID, NULL);
}

/*
 * Where the user address space ends: 2^47 with 4-level paging, 2^56 with
 * 5-level paging (a kernel with X86_5LEVEL on a CPU with LA57, which
 * QEMU's "-cpu max" offers).  A hint above 2^47 is only honoured in the
 * latter.
 */
static unsigned long user_address_space_end(void)
{
	void *hint = (void *)(1UL << 47);
	void *q = mmap(hint, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_FIXED_NOREPLACE, -1, 0);

	if (q == MAP_FAILED)
		return 1UL << 47;
	munmap(q, 4096);
	return q == hint ? 1UL << 56 : 1UL << 47;
}

static void test_prctl_bad_input(void)
{
	char *p = adi_map(8192);
	unsigned long top;

	errno = 0;
	tap_ok(adi_set_version(p + 8, 64, 1) == -1 && errno == EINVAL, "set: unaligned address: EINVAL");
	tap_ok(adi_set_version(p, 65, 1) == -1 && errno == EINVAL, "set: unaligned length: EINVAL");
	tap_ok(adi_set_version(p, 0, 1) == -1 && errno == EINVAL, "set: zero length: EINVAL");
	tap_ok(adi_set_version(p, 64, 16) == -1 && errno == EINVAL, "set: version 16: EINVAL");
	tap_ok(prctl(PR_ADI_SET_VERSION, (unsigned long)p, 64, 1, 1) == -1 && errno == EINVAL,
	       "set: unknown flags: EINVAL");
	tap_ok(prctl(PR_ADI_SET_VERSION, (unsigned long)p, -64UL, 1, 0) == -1 && errno == EINVAL,
	       "set: range overflowing the address space: EINVAL");
	top = user_address_space_end();
	tap_ok(prctl(PR_ADI_SET_VERSION, top - 64, 0x100, 1, 0) == -1 && errno == EINVAL,
	       "set: range running past the user address space (ends at %#lx): EINVAL",
	       top);
	tap_ok(prctl(PR_ADI_GET_VERSION, (unsigned long)p, 1, 0, 0) == -1 && errno == EINVAL,
	       "get: unused argument non-zero: EINVAL");
	tap_ok(prctl(PR_ADI_SET_PRECISE, 2, 0, 0, 0) == -1 && errno == EINVAL,
	       "set precise: mode 2: EINVAL");
	tap_ok(prctl(PR_ADI_GET_PRECISE, 1, 0, 0, 0) == -1 && errno == EINVAL,
	       "get precise: argument non-zero: EINVAL");
	tap_ok(adi_get_version(p) == 0 && adi_get_version(p + 64) == 0,
	       "failed calls changed no version");
}

static void record_handler(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	caught.signo = sig;
	caught.code = si->si_code;
	caught.addr = si->si_addr;
}

static void test_not_adi_memory(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int sig, ret = 0;

	mprotect(p, pg, PROT_READ | PROT_WRITE | PROT_ADI);
	sig = TRY(ret = adi_set_version(p, 2 * pg, 3));
	/* The signal handler long-jumps out; the call itself is not seen. */
	tap_ok(sig == SIGSEGV && caught.code == SEGV_ACCADI && caught.addr == p + pg,
	       "set on a range running into non-ADI memory: SIGSEGV/SEGV_ACCADI at the first non-ADI byte (code %d, addr %p, want %p)",
	       caught.code, caught.addr, (void *)(p + pg));
	tap_ok(adi_get_version(p) == 0, "and no block of the range was versioned");

	sig = TRY(ret = adi_get_version(p + pg));
	tap_ok(sig == SIGSEGV && caught.code == SEGV_ACCADI && caught.addr == p + pg,
	       "get on non-ADI memory: SIGSEGV/SEGV_ACCADI");

	munmap(p + 2 * pg, pg);
	sig = TRY(ret = adi_set_version(p + 2 * pg, 64, 1));
	tap_ok(sig == SIGSEGV && caught.code == SEGV_ACCADI && caught.addr == p + 2 * pg,
	       "set on unmapped memory: SIGSEGV/SEGV_ACCADI");

	/* A handler that returns: then the call itself reports EACCES. */
	{
		struct sigaction sa = { .sa_sigaction = record_handler, .sa_flags = SA_SIGINFO };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, NULL);
		memset(&caught, 0, sizeof(caught));
		errno = 0;
		ret = adi_set_version(p + pg, 64, 1);
		tap_ok(ret == -1 && errno == EACCES && caught.code == SEGV_ACCADI,
		       "set on non-ADI memory, handler returns: the call fails with EACCES (ret %d, %s)",
		       ret, strerror(errno));
		signal(SIGSEGV, SIG_DFL);
	}
}

static void test_set_get(void)
{
	char *p = adi_map(2 * 4096);
	int v, ok = 1;

	for (v = 0; v < 16; v++) {
		must_set_version(p + 64 * v, 64, v);
		ok &= adi_get_version(p + 64 * v) == v;
	}
	tap_ok(ok, "versions 0-15 set and read back, one per block");
	ok = adi_get_version(p + 64 * 16) == 0 && adi_get_version(p + 64 * 16 + 63) == 0;
	tap_ok(ok, "blocks not set stay at 0");
	tap_ok(adi_get_version(p + 64 * 5 + 17) == 5 && adi_get_version(adi_make_ptr(p + 64 * 5, 3)) == 5,
	       "get takes any address in the block, versioned or not");
	must_set_version(p + 4096 - 128, 256, 7);
	tap_ok(adi_get_version(p + 4096 - 64) == 7 && adi_get_version(p + 4096 + 64) == 7 &&
	       adi_get_version(p + 4096 + 128) == 0, "a range crossing a page boundary");
	must_set_version(adi_make_ptr(p + 4096 + 128, 9), 64, 2);
	tap_ok(adi_get_version(p + 4096 + 128) == 2, "set takes a versioned address");
}

/*
 * The common case takes no lock: a load through a matching pointer into
 * a resident page of an ADI mapping is decided without mmap_lock and
 * counted in "lockless"; a mismatch goes the locked way and is reported.
 */
static void test_lockless(void)
{
	const long loads = 200;
	char *p = adi_map(4096);
	volatile uint64_t *good = adi_make_ptr(p, 5), *bad = adi_make_ptr(p, 6);
	volatile uint64_t value = 0;
	long checks, lockless;
	int i;

	if (adi_counter("checks") < 0) {
		tap_skip("no /sys/kernel/debug/adi/checks (debugfs not mounted)",
			 "lockless: matching loads decided without mmap_lock");
		return;
	}
	must_set_version(p, 4096, 5);
	((uint64_t *)p)[0] = 3;			/* resident, written once */
	checks = adi_counter("checks");
	lockless = adi_counter("lockless");
	for (i = 0; i < loads; i++)
		value += *good;
	checks = adi_counter("checks") - checks;
	lockless = lockless < 0 ? -1 : adi_counter("lockless") - lockless;
	tap_eq_long(checks, loads, "lockless: each matching load is one check");
	tap_ok(lockless >= loads - loads / 20,
	       "lockless: matching loads into a resident page decided without mmap_lock "
	       "(got %ld of %ld, want >= %ld; -1: no counter)", lockless, loads, loads - loads / 20);
	tap_eq_long(value, 3 * loads, "lockless: and read the data");

	lockless = adi_counter("lockless");
	TRY(value = *bad);
	tap_ok(is_adi_perr((void *)bad),
	       "lockless: a mismatch is still reported (code %d, want %d)", caught.code, SEGV_ADIPERR);
	tap_eq_long(adi_counter("lockless") - lockless, 0,
		    "lockless: a mismatch is not decided without the lock");
}

static void test_load_store(void)
{
	char *p = adi_map(4096);
	volatile uint64_t *good, *bad;
	volatile uint64_t value = 0;
	int sig;

	must_set_version(p, 128, 5);
	must_set_version(p + 128, 64, 6);
	((uint64_t *)p)[0] = 0x1122334455667788;
	((uint64_t *)p)[16] = 0x99;

	good = adi_make_ptr(p, 5);
	sig = TRY(value = *good);
	tap_ok(!sig && value == 0x1122334455667788, "load with the matching version reads the data");
	sig = TRY(*good = 42);
	tap_ok(!sig && ((uint64_t *)p)[0] == 42, "store with the matching version writes");

	bad = adi_make_ptr(p, 6);
	value = 0;
	sig = TRY(value = *bad);
	tap_ok(is_adi_perr((void *)bad) && value == 0,
	       "load with another version: SIGSEGV/SEGV_ADIPERR at the versioned address (code %d, addr %p)",
	       caught.code, caught.addr);
	sig = TRY(*bad = 7);
	tap_ok(is_adi_derr() && ((uint64_t *)p)[0] == 42,
	       "store, disrupting mode: SEGV_ADIDERR at the instruction, memory unchanged (code %d)",
	       caught.code);

	tap_ok(adi_set_precise(true) == 0 && adi_get_precise() == 1, "precise mode on");
	sig = TRY(*bad = 7);
	tap_ok(is_adi_perr((void *)bad) && ((uint64_t *)p)[0] == 42,
	       "store, precise mode: SEGV_ADIPERR at the data address, memory unchanged");
	adi_set_precise(false);

	/* The overflow into the next block is caught there. */
	bad = adi_make_ptr(p + 120, 5);
	sig = TRY(value = *(volatile uint64_t *)adi_make_ptr(p + 128, 5));
	tap_ok(is_adi_perr(adi_make_ptr(p + 128, 5)), "a load one block past a range is caught");
	(void)bad;

	/* Memory versions 0 and 0xf match any pointer version. */
	must_set_version(p + 256, 64, 0xf);
	sig = TRY(value = *(volatile uint64_t *)adi_make_ptr(p + 256, 3) +
		  *(volatile uint64_t *)adi_make_ptr(p + 512, 9));
	tap_ok(!sig, "memory version 0xf and 0 match any pointer version");
}

static void test_untagged_and_non_adi(void)
{
	char *p = adi_map(4096);
	char *plain = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile char *q;
	int sig;

	must_set_version(p, 64, 4);
	sig = TRY(p[0] = 1);
	tap_ok(!sig && p[0] == 1, "an unversioned pointer is not checked (documented deviation)");
	plain[100] = 77;
	q = adi_make_ptr(plain + 100, 11);
	sig = TRY(*q += 1);
	tap_ok(!sig && plain[100] == 78, "a versioned pointer into non-ADI memory works unchecked");
}

static void test_precise_inherit_child(void)
{
	_exit(adi_get_precise() == 1 ? 0 : 1);
}

static int clone_child(void *arg)
{
	(void)arg;
	return adi_get_precise() == 1 ? 0 : 1;
}

static void test_precise_inherit(void)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	int status = -1;
	pid_t pid;

	adi_set_precise(true);
	pid = fork();
	if (pid == 0)
		test_precise_inherit_child();
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork inherits precise mode");

	pid = clone(clone_child, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL);
	status = -1;
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "clone(CLONE_VM) inherits precise mode");

	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "adi_core", "--print-precise", NULL);
		_exit(2);
	}
	status = -1;
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "execve resets precise mode");
	adi_set_precise(false);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--print-precise"))
		return adi_get_precise() == 0 ? 0 : 1;

	tap_init();
	if (!adi_is_available()) {
		tap_ok(0, "ADI available (AT_ADI_BLKSZ in the aux vector)");
		return tap_done();
	}
	tap_group("caps", test_caps);
	tap_group("prot", test_prot);
	tap_group("prot-special", test_prot_special);
	tap_group("shm", test_shm);
	tap_group("prctl-bad-input", test_prctl_bad_input);
	tap_group("not-adi-memory", test_not_adi_memory);
	tap_group("set-get", test_set_get);
	tap_group("load-store", test_load_store);
	tap_group("lockless", test_lockless);
	tap_group("untagged", test_untagged_and_non_adi);
	tap_group("precise-inherit", test_precise_inherit);
	return tap_done();
}
