/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * adimalloc internals: shared between the files of libadimalloc.so.
 *
 * Layout: small allocations (up to AM_SMALL_MAX bytes) live in slabs
 * (64 KiB, 16 KiB in sampled mode) carved from one reserved PROT_ADI
 * region, one size class per slab, one allocation per slot; larger ones
 * get a mapping each, between two PROT_NONE guard pages.  Every structure
 * that describes the heap (slabs, slots, large records, stacks) lives
 * outside the versioned memory and is only ever reached through untagged
 * pointers, so the allocator itself never takes an ADI trap.
 */
#ifndef ADIMALLOC_INTERNAL_H
#define ADIMALLOC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "libadi.h"
#include "log.h"		/* am_printf(), for every file */
#include "options_list.h"	/* the options, the exit statuses */

#define AM_BLOCK	64UL
#define AM_PAGE		4096UL		/* x86-64's; a guard is one page */
#define AM_SLAB_SIZE	(64UL * 1024)
/* Sampled mode's slabs (heap.c): the largest slot, so that a new one,
 * versioned whole, faults in 4 pages, not 16. */
#define AM_SAMPLE_SLAB_SIZE	AM_SMALL_MAX
#define AM_SMALL_MAX	(16UL * 1024)	/* largest slot; above: own mapping */
/* Largest request (64 TiB): above it malloc fails with ENOMEM, before any
 * rounding can wrap a size near SIZE_MAX to a small one. */
#define AM_SIZE_MAX	(1UL << 46)

/*
 * libadi's pointer helpers with the heap's address type: the heap does
 * arithmetic on uintptr_t, libadi takes and gives pointers.
 */
static inline uintptr_t am_strip(const void *p)
{
	return (uintptr_t)adi_strip_ptr(p);
}

static inline unsigned int am_pver(const void *p)
{
	return adi_ptr_version(p);
}

static inline void *am_tag(uintptr_t a, unsigned int v)
{
	return adi_make_ptr((const void *)a, v);
}

static inline uintptr_t am_round_up(uintptr_t x, uintptr_t a)
{
	return (x + a - 1) & ~(a - 1);
}

static inline uintptr_t am_round_down(uintptr_t x, uintptr_t a)
{
	return x & ~(a - 1);
}

/* ---- options.c ---- */
#define AM_OPTION_FIELD(name, type, ...)	type name;
struct am_options {
	AM_OPTIONS(AM_OPTION_FIELD)
};
extern struct am_options am_opt;
/* Parse @s (ADIMALLOC_OPTIONS); on error print why and _exit(2). */
void am_options_parse(const char *s);

/*
 * ---- heap.c ----
 * One mutex, the heap lock, guards the heap's state (and the stack depot).
 * Not every function here is called with it held: see each group.
 */
/* AM_RETIRED: freed, but its versions could not be changed: never reused. */
enum am_state { AM_FREE, AM_LIVE, AM_QUARANTINED, AM_RETIRED };

/* Which family allocated a block, so that the matching one frees it. */
enum am_api { AM_API_MALLOC, AM_API_NEW, AM_API_NEW_ARRAY };

/* What the report code needs to know about one allocation. */
/* Who allocated and freed a block: kept by slots, large blocks and chunks. */
struct am_history {
	uint32_t alloc_stack, free_stack;	/* am_stack_save() ids; 0: none */
	pid_t alloc_tid, free_tid;
};

struct am_chunk {
	uintptr_t start;		/* untagged user address */
	size_t size;			/* requested size */
	unsigned int version;		/* version its pointer carries (or carried) */
	enum am_state state;
	struct am_history hist;
	bool large;
	uint8_t api;			/* enum am_api: how it was allocated */
};

/*
 * The heap lock itself.  The SIGSEGV handler never waits on it for good:
 * am_heap_held_here() first, then am_heap_trylock() (report.c).
 */
void am_heap_lock(void);
void am_heap_unlock(void);
bool am_heap_trylock(void);		/* true: now held */
bool am_heap_held_here(void);		/* by this thread (signal-safe) */

/*
 * Called once, from the first malloc (am_ensure_init() in malloc.c) with
 * malloc.c's init_lock held, not the heap lock: any other thread's malloc,
 * free or the like waits in am_ensure_init() until this has returned, and
 * the SIGSEGV handler is installed after it, so nothing else can reach the
 * heap yet.
 */
void am_heap_init(void);

/*
 * fork()'s child handler (atfork_child() in malloc.c).  The prepare
 * handler took the heap lock in the parent, so the child starts with its
 * copy of the lock held, by the thread that forked (the child's only one).
 * This re-initialises the lock instead of unlocking it.
 */
void am_heap_atfork_child(void);

/*
 * Set the version of [addr, addr + len): a prctl() that reads and changes
 * no heap state, so it needs no lock of ours.  heap.c calls it with the
 * heap lock held (am_heap_init() with init_lock instead); report.c's
 * let_proceed() calls it from the SIGSEGV handler without the heap lock:
 * the handler has released it, or never got it (another thread, or the
 * allocator code the signal interrupted, may hold it).
 */
int am_set_version(uintptr_t addr, size_t len, unsigned int v);

/*
 * Without the heap lock (the SIGSEGV handler's first test): false when @a
 * lies outside the address span of every large mapping ever made, so a
 * page fault there is none of ours.  true says only "maybe".
 */
bool am_heap_in_large_span(uintptr_t a);

/*
 * Without the heap lock either.  The reserved region of the small blocks
 * (its guard pages included): every block of sampled mode is there
 * (malloc.c samples no request that would need a large mapping), so in
 * that mode an unversioned pointer outside it is glibc's.
 */
/*
 * The region's bounds with its guard pages, set once by am_heap_init():
 * free() of a glibc block asks this, inline, on every call.
 */
extern uintptr_t am_region_lo __attribute__((visibility("hidden")));
extern uintptr_t am_region_hi __attribute__((visibility("hidden")));
static inline bool am_heap_in_region(uintptr_t a)
{
	return a >= am_region_lo && a < am_region_hi;
}
/* In the region or the large span: false says "none of ours" for sure. */
bool am_heap_maybe_ours(uintptr_t a);
/*
 * Allocations now live (handed out, not freed yet).  Without the lock it
 * is a hint (malloc's early test of sample_max_live); with it, exact.
 */
size_t am_heap_live(void);

/* The rest read or change the heap: call them with the heap lock held. */
/* In the region, or a large block's reservation (its guard pages, or a
 * released range, included). */
bool am_heap_owns(uintptr_t addr);
void *am_heap_alloc(size_t size, size_t align, uint32_t stack, pid_t tid);
/* Find the allocation whose user pointer is exactly @p (any state). */
bool am_heap_find_exact(uintptr_t p, struct am_chunk *c);
/* Find the allocation that contains @addr (slot or mapping), any state. */
bool am_heap_find_containing(uintptr_t addr, struct am_chunk *c);
/* Nearest allocation to @addr whose pointer version is @v (live or not). */
bool am_heap_find_freed(uintptr_t a, unsigned int v, struct am_chunk *c);
bool am_heap_find_nearest(uintptr_t addr, unsigned int v, struct am_chunk *c);
void am_heap_free(uintptr_t p, uint32_t stack, pid_t tid);
/* Record which family allocated the live block at @p (am_heap_alloc()
 * says malloc). */
void am_heap_set_api(uintptr_t p, enum am_api api);
/* Where a page fault in a large block's reserved address space landed. */
enum am_guard {
	AM_GUARD_NONE,		/* in no guard page or released range of ours */
	AM_GUARD_BEFORE,	/* the guard page before a block's mapping */
	AM_GUARD_AFTER,		/* the guard page after it */
	AM_GUARD_RELEASED,	/* a freed block's range, kept PROT_NONE */
};
/* The large block (any state) whose guard pages or released range hold @a. */
enum am_guard am_heap_find_guard(uintptr_t a, struct am_chunk *c);
void am_heap_stats(size_t *mapped, size_t *peak_mapped, size_t *requested,
		   size_t *peak_requested, size_t *peak_live);
/* Call @fn for every live allocation. */
void am_heap_for_each_live(void (*fn)(const struct am_chunk *c, void *arg), void *arg);

/* ---- leak.c ---- */
/*
 * At exit (detect_leaks=1): the live allocations no root reaches, printed
 * by allocation stack; false when there are none.  Takes the heap lock.
 */
bool am_leak_check(void);

/* ---- stack.c ---- */
int am_stack_capture(uintptr_t *pcs, int max);
uint32_t am_stack_save(const uintptr_t *pcs, int n);	/* heap lock held */
int am_stack_get(uint32_t id, const uintptr_t **pcs);
void am_stack_print(const uintptr_t *pcs, int n);
void am_stack_init(void);

/*
 * ---- symbolize.c: names and file:line from eu-addr2line, run as a child
 * process (see there); nothing here allocates or takes the heap lock ----
 */
/* What eu-addr2line knows of one pc; the strings live until ..._end(). */
struct am_symbol {
	const char *function;	/* NULL: no symbol or DWARF covers the pc */
	const char *file;	/* NULL: no line known (no DWARF for it) */
	int line;
};
/* true: symbolize=1, and this thread may ask until am_symbolize_end(). */
bool am_symbolize_begin(void);
/* Between begin and end: fill @syms for @pcs (@n <= AM_STACK_MAX); false:
 * no answer (print with dladdr()). */
bool am_symbolize(const uintptr_t *pcs, int n, struct am_symbol *syms);
void am_symbolize_end(void);

/* ---- slack.c: the versioned bytes around an allocation ---- */
/* Changed slack bytes: [first, last] (untagged), after the region or before. */
struct am_slack_damage {
	uintptr_t first, last;
	bool after;
};
/* Fill the slack of a new allocation (no lock: nobody else has it yet). */
void am_slack_fill(uintptr_t start, size_t size);
/* Heap lock held, @c live: true, and @d filled, if its slack was written. */
bool am_slack_check(const struct am_chunk *c, struct am_slack_damage *d);

/*
 * ---- signals.c: the program's own SIGSEGV disposition.  The kernel keeps
 * our handler; sigaction() and signal() (and their aliases) record what
 * the program asks for SIGSEGV instead, and report it back ----
 */
/* Install @handler for SIGSEGV, the program's disposition kept apart. */
void am_segv_install(void (*handler)(int, siginfo_t *, void *));
/* The program has a SIGSEGV handler of its own (not SIG_DFL or SIG_IGN). */
bool am_segv_program_handles(void);
/*
 * A SIGSEGV that is not ours: do what the program asked for, as the
 * kernel would have.  @fault: raised by a faulting instruction, which
 * runs again when the handler returns (not sent by kill() or raise()).
 */
void am_segv_pass_on(int sig, siginfo_t *si, void *uc, bool fault);
/* Find glibc's signal() functions (at start-up, not in a handler). */
void am_segv_resolve(void);

/* ---- report.c ---- */
/* "malloc", "operator new", "operator new []"; "free", "operator delete"... */
const char *am_api_alloc_name(enum am_api api);
const char *am_api_free_name(enum am_api api);
void am_report_init(void);
/* Allocator misuse found in free/realloc: prints and exits (or returns). */
void am_report_bad_free(const char *kind, const char *fn, const void *p,
			const struct am_chunk *c);
/*
 * A write into @c's slack, found when @fn freed it (@pcs, @n: the stack of
 * that call): prints, exits or returns.
 */
void am_report_slack(const char *fn, const void *p, const struct am_chunk *c,
		     const struct am_slack_damage *d, const uintptr_t *pcs, int n);

/*
 * @fn (libc_check.c) was given @len bytes at @p, which leave @c at @bad:
 * prints, exits or returns.
 */
void am_report_libc(const char *fn, bool write, const void *p, size_t len,
		    uintptr_t bad, const struct am_chunk *c);

/* ---- malloc.c, for new_delete.c ---- */
/* An allocation of @api's family, sampled or not as malloc's; NULL if none. */
void *am_alloc(size_t size, size_t align, enum am_api api);
/* Free @p, which @fn (of @api's family) was given. */
void am_dealloc(void *p, enum am_api api, const char *fn);

/* ---- new_delete.c ---- */
/* The family malloc() records: operator new's while libstdc++'s operator
 * new, called to throw for us, asks malloc() again; else malloc's. */
enum am_api am_current_alloc_api(void);

/* ---- libc_check.c ---- */
/* Find the C library's mem/str functions (after the heap is up). */
/* Sampled mode on a kernel without ADI: nothing is ours (malloc.c). */
bool am_passing_through(void);
void am_libc_check_init(void);
#define AM_NO_LIMIT ((size_t)-1)
/*
 * strnlen(@s, @max), after checking the bytes it covers, with the
 * terminator if found, against the allocation @s points into (reported as
 * a READ in @fn()).
 */
size_t am_checked_strlen(const char *fn, const char *s, size_t max);

/* ---- report_stack.c ---- */
/* One of the SIGSEGV handler's report functions: true if the fault was ours. */
typedef bool (*am_report_fn)(const siginfo_t *si, const ucontext_t *uc);
/* @fn(@si, @uc), run on this thread's report stack (not a small altstack). */
bool am_report_on_own_stack(am_report_fn fn, const siginfo_t *si,
			    const ucontext_t *uc);

/* ---- printf_check.c ---- */
/* Check printf's %s arguments from now on (full mode). */
void am_printf_check_init(void);

/* ---- insn.c ---- */
enum am_dir { AM_DIR_UNKNOWN, AM_DIR_READ, AM_DIR_WRITE };
enum am_dir am_insn_direction(const uint8_t *ip, uintptr_t fault,
			      uintptr_t rdi, uintptr_t rsi, unsigned int *size);

#endif
