// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reports, in the shape AddressSanitizer users know: what went wrong, where
 * (stack of the access), and the allocation involved with its own stacks.
 * The SIGSEGV handler turns an ADI mismatch (si_code SEGV_ADIPERR, the
 * versioned data address in si_addr) into such a report; other SIGSEGVs go
 * back to the default action.  Everything is written with write(2): stdio
 * could allocate, and the heap is what just went wrong.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include "internal.h"

#define MAX_REPORTS	100

static int reports;

void am_printf(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	for (int off = 0; off < n; ) {
		ssize_t w = write(STDERR_FILENO, buf + off, (size_t)(n - off));

		if (w <= 0)
			break;
		off += (int)w;
	}
}

static void print_stack_id(const char *what, pid_t tid, uint32_t id)
{
	const uintptr_t *pcs;
	int n = am_stack_get(id, &pcs);

	am_printf("%s by thread %d here:\n", what, (int)tid);
	am_stack_print(pcs, n);
}

static void print_chunk(uintptr_t addr, const struct am_chunk *c)
{
	const char *where;
	size_t dist;

	if (addr >= c->start + c->size) {
		where = "after";
		dist = addr - (c->start + c->size);
	} else if (addr < c->start) {
		where = "before";
		dist = c->start - addr;
	} else {
		where = "inside";
		dist = addr - c->start;
	}
	am_printf("0x%lx is located %zu bytes %s %zu-byte region [0x%lx,0x%lx)%s\n",
		  (unsigned long)am_tag(addr, c->version), dist, where, c->size,
		  (unsigned long)am_tag(c->start, c->version),
		  (unsigned long)am_tag(c->start + c->size, c->version),
		  c->state == AM_LIVE ? "" : ", freed");
	if (c->state != AM_LIVE)
		print_stack_id("freed", c->free_tid, c->free_stack);
	print_stack_id(c->state == AM_LIVE ? "allocated" : "previously allocated",
		       c->alloc_tid, c->alloc_stack);
}

void am_report_finish(void)
{
	am_printf("==%d==ABORTING (adimalloc exit status %d)\n", (int)getpid(),
		  am_opt.abort_on_error ? 134 : am_opt.exitcode);
	if (am_opt.abort_on_error) {
		signal(SIGABRT, SIG_DFL);
		abort();
	}
	_exit(am_opt.exitcode);
}

void am_report_bad_free(const char *kind, const char *fn, const void *p,
			const struct am_chunk *c)
{
	uintptr_t pcs[AM_STACK_MAX];
	int n = am_stack_capture(pcs, AM_STACK_MAX);

	if (++reports > MAX_REPORTS && !am_opt.halt)
		return;
	am_printf("=================================================================\n"
		  "==%d==ERROR: adimalloc: %s on 0x%lx in %s() thread %d\n",
		  (int)getpid(), kind, (unsigned long)p, fn, (int)gettid());
	am_stack_print(pcs, n);
	if (c)
		print_chunk(am_strip(p), c);
	else
		am_printf("0x%lx was not returned by malloc (no allocation there)\n",
			  (unsigned long)p);
	am_printf("SUMMARY: adimalloc: %s in %s()\n", kind, fn);
	if (am_opt.halt)
		am_report_finish();
}

/* Did the thread just come out of a system call?  (The kernel's optional
 * syscall-mismatch signal arrives with rip after the syscall instruction.) */
static bool after_syscall(const uint8_t *rip)
{
	return rip[-2] == 0x0f && rip[-1] == 0x05;
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uintptr_t rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t fault = (uintptr_t)si->si_addr, a = am_strip(si->si_addr);
	unsigned int pv = am_pver(si->si_addr), size = 0;
	uintptr_t pcs[64];
	const char *kind, *dirs = "ACCESS";
	struct am_chunk c;
	bool found = false, syscall;
	int n, first = -1;
	long mv;

	(void)sig;
	if (si->si_code != SEGV_ADIPERR && si->si_code != SEGV_ADIDERR) {
		/* Not ours: let it kill the process as it would have. */
		signal(SIGSEGV, SIG_DFL);
		return;
	}
	syscall = si->si_code == SEGV_ADIPERR && after_syscall((const uint8_t *)rip);
	if (si->si_code == SEGV_ADIPERR && !syscall) {
		enum am_dir d = am_insn_direction((const uint8_t *)rip, fault,
						  (uintptr_t)uc->uc_mcontext.gregs[REG_RDI],
						  (uintptr_t)uc->uc_mcontext.gregs[REG_RSI],
						  &size);

		dirs = d == AM_DIR_WRITE ? "WRITE" : d == AM_DIR_READ ? "READ" : "ACCESS";
	} else if (si->si_code == SEGV_ADIDERR) {
		dirs = "WRITE";
	}

	am_heap_lock();
	if (si->si_code == SEGV_ADIPERR) {
		struct am_chunk cont;

		if (am_heap_find_containing(a, &cont) && cont.state != AM_LIVE &&
		    cont.version == pv) {
			c = cont;
			found = true;
		} else {
			found = am_heap_find_nearest(a, pv, &c);
		}
	}
	if (si->si_code == SEGV_ADIDERR)
		kind = "adi-mismatch (imprecise store, address unknown)";
	else if (!found)
		kind = am_heap_owns(a) ? "wild-pointer" : "adi-mismatch outside the heap";
	else if (c.state != AM_LIVE)
		kind = "use-after-free";
	else if (a >= c.start + c.size)
		kind = "heap-buffer-overflow";
	else if (a < c.start)
		kind = "heap-buffer-underflow";
	else
		kind = "version-mismatch inside a live allocation";
	mv = adi_get_version((const void *)a);

	if (++reports <= MAX_REPORTS || am_opt.halt) {
		am_printf("=================================================================\n"
			  "==%d==ERROR: adimalloc: %s on address 0x%lx at pc 0x%lx "
			  "(pointer version %u, memory version %ld)\n",
			  (int)getpid(), kind, (unsigned long)fault, (unsigned long)rip, pv, mv);
		if (syscall)
			am_printf("%s inside a system call (it returned %ld: EFAULT or a short "
				  "count) at 0x%lx thread %d\n", dirs,
				  (long)uc->uc_mcontext.gregs[REG_RAX],
				  (unsigned long)fault, (int)gettid());
		else if (size)
			am_printf("%s of size %u at 0x%lx thread %d\n", dirs, size,
				  (unsigned long)fault, (int)gettid());
		else
			am_printf("%s at 0x%lx thread %d\n", dirs, (unsigned long)fault,
				  (int)gettid());
		n = am_stack_capture(pcs, 64);
		for (int i = 0; i < n; i++)
			if (pcs[i] == rip) {
				first = i;
				break;
			}
		if (first < 0) {
			am_stack_print(&rip, 1);
		} else {
			n -= first;
			am_stack_print(pcs + first, n > AM_STACK_MAX ? AM_STACK_MAX : n);
		}
		if (found)
			print_chunk(a, &c);
		am_printf("SUMMARY: adimalloc: %s\n", kind);
	}
	am_heap_unlock();
	if (am_opt.halt || si->si_code == SEGV_ADIDERR)
		am_report_finish();
	/* Keep going: make the block match every pointer (version 15), so the
	 * access that faulted completes when the instruction restarts. */
	if (!syscall)
		am_set_version(am_round_down(a, AM_BLOCK), AM_BLOCK, 15);
}

void am_report_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
}
