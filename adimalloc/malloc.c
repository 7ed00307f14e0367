// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The malloc family, as preloaded into an unmodified program.
 *
 * Start-up is lazy (the first malloc may come before our constructor) and
 * must not allocate: options, the heap region, the SIGSEGV handler, precise
 * stores and the C library's read-ahead ranges are all set up with plain
 * system calls.  Sampled mode passes unsampled requests to glibc's own
 * allocator (__libc_malloc and friends), so they cost what they always
 * cost: a per-thread countdown decides, and free() tells the two apart by
 * the pointer alone (only ours carry a version; every block of sampled
 * mode lies in our one reserved region), so neither takes a lock.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "internal.h"
#include "libadi.h"
#include "splitmix64.h"


extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* Every request sampled mode may keep fits a slot of the region. */
_Static_assert(((size_t)AM_SAMPLE_MAX_SIZE_KB << 10) <= AM_SMALL_MAX,
	       "sample_max_size must stay within the small slots");

static bool am_syscall_signal_on;
/* Sampled mode on a kernel without ADI: everything goes to glibc. */
static bool am_passthrough;
/*
 * Sampling, per thread, in initial-exec TLS: the allocations left up to
 * and with this thread's next sampled one (0: none drawn yet), and the
 * thread's generator.  The unsampled path is a decrement and a test: no
 * lock, no atomic, no division.
 */
static __thread uint64_t tl_countdown __attribute__((tls_model("initial-exec")));
static __thread uint64_t tl_rng __attribute__((tls_model("initial-exec")));
/* Threads that have drawn so far: each seeds its generator with its rank. */
static unsigned long thread_rank;
/* log(1 - 1/N), for the gaps between samples (sampled mode). */
static double sample_log;
static int init_state;			/* 0 no, 1 in progress, 2 done */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t (*glibc_usable_size)(void *);

static void atfork_prepare(void) { am_heap_lock(); }
static void atfork_parent(void) { am_heap_unlock(); }
/*
 * This thread's id, for the block's history: gettid() is a system call in
 * glibc 2.36, two per sampled block.  0: not asked yet (a fork()ed child
 * starts again: its thread has another id).
 */
static __thread pid_t tl_tid __attribute__((tls_model("initial-exec")));

static pid_t my_tid(void)
{
	if (!tl_tid)
		tl_tid = gettid();
	return tl_tid;
}

static void atfork_child(void)
{
	tl_tid = 0;
	am_heap_atfork_child();
	/* Draw a sampling sequence of the child's own. */
	tl_rng = 0;
	tl_countdown = 0;
}

static void init_locked(void)
{
	am_options_parse(getenv("ADIMALLOC_OPTIONS"));
	if (am_opt.sample > 1)
		sample_log = log1p(-1.0 / (double)am_opt.sample);
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

static bool init_done(void)
{
	return __atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2;
}

static __attribute__((noinline)) void init_slow(void)
{
	pthread_mutex_lock(&init_lock);
	if (init_state == 0) {
		init_state = 1;
		init_locked();
		__atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&init_lock);
		am_segv_resolve();
		if (am_passthrough) {
			am_libc_check_init();	/* glibc's own mem/str functions */
			return;
		}
		/* These may allocate: only now that the heap works. */
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		glibc_usable_size = (size_t (*)(void *))dlsym(RTLD_NEXT,
							      "malloc_usable_size");
		am_libc_check_init();
		if (am_opt.sample == 1 && am_opt.check_printf)
			am_printf_check_init();
		if (am_opt.verbose)
			am_printf("adimalloc: pid %d, %s, syscall signal %s\n", (int)getpid(),
				  am_opt.sample == 1 ? "full mode" : "sampled mode",
				  am_syscall_signal_on ? "on" : "off");
		return;
	}
	pthread_mutex_unlock(&init_lock);
}

/* Every entry point's first step: one load once the library is up. */
static inline void am_ensure_init(void)
{
	if (__builtin_expect(!init_done(), 0))
		init_slow();
}

__attribute__((constructor)) static void am_constructor(void)
{
	am_ensure_init();
}

bool am_passing_through(void)
{
	return am_passthrough;
}

static uint64_t next_random(void)
{
	tl_rng ^= tl_rng << 13;
	tl_rng ^= tl_rng >> 7;
	tl_rng ^= tl_rng << 17;
	return tl_rng;
}

/*
 * A thread's generator: from seed= and the thread's rank (the order in
 * which threads first draw), so that with a seed a thread samples the
 * same allocations in every run, whatever the other threads do; else from
 * the pid and the thread's TLS address too.  Through splitmix64's
 * finalizer: neighbouring seeds must not give neighbouring sequences.
 */
static void seed_thread(void)
{
	uint64_t rank = __atomic_fetch_add(&thread_rank, 1, __ATOMIC_RELAXED);
	uint64_t x = am_opt.seed ? am_opt.seed :
		     ((uint64_t)getpid() << 32) ^ (uintptr_t)&tl_rng;

	x += rank * 0x9e3779b97f4a7c15ULL;	/* splitmix64's stream, item rank */
	x = splitmix64(&x);
	tl_rng = x ? x : 1;
}

/*
 * Allocations up to and with the next sampled one: geometric with mean N,
 * so that each allocation is sampled with probability 1/N, independently
 * of the others and of when its thread started (a uniform gap in [1, 2N],
 * GWP-ASan's, makes a new thread's or process's first allocations rarer
 * samples than that).
 */
static uint64_t draw_gap(void)
{
	/* In (0, 1]: 53 random bits, never 0 (log(0) is -inf). */
	double u = (double)((next_random() >> 11) + 1) * 0x1p-53;
	double gap = log(u) / sample_log;

	return gap >= 0x1p62 ? (uint64_t)1 << 62 : (uint64_t)gap + 1;
}

/* Once per sampled allocation, and at a thread's first allocation. */
static __attribute__((noinline)) bool sample_slow(void)
{
	if (am_passthrough) {
		tl_countdown = UINT64_MAX;	/* never here again */
		return false;
	}
	if (am_opt.sample == 1)
		return true;			/* full mode: every one */
	if (!tl_countdown) {
		if (!tl_rng)
			seed_thread();
		tl_countdown = draw_gap();
		if (tl_countdown > 1) {
			tl_countdown--;
			return false;
		}
	}
	tl_countdown = draw_gap();
	return true;
}

/* Is this allocation to be one of ours?  (Its size is not looked at.) */
static inline bool sample_next(void)
{
	if (__builtin_expect(tl_countdown > 1, 1)) {
		tl_countdown--;
		return false;
	}
	return sample_slow();
}

/*
 * Requests sampled mode may keep: one slot of the region (a large mapping
 * would lie outside it, and "ours?" would no longer be a range check),
 * and no larger than sample_max_size.
 */
static bool eligible(size_t size, size_t align)
{
	return size <= am_opt.sample_max_size && align <= AM_BLOCK;
}

/*
 * Sampled mode's bound: sample_max_live of ours live at once at most;
 * @spare more for realloc(), which frees one of ours right after.
 */
static bool over_bound(size_t spare)
{
	return am_opt.sample > 1 && am_heap_live() >= am_opt.sample_max_live + spare;
}

static void *our_alloc(size_t size, size_t align, enum am_api api, size_t spare)
{
	uintptr_t pcs[AM_STACK_MAX];
	pid_t tid = my_tid();
	void *p = NULL;
	int n;

	/* Without the lock first: at the bound, spare the unwinding. */
	if (over_bound(spare)) {
		errno = ENOMEM;
		return NULL;
	}
	n = am_stack_capture(pcs, am_opt.stack);
	am_heap_lock();
	if (!over_bound(spare))
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

/*
 * One of ours for a request sampling chose.  Full mode: our_alloc(), NULL
 * with ENOMEM when there is none.  Sampled mode: NULL, errno untouched,
 * when the request is not eligible(), sample_max_live blocks are live or
 * the region has no room: the caller gives a glibc block instead (a
 * production process must not fail for our sake).
 */
static void *try_ours(size_t size, size_t align, enum am_api api, size_t spare)
{
	int err = errno;
	void *p;

	if (am_opt.sample == 1)
		return our_alloc(size, align, api, 0);
	if (!eligible(size, align))
		return NULL;
	p = our_alloc(size, align, api, spare);
	if (!p)
		errno = err;
	return p;
}

static void *libc_alloc(size_t size, size_t align)
{
	return align <= 16 ? __libc_malloc(size) : __libc_memalign(align, size);
}

/* A request sampling chose: ours, or glibc's if sampled mode cannot keep it. */
static __attribute__((noinline)) void *alloc_chosen(size_t size, size_t align,
						     enum am_api api)
{
	void *p = try_ours(size, align, api, 0);

	if (p || am_opt.sample == 1)
		return p;
	return libc_alloc(size, align);
}

void *am_alloc(size_t size, size_t align, enum am_api api)
{
	am_ensure_init();
	if (sample_next())
		return alloc_chosen(size, align, api);
	return libc_alloc(size, align);
}

/*
 * malloc() and its kin.  The unsampled path (sampled mode, nearly every
 * call) is a load, a TLS decrement and glibc's call: the family, which
 * only our blocks record, is asked for only when one is made.
 */
static inline void *any_alloc(size_t size, size_t align)
{
	am_ensure_init();
	if (__builtin_expect(!sample_next(), 1))
		return libc_alloc(size, align);
	return alloc_chosen(size, align, am_current_alloc_api());
}

/*
 * Is @p one of ours?  Only we hand out versioned pointers.  In sampled
 * mode every block of ours lies in the region, so an unversioned pointer
 * outside it is glibc's: no lock for glibc's blocks, nearly all of them.
 * Full mode looks an unversioned pointer up (a bad free into one of our
 * large mappings is reported as such).
 */
static bool ours(const void *p)
{
	bool r;

	if (am_passthrough)
		return false;	/* no heap of ours */
	if (am_pver(p))
		return true;
	if (am_opt.sample > 1)
		return am_heap_in_region(am_strip(p));
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

	am_heap_free(am_strip(p), am_stack_save(site->pcs, site->n), my_tid());
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

/*
 * Sampled mode: a pointer with no version outside the region is glibc's,
 * told without a lock or a call (am_dealloc() decides the same, slower).
 */
static inline bool libc_block(const void *p)
{
	return init_done() && am_opt.sample > 1 && !am_pver(p) &&
	       (am_passthrough || !am_heap_in_region(am_strip(p)));
}

void free(void *p)
{
	if (__builtin_expect(p && libc_block(p), 1)) {
		__libc_free(p);
		return;
	}
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
	if (!sample_next())
		return __libc_calloc(n, size);
	p = try_ours(total, 16, AM_API_MALLOC, 0);
	if (!p && am_opt.sample > 1)
		return __libc_calloc(n, size);
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

/* realloc() refused to free its block: the one made for it goes back. */
static void give_back(void *q, bool libc_q, const struct free_site *site)
{
	struct am_slack_damage unused;
	struct am_chunk c;

	if (!q)
		return;
	if (libc_q) {
		__libc_free(q);
		return;
	}
	am_heap_lock();
	if (judge_free(q, &c) == FREE_OK)
		free_judged(q, &c, site, &unused);
	am_heap_unlock();
}

void *realloc(void *p, size_t size)
{
	struct am_slack_damage damage;
	bool damaged = false, libc_q;
	struct free_site site;
	enum free_verdict v;
	struct am_chunk c;
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
	 * becomes stale, which is what catches code that keeps using it.  A
	 * sampled block stays sampled while it can (one of ours is freed
	 * right after: the bound allows one more), else moves to glibc.  The
	 * new block comes first, so that the old one is judged, copied and
	 * freed under one hold of the lock.
	 */
	q = try_ours(size, 16, AM_API_MALLOC, 1);
	libc_q = !q && am_opt.sample > 1;
	if (libc_q)
		q = __libc_malloc(size);
	capture_free_site(&site);
	am_heap_lock();
	v = judge_free(p, &c);
	if (v == FREE_OK && q) {
		memcpy((void *)am_strip(q), (void *)am_strip(p),
		       c.size < size ? c.size : size);
		damaged = free_judged(p, &c, &site, &damage);
	}
	am_heap_unlock();
	if (v != FREE_OK) {
		give_back(q, libc_q, &site);
		q = NULL;
	}
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
	size_t m, pm, r, pr, pl;

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
	am_heap_stats(&m, &pm, &r, &pr, &pl);
	am_heap_unlock();
	if (am_opt.sample == 1)
		am_printf("adimalloc: pid %d: peak requested %zu bytes, peak mapped %zu "
			  "bytes (%.2fx), full mode\n", (int)getpid(), pr, pm,
			  pr ? (double)pm / (double)pr : 0.0);
	else
		am_printf("adimalloc: pid %d: peak requested %zu bytes, peak mapped %zu "
			  "bytes (%.2fx), sampled mode (counts sampled allocations "
			  "only): peak live sampled %zu (sample_max_live=%lu)\n",
			  (int)getpid(), pr, pm, pr ? (double)pm / (double)pr : 0.0, pl,
			  am_opt.sample_max_live);
}
