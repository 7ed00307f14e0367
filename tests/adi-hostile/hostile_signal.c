// SPDX-License-Identifier: GPL-2.0
/*
 * Signal frames and versioned pointers.  Delivering a signal writes the
 * frame (with xsave) to the stack the program chose; returning from it
 * reads the FP state (with xrstor) from the pointer the handler left in
 * uc_mcontext.fpregs.  Neither instruction can be checked against
 * versions.  If the kernel's write or read fails only because of the
 * version, while faulting the page in succeeds, the kernel's
 * fault-in-and-retry loop never ends.  Wanted: a matching alternate stack
 * works, a mismatching one or a mismatching FP state kills the program
 * with SIGSEGV, and nothing hangs.
 */
#include <sys/syscall.h>
#include <ucontext.h>

#include "hostile.h"

#define MEM	5	/* the memory's version */
#define BAD	9	/* a version it does not have */
#define ALT_SIZE (64 * 1024)
#define LIMIT_MS 2000
#define XMM_OLD	0x1122334455667788ULL	/* xmm0 before the signal */
#define XMM_NEW	0x99aabbccddeeff00ULL	/* what the handler puts in the frame */
#define FP_XSTATE_MAGIC 0x46505853U

struct sig_result {
	int handler_ran;
	int continued;
	int sigaltstack_ret;
	int sigaltstack_err;
	uintptr_t local;	/* a local's address in the handler */
	uintptr_t alt;		/* the alternate stack, unversioned */
	uint64_t xmm0;		/* low half of xmm0 after the handler */
	unsigned int fp_size;	/* the FP state the handler copied */
	int has_adi;		/* the process had ADI memory */
};

static struct sig_result *res;

/* ---- alternate stacks ---------------------------------------------------- */

static void record_stack(int sig, siginfo_t *si, void *ctx)
{
	volatile char local = 0;

	(void)sig; (void)si; (void)ctx;
	res->local = (uintptr_t)&local;
	res->handler_ran++;
}

/* A version-@ptr_version alternate stack in version-MEM memory, SIGUSR1 on it. */
static void setup_altstack(unsigned int ptr_version)
{
	struct sigaction sa = { .sa_sigaction = record_stack,
				.sa_flags = SA_ONSTACK | SA_SIGINFO };
	char *alt = adi_region(ALT_SIZE, MEM);
	stack_t ss = { .ss_sp = adi_make_ptr(alt, ptr_version), .ss_size = ALT_SIZE };

	res->alt = (uintptr_t)alt;
	res->sigaltstack_ret = sigaltstack(&ss, NULL);
	res->sigaltstack_err = res->sigaltstack_ret ? errno : 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

static void op_altstack(void *arg)
{
	setup_altstack((unsigned int)(uintptr_t)arg);
	raise(SIGUSR1);
	res->continued = 1;
}

static void loop_altstack(void *arg)
{
	setup_altstack((unsigned int)(uintptr_t)arg);
	for (;;)
		raise(SIGUSR1);
}

static void test_sigaltstack_match(void)
{
	const char *what = "SIGUSR1 on a version-5 alternate stack in version-5 memory";
	uintptr_t local;
	struct bounded r;

	res = hostile_shared(sizeof(*res));
	run_bounded(op_altstack, (void *)(uintptr_t)MEM, LIMIT_MS, &r);
	note_wedged(&r);
	local = (uintptr_t)adi_strip_ptr((void *)res->local);
	check_finished(what, &r, LIMIT_MS);
	tap_ok(res->sigaltstack_ret == 0,
	       "sigaltstack() takes a version-5 ss_sp (got %d %s, want 0)",
	       res->sigaltstack_ret, errno_name(res->sigaltstack_err));
	tap_ok(res->handler_ran == 1, "%s: the handler ran (got %d times, want 1)", what,
	       res->handler_ran);
	tap_ok(local >= res->alt && local < res->alt + ALT_SIZE,
	       "%s: the handler's local was on the alternate stack (got %#lx, want in [%#lx, %#lx))",
	       what, (unsigned long)res->local, (unsigned long)res->alt,
	       (unsigned long)res->alt + ALT_SIZE);
	tap_ok(res->continued == 1, "%s: the program continued after the handler (got %d, want 1)",
	       what, res->continued);
	check_kill_latency(what, loop_altstack, (void *)(uintptr_t)MEM);
}

static void test_sigaltstack_mismatch(void)
{
	const char *what = "SIGUSR1 on a version-9 alternate stack in version-5 memory";
	struct bounded r;

	res = hostile_shared(sizeof(*res));
	run_bounded(op_altstack, (void *)(uintptr_t)BAD, LIMIT_MS, &r);
	note_wedged(&r);
	tap_diag("sigaltstack() with a version-9 ss_sp: %d %s; handler ran %d times",
		 res->sigaltstack_ret, errno_name(res->sigaltstack_err), res->handler_ran);
	tap_ok(r.reaped && !r.timed_out && r.elapsed_ms <= LIMIT_MS &&
	       WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV,
	       "%s: the child is killed by SIGSEGV within %d ms (got %s, want SIGSEGV)",
	       what, LIMIT_MS, describe(&r));
	tap_eq_long(res->handler_ran, 0, "%s: the handler did not run: times it ran", what);
	tap_eq_long(res->continued, 0, "%s: the rest of the program did not run: continued",
		    what);
}

/* ---- the FP state pointer at sigreturn -------------------------------------- */

/* The layout at the end of the legacy FXSAVE area (asm/sigcontext.h). */
struct fpx_sw_bytes {
	uint32_t magic1;
	uint32_t extended_size;
	uint64_t xfeatures;
	uint32_t xstate_size;
	uint32_t padding[7];
};

static char *fp_copy;		/* version-MEM ADI buffer for fpregs-mismatch */
#define FP_COPY_SIZE (16 * 1024)

static void set_saved_xmm0(struct _libc_fpstate *fp)
{
	fp->_xmm[0].element[0] = (uint32_t)XMM_NEW;
	fp->_xmm[0].element[1] = (uint32_t)(XMM_NEW >> 32);
	fp->_xmm[0].element[2] = 0;
	fp->_xmm[0].element[3] = 0;
}

/* Change the saved xmm0, then give the (ordinary stack) fpregs version 9. */
static void version_fpregs(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	struct _libc_fpstate *fp = adi_strip_ptr(uc->uc_mcontext.fpregs);

	(void)sig; (void)si;
	set_saved_xmm0(fp);
	uc->uc_mcontext.fpregs = adi_make_ptr(fp, BAD);
	res->handler_ran++;
}

/* Copy the FP state into version-5 ADI memory, point fpregs at it with 9. */
static void move_fpregs(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	struct _libc_fpstate *fp = adi_strip_ptr(uc->uc_mcontext.fpregs);
	struct fpx_sw_bytes *sw = (void *)((char *)fp + 464);
	unsigned int size = sw->magic1 == FP_XSTATE_MAGIC ? sw->extended_size : 512;

	(void)sig; (void)si;
	res->fp_size = size;
	res->handler_ran++;
	if (size > FP_COPY_SIZE)
		return;		/* reported by the parent */
	set_saved_xmm0(fp);
	memcpy(fp_copy, fp, size);
	uc->uc_mcontext.fpregs = adi_make_ptr(fp_copy, BAD);
}

/*
 * xmm0 = XMM_OLD, kill(getpid(), SIGUSR1) (the handler runs on the way
 * out of the system call), then read xmm0: in one asm statement, so that
 * no compiled code can touch xmm0 in between.
 */
static uint64_t signal_with_xmm0(void)
{
	uint64_t out, in = XMM_OLD;
	long nr = SYS_kill;

	__asm__ volatile("movq %[in], %%xmm0\n\t"
			 "syscall\n\t"
			 "movq %%xmm0, %[out]"
			 : [out] "=r"(out), "+a"(nr)
			 : [in] "r"(in), "D"((long)getpid()), "S"((long)SIGUSR1)
			 : "rcx", "r11", "xmm0", "memory");
	return out;
}

static void install(void (*handler)(int, siginfo_t *, void *))
{
	struct sigaction sa = { .sa_sigaction = handler, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

/* arg: 1 = this process has an ADI mapping (elsewhere), 0 = none at all. */
static void op_version_fpregs(void *arg)
{
	if (arg) {
		adi_region(4096, MEM);
		res->has_adi = 1;
	}
	install(version_fpregs);
	res->xmm0 = signal_with_xmm0();
	res->continued = 1;
}

static void loop_version_fpregs(void *arg)
{
	if (arg)
		adi_region(4096, MEM);
	install(version_fpregs);
	for (;;)
		signal_with_xmm0();
}

/* Some process versions memory, so the kernel's ADI is on system-wide. */
static void use_adi(void *arg)
{
	char *p = adi_region(4096, 3);

	(void)arg;
	p[0] = 1;
}

static void test_sigreturn_fpregs(void)
{
	struct bounded r;
	const char *what;

	res = hostile_shared(sizeof(*res));

	what = "sigreturn with a version-9 fpregs into the ordinary stack (ADI process)";
	run_bounded(op_version_fpregs, (void *)1, LIMIT_MS, &r);
	note_wedged(&r);
	check_finished(what, &r, LIMIT_MS);
	tap_eq_long(res->handler_ran, 1, "%s: the handler ran: times", what);
	tap_eq_long(res->continued, 1, "%s: the program continued after the handler", what);
	tap_eq_hex(res->xmm0, XMM_NEW, "%s: xmm0 restored from the handler's frame", what);
	check_kill_latency(what, loop_version_fpregs, (void *)1);

	/* The same in a process without ADI memory. */
	run_bounded(use_adi, NULL, LIMIT_MS, &r);
	memset(res, 0, sizeof(*res));
	what = "sigreturn with a version-9 fpregs (process without ADI memory)";
	run_bounded(op_version_fpregs, NULL, LIMIT_MS, &r);
	note_wedged(&r);
	tap_ok(r.reaped && !r.timed_out && r.elapsed_ms <= LIMIT_MS,
	       "%s: the child ends within %d ms (got %s, want an end within %d ms)",
	       what, LIMIT_MS, describe(&r), LIMIT_MS);
	/*
	 * Its bits 63:60 are not a version but garbage: the kernel refuses
	 * the pointer as it always has, and the bad frame kills the process.
	 * (So there is no loop to SIGKILL: it dies at once.)
	 */
	tap_ok(r.reaped && !r.timed_out && WIFSIGNALED(r.status) &&
	       WTERMSIG(r.status) == SIGSEGV,
	       "%s: the kernel refuses the pointer, the bad frame kills with SIGSEGV (got %s; want SIGSEGV)",
	       what, describe(&r));
}

static void op_move_fpregs(void *arg)
{
	(void)arg;
	fp_copy = adi_region(FP_COPY_SIZE, MEM);
	install(move_fpregs);
	res->xmm0 = signal_with_xmm0();
	res->continued = 1;
}

static void test_fpregs_mismatch(void)
{
	const char *what = "sigreturn with a version-9 fpregs into a version-5 copy of the FP state";
	struct bounded r;

	res = hostile_shared(sizeof(*res));
	run_bounded(op_move_fpregs, NULL, LIMIT_MS, &r);
	note_wedged(&r);
	tap_diag("the handler copied %u bytes of FP state", res->fp_size);
	tap_eq_long(res->handler_ran, 1, "%s: the handler ran: times", what);
	tap_ok(res->fp_size && res->fp_size <= FP_COPY_SIZE,
	       "%s: the handler copied the state (got %u bytes, want 1-%d bytes)",
	       what, res->fp_size, FP_COPY_SIZE);
	tap_ok(r.reaped && !r.timed_out && r.elapsed_ms <= LIMIT_MS &&
	       WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV,
	       "%s: the child is killed by SIGSEGV within %d ms (got %s, want SIGSEGV)",
	       what, LIMIT_MS, describe(&r));
}

int main(void)
{
	tap_init();
	hostile_group("sigaltstack-match", test_sigaltstack_match);
	hostile_group("sigaltstack-mismatch", test_sigaltstack_mismatch);
	hostile_group("sigreturn-fpregs", test_sigreturn_fpregs);
	hostile_group("fpregs-mismatch", test_fpregs_mismatch);
	return tap_done();
}
