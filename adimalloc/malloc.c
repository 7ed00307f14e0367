// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The malloc family, as preloaded into an unmodified program.
 *
 * Start-up is lazy (the first malloc may come before our constructor) and
 * must not allocate: options, the heap region, the SIGSEGV handler, precise
 * stores and the C library's read-ahead ranges are all set up with plain
 * system calls.  Sampled mode passes unsampled requests to glibc's own
 * allocator (__libc_malloc and friends), so they cost what they always
 * cost; free() tells the two apart by address, since everything of ours is
 * in our region or one of our mappings.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "internal.h"
#include "libadi.h"


extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static bool am_syscall_signal_on;
/* Sampled mode on a kernel without ADI: everything goes to glibc. */
static bool am_passthrough;
static __thread uint64_t tl_rng __attribute__((tls_model("initial-exec")));
static int init_state;			/* 0 no, 1 in progress, 2 done */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t (*glibc_usable_size)(void *);

static void atfork_prepare(void) { am_heap_lock(); }
static void atfork_parent(void) { am_heap_unlock(); }
static void atfork_child(void)
{
	am_heap_atfork_child();
	tl_rng = 0;	/* draw a sampling sequence of the child's own */
}

static void init_locked(void)
{
	am_options_parse(getenv("ADIMALLOC_OPTIONS"));
	if (!getauxval(AT_ADI_BLKSZ) || getenv("ADIMALLOC_TEST_NO_ADI")) {
		/*
		 * Sampled mode is for production: a machine booted without
		 * ADI must keep its programs (and their children) running.
		 * Full mode is asked for to check: refuse.
		 */
		if (am_opt.sample > 1) {
			am_printf("adimalloc: this kernel has no ADI (no AT_ADI_BLKSZ "
				  "in the aux vector); sampled mode passes every "
				  "allocation to glibc unchecked\n");
			am_passthrough = true;
			return;
		}
		am_printf("adimalloc: this kernel has no ADI (no AT_ADI_BLKSZ in the aux "
			  "vector: built without CONFIG_X86_ADI or booted with adi=off); "
			  "refusing to run unchecked\n");
		_exit(AM_CONFIG_EXIT);
	}
	if (adi_libc_uses_avx512()) {
		am_printf("adimalloc: glibc runs its AVX-512 (EVEX) string functions on "
			  "this CPU, and the kernel cannot check them yet: every "
			  "strlen() of a heap string would crash; run under adirun, or "
			  "set GLIBC_TUNABLES=" ADI_GLIBC_HWCAPS ADI_GLIBC_HWCAPS_NO_AVX512
			  "; refusing to run unchecked\n");
		_exit(AM_CONFIG_EXIT);
	}
	am_heap_init();
	am_stack_init();
	/* Stores report their data address, not the instruction (per thread,
	 * inherited by threads and children created from now on). */
	if (adi_set_precise(true))
		am_printf("adimalloc: warning: cannot enable precise mode\n");
	/* glibc's string functions read whole vectors past the end of their
	 * data: without this, strlen() near a block's end is a false report. */
	if (adi_register_libc() < 0)
		am_printf("adimalloc: warning: cannot register libc's read-ahead "
			  "ranges: string functions may report falsely\n");
	am_syscall_signal_on = false;
	if (am_opt.syscall_signal != 0) {
		if (adi_set_syscall_signal(true) == 0)
			am_syscall_signal_on = true;
		else if (am_opt.syscall_signal == 1) {
			am_printf("adimalloc: syscall_signal=1 but this kernel cannot "
				  "signal mismatches in system calls "
				  "(PR_ADI_SET_SYSCALL_SIGNAL: EINVAL)\n");
			_exit(AM_CONFIG_EXIT);
		}
	}
	am_report_init();
}

static void am_ensure_init(void)
{
	if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2)
		return;
	pthread_mutex_lock(&init_lock);
	if (init_state == 0) {
		init_state = 1;
		init_locked();
		__atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&init_lock);
		if (am_passthrough) {
			am_libc_check_init();	/* glibc's own mem/str functions */
			return;
		}
		/* These may allocate: only now that the heap works. */
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		glibc_usable_size = (size_t (*)(void *))dlsym(RTLD_NEXT,
							      "malloc_usable_size");
		am_libc_check_init();
		if (am_opt.verbose)
			am_printf("adimalloc: pid %d, %s, syscall signal %s\n", (int)getpid(),
				  am_opt.sample == 1 ? "full mode" : "sampled mode",
				  am_syscall_signal_on ? "on" : "off");
		return;
	}
	pthread_mutex_unlock(&init_lock);
}

__attribute__((constructor)) static void am_constructor(void)
{
	am_ensure_init();
}

bool am_passing_through(void)
{
	return am_passthrough;
}

static bool sampled(void)
{
	if (am_passthrough)
		return false;
	if (am_opt.sample == 1)
		return true;
	if (!tl_rng) {
		tl_rng = (am_opt.seed ? am_opt.seed : (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^
			  (uintptr_t)&tl_rng) + (uint64_t)gettid();
		if (!tl_rng)
			tl_rng = 1;
	}
	tl_rng ^= tl_rng << 13;
	tl_rng ^= tl_rng >> 7;
	tl_rng ^= tl_rng << 17;
	return tl_rng % am_opt.sample == 0;
}

static void *our_alloc(size_t size, size_t align, enum am_api api)
{
	uintptr_t pcs[AM_STACK_MAX];
	int n = am_stack_capture(pcs, am_opt.stack);
	pid_t tid = gettid();
	void *p;

	am_heap_lock();
	p = am_heap_alloc(size, align, am_stack_save(pcs, n), tid);
	if (p && api != AM_API_MALLOC)
		am_heap_set_api(am_strip(p), api);
	am_heap_unlock();
	if (!p)
		errno = ENOMEM;
	else
		am_slack_fill(am_strip(p), size);
	return p;
}

static void *any_alloc(size_t size, size_t align)
{
	return am_alloc(size, align, am_current_alloc_api());
}

void *am_alloc(size_t size, size_t align, enum am_api api)
{
	am_ensure_init();
	if (sampled())
		return our_alloc(size, align, api);
	return align <= 16 ? __libc_malloc(size) : __libc_memalign(align, size);
}

static bool ours(const void *p)
{
	bool r;

	if (am_passthrough)
		return false;	/* no heap of ours */
	if (am_pver(p))
		return true;	/* only we hand out versioned pointers */
	am_heap_lock();
	r = am_heap_owns(am_strip(p));
	am_heap_unlock();
	return r;
}

/* What freeing a pointer would do, decided under the heap lock. */
enum free_verdict {
	FREE_OK,		/* the exact, live pointer with its version */
	FREE_TWICE,		/* the exact pointer of a freed allocation */
	FREE_STALE,		/* the start of an allocation, another version */
	FREE_INTERIOR,		/* inside an allocation, not its start */
	FREE_UNKNOWN,		/* no allocation there */
};

/* Heap lock held: judge @p; @c receives the allocation it names. */
static enum free_verdict judge_free(const void *p, struct am_chunk *c)
{
	uintptr_t a = am_strip(p);

	if (am_heap_find_exact(a, c)) {
		if (c->version != am_pver(p))
			return FREE_STALE;
		return c->state == AM_LIVE ? FREE_OK : FREE_TWICE;
	}
	return am_heap_find_containing(a, c) ? FREE_INTERIOR : FREE_UNKNOWN;
}

/* Heap lock not held (a report may not return): report a refused free. */
static void report_free(enum free_verdict v, const char *fn, const void *p,
			const struct am_chunk *c)
{
	switch (v) {
	case FREE_OK:
		break;
	case FREE_TWICE:
		am_report_bad_free(strcmp(fn, "realloc") ? "double-free" :
				   "realloc-of-freed", fn, p, c);
		break;
	case FREE_STALE:
		am_report_bad_free("invalid-free (stale pointer: version mismatch)",
				   fn, p, c);
		break;
	case FREE_INTERIOR:
		am_report_bad_free("invalid-free (interior pointer)", fn, p, c);
		break;
	case FREE_UNKNOWN:
		am_report_bad_free("invalid-free", fn, p, NULL);
		break;
	}
}

/* The stack of a free, recorded with the freed allocation. */
struct free_site {
	uintptr_t pcs[AM_STACK_MAX];
	int n;
};

static void capture_free_site(struct free_site *site)
{
	site->n = am_stack_capture(site->pcs, am_opt.stack);
}

/*
 * Heap lock held: free an allocation judge_free() passed; true if its
 * slack was written, described in @d for a report after unlocking.
 */
static bool free_judged(const void *p, const struct am_chunk *c,
			const struct free_site *site, struct am_slack_damage *d)
{
	bool damaged = am_slack_check(c, d);

	am_heap_free(am_strip(p), am_stack_save(site->pcs, site->n), gettid());
	return damaged;
}

/* Heap lock not held: a block freed by another family than its own. */
static void report_mismatch(const char *fn, const void *p, const struct am_chunk *c,
			    enum am_api api)
{
	char kind[96];

	snprintf(kind, sizeof(kind), "alloc-dealloc-mismatch (%s vs %s)",
		 am_api_alloc_name(c->api), am_api_free_name(api));
	am_report_bad_free(kind, fn, p, c);
}

/*
 * Validate and free @p, given to @fn of @api's family, under one hold of
 * the heap lock, so that no other thread frees it in between; a refused
 * free is reported after unlocking.  A block of another family is freed
 * all the same (as AddressSanitizer does) and reported.
 */
static void our_free(void *p, const char *fn, enum am_api api)
{
	struct am_slack_damage damage;
	bool damaged = false;
	struct free_site site;
	enum free_verdict v;
	struct am_chunk c;

	capture_free_site(&site);
	am_heap_lock();
	v = judge_free(p, &c);
	if (v == FREE_OK)
		damaged = free_judged(p, &c, &site, &damage);
	am_heap_unlock();
	report_free(v, fn, p, &c);
	if (v == FREE_OK && c.api != api)
		report_mismatch(fn, p, &c, api);
	if (damaged)
		am_report_slack(fn, p, &c, &damage, site.pcs, site.n);
}

void *malloc(size_t size)
{
	return any_alloc(size, 16);
}

void free(void *p)
{
	am_dealloc(p, AM_API_MALLOC, "free");
}

void am_dealloc(void *p, enum am_api api, const char *fn)
{
	if (!p)
		return;
	am_ensure_init();
	if (ours(p))
		our_free(p, fn, api);
	else if (am_opt.sample > 1)
		__libc_free(p);
	else
		am_report_bad_free("invalid-free", fn, p, NULL);
}

void *calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	am_ensure_init();
	if (!sampled())
		return __libc_calloc(n, size);
	p = our_alloc(total, 16, AM_API_MALLOC);
	if (p)		/* reused slots hold old data; write through the plain address */
		memset((void *)am_strip(p), 0, total);
	return p;
}

static size_t chunk_size(const void *p)
{
	struct am_chunk c;
	size_t sz = 0;

	am_heap_lock();
	if (am_heap_find_exact(am_strip(p), &c))
		sz = c.size;
	am_heap_unlock();
	return sz;
}

void *realloc(void *p, size_t size)
{
	struct am_slack_damage damage, unused;
	struct am_chunk c, new_chunk;
	bool damaged = false;
	struct free_site site;
	enum free_verdict v;
	void *q;

	if (!p)
		return malloc(size);
	am_ensure_init();
	if (!ours(p)) {
		if (am_opt.sample > 1)
			return __libc_realloc(p, size);
		am_report_bad_free("invalid-free", "realloc", p, NULL);
		return NULL;
	}
	if (size == 0) {	/* glibc frees and returns NULL */
		our_free(p, "realloc", AM_API_MALLOC);
		return NULL;
	}
	/*
	 * Always move: a new version for the new size, and the old pointer
	 * becomes stale, which is what catches code that keeps using it.  The
	 * new block comes first, so that the old one is judged, copied and
	 * freed under one hold of the lock.
	 */
	q = our_alloc(size, 16, AM_API_MALLOC);
	capture_free_site(&site);
	am_heap_lock();
	v = judge_free(p, &c);
	if (v == FREE_OK && q) {
		memcpy((void *)am_strip(q), (void *)am_strip(p),
		       c.size < size ? c.size : size);
		damaged = free_judged(p, &c, &site, &damage);
	} else if (q) {		/* refused: the new block goes back */
		if (judge_free(q, &new_chunk) == FREE_OK)
			free_judged(q, &new_chunk, &site, &unused);
		q = NULL;
	}
	am_heap_unlock();
	report_free(v, "realloc", p, &c);
	if (v == FREE_OK && c.api != AM_API_MALLOC)
		report_mismatch("realloc", p, &c, AM_API_MALLOC);
	if (damaged)
		am_report_slack("realloc", p, &c, &damage, site.pcs, site.n);
	return q;
}

void *reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, total);
}

static bool pow2(size_t a)
{
	return a && !(a & (a - 1));
}

void *memalign(size_t align, size_t size)
{
	if (!pow2(align)) {	/* glibc rounds up to a power of two */
		size_t a = 1;

		while (a < align && a)
			a <<= 1;
		if (!a) {
			errno = EINVAL;
			return NULL;
		}
		align = a;
	}
	return any_alloc(size, align < 16 ? 16 : align);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (!pow2(align) || align % sizeof(void *))
		return EINVAL;
	p = any_alloc(size, align < 16 ? 16 : align);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t size)
{
	if (!pow2(align)) {
		errno = EINVAL;
		return NULL;
	}
	return any_alloc(size, align < 16 ? 16 : align);
}

void *valloc(size_t size)
{
	return any_alloc(size, (size_t)sysconf(_SC_PAGESIZE));
}

void *pvalloc(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	/* Rounding SIZE_MAX up to a page would wrap to 0. */
	if (size > SIZE_MAX - page) {
		errno = ENOMEM;
		return NULL;
	}
	return any_alloc(am_round_up(size ? size : 1, page), page);
}

size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	am_ensure_init();
	if (ours(p))
		return chunk_size(p);	/* exactly what was asked for */
	return glibc_usable_size ? glibc_usable_size(p) : 0;
}

__attribute__((destructor)) static void am_destructor(void)
{
	size_t m, pm, r, pr;

	if (init_state != 2 || am_passthrough)
		return;
	/*
	 * Leaks first: exit() has run the program's atexit handlers, but not
	 * yet flushed its stdio buffers, so flush them before exiting with
	 * the report's status.
	 */
	if (am_opt.detect_leaks && am_leak_check()) {
		fflush(NULL);
		_exit(am_opt.exitcode);
	}
	if (!am_opt.stats)
		return;
	am_heap_lock();
	am_heap_stats(&m, &pm, &r, &pr);
	am_heap_unlock();
	am_printf("adimalloc: pid %d: peak requested %zu bytes, peak mapped %zu bytes "
		  "(%.2fx), %s\n", (int)getpid(), pr, pm, pr ? (double)pm / (double)pr : 0.0,
		  am_opt.sample == 1 ? "full mode" :
		  "sampled mode (counts sampled allocations only)");
}
