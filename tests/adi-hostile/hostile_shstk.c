// SPDX-License-Identifier: GPL-2.0
/*
 * ADI and user shadow stacks (CET, X86_USER_SHADOW_STACK; Debian's kernel
 * has it).  A thread with a shadow stack that takes ADI traps must keep a
 * working shadow stack: the kernel steps checked accesses on the CPU
 * (call through a versioned pointer included: the CPU pushes both stacks),
 * and a signal delivered and returned on such a thread goes through the
 * shadow stack's sigframe token as any other.  Shadow stacks themselves
 * take no versions (mprotect(PROT_ADI) fails with EINVAL: only the CPU's
 * unversioned shadow-stack pointer reaches them), and wrss through a
 * versioned pointer is not an access the checker knows: plain SIGSEGV,
 * SI_KERNEL, the word unchanged.
 *
 * QEMU's TCG has no CET: there map_shadow_stack() fails with EOPNOTSUPP
 * (ENOSYS on a kernel without X86_USER_SHADOW_STACK) and every check here
 * says SKIP.  The checks are for a run on hardware with user shadow
 * stacks (Intel since Tiger Lake, AMD since Zen 3).
 */
#include <stdnoreturn.h>
#include <sys/syscall.h>

#include "hostile.h"

#ifndef ARCH_SHSTK_ENABLE
#define ARCH_SHSTK_ENABLE	0x5001
#define ARCH_SHSTK_SHSTK	(1ULL << 0)
#define ARCH_SHSTK_WRSS		(1ULL << 1)
#endif
#ifndef __NR_map_shadow_stack
#define __NR_map_shadow_stack	453
#endif

#define VER		5	/* the ADI page's version */
#define OTHER		6	/* a version it does not have */
#define MAGIC		0x5a5aUL	/* what shstk_target returns */
#define LIMIT_MS	10000

/*
 * arch_prctl() inline: once the shadow stack is on, returning from a
 * function called before (glibc's syscall() wrapper) would find no
 * matching return address on the new shadow stack and raise #CP.
 */
static inline long arch_prctl_inline(long code, unsigned long arg)
{
	register long rdi __asm__("rdi") = code;
	register unsigned long rsi __asm__("rsi") = arg;
	long ret = __NR_arch_prctl;

	__asm__ volatile("syscall" : "+a"(ret) : "r"(rdi), "r"(rsi)
		     : "rcx", "r11", "memory", "cc");
	return ret;
}

/* The target of a call through a versioned pointer: touches rax only. */
__asm__(".pushsection .text\n"
    ".type shstk_target, @function\n"
    "shstk_target:\n"
    "	mov $0x5a5a, %eax\n"
    "	ret\n"
    ".size shstk_target, .-shstk_target\n"
    ".popsection\n");
void shstk_target(void);

struct shstk_result {
	long enable_ret;	/* ARCH_SHSTK_ENABLE of the shadow stack */
	long wrss_enable_ret;	/* ... and of wrss (the wrss child) */
	uint64_t loaded;	/* a checked load on the shadow-stack thread */
	uint64_t stored;	/* what a checked store left in memory */
	unsigned long called;	/* rax after a call through a versioned pointer */
	uint64_t handler_loaded;	/* a checked load in a signal handler */
	int after_handler;	/* the thread went on after sigreturn */
	int segv_code;		/* the final SIGSEGV's si_code */
	uint64_t segv_addr;	/* and its si_addr */
	uint64_t word_before, word_after;	/* the shadow-stack word wrss aimed at */
};

static struct shstk_result *res;
static uint64_t *adi_page;	/* PROT_ADI, version VER; [0] = 0x1234, [8] = shstk_target */
static uint64_t *shstk_word;	/* a word of a shadow stack from map_shadow_stack() */

static void on_usr1(int sig)
{
	(void)sig;
	res->handler_loaded = *(volatile uint64_t *)adi_make_ptr(adi_page, VER);
}

/* The child's last fault: record it, then leave without returning. */
static void on_final_segv(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	res->segv_code = si->si_code;
	res->segv_addr = (uint64_t)si->si_addr;
	if (shstk_word)
		res->word_after = *(volatile uint64_t *)shstk_word;
	_exit(0);
}

static void catch_final_segv(void)
{
	struct sigaction sa = { .sa_sigaction = on_final_segv, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
}

/* Runs with the shadow stack on: every return here matches a call made here. */
static noreturn void with_shadow_stack_accesses(void)
{
	volatile uint64_t *vp = adi_make_ptr(adi_page, VER);
	void *vfn = adi_make_ptr(&adi_page[8], VER);
	unsigned long rax;

	res->loaded = vp[0];
	vp[1] = 0x4242;
	res->stored = adi_page[1];
	/* call *(%rdx) with a versioned rdx; below the red zone, as a call must. */
	__asm__ volatile("sub $128, %%rsp\n\tcall *(%1)\n\tadd $128, %%rsp"
		     : "=a"(rax) : "d"(vfn) : "memory", "cc");
	res->called = rax;
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	res->after_handler = 1;
	catch_final_segv();
	/* A mismatching load: the handler records it and exits. */
	(void)*(volatile uint64_t *)adi_make_ptr(adi_page, OTHER);
	_exit(3);
}

static noreturn void with_shadow_stack_wrss(void)
{
	uint64_t *vword = adi_make_ptr(shstk_word, VER);

	res->wrss_enable_ret = arch_prctl_inline(ARCH_SHSTK_ENABLE, ARCH_SHSTK_WRSS);
	if (res->wrss_enable_ret)
		_exit(4);
	catch_final_segv();
	__asm__ volatile("wrssq %0, (%1)" : : "r"(0x6666UL), "r"(vword) : "memory");
	_exit(3);
}

/* Turn the shadow stack on and never return past this frame. */
static noreturn __attribute__((noinline)) void shadow_stack_child(void *arg)
{
	res->enable_ret = arch_prctl_inline(ARCH_SHSTK_ENABLE, ARCH_SHSTK_SHSTK);
	if (res->enable_ret)
		_exit(4);
	if (arg)
		with_shadow_stack_wrss();
	with_shadow_stack_accesses();
}

static void child_accesses(void *arg)
{
	(void)arg;
	shadow_stack_child(NULL);
}

static void child_wrss(void *arg)
{
	(void)arg;
	shadow_stack_child((void *)1);
}

/* 1: user shadow stacks work here; 0: SKIP, *why says why. */
static int shstk_supported(const char **why)
{
	long p = syscall(__NR_map_shadow_stack, 0, 4096UL, 0UL);

	if (p == -1 && errno == ENOSYS) {
		*why = "kernel without X86_USER_SHADOW_STACK";
		return 0;
	}
	if (p == -1 && errno == EOPNOTSUPP) {
		*why = "no user shadow stacks on this CPU (QEMU TCG has no CET)";
		return 0;
	}
	if (p == -1) {
		*why = "map_shadow_stack() failed";
		return 0;
	}
	munmap((void *)p, 4096);
	return 1;
}

static void skip_all(const char *why)
{
	static const char *const checks[] = {
		"PROT_ADI on a shadow stack", "a checked load and store with the shadow stack on",
		"a call through a versioned pointer", "a signal handler's checked load and sigreturn",
		"a mismatch", "wrss through a versioned pointer",
	};

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		tap_skip(why, "shstk: %s", checks[i]);
}

static void test_prot_adi(uint64_t *ss)
{
	tap_eq_long(mprotect(ss, 4096, PROT_READ | PROT_WRITE), 0,
		    "shstk: mprotect(PROT_READ | PROT_WRITE) of a shadow stack (the control)");
	tap_errno(mprotect(ss, 4096, PROT_READ | PROT_WRITE | PROT_ADI), EINVAL,
		  "shstk: PROT_ADI on a shadow stack is refused");
}

static void test_accesses(void)
{
	struct bounded r;

	memset(res, 0, sizeof(*res));
	run_bounded(child_accesses, NULL, LIMIT_MS * hostile_slow(), &r);
	check_finished("shstk accesses", &r, LIMIT_MS * hostile_slow());
	tap_eq_long(res->enable_ret, 0, "shstk: ARCH_SHSTK_ENABLE");
	tap_eq_long(res->loaded, 0x1234, "shstk: a checked load with the shadow stack on");
	tap_eq_long(res->stored, 0x4242, "shstk: a checked store with the shadow stack on");
	tap_eq_long(res->called, MAGIC, "shstk: call *(versioned) returned through both stacks");
	tap_eq_long(res->handler_loaded, 0x1234, "shstk: a checked load in a signal handler");
	tap_eq_long(res->after_handler, 1, "shstk: the thread went on after sigreturn");
	tap_eq_long(res->segv_code, SEGV_ADIPERR, "shstk: a mismatching load: si_code");
	tap_eq_long(res->segv_addr, (long)adi_make_ptr(adi_page, OTHER),
		    "shstk: a mismatching load: si_addr");
}

static void test_wrss(uint64_t *ss)
{
	struct bounded r;

	memset(res, 0, sizeof(*res));
	shstk_word = ss;
	res->word_before = *(volatile uint64_t *)ss;
	run_bounded(child_wrss, NULL, LIMIT_MS * hostile_slow(), &r);
	check_finished("shstk wrss", &r, LIMIT_MS * hostile_slow());
	tap_eq_long(res->wrss_enable_ret, 0, "shstk: ARCH_SHSTK_ENABLE of wrss");
	tap_eq_long(res->segv_code, SI_KERNEL,
		    "shstk: wrss through a versioned pointer is refused (plain SIGSEGV)");
	tap_eq_long(res->word_after, res->word_before, "shstk: wrss left the word unchanged");
	shstk_word = NULL;
}

static void test_shstk(void)
{
	const char *why = "";
	uint64_t *ss;

	if (!shstk_supported(&why)) {
		skip_all(why);
		return;
	}
	res = hostile_shared(sizeof(*res));
	adi_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_ADI,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ss = (uint64_t *)syscall(__NR_map_shadow_stack, 0, 4096UL, 0UL);
	if (adi_page == MAP_FAILED || ss == (uint64_t *)-1 ||
	    adi_set_version(adi_page, 4096, VER)) {
		tap_ok(0, "shstk: set-up (ADI page, shadow stack): %s", strerror(errno));
		return;
	}
	adi_page[0] = 0x1234;
	adi_page[8] = (uint64_t)shstk_target;
	test_prot_adi(ss);
	test_accesses();
	test_wrss(ss);
}

int main(void)
{
	tap_init();
	hostile_group("shstk", test_shstk);
	return tap_done();
}
