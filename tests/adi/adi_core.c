// SPDX-License-Identifier: GPL-2.0
/*
 * ADI core contract: aux vectors, PROT_ADI, the version prctl()s and
 * their bad input, load and store checks, precise mode and its
 * inheritance, version 0/0xf, tagged pointers into non-ADI memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adi_test.h"

/*
 * Local checks in the style of tap.h's tap_eq_long(): each prints one TAP
 * line that ends in what was seen and what was wanted, so that a failure
 * under the emulator says which condition failed without a rerun.
 */

/*
 * A call that must succeed (return 0): "got -1 (EINVAL), want 0".  Call it
 * right after the call, with its return value: it reads errno first.
 */
__attribute__((format(printf, 2, 3)))
static int expect_zero(long ret, const char *fmt, ...)
{
	int err = errno;	/* first: nothing below may change it first */
	char tail[96];
	va_list ap;
	int ok;

	if (ret == -1)
		snprintf(tail, sizeof(tail), "got -1 (%s), want 0", tap_errname(err));
	else
		snprintf(tail, sizeof(tail), "got %ld, want 0", ret);
	va_start(ap, fmt);
	ok = tap_ok_tail(ret == 0, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/*
 * A check that cannot run because a step that sets it up failed (@err: that
 * step's errno, 0 if none): one failed test in its place, which names the
 * step, so the count of tests stays the same and the failure is not read
 * as the kernel's answer to the check itself.
 */
__attribute__((format(printf, 3, 4)))
static void not_run(const char *step, int err, const char *fmt, ...)
{
	char tail[160];
	va_list ap;

	if (err)
		snprintf(tail, sizeof(tail), "not run: %s failed (%s)", step, tap_errname(err));
	else
		snprintf(tail, sizeof(tail), "not run: %s failed", step);
	va_start(ap, fmt);
	tap_ok_tail(0, tail, fmt, ap);
	va_end(ap);
}

/* smaps lists "ad" in VmFlags for the mapping at @p when @want, not when !@want. */
__attribute__((format(printf, 3, 4)))
static int expect_ad(void *p, int want, const char *fmt, ...)
{
	int got = smaps_has_ad(p);
	char tail[96];
	va_list ap;
	int ok;

	snprintf(tail, sizeof(tail), "got %s in VmFlags, want %s", got ? "'ad'" : "no 'ad'",
		 want ? "'ad'" : "no 'ad'");
	va_start(ap, fmt);
	ok = tap_ok_tail(!got == !want, tail, fmt, ap);
	va_end(ap);
	return ok;
}

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
	expect_zero(mprotect(p, pg, PROT_READ | PROT_WRITE), "mprotect without PROT_ADI succeeds");
	expect_ad(p, 0, "mprotect without PROT_ADI clears it");
	expect_zero(mprotect(p, pg, PROT_READ | PROT_WRITE | PROT_ADI),
		    "mprotect with PROT_ADI succeeds");
	expect_ad(p, 1, "mprotect with PROT_ADI sets it again");
	tap_errno(mprotect(p, pg, PROT_READ | 0x20), EINVAL,
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
	if (q == MAP_FAILED)
		not_run("open and mmap of /proc/self/exe without PROT_ADI", errno,
			"mprotect PROT_ADI on a regular-file mapping: EINVAL");
	else
		tap_errno(mprotect(q, pg, PROT_READ | PROT_ADI), EINVAL,
			  "mprotect PROT_ADI on a regular-file mapping: EINVAL");
	if (q != MAP_FAILED)
		munmap(q, pg);
	if (fd < 0) {
		not_run("open of /proc/self/exe", 0, "mmap PROT_ADI of a regular file: EINVAL");
	} else {
		q = mmap(NULL, pg, PROT_READ | PROT_ADI, MAP_PRIVATE, fd, 0);
		tap_errno((long)q, EINVAL, "mmap PROT_ADI of a regular file: EINVAL");
	}
	if (fd >= 0)
		close(fd);

	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ret = madvise(p, pg, MADV_MERGEABLE);
	if (ret)
		not_run("madvise(MADV_MERGEABLE)", errno,
			"mprotect PROT_ADI on KSM-mergeable memory: EINVAL");
	else
		tap_errno(mprotect(p, pg, PROT_READ | PROT_WRITE | PROT_ADI), EINVAL,
			  "mprotect PROT_ADI on KSM-mergeable memory: EINVAL");
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

	if (!vvar)
		not_run("finding [vvar] in /proc/self/maps", 0,
			"mprotect PROT_ADI on [vvar] (VM_PFNMAP): EINVAL");
	else
		tap_errno(mprotect(vvar, 4096, PROT_READ | PROT_ADI), EINVAL,
			  "mprotect PROT_ADI on [vvar] (VM_PFNMAP): EINVAL");
}

static void test_shm(void)
{
	int id = shmget(IPC_PRIVATE, 8192, IPC_CREAT | 0600);
	char *a, *b;

	a = id >= 0 ? shmat(id, NULL, 0) : (void *)-1;
	if (a == (void *)-1)
		not_run("shmget and shmat", errno, "mprotect PROT_ADI on a SysV shm segment");
	else
		expect_zero(mprotect(a, 8192, PROT_READ | PROT_WRITE | PROT_ADI),
			    "mprotect PROT_ADI on a SysV shm segment");
	b = shmat(id, NULL, 0);
	mprotect(b, 8192, PROT_READ | PROT_WRITE | PROT_ADI);
	must_set_version(a + 4096, 128, 9);
	tap_eq_long(adi_get_version(b + 4096), 9,
		    "a second attachment of the segment sees the same versions: block 0");
	tap_eq_long(adi_get_version(b + 4096 + 64), 9,
		    "a second attachment of the segment sees the same versions: block 1");
	tap_eq_long(adi_get_version(b + 4096 + 128), 0,
		    "a second attachment of the segment sees the same versions: block 2, not set");
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
	tap_errno(adi_set_version(p + 8, 64, 1), EINVAL, "set: unaligned address: EINVAL");
	tap_errno(adi_set_version(p, 65, 1), EINVAL, "set: unaligned length: EINVAL");
	tap_errno(adi_set_version(p, 0, 1), EINVAL, "set: zero length: EINVAL");
	tap_errno(adi_set_version(p, 64, 16), EINVAL, "set: version 16: EINVAL");
	tap_errno(prctl(PR_ADI_SET_VERSION, (unsigned long)p, 64, 1, 1), EINVAL,
		  "set: unknown flags: EINVAL");
	tap_errno(prctl(PR_ADI_SET_VERSION, (unsigned long)p, -64UL, 1, 0), EINVAL,
		  "set: range overflowing the address space: EINVAL");
	top = user_address_space_end();
	tap_errno(prctl(PR_ADI_SET_VERSION, top - 64, 0x100, 1, 0), EINVAL,
		  "set: range running past the user address space (ends at %#lx): EINVAL", top);
	tap_errno(prctl(PR_ADI_GET_VERSION, (unsigned long)p, 1, 0, 0), EINVAL,
		  "get: unused argument non-zero: EINVAL");
	tap_errno(prctl(PR_ADI_SET_PRECISE, 2, 0, 0, 0), EINVAL, "set precise: mode 2: EINVAL");
	tap_errno(prctl(PR_ADI_GET_PRECISE, 1, 0, 0, 0), EINVAL,
		  "get precise: argument non-zero: EINVAL");
	tap_eq_long(adi_get_version(p), 0, "failed calls changed no version: block 0");
	tap_eq_long(adi_get_version(p + 64), 0, "failed calls changed no version: block 1");
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
	int ret = 0;

	mprotect(p, pg, PROT_READ | PROT_WRITE | PROT_ADI);
	TRY(ret = adi_set_version(p, 2 * pg, 3));
	/* The signal handler long-jumps out; the call itself is not seen. */
	adi_expect_segv(SEGV_ACCADI, p + pg, "set on a range running into non-ADI memory: "
			"SIGSEGV/SEGV_ACCADI at the first non-ADI byte");
	tap_ok(adi_get_version(p) == 0, "and no block of the range was versioned");

	TRY(ret = adi_get_version(p + pg));
	adi_expect_segv(SEGV_ACCADI, p + pg, "get on non-ADI memory: SIGSEGV/SEGV_ACCADI");

	munmap(p + 2 * pg, pg);
	TRY(ret = adi_set_version(p + 2 * pg, 64, 1));
	adi_expect_segv(SEGV_ACCADI, p + 2 * pg, "set on unmapped memory: SIGSEGV/SEGV_ACCADI");

	/* A handler that returns: then the call itself reports EACCES. */
	{
		struct sigaction sa = { .sa_sigaction = record_handler, .sa_flags = SA_SIGINFO };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, NULL);
		memset(&caught, 0, sizeof(caught));
		errno = 0;
		ret = adi_set_version(p + pg, 64, 1);
		tap_errno(ret, EACCES,
			  "set on non-ADI memory, handler returns: the call fails with EACCES");
		tap_eq_long(caught.code, SEGV_ACCADI,
			    "set on non-ADI memory, handler returns: the handler saw SEGV_ACCADI");
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
	tap_eq_long(adi_get_version(p + 64 * 16), 0,
		    "blocks not set stay at 0: the first byte of block 16");
	tap_eq_long(adi_get_version(p + 64 * 16 + 63), 0,
		    "blocks not set stay at 0: the last byte of block 16");
	tap_eq_long(adi_get_version(p + 64 * 5 + 17), 5,
		    "get takes any address in the block: an unversioned one inside it");
	tap_eq_long(adi_get_version(adi_make_ptr(p + 64 * 5, 3)), 5,
		    "get takes any address in the block: a versioned one");
	must_set_version(p + 4096 - 128, 256, 7);
	tap_eq_long(adi_get_version(p + 4096 - 64), 7,
		    "a range crossing a page boundary: the block before it");
	tap_eq_long(adi_get_version(p + 4096 + 64), 7,
		    "a range crossing a page boundary: the last block, after it");
	tap_eq_long(adi_get_version(p + 4096 + 128), 0,
		    "a range crossing a page boundary: the block after the range");
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
	volatile uint64_t *alias;
	volatile uint64_t value = 0;
	long checks, lockless;
	int i, sig;

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
	adi_expect_segv(SEGV_ADIPERR, (void *)bad, "lockless: a mismatch is still reported");
	tap_eq_long(adi_counter("lockless") - lockless, 0,
		    "lockless: a mismatch is not decided without the lock");

	/*
	 * Bit 52 set below the version: the stripped address is not a user
	 * address, but the page-table walk looks only at bits 47:12 and
	 * would find p's page.  The check must not take that page's answer.
	 */
	lockless = adi_counter("lockless");
	alias = (volatile uint64_t *)((uintptr_t)good | (1UL << 52));
	sig = TRY(value = *alias);
	tap_eq_long(sig, SIGSEGV, "lockless: a load through a versioned address "
		    "past the user half (%p) gets SIGSEGV", (void *)alias);
	tap_eq_long(adi_counter("lockless") - lockless, 0,
		    "lockless: ... and is not decided on the page tables of the "
		    "user page it aliases");

	/*
	 * The kernel's own checks count too: PR_GET_PDEATHSIG stores an int
	 * with put_user() through the matching pointer, a kernel access
	 * checked on the page tables alone.  (This one takes the path that
	 * may sleep, which always counted; the one that may not, for
	 * accesses with page faults disabled, counts since issue 43.)
	 */
	{
		long ret;

		lockless = adi_counter("lockless");
		ret = prctl(PR_GET_PDEATHSIG, (unsigned long)good, 0, 0, 0);
		lockless = adi_counter("lockless") - lockless;
		tap_eq_long(ret, 0, "lockless: PR_GET_PDEATHSIG stores through the matching "
			    "pointer");
		tap_ok(lockless >= 1, "lockless: the kernel's check of that put_user() is "
		       "counted (got %ld more, want >= 1)", lockless);
	}
}

/*
 * The lockless check does not look at the mapping: a page of a memfd
 * versioned through an ADI mapping, mapped a second time without ADI, is
 * read there through any version, matching (decided lockless) or not
 * (decided by the locked path, which finds the mapping is not ADI).
 */
static void test_lockless_other_mapping(void)
{
	int fd = memfd_create("adi-lockless", 0);
	char *adi, *plain;
	volatile uint64_t *q;
	volatile uint64_t value = 0;
	int sig;

	if (fd < 0 || ftruncate(fd, 4096)) {
		tap_skip("memfd_create/ftruncate failed", "lockless-other-mapping");
		return;
	}
	adi = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_ADI, MAP_SHARED, fd, 0);
	plain = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (adi == MAP_FAILED || plain == MAP_FAILED) {
		tap_skip("mmap of the memfd failed", "lockless-other-mapping");
		return;
	}
	must_set_version(adi, 4096, 5);
	*(uint64_t *)adi_make_ptr(adi, 5) = 0x5555;
	q = adi_make_ptr(plain, 5);
	sig = TRY(value = *q);
	adi_expect_no_signal(sig, "versioned page mapped without ADI: the matching version reads");
	tap_eq_hex(value, 0x5555, "versioned page mapped without ADI: the matching version's data");
	q = adi_make_ptr(plain, 9);
	value = 0;
	sig = TRY(value = *q);
	adi_expect_no_signal(sig, "versioned page mapped without ADI: another version reads unchecked");
	tap_eq_hex(value, 0x5555, "versioned page mapped without ADI: another version's data");
	sig = TRY(value = *(volatile uint64_t *)adi_make_ptr(adi, 9));
	adi_expect_segv(SEGV_ADIPERR, adi_make_ptr(adi, 9),
			"the same page through its ADI mapping and another version: mismatch");
	munmap(adi, 4096);
	munmap(plain, 4096);
	close(fd);
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
	adi_expect_no_signal(sig, "load with the matching version: no signal");
	tap_eq_hex(value, 0x1122334455667788, "load with the matching version reads the data");
	sig = TRY(*good = 42);
	adi_expect_no_signal(sig, "store with the matching version: no signal");
	tap_eq_long(((uint64_t *)p)[0], 42, "store with the matching version writes");

	bad = adi_make_ptr(p, 6);
	value = 0;
	sig = TRY(value = *bad);
	adi_expect_segv(SEGV_ADIPERR, (void *)bad, "load with another version: "
			"SIGSEGV/SEGV_ADIPERR at the versioned address");
	tap_eq_long(value, 0, "load with another version: the destination is not written");
	sig = TRY(*bad = 7);
	adi_expect_derr("store, disrupting mode: SEGV_ADIDERR at the instruction");
	tap_eq_long(((uint64_t *)p)[0], 42, "store, disrupting mode: memory unchanged");

	expect_zero(adi_set_precise(true), "precise mode on: the set succeeds");
	tap_eq_long(adi_get_precise(), 1, "precise mode on: get says so");
	sig = TRY(*bad = 7);
	adi_expect_segv(SEGV_ADIPERR, (void *)bad,
			"store, precise mode: SEGV_ADIPERR at the data address");
	tap_eq_long(((uint64_t *)p)[0], 42, "store, precise mode: memory unchanged");
	adi_set_precise(false);

	/* The overflow into the next block is caught there. */
	bad = adi_make_ptr(p + 120, 5);
	sig = TRY(value = *(volatile uint64_t *)adi_make_ptr(p + 128, 5));
	adi_expect_segv(SEGV_ADIPERR, adi_make_ptr(p + 128, 5),
			"a load one block past a range is caught");
	(void)bad;

	/* Memory versions 0 and 0xf match any pointer version. */
	must_set_version(p + 256, 64, 0xf);
	sig = TRY(value = *(volatile uint64_t *)adi_make_ptr(p + 256, 3) +
		  *(volatile uint64_t *)adi_make_ptr(p + 512, 9));
	adi_expect_no_signal(sig, "memory version 0xf and 0 match any pointer version");
}

static void test_untagged_and_non_adi(void)
{
	char *p = adi_map(4096);
	char *plain = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile char *q;
	int sig;

	must_set_version(p, 64, 4);
	sig = TRY(p[0] = 1);
	adi_expect_no_signal(sig, "an unversioned pointer is not checked (documented deviation)");
	tap_eq_long(p[0], 1, "an unversioned pointer stores unchecked");
	plain[100] = 77;
	q = adi_make_ptr(plain + 100, 11);
	sig = TRY(*q += 1);
	adi_expect_no_signal(sig, "a versioned pointer into non-ADI memory works unchecked");
	tap_eq_long(plain[100], 78,
		    "a versioned pointer into non-ADI memory: the increment is stored");
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
	pid_t pid;

	adi_set_precise(true);
	pid = fork();
	if (pid == 0)
		test_precise_inherit_child();
	tap_wait_exit0(pid, "fork inherits precise mode");

	pid = clone(clone_child, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL);
	tap_wait_exit0(pid, "clone(CLONE_VM) inherits precise mode");

	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "adi_core", "--print-precise", NULL);
		_exit(2);
	}
	tap_wait_exit0(pid, "execve resets precise mode");
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
	tap_group("lockless-other-mapping", test_lockless_other_mapping);
	tap_group("untagged", test_untagged_and_non_adi);
	tap_group("precise-inherit", test_precise_inherit);
	return tap_done();
}
