// SPDX-License-Identifier: GPL-2.0
/*
 * adi-demo: Application Data Integrity on x86-64, end to end.
 *
 * Versions a SysV shared memory segment, writes and verifies data through
 * versioned pointers, shows a second process attached to the segment
 * seeing the same versions, then overflows one record into the next and
 * shows the SIGSEGV the kernel raises instead of the corruption.
 * Exit status 0 when every step behaved as the contract says.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libadi.h"

#define RECORD 256		/* four 64-byte blocks */
#define V_A 3
#define V_B 9

static sigjmp_buf env;
static siginfo_t last;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	last = *si;
	siglongjmp(env, 1);
}

static const char *code_name(int code)
{
	switch (code) {
	case SEGV_ACCADI: return "SEGV_ACCADI";
	case SEGV_ADIDERR: return "SEGV_ADIDERR (disrupting store)";
	case SEGV_ADIPERR: return "SEGV_ADIPERR (precise)";
	}
	return "other";
}

static int fail(const char *what)
{
	printf("FAILED: %s (%s)\n", what, strerror(errno));
	return 1;
}

/* A second process attaches the segment and reads versions and data. */
static int second_process(int id)
{
	char *seg = shmat(id, NULL, 0), *a;

	if (seg == (void *)-1 || mprotect(seg, 4096, PROT_READ | PROT_WRITE | PROT_ADI))
		return 1;
	printf("  [pid %d] attached at %p; block versions:", getpid(), (void *)seg);
	for (int b = 0; b < 10; b++)
		printf(" %d", adi_get_version(seg + 64 * b));
	a = adi_make_ptr(seg, V_A);
	printf("\n  [pid %d] reads record A through %p: \"%s\"\n", getpid(), (void *)a, a);
	return adi_get_version(seg) == V_A && adi_get_version(seg + RECORD) == V_B &&
	       strcmp(a, "record A: written through a version-3 pointer") == 0 ? 0 : 1;
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	struct adi_caps caps;
	char *seg, *a, *b;
	volatile int i;
	int id, status, ok = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("== ADI demonstration (x86-64, checked by the kernel) ==\n");
	if (adi_get_caps(&caps))
		return fail("ADI is not available (no AT_ADI_BLKSZ aux vector)");
	printf("aux vectors: AT_ADI_BLKSZ=%lu AT_ADI_NBITS=%lu AT_ADI_UEONADI=%lu\n",
	       caps.block_size, caps.version_bits, caps.ue_version);

	id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	seg = id < 0 ? (void *)-1 : shmat(id, NULL, 0);
	if (seg == (void *)-1)
		return fail("shmget/shmat");
	shmctl(id, IPC_RMID, NULL);	/* goes away with its last user */
	if (mprotect(seg, 4096, PROT_READ | PROT_WRITE | PROT_ADI))
		return fail("mprotect PROT_ADI on the shm segment");
	if (adi_set_version(seg, RECORD, V_A) || adi_set_version(seg + RECORD, RECORD, V_B))
		return fail("PR_ADI_SET_VERSION");
	printf("SysV shm segment at %p: record A = blocks 0-3, version %d; record B = blocks 4-7, version %d\n",
	       (void *)seg, V_A, V_B);

	a = adi_make_ptr(seg, V_A);
	b = adi_make_ptr(seg + RECORD, V_B);
	strcpy(a, "record A: written through a version-3 pointer");
	strcpy(b, "record B: written through a version-9 pointer");
	ok &= strcmp(seg, "record A: written through a version-3 pointer") == 0;
	printf("wrote and read back through %p: \"%s\"\n", (void *)a, a);
	printf("wrote and read back through %p: \"%s\"\n", (void *)b, b);

	fflush(stdout);
	if (fork() == 0)
		_exit(second_process(id));
	wait(&status);
	ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
	printf("second process saw the same versions and data: %s\n",
	       WIFEXITED(status) && !WEXITSTATUS(status) ? "yes" : "NO");

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);

	printf("overflow: writing 300 bytes through record A's pointer (disrupting mode)...\n");
	memset(&last, 0, sizeof(last));
	if (!sigsetjmp(env, 1))
		for (i = 0; i < 300; i++)
			a[i] = 'X';
	printf("  caught SIGSEGV %s at byte %d, si_addr=%p (the store instruction)\n",
	       code_name(last.si_code), i, last.si_addr);
	ok &= last.si_code == 6 && i == RECORD;

	adi_set_precise(true);
	printf("overflow again in precise mode...\n");
	memset(&last, 0, sizeof(last));
	if (!sigsetjmp(env, 1))
		for (i = RECORD - 8; i < 300; i++)
			a[i] = 'Y';
	printf("  caught SIGSEGV %s at byte %d, si_addr=%p (= record A's pointer + %d)\n",
	       code_name(last.si_code), i, last.si_addr, RECORD);
	ok &= last.si_code == 7 && last.si_addr == a + RECORD;

	printf("read past the end of record A...\n");
	memset(&last, 0, sizeof(last));
	if (!sigsetjmp(env, 1))
		for (i = 0; i < 300; i++)
			(void)*(volatile char *)(a + i);
	printf("  caught SIGSEGV %s at byte %d, si_addr=%p\n", code_name(last.si_code), i,
	       last.si_addr);
	ok &= last.si_code == 7 && i == RECORD;

	ok &= strcmp(b, "record B: written through a version-9 pointer") == 0;
	printf("record B is intact: \"%s\"\n", b);
	printf("== %s ==\n", ok ? "every step behaved as the ADI contract says" : "SOMETHING WENT WRONG");
	return ok ? 0 : 1;
}
