// SPDX-License-Identifier: GPL-2.0
/*
 * The single-step machinery behind a checked access: ptrace stepping
 * through checked accesses, a signal delivered before the step completes
 * (the stripped access faults), page faults during the step, threads,
 * and a thread re-versioning memory while another reads it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adi_test.h"

/* Loads and stores through versioned pointers; returns a checksum. */
static __attribute__((noinline)) uint64_t work(volatile uint64_t *p, int n)
{
	uint64_t sum = 0;

	for (int i = 0; i < n; i++) {
		p[i] = (uint64_t)i * 5;
		sum += p[i];
	}
	return sum;
}

static uint64_t expected(int n)
{
	uint64_t sum = 0;

	for (int i = 0; i < n; i++)
		sum += (uint64_t)i * 5;
	return sum;
}

/*
 * Single-step the traced child @pid (stopped) until it exits, calling
 * @at_stop with its registers at every stop.  Returns the number of steps;
 * the child's last wait status goes to @status.
 */
static int step_to_exit(pid_t pid, int *status,
			void (*at_stop)(const struct user_regs_struct *regs, void *arg),
			void *arg)
{
	int steps = 0;

	waitpid(pid, status, 0);
	while (WIFSTOPPED(*status) && steps < 200000) {
		struct user_regs_struct regs;

		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) == 0)
			at_stop(&regs, arg);
		ptrace(PTRACE_SINGLESTEP, pid, NULL,
		       WSTOPSIG(*status) == SIGTRAP || WSTOPSIG(*status) == SIGSTOP ?
		       0 : WSTOPSIG(*status));
		waitpid(pid, status, 0);
		steps++;
	}
	return steps;
}

/*
 * Fork a child that stops for us (PTRACE_TRACEME) and then runs
 * @body(mem, @version) on a page versioned @version, and single-step it to
 * its exit as step_to_exit() does.  Its exit status is 0 when @body
 * returned true.
 */
static int step_child(int (*body)(uint64_t *mem, unsigned int version), unsigned int version,
		      int *status, void (*at_stop)(const struct user_regs_struct *regs, void *arg),
		      void *arg)
{
	uint64_t *mem = adi_map(4096);
	pid_t pid;

	must_set_version(mem, 4096, version);
	pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		_exit(body(mem, version) ? 0 : 1);
	}
	return step_to_exit(pid, status, at_stop, arg);
}

/* The tracer must never see a stripped pointer or our TF. */
static void count_versioned(const struct user_regs_struct *regs, void *arg)
{
	unsigned long r[] = { regs->rax, regs->rbx, regs->rcx, regs->rdx,
			      regs->rsi, regs->rdi, regs->r8, regs->r9 };

	for (unsigned int i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (adi_ptr_version((void *)r[i]) == 7)
			++*(int *)arg;
}

static int sum_through_versioned(uint64_t *mem, unsigned int version)
{
	return work(adi_make_ptr(mem, version), 40) == expected(40);
}

static void test_ptrace_step(void)
{
	int status, steps, tagged_seen = 0;

	steps = step_child(sum_through_versioned, 7, &status, count_versioned, &tagged_seen);
	tap_exit0(status, "ptrace single-stepping through checked accesses: the program "
		  "computes the right sum (%d steps)", steps);
	tap_ok(tagged_seen > 0, "the tracer sees versioned pointers in the registers (%d times)",
	       tagged_seen);
}

/*
 * A pointer stored through itself and compared with itself: the kernel
 * emulates these instead of stepping them.  The labels let the tracer see
 * that the emulated store still ends in a single-step stop of its own.
 */
extern const char self_store_next[];

static __attribute__((noinline)) int self_store(uint64_t *p)
{
	unsigned char equal;

	__asm__ volatile("movq %1, (%1)\n\t"
			 ".globl self_store_next\n"
			 "self_store_next:\n\t"
			 "cmpq %1, (%1)\n\t"
			 "sete %0"
			 : "=r"(equal) : "r"(p) : "memory", "cc");
	return equal;
}

static void count_after_store(const struct user_regs_struct *regs, void *arg)
{
	if (regs->rip == (unsigned long)self_store_next)
		++*(int *)arg;
}

static int store_through_itself(uint64_t *mem, unsigned int version)
{
	uint64_t *p = adi_make_ptr(mem + 2, version);

	return self_store(p) && mem[2] == (uint64_t)p;
}

static void test_ptrace_step_emulated(void)
{
	int status, steps, stopped_after_store = 0;

	steps = step_child(store_through_itself, 3, &status, count_after_store,
			   &stopped_after_store);
	tap_exit0(status, "single-stepping a pointer stored through itself: stored and "
		  "compared whole (%d steps)", steps);
	tap_ok(stopped_after_store == 1,
	       "the emulated store ends in exactly one single-step stop (%d)", stopped_after_store);
}

static void test_fault_during_step(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *mem = adi_map(2 * pg);
	volatile char *p;
	int sig;

	/* The check finds nothing to compare (no access), the CPU faults. */
	mprotect(mem + pg, pg, PROT_NONE | PROT_ADI);
	p = adi_make_ptr(mem + pg + 8, 2);
	sig = TRY(p[0] = 1);
	tap_eq_long(sig, SIGSEGV, "a stepped access that faults: SIGSEGV");
	tap_eq_long(caught.code, SEGV_ACCERR, "a stepped access that faults: the ordinary "
		    "SEGV_ACCERR code");
	tap_ok(!(caught.eflags & 0x100), "the handler's context has no leftover TF");
	{
		int found = 0;

		for (int r = 0; r < NGREG; r++)
			if ((unsigned long)caught.gregs[r] == (unsigned long)p)
				found = 1;
		tap_ok(found, "the handler's context holds the versioned pointer, not a stripped one");
	}

	/* A fresh page: the store's page fault happens during the step. */
	p = adi_make_ptr(mem + 100, 0xc);
	sig = TRY(p[0] = 42);
	adi_expect_no_signal(sig, "a store whose page fault happens during the step: no signal");
	tap_eq_long(mem[100], 42, "a store whose page fault happens during the step completes");
	sig = TRY(p[1] = p[0] + 1);
	adi_expect_no_signal(sig, "and the pointer keeps its version afterwards: no signal");
	tap_eq_long(mem[101], 43, "and the pointer keeps its version afterwards: the store");
}

#define THREADS 4
#define ROUNDS 300

static uint64_t *shared;

static void *thread_work(void *arg)
{
	long id = (long)arg;
	volatile uint64_t *p = adi_make_ptr(shared + id * 64, 1 + id);

	return (void *)(uintptr_t)(work(p, ROUNDS % 64 + 1) == expected(ROUNDS % 64 + 1));
}

/*
 * UMIP in a process that uses ADI: the #GP handler asks ADI first, which
 * must decline UMIP's instructions and leave them to UMIP's emulation.
 * smsw to a register gives the same value as in a process without ADI
 * (a child forked before any ADI mapping).  smsw to memory through a
 * versioned pointer is UMIP's store, made by the kernel's user-access
 * code, which checks versions: stored when the version matches, SIGSEGV
 * and nothing stored when it does not.
 */
static unsigned long smsw_reg(void)
{
	unsigned long msw = 0;

	__asm__ volatile("smsw %k0" : "+r"(msw));
	return msw;
}

static void test_umip(void)
{
	unsigned long in_child = 0, here;
	int p[2], status = 0;
	uint16_t *word;
	pid_t pid;
	int sig;

	if (pipe(p)) {
		tap_ok(0, "umip: pipe: %s", strerror(errno));
		return;
	}
	/* This group runs in a fresh child: no ADI memory in it yet. */
	pid = fork();
	if (pid == 0) {
		unsigned long v = smsw_reg();

		_exit(write(p[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || read(p[0], &in_child, sizeof(in_child)) != sizeof(in_child)) {
		tap_ok(0, "umip: smsw in a process without ADI (fork %d, status %#x)", pid, status);
		return;
	}
	word = adi_map(4096);
	must_set_version(word, 64, 2);
	here = smsw_reg();
	tap_eq_long(here, in_child, "umip: smsw to a register in a process that uses ADI");

	*(uint16_t *)adi_make_ptr(word, 2) = 0x5a5a;
	sig = TRY(__asm__ volatile("smsw (%0)" : : "r"(adi_make_ptr(word, 2)) : "memory"));
	tap_eq_long(sig, 0, "umip: smsw through a matching versioned pointer: signal");
	tap_eq_long(*(uint16_t *)adi_make_ptr(word, 2), (uint16_t)in_child,
		    "umip: smsw through a matching versioned pointer: stored");

	*(uint16_t *)adi_make_ptr(word, 2) = 0x5a5a;
	sig = TRY(__asm__ volatile("smsw (%0)" : : "r"(adi_make_ptr(word, 1)) : "memory"));
	tap_eq_long(sig, SIGSEGV, "umip: smsw through a mismatching versioned pointer: signal");
	tap_eq_long(*(uint16_t *)adi_make_ptr(word, 2), 0x5a5a,
		    "umip: smsw through a mismatching versioned pointer: nothing stored");
}

static void test_threads(void)
{
	pthread_t t[THREADS];
	int ok = 1;

	shared = adi_map(THREADS * 512);
	for (long i = 0; i < THREADS; i++)
		must_set_version(shared + i * 64, 512, 1 + i);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, thread_work, (void *)i);
	for (long i = 0; i < THREADS; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		ok &= ret != NULL;
	}
	tap_ok(ok, "%d threads doing checked accesses at once all compute right", THREADS);
}

static volatile int stop;
static volatile long reads_ok, reads_caught;

static void count_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	/* Skip the 8-byte load: it is "movq (%rdx),%rax" (3 bytes). */
	uc->uc_mcontext.gregs[REG_RIP] += 3;
	reads_caught++;
}

static void *reversion(void *arg)
{
	(void)arg;
	for (int i = 0; !stop && i < 2000; i++)
		adi_set_version(shared, 64, i % 2 ? 5 : 6);
	stop = 1;
	return NULL;
}

static void test_race(void)
{
	struct sigaction sa = { .sa_sigaction = count_handler, .sa_flags = SA_SIGINFO };
	void *p;
	pthread_t t;

	shared = adi_map(4096);
	must_set_version(shared, 64, 5);
	p = adi_make_ptr(shared, 5);
	sigaction(SIGSEGV, &sa, NULL);
	pthread_create(&t, NULL, reversion, NULL);
	while (!stop) {
		uint64_t v;

		__asm__ volatile("movq (%1), %0" : "=a"(v) : "d"(p) : "memory");
		reads_ok++;
	}
	pthread_join(t, NULL);
	tap_ok(reads_ok > 0, "one thread re-versions a block while another reads it: %ld reads, %ld caught, no hang",
	       (long)reads_ok, (long)reads_caught);
}

int main(void)
{
	tap_init();
	tap_group("ptrace-step", test_ptrace_step);
	tap_group("ptrace-step-emulated", test_ptrace_step_emulated);
	tap_group("fault-during-step", test_fault_during_step);
	tap_group("umip", test_umip);
	tap_group("threads", test_threads);
	tap_group("reversion-race", test_race);
	return tap_done();
}
