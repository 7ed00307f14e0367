// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reports, in the shape AddressSanitizer users know: what went wrong, where
 * (stack of the access), and the allocation involved with its own stacks.
 * The SIGSEGV handler turns an ADI mismatch (si_code SEGV_ADIPERR, the
 * versioned data address in si_addr) into such a report, and a page fault
 * in a large block's guard page or in a released block's range too; other
 * SIGSEGVs go back to the default action.  Everything is printed with
 * am_printf() (log.c), which does not allocate: the heap is what just went
 * wrong.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ucontext.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define MAX_REPORTS	100

static int reports;

static void print_stack_id(const char *what, pid_t tid, uint32_t id)
{
	const uintptr_t *pcs;
	int n = am_stack_get(id, &pcs);

	am_printf("%s by thread %d here:\n", what, (int)tid);
	am_stack_print(pcs, n);
}

const char *am_api_alloc_name(enum am_api api)
{
	static const char *const name[] = {
		[AM_API_MALLOC] = "malloc", [AM_API_NEW] = "operator new",
		[AM_API_NEW_ARRAY] = "operator new []",
	};

	return name[api];
}

const char *am_api_free_name(enum am_api api)
{
	static const char *const name[] = {
		[AM_API_MALLOC] = "free", [AM_API_NEW] = "operator delete",
		[AM_API_NEW_ARRAY] = "operator delete []",
	};

	return name[api];
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
	if (c->api != AM_API_MALLOC)
		am_printf("the region was allocated with %s\n", am_api_alloc_name(c->api));
	if (c->state != AM_LIVE)
		print_stack_id("freed", c->hist.free_tid, c->hist.free_stack);
	print_stack_id(c->state == AM_LIVE ? "allocated" : "previously allocated",
		       c->hist.alloc_tid, c->hist.alloc_stack);
}

static void am_report_finish(void)
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

	if (++reports > MAX_REPORTS && !am_opt.halt_on_error)
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
	if (am_opt.halt_on_error)
		am_report_finish();
}

void am_report_slack(const char *fn, const void *p, const struct am_chunk *c,
		     const struct am_slack_damage *d, const uintptr_t *pcs, int n)
{
	const char *kind = d->after ? "heap-buffer-overflow" : "heap-buffer-underflow";
	/* The changed bytes, as one write: [first, last]. */
	uintptr_t edge = d->first;

	if (++reports > MAX_REPORTS && !am_opt.halt_on_error)
		return;
	am_printf("=================================================================\n"
		  "==%d==ERROR: adimalloc: %s on address 0x%lx found by %s() "
		  "(the block's slack was written)\n"
		  "WRITE of size %zu at 0x%lx thread %d, seen when %s() freed the block; "
		  "the write came earlier\n",
		  (int)getpid(), kind, (unsigned long)am_tag(edge, c->version), fn,
		  (size_t)(d->last - d->first + 1),
		  (unsigned long)am_tag(edge, c->version), (int)gettid(), fn);
	am_stack_print(pcs, n);
	print_chunk(edge, c);
	am_printf("SUMMARY: adimalloc: %s (WRITE, found by %s()) on 0x%lx\n",
		  kind, fn, (unsigned long)p);
	if (am_opt.halt_on_error)
		am_report_finish();
}

void am_report_libc(const char *fn, bool write, const void *p, size_t len,
		    uintptr_t bad, const struct am_chunk *c)
{
	const char *kind = c->state != AM_LIVE ? "use-after-free" :
			   bad < c->start ? "heap-buffer-underflow" : "heap-buffer-overflow";
	uintptr_t pcs[AM_STACK_MAX];
	int n = am_stack_capture(pcs, AM_STACK_MAX);

	if (++reports > MAX_REPORTS && !am_opt.halt_on_error)
		return;
	am_printf("=================================================================\n"
		  "==%d==ERROR: adimalloc: %s on address 0x%lx in %s() (its range "
		  "[0x%lx,0x%lx))\n"
		  "%s of size %zu at 0x%lx thread %d\n"
		  "    #- %s(), checked by adimalloc before the C library runs it\n",
		  (int)getpid(), kind, (unsigned long)am_tag(bad, c->version), fn,
		  (unsigned long)p, (unsigned long)p + len, write ? "WRITE" : "READ",
		  len, (unsigned long)am_tag(bad, c->version), (int)gettid(), fn);
	am_stack_print(pcs, n);
	print_chunk(bad, c);
	am_printf("SUMMARY: adimalloc: %s (%s in %s())\n", kind,
		  write ? "WRITE" : "READ", fn);
	if (am_opt.halt_on_error)
		am_report_finish();
}

/* Did the thread just come out of a system call?  (The kernel's optional
 * syscall-mismatch signal arrives with rip after the syscall instruction.) */
static bool after_syscall(const uint8_t *rip)
{
	return rip[-2] == 0x0f && rip[-1] == 0x05;
}

/* What the handler learned about one fault, for the report. */
struct fault {
	uintptr_t rip, addr, plain;	/* faulting pc, versioned and plain address */
	unsigned int pv, size;		/* pointer version, access size (0: unknown) */
	const char *dir, *kind;
	/* A page fault: its si_code's name and where it hit; else NULL. */
	const char *code, *page;
	bool syscall, found, imprecise, has_alt;
	struct am_chunk c;
	struct am_chunk alt;		/* the other possible cause */
};

/* READ/WRITE and the size, decoded from the faulting instruction. */
static void decode_access(struct fault *f, const ucontext_t *uc)
{
	f->dir = "ACCESS";
	if (f->imprecise) {
		f->dir = "WRITE";
	} else if (!f->syscall) {
		enum am_dir d = am_insn_direction((const uint8_t *)f->rip, f->addr,
						  (uintptr_t)uc->uc_mcontext.gregs[REG_RDI],
						  (uintptr_t)uc->uc_mcontext.gregs[REG_RSI],
						  &f->size);

		f->dir = d == AM_DIR_WRITE ? "WRITE" : d == AM_DIR_READ ? "READ" : "ACCESS";
	}
}

/*
 * The heap lock for the lookup, without ever waiting for it for good:
 * this thread may hold it already (a fault inside the allocator, or in a
 * signal handler that interrupted a malloc), and another thread may hold
 * it while it is itself stuck.  Returns NULL when locked, else why not.
 */
static const char *lock_for_lookup(void)
{
	struct timespec ms = { 0, 1000000 };

	if (am_heap_held_here())
		return "this thread holds the heap lock (a fault inside the "
		       "allocator, or in a signal handler that interrupted it)";
	for (int i = 0; i < 1000; i++) {
		if (am_heap_trylock())
			return NULL;
		nanosleep(&ms, NULL);
	}
	return "another thread has held the heap lock for a second";
}

/* How far @a lies outside @c (0 inside). */
static uintptr_t distance(uintptr_t a, const struct am_chunk *c)
{
	if (a < c->start)
		return c->start - a;
	if (a >= c->start + c->size)
		return a - (c->start + c->size);
	return 0;
}

/*
 * Which allocation the access meant, and so what kind of bug it is.  A
 * freed block that still holds the address with the pointer's version is
 * a use-after-free.  Then two explanations compete: a block freed there
 * earlier whose slot has been reused since (from the history of frees),
 * and the nearest block that carries the pointer's version (an overflow
 * or underflow of it, or a use-after-free of it).  An access within a
 * block's length (64 bytes) of a live block with its version reads as
 * that block's overflow; farther, a remembered free of those very bytes
 * is the likelier cause.  A live rival is named on a line of its own.
 */
static void classify(struct fault *f)
{
	struct am_chunk cont, freed;
	bool was_freed;

	if (!f->imprecise) {
		if (am_heap_find_containing(f->plain, &cont) && cont.state != AM_LIVE &&
		    cont.version == f->pv) {
			f->c = cont;
			f->found = true;
		} else {
			f->found = am_heap_find_nearest(f->plain, f->pv, &f->c);
			was_freed = am_heap_find_freed(f->plain, f->pv, &freed);
			if (was_freed && f->found && f->c.state == AM_LIVE &&
			    distance(f->plain, &f->c) < AM_BLOCK) {
				f->alt = freed;
				f->has_alt = true;
			} else if (was_freed) {
				/* A freed block elsewhere is no rival to the
				 * one whose bytes these were. */
				if (f->found && f->c.state == AM_LIVE) {
					f->alt = f->c;
					f->has_alt = true;
				}
				f->c = freed;
				f->found = true;
			}
		}
	}
	if (f->imprecise)
		f->kind = "adi-mismatch (imprecise store, address unknown)";
	else if (!f->found)
		f->kind = am_heap_owns(f->plain) ? "wild-pointer" :
			  "adi-mismatch outside the heap";
	else if (f->c.state != AM_LIVE)
		f->kind = "use-after-free";
	else if (f->plain >= f->c.start + f->c.size)
		f->kind = "heap-buffer-overflow";
	else if (f->plain < f->c.start)
		f->kind = "heap-buffer-underflow";
	else
		f->kind = "version-mismatch inside a live allocation";
}

/* The stack of the access: the unwinder's frames from the faulting pc on. */
static void print_access_stack(uintptr_t rip)
{
	uintptr_t pcs[64];
	int n = am_stack_capture(pcs, 64), first = -1;

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
}

static void print_fault(const struct fault *f, const ucontext_t *uc)
{
	/* A page fault has no versions to show: the page is not ADI memory
	 * (asking for its version would raise SEGV_ACCADI). */
	if (f->page)
		am_printf("=================================================================\n"
			  "==%d==ERROR: adimalloc: %s on address 0x%lx at pc 0x%lx "
			  "(%s in the %s; address shown with the block's version)\n",
			  (int)getpid(), f->kind, (unsigned long)f->addr,
			  (unsigned long)f->rip, f->code, f->page);
	else
		am_printf("=================================================================\n"
			  "==%d==ERROR: adimalloc: %s on address 0x%lx at pc 0x%lx "
			  "(pointer version %u, memory version %d)\n",
			  (int)getpid(), f->kind, (unsigned long)f->addr,
			  (unsigned long)f->rip, f->pv,
			  adi_get_version((const void *)f->plain));
	if (f->syscall)
		am_printf("%s inside a system call (it returned %ld: EFAULT or a short "
			  "count) at 0x%lx thread %d\n", f->dir,
			  (long)uc->uc_mcontext.gregs[REG_RAX],
			  (unsigned long)f->addr, (int)gettid());
	else if (f->size)
		am_printf("%s of size %u at 0x%lx thread %d\n", f->dir, f->size,
			  (unsigned long)f->addr, (int)gettid());
	else
		am_printf("%s at 0x%lx thread %d\n", f->dir, (unsigned long)f->addr,
			  (int)gettid());
	print_access_stack(f->rip);
	if (f->found)
		print_chunk(f->plain, &f->c);
	if (f->has_alt)
		am_printf("also possible: the access is %zu bytes %s the %zu-byte region "
			  "[0x%lx,0x%lx)%s with the pointer's version\n",
			  (size_t)distance(f->plain, &f->alt),
			  f->plain < f->alt.start ? "before" :
			  f->plain >= f->alt.start + f->alt.size ? "after" : "inside",
			  f->alt.size, (unsigned long)am_tag(f->alt.start, f->alt.version),
			  (unsigned long)am_tag(f->alt.start + f->alt.size, f->alt.version),
			  f->alt.state == AM_LIVE ? "" : ", freed");
	am_printf("SUMMARY: adimalloc: %s\n", f->kind);
}

/* The last access this thread let proceed (halt_on_error=0). */
static __thread uintptr_t tl_last_rip __attribute__((tls_model("initial-exec")));
static __thread uintptr_t tl_last_addr __attribute__((tls_model("initial-exec")));

/*
 * halt_on_error=0 lets the faulting access through, then the instruction
 * restarts.  When the same access faults again after that, or the change
 * that lets it through fails, restarting it would fault forever: say so
 * and stop.  @what names the memory the change was made to.
 */
static void stop_if_faults_again(const struct fault *f, bool changed_already,
				 const char *what)
{
	if (f->rip == tl_last_rip && f->addr == tl_last_addr && changed_already) {
		am_printf("adimalloc: cannot let the access proceed: it faults again "
			  "at pc 0x%lx on 0x%lx, whose %s\n",
			  (unsigned long)f->rip, (unsigned long)f->addr, what);
		am_report_finish();
	}
}

static void stop_if_failed(int failed, const char *what, uintptr_t where,
			   const char *change)
{
	const char *name;

	if (!failed)
		return;
	name = strerrorname_np(errno);
	am_printf("adimalloc: cannot let the access proceed: %s 0x%lx cannot be %s "
		  "(%s): restarting it would fault forever\n", what,
		  (unsigned long)where, change, name ? name : "?");
	am_report_finish();
}

static void remember_let_through(const struct fault *f)
{
	tl_last_rip = f->rip;
	tl_last_addr = f->addr;
}

/* After a mismatch: make the block match every pointer (version 15). */
static void let_proceed(const struct fault *f)
{
	uintptr_t block = am_round_down(f->plain, AM_BLOCK);

	stop_if_faults_again(f, adi_get_version((const void *)block) == ADI_VERSION_MAX,
			     "block is already version 15");
	stop_if_failed(am_set_version(block, AM_BLOCK, ADI_VERSION_MAX),
		       "the version of", block, "changed");
	remember_let_through(f);
}

/*
 * After a page fault: make the page plain read-write memory (nothing on
 * it is checked any more).  Called with the heap lock held: the range is
 * still ours.
 */
static void open_page(const struct fault *f)
{
	uintptr_t page = am_round_down(f->plain, AM_PAGE);

	stop_if_faults_again(f, true, "page was made accessible");
	stop_if_failed(mprotect((void *)page, AM_PAGE, PROT_READ | PROT_WRITE),
		       "the page", page, "made accessible");
	remember_let_through(f);
}

/*
 * A page fault (SEGV_MAPERR, SEGV_ACCERR), not a mismatch.  The kernel
 * checks no version outside ADI memory: an access through a heap pointer
 * that ran past a large block's mapping into its guard page, or one into
 * the PROT_NONE range of a released block, faults as through any pointer,
 * at the plain address.  Those are reported as a mismatch would be, with
 * the block's stacks; false for any other page fault, which is none of
 * ours.  The lookup takes the heap lock as for a mismatch, never waiting
 * for it for good; a fault outside every large block's span is passed on
 * without it.
 */
static __attribute__((noinline)) bool on_page_fault(const siginfo_t *si,
						    const ucontext_t *uc)
{
	struct fault f = {
		.rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
		.plain = am_strip(si->si_addr),
		.code = si->si_code == SEGV_MAPERR ? "SEGV_MAPERR" : "SEGV_ACCERR",
	};
	const char *no_lookup;
	enum am_guard g;

	if (!am_heap_in_large_span(f.plain))
		return false;
	no_lookup = lock_for_lookup();
	if (no_lookup) {
		/* Maybe ours, maybe not: the default action, with a word. */
		am_printf("adimalloc: SIGSEGV (%s) at 0x%lx, where adimalloc maps its "
			  "large blocks; not looked up: %s\n", f.code,
			  (unsigned long)f.plain, no_lookup);
		return false;
	}
	g = am_heap_find_guard(f.plain, &f.c);
	if (g == AM_GUARD_NONE) {
		am_heap_unlock();
		return false;
	}
	/*
	 * The pointer's version is not in the fault (the CPU faulted on the
	 * plain address): show the block's, which a pointer derived from it
	 * carries, stale or not.
	 */
	f.found = true;
	f.pv = f.c.version;
	f.addr = (uintptr_t)am_tag(f.plain, f.c.version);
	if (g == AM_GUARD_RELEASED || f.c.state != AM_LIVE)
		f.kind = "use-after-free";
	else if (g == AM_GUARD_AFTER)
		f.kind = "heap-buffer-overflow";
	else
		f.kind = "heap-buffer-underflow";
	f.page = g == AM_GUARD_RELEASED ? "released range of a freed large block" :
		 g == AM_GUARD_AFTER ? "guard page after a large block" :
		 "guard page before a large block";
	decode_access(&f, uc);
	if (++reports <= MAX_REPORTS || am_opt.halt_on_error)
		print_fault(&f, uc);
	if (!am_opt.halt_on_error)
		open_page(&f);
	am_heap_unlock();
	if (am_opt.halt_on_error)
		am_report_finish();
	return true;
}

/*
 * An ADI mismatch: reported (false: none of ours).  Every mismatch was
 * ours to report, in or outside the heap, and still is unless the program
 * has a SIGSEGV handler of its own: it may version memory of its own, and
 * a mismatch outside our heap is then its business.  An imprecise store
 * gives no address to tell: reported.
 */
static __attribute__((noinline)) bool on_mismatch(const siginfo_t *si,
						  const ucontext_t *uc)
{
	struct fault f = {
		.rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
		.addr = (uintptr_t)si->si_addr,
		.plain = am_strip(si->si_addr),
		.pv = am_pver(si->si_addr),
		.imprecise = si->si_code == SEGV_ADIDERR,
	};
	bool theirs_maybe = !f.imprecise && am_segv_program_handles();
	const char *no_lookup;

	if (theirs_maybe && !am_heap_maybe_ours(f.plain))
		return false;
	f.syscall = !f.imprecise && after_syscall((const uint8_t *)f.rip);
	decode_access(&f, uc);
	no_lookup = lock_for_lookup();
	if (!no_lookup && theirs_maybe && !am_heap_owns(f.plain)) {
		am_heap_unlock();
		return false;
	}
	if (no_lookup) {
		/* The heap may be half updated, or not ours to read: no lookup. */
		f.kind = "adi-mismatch, allocation not looked up";
	} else {
		classify(&f);
	}
	if (++reports <= MAX_REPORTS || am_opt.halt_on_error) {
		print_fault(&f, uc);
		if (no_lookup)
			am_printf("adimalloc: no allocation lookup: %s\n", no_lookup);
	}
	if (!no_lookup)
		am_heap_unlock();
	if (am_opt.halt_on_error || f.imprecise)
		am_report_finish();
	if (!f.syscall)
		let_proceed(&f);
	return true;
}

/*
 * Ours to report: a mismatch, or a page fault in a large block's guard
 * page or released range.  Anything else goes where the program asked
 * (signals.c): its own handler, or the default action.  That path comes
 * first and is short: it may run on a small alternate stack (stack
 * overflow), and in sampled mode it takes no lock.  The report functions
 * run on a stack of our own (report_stack.c).
 */
static void on_segv(int sig, siginfo_t *si, void *ucv)
{
	bool ours = false;

	/* Sent by kill(), raise() or sigqueue(): no fault, never ours. */
	if (si->si_code <= 0) {
		am_segv_pass_on(sig, si, ucv, false);
		return;
	}
	if (si->si_code == SEGV_ADIPERR || si->si_code == SEGV_ADIDERR)
		ours = am_report_on_own_stack(on_mismatch, si, ucv);
	else if (si->si_code == SEGV_MAPERR || si->si_code == SEGV_ACCERR)
		ours = am_report_on_own_stack(on_page_fault, si, ucv);
	if (!ours)
		am_segv_pass_on(sig, si, ucv, true);
}

void am_report_init(void)
{
	am_segv_install(on_segv);
}
