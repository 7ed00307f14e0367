// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A stack of our own for the reports made in the SIGSEGV handler.  The
 * handler runs on whatever stack the kernel gave it: the thread's stack,
 * or the program's alternate signal stack (SA_ONSTACK: ours keeps it for
 * programs that catch stack overflow), which may be as small as
 * SIGSTKSZ (8 KiB) or less.  A report (stack unwinding, symbolizing, the
 * heap lookup, vsnprintf) needs more than that leaves: seen, a report on
 * an 8 KiB alternate stack ran off its end once printf took its slower
 * path, and the nested fault, delivered at the top of the same alternate
 * stack, restarted the handler over the frames of the first: a process
 * spinning for ever.  So the report functions run here, on a per-thread
 * stack mapped at the thread's first report (mmap() is async-signal-safe)
 * with a guard page below, and kept for the thread's later reports.  A
 * fault while on it (a report of a report) stays where it is.
 */
#include <sys/mman.h>

#include "internal.h"

#define REPORT_STACK_SIZE	(128UL * 1024)

static __thread char *tl_stack __attribute__((tls_model("initial-exec")));
static __thread bool tl_on_it __attribute__((tls_model("initial-exec")));

struct report_call {
	am_report_fn fn;
	const siginfo_t *si;
	const ucontext_t *uc;
	bool ours;
};

static void run_call(struct report_call *c)
{
	c->ours = c->fn(c->si, c->uc);
}

/*
 * call_on(@c, @fn, @top): @fn(@c) with the stack pointer at @top (16-byte
 * aligned), back on the caller's stack after; a plain call in the SysV
 * ABI otherwise.  Its CFI keeps the frame address in %rbp, which holds the
 * old stack pointer: the report's stack, unwound from inside @fn by
 * libgcc, goes on past the switch, through the signal frame, into the
 * program.
 */
void am_call_on(struct report_call *c, void (*fn)(struct report_call *), char *top)
	__attribute__((visibility("hidden")));
__asm__(".text\n"
	".globl am_call_on\n"
	".hidden am_call_on\n"
	".type am_call_on, @function\n"
	"am_call_on:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	mov %rdx, %rsp\n"
	"	call *%rsi\n"
	"	mov %rbp, %rsp\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size am_call_on, .-am_call_on\n");

bool am_report_on_own_stack(am_report_fn fn, const siginfo_t *si,
			    const ucontext_t *uc)
{
	struct report_call c = { .fn = fn, .si = si, .uc = uc };

	if (tl_on_it)
		return fn(si, uc);
	if (!tl_stack) {
		char *m = mmap(NULL, REPORT_STACK_SIZE + AM_PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

		/* No memory for it: report where we are, as before. */
		if (m == MAP_FAILED)
			return fn(si, uc);
		if (mprotect(m, AM_PAGE, PROT_NONE)) {
			munmap(m, REPORT_STACK_SIZE + AM_PAGE);
			return fn(si, uc);
		}
		tl_stack = m;
	}
	tl_on_it = true;
	am_call_on(&c, run_call, tl_stack + AM_PAGE + REPORT_STACK_SIZE);
	tl_on_it = false;
	return c.ours;
}
