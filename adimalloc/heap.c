// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The versioned heap: slabs of one size class in a reserved PROT_ADI region,
 * a mapping per large allocation between two PROT_NONE guard pages, a
 * bounded quarantine of freed memory, and after it a bounded quarantine of
 * the address ranges of freed large blocks.
 *
 * Version rules (the reason this file exists):
 *  - an allocation's blocks get a version that differs from the blocks just
 *    before and after its slot, and from the version its slot had last, so
 *    an overflow into a neighbour and a stale pointer both mismatch;
 *  - slot blocks that the allocation does not cover (alignment padding) get
 *    a "pad" version that differs from the allocation and the neighbours;
 *  - a freed slot is re-versioned to something else right away;
 *  - versions 0 and 15 (match-all) are never used, and a new slab is
 *    versioned all over at once so no slot ever has version 0.
 * All versions are drawn at random among the allowed ones, so that a stale
 * pointer to reused memory has about one chance in 11 of matching again.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "splitmix64.h"

#define REGION_SIZE	(1UL << 36)	/* 64 GiB of address space, reserved */
/* Slab table entries for the smallest slab (sampled mode's). */
#define NSLABS_MAX	(REGION_SIZE / AM_SAMPLE_SLAB_SIZE)
#define LARGE_BUCKETS	4096
#define QUAR_MAX	65536		/* entries, on top of the byte bound */
/*
 * Released ranges kept PROT_NONE, on top of the address_quarantine bound:
 * each may be a VMA of its own, and the kernel allows 65530 by default.
 */
#define RELEASED_MAX	16384
/*
 * Frees remembered for attribution (see remember_free()): 16384 records
 * of 48 bytes, 768 KiB of address space, touched as frees happen.
 */
#define HISTORY_MAX	16384

/* Size classes in 64-byte blocks: exact up to 1 KiB, then 4 per doubling. */
static const uint16_t class_blocks[] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256,
};
#define NCLASSES (sizeof(class_blocks) / sizeof(class_blocks[0]))

struct slot {
	uint32_t size;
	uint16_t off;			/* user pointer - slot start */
	uint8_t state;
	uint8_t version;		/* of the (last) allocation; 0: never */
	uint8_t pad;			/* version of uncovered blocks, 0: none */
	uint8_t fversion;		/* version of the whole slot while free */
	uint8_t api;			/* enum am_api */
	struct am_history hist;
	uint32_t next_free;
};

struct slab {
	uintptr_t base;
	uint32_t cls, slot_size, nslots, fresh, free_head, nfree;
	uint8_t tail_version;		/* blocks after the last slot */
	struct slab *next_partial;
	bool in_partial;
	struct slot slots[];
};

/*
 * A large allocation: [map, map + map_len) is its PROT_ADI mapping, with a
 * PROT_NONE guard page on each side (reserved with it, unmapped with it).
 * Freed, it stays in its bucket while quarantined; released, its whole
 * range is PROT_NONE and the record moves to the released ring, until that
 * range is unmapped.
 */
struct large {
	uintptr_t map, start;
	size_t map_len, size;
	uint8_t state, version, fence, api;
	bool released;			/* in the released ring */
	struct am_history hist;
	struct large *next;		/* bucket chain, or free list */
};

struct qentry {
	struct slab *slab;		/* NULL: large */
	union {
		uint32_t idx;
		struct large *lg;
	};
	size_t bytes;
};

static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t region;
/*
 * A slab's size: AM_SLAB_SIZE, or AM_SAMPLE_SLAB_SIZE in sampled mode.
 * A new slab is versioned whole at once (no block may keep version 0,
 * match-all), which faults in and zeroes all its pages.  Sampled blocks
 * are few and of many sizes, so nearly each one starts a slab of its
 * class: 64 KiB cost about 1 ms each under TCG, 30 a run of
 * bench/adimalloc/threads.c, most of sampled mode's cost there.
 */
static size_t slab_size = AM_SLAB_SIZE;
uintptr_t am_region_lo, am_region_hi;
static struct slab **slab_tab;
static size_t slabs_used;
static struct slab *partial[NCLASSES];
static struct large *buckets[LARGE_BUCKETS];
/*
 * Every large mapping ever made, with its guard pages, lies in [large_lo,
 * large_hi): a lookup of an address outside it (full mode's free() of an
 * unversioned pointer) needs no walk of all the buckets; the SIGSEGV
 * handler reads them without the lock (written with atomic stores, under
 * the lock) to pass on a page fault elsewhere at once.  Sampled mode makes
 * no large mappings (malloc.c): the span stays empty.
 */
static uintptr_t large_lo = UINTPTR_MAX, large_hi;
static struct large *large_free;
static struct qentry *quar;
static size_t qhead, qcount, qbytes;
/* The history of frees, a ring: history_count records ever written. */
static struct am_chunk *history;
static size_t history_count;
/* The address-space quarantine: released large blocks, oldest first. */
static struct large **released;
static size_t rhead, rcount, rbytes;
static size_t mapped, peak_mapped, requested, peak_requested;
/*
 * Live allocations (AM_LIVE), and the most there were: sampled mode stops
 * sampling at sample_max_live.  Written under the lock with atomic stores,
 * so that malloc can skip a sample without the lock when the bound is met.
 */
static size_t live, peak_live;
static uint64_t rng_state;
/*
 * Whether this thread holds heap_lock: the SIGSEGV handler must not wait
 * for a lock its own thread holds (a fault inside the allocator, or in a
 * signal handler that interrupted it), and a mutex cannot say who owns it.
 */
static __thread bool tl_holds_lock __attribute__((tls_model("initial-exec")));

void am_heap_lock(void)
{
	pthread_mutex_lock(&heap_lock);
	tl_holds_lock = true;
}

void am_heap_unlock(void)
{
	tl_holds_lock = false;
	pthread_mutex_unlock(&heap_lock);
}

bool am_heap_trylock(void)
{
	if (pthread_mutex_trylock(&heap_lock))
		return false;
	tl_holds_lock = true;
	return true;
}

bool am_heap_held_here(void)
{
	return tl_holds_lock;
}

static void rng_seed(uint64_t x);

void am_heap_atfork_child(void)
{
	/*
	 * Held since atfork_prepare() in the parent, and the mutex records
	 * the parent's thread as its owner: start the child's over rather
	 * than unlock it, as glibc does with its own malloc's locks.
	 */
	pthread_mutex_init(&heap_lock, NULL);
	tl_holds_lock = false;
	/* Children of one parent draw different versions and placements,
	 * unless a seed asked for the same every time. */
	if (!am_opt.seed)
		rng_seed(rng_state ^ ((uint64_t)getpid() << 32));
}

/*
 * Seed the generator through splitmix64's finalizer: a pid and a
 * page-aligned address have constant low bits, and xorshift's first
 * outputs would keep them (the first placements of every run alike).
 */
static void rng_seed(uint64_t x)
{
	x = splitmix64(&x);
	rng_state = x ? x : 1;
}

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* A version from 1..14 that is none of the (up to four) excluded ones. */
static unsigned int pick_version(unsigned int a, unsigned int b,
				 unsigned int c, unsigned int d)
{
	unsigned int cand[14], n = 0;

	for (unsigned int v = 1; v <= 14; v++)
		if (v != a && v != b && v != c && v != d)
			cand[n++] = v;
	return cand[rng() % n];
}

/*
 * Where a block goes in its slot or mapping, drawn per allocation (as
 * GWP-ASan does): at the end, so that an overflow leaves the versioned
 * blocks at once (exactly at the end for sizes that are multiples of 16),
 * or at the start, so that an underflow does.  The other edge has slack
 * (slack.c), checked at free.
 */
static bool place_at_start(void)
{
	return rng() & 1;
}

int am_set_version(uintptr_t addr, size_t len, unsigned int v)
{
	if (!len)
		return 0;
	return adi_set_version((void *)addr, len, v);
}

static void account_mapped(long delta)
{
	mapped += (size_t)delta;
	if (mapped > peak_mapped)
		peak_mapped = mapped;
}

static void account_live(long delta)
{
	__atomic_store_n(&live, live + (size_t)delta, __ATOMIC_RELAXED);
	if (live > peak_live)
		peak_live = live;
}

static void account_requested(long delta)
{
	requested += (size_t)delta;
	if (requested > peak_requested)
		peak_requested = requested;
}

/*
 * A mapping of @len bytes (a multiple of the page) with @prot and @flags,
 * between two PROT_NONE guard pages; NULL if the kernel refuses.  The
 * kernel puts mappings next to each other: without guards, a large block
 * would border our metadata or another block's mapping, where an overflow
 * through its pointer is not checked at all (not ADI memory) and our
 * metadata, next to glibc's blocks in sampled mode, would be open to
 * theirs.  The reservation carries MAP_NORESERVE (PROT_NONE costs nothing);
 * the inside is mapped over it with the caller's @flags only, so a large
 * block is accounted for as an ordinary mapping, and a request the system
 * cannot back still fails here rather than when its versions are set.
 */
static void *map_guarded(size_t len, int prot, int flags)
{
	char *r = mmap(NULL, len + 2 * AM_PAGE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (r == MAP_FAILED)
		return NULL;
	if (mmap(r + AM_PAGE, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | flags,
		 -1, 0) == MAP_FAILED) {
		munmap(r, len + 2 * AM_PAGE);
		return NULL;
	}
	return r + AM_PAGE;
}

static void unmap_guarded(uintptr_t p, size_t len)
{
	munmap((void *)(p - AM_PAGE), len + 2 * AM_PAGE);
}

/* Internal metadata: bump allocation from plain (unversioned) mappings
 * with guard pages; zeroed, never freed. */
static void *am_meta_alloc(size_t size)
{
	static char *cur;
	static size_t left;
	void *p;

	size = am_round_up(size, 16);
	if (size > left) {
		size_t chunk = size > (1UL << 20) ? am_round_up(size, AM_PAGE) : 1UL << 20;

		cur = map_guarded(chunk, PROT_READ | PROT_WRITE, 0);
		if (!cur) {
			left = 0;
			return NULL;
		}
		left = chunk;
		account_mapped((long)chunk);
	}
	p = cur;
	cur += size;
	left -= size;
	return p;
}

void am_heap_init(void)
{
	/* A page more on each side, never made accessible: a linear overflow
	 * from the region stops there, not in whatever the kernel maps next
	 * to it (see map_guarded()). */
	void *r = mmap(NULL, REGION_SIZE + 2 * AM_PAGE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (r == MAP_FAILED) {
		am_printf("adimalloc: cannot reserve the heap region: %s\n",
			  strerror(errno));
		_exit(AM_CONFIG_EXIT);
	}
	region = (uintptr_t)r + AM_PAGE;
	if (am_opt.sample > 1)
		slab_size = AM_SAMPLE_SLAB_SIZE;
	am_region_lo = (uintptr_t)r;
	am_region_hi = region + REGION_SIZE + AM_PAGE;
	slab_tab = map_guarded(am_round_up(NSLABS_MAX * sizeof(*slab_tab), AM_PAGE),
			       PROT_READ | PROT_WRITE, MAP_NORESERVE);
	quar = map_guarded(am_round_up(QUAR_MAX * sizeof(*quar), AM_PAGE),
			   PROT_READ | PROT_WRITE, MAP_NORESERVE);
	released = map_guarded(am_round_up(RELEASED_MAX * sizeof(*released), AM_PAGE),
			       PROT_READ | PROT_WRITE, MAP_NORESERVE);
	history = map_guarded(am_round_up(HISTORY_MAX * sizeof(*history), AM_PAGE),
			      PROT_READ | PROT_WRITE, MAP_NORESERVE);
	if (!slab_tab || !quar || !released || !history) {
		am_printf("adimalloc: out of memory at start-up\n");
		_exit(AM_CONFIG_EXIT);
	}
	/*
	 * The first 64 KiB of the region are a guard: versioned but never
	 * handed out, so an underflow from the first slab hits a mismatching
	 * block instead of whatever mapping the kernel put just below us.
	 */
	{
		static struct slab guard;

		if (mprotect((void *)region, slab_size,
			     PROT_READ | PROT_WRITE | PROT_ADI) ||
		    am_set_version(region, slab_size, 7)) {
			am_printf("adimalloc: cannot version the heap region: %s\n",
				  strerror(errno));
			_exit(AM_CONFIG_EXIT);
		}
		guard.base = region;
		guard.slot_size = slab_size;
		guard.tail_version = 7;
		slab_tab[0] = &guard;
		slabs_used = 1;
		account_mapped(slab_size);
	}
	rng_seed(am_opt.seed ? am_opt.seed :
		 ((uint64_t)getpid() << 32) ^ (uintptr_t)r);
}

static struct slab *slab_of(uintptr_t a)
{
	if (a < region || a >= region + REGION_SIZE)
		return NULL;
	return slab_tab[(a - region) / slab_size];
}

/* The memory version of the block holding @a, from our bookkeeping; 0 if
 * it is not ours (nothing to avoid). */
static unsigned int block_version(uintptr_t a)
{
	struct slab *s = slab_of(a);
	struct slot *sl;
	uintptr_t start, u0, u1;
	uint32_t idx;

	if (!s)
		return 0;
	idx = (uint32_t)((a - s->base) / s->slot_size);
	if (idx >= s->nslots)
		return s->tail_version;	/* never handed out, keeps its version */
	sl = &s->slots[idx];
	/* A retired slot kept its allocation's versions (see free_small). */
	if (sl->state != AM_LIVE && sl->state != AM_RETIRED)
		return sl->fversion;
	start = s->base + (uintptr_t)idx * s->slot_size;
	u0 = am_round_down(start + sl->off, AM_BLOCK);
	u1 = am_round_up(start + sl->off + (sl->size ? sl->size : 1), AM_BLOCK);
	return (a >= u0 && a < u1) ? sl->version : sl->pad;
}

static int size_class(size_t blocks)
{
	for (unsigned int i = 0; i < NCLASSES; i++)
		if (class_blocks[i] >= blocks)
			return (int)i;
	return -1;
}

static struct slab *new_slab(int cls)
{
	uint32_t slot_size = class_blocks[cls] * AM_BLOCK;
	uint32_t nslots = slab_size / slot_size;
	uintptr_t base;
	struct slab *s;
	unsigned int w;

	if (slabs_used >= REGION_SIZE / slab_size)
		return NULL;
	s = am_meta_alloc(sizeof(*s) + nslots * sizeof(struct slot));
	if (!s)
		return NULL;
	base = region + slabs_used * slab_size;
	if (mprotect((void *)base, slab_size, PROT_READ | PROT_WRITE | PROT_ADI))
		return NULL;
	/* No block may keep version 0 (match-all): version the slab at once,
	 * differently from the last block of the slab before it. */
	w = pick_version(block_version(base - 1), 0, 0, 0);
	if (am_set_version(base, slab_size, w))
		return NULL;
	slabs_used++;
	account_mapped(slab_size);
	s->base = base;
	s->cls = (uint32_t)cls;
	s->slot_size = slot_size;
	s->nslots = nslots;
	s->nfree = nslots;
	s->free_head = UINT32_MAX;
	s->tail_version = (uint8_t)w;
	for (uint32_t i = 0; i < nslots; i++)
		s->slots[i].fversion = (uint8_t)w;
	slab_tab[(base - region) / slab_size] = s;
	return s;
}

static void *alloc_small(size_t size, size_t align, int cls, uint32_t stack,
			 pid_t tid)
{
	struct slab *s = partial[cls];
	struct slot *sl;
	uintptr_t start, end, p, u0, u1;
	unsigned int left, right, v, pad = 0;
	uint32_t idx;

	if (!s) {
		s = new_slab(cls);
		if (!s)
			return NULL;
		partial[cls] = s;
		s->in_partial = true;
	}
	if (s->free_head != UINT32_MAX) {
		idx = s->free_head;
		s->free_head = s->slots[idx].next_free;
	} else {
		idx = s->fresh++;
	}
	if (--s->nfree == 0) {
		partial[cls] = s->next_partial;
		s->in_partial = false;
	}
	sl = &s->slots[idx];
	start = s->base + (uintptr_t)idx * s->slot_size;
	end = start + s->slot_size;
	/* At the slot's end or its start; over-aligned ones (at most 64
	 * here) always start at the slot. */
	if (align <= 16 && !place_at_start())
		p = end - am_round_up(size ? size : 1, 16);
	else
		p = start;
	u0 = am_round_down(p, AM_BLOCK);
	u1 = am_round_up(p + (size ? size : 1), AM_BLOCK);
	left = block_version(start - 1);
	right = block_version(end);
	v = pick_version(left, right, sl->version, 0);
	if (u0 > start || u1 < end)
		pad = pick_version(left, right, v, 0);
	/* A slot whose versions could not all be set is never handed out: its
	 * blocks may keep versions a stale pointer or a neighbour matches.
	 * It stays out of circulation (off the free list) for good. */
	if ((pad && am_set_version(start, s->slot_size, pad)) ||
	    am_set_version(u0, u1 - u0, v))
		return NULL;
	sl->size = (uint32_t)size;
	sl->off = (uint16_t)(p - start);
	sl->state = AM_LIVE;
	sl->version = (uint8_t)v;
	sl->pad = (uint8_t)pad;
	sl->hist = (struct am_history){ .alloc_stack = stack, .alloc_tid = tid };
	sl->api = AM_API_MALLOC;
	account_requested((long)size);
	return am_tag(p, v);
}

static struct large *large_containing(uintptr_t a);

static struct large **bucket(uintptr_t start)
{
	return &buckets[(start >> 12) % LARGE_BUCKETS];
}

static void *alloc_large(size_t size, size_t align, uint32_t stack, pid_t tid)
{
	size_t body = am_round_up(size ? size : 1, 16);
	size_t map_len;
	uintptr_t map, p, u0, u1;
	struct large *lg;
	unsigned int v, f;
	void *m;

	if (align < 16)
		align = 16;
	if (size > AM_SIZE_MAX || align > (1UL << 30))
		return NULL;
	/*
	 * One fence block on each side at least, plus room to align.  The
	 * fence (another version) catches what leaves the block by a little;
	 * the guard pages around the mapping what runs on past its edge.
	 */
	map_len = am_round_up(body + align + 2 * AM_BLOCK, AM_PAGE);
	m = map_guarded(map_len, PROT_READ | PROT_WRITE | PROT_ADI, 0);
	if (!m)
		return NULL;
	map = (uintptr_t)m;
	if (map - AM_PAGE < large_lo)
		__atomic_store_n(&large_lo, map - AM_PAGE, __ATOMIC_RELAXED);
	if (map + map_len + AM_PAGE > large_hi)
		__atomic_store_n(&large_hi, map + map_len + AM_PAGE, __ATOMIC_RELAXED);
	if (place_at_start())
		p = am_round_up(map + AM_BLOCK, align);
	else
		p = am_round_down(map + map_len - AM_BLOCK - body, align);
	u0 = am_round_down(p, AM_BLOCK);
	u1 = am_round_up(p + (size ? size : 1), AM_BLOCK);
	v = pick_version(0, 0, 0, 0);
	f = pick_version(v, 0, 0, 0);
	if (am_set_version(map, u0 - map, f) || am_set_version(u0, u1 - u0, v) ||
	    am_set_version(u1, map + map_len - u1, f)) {
		unmap_guarded(map, map_len);
		return NULL;
	}
	lg = large_free;
	if (lg)
		large_free = lg->next;
	else
		lg = am_meta_alloc(sizeof(*lg));
	if (!lg) {
		unmap_guarded(map, map_len);
		return NULL;
	}
	memset(lg, 0, sizeof(*lg));
	lg->map = map;
	lg->map_len = map_len;
	lg->start = p;
	lg->size = size;
	lg->state = AM_LIVE;
	lg->version = (uint8_t)v;
	lg->fence = (uint8_t)f;
	lg->hist.alloc_stack = stack;
	lg->hist.alloc_tid = tid;
	lg->next = *bucket(p);
	*bucket(p) = lg;
	account_mapped((long)map_len);
	account_requested((long)size);
	return am_tag(p, v);
}

static void *alloc_any(size_t size, size_t align, uint32_t stack, pid_t tid)
{
	size_t need;
	int cls;

	/* Before any rounding: SIZE_MAX rounded up to 16 bytes is 0. */
	if (size > AM_SIZE_MAX)
		return NULL;
	need = am_round_up(size ? size : 1, 16);
	if (size > AM_SMALL_MAX || align > AM_BLOCK)
		return alloc_large(size, align, stack, tid);
	cls = size_class(am_round_up(need, AM_BLOCK) / AM_BLOCK);
	if (cls < 0)
		return alloc_large(size, align, stack, tid);
	return alloc_small(size, align, cls, stack, tid);
}

void *am_heap_alloc(size_t size, size_t align, uint32_t stack, pid_t tid)
{
	void *p = alloc_any(size, align, stack, tid);

	if (p)
		account_live(1);
	return p;
}

size_t am_heap_live(void)
{
	return __atomic_load_n(&live, __ATOMIC_RELAXED);
}


bool am_heap_maybe_ours(uintptr_t a)
{
	return am_heap_in_region(a) || am_heap_in_large_span(a);
}

bool am_heap_owns(uintptr_t a)
{
	return slab_of(a) || large_containing(a);
}

static void slot_chunk(struct slab *s, uint32_t idx, struct am_chunk *c)
{
	struct slot *sl = &s->slots[idx];

	c->start = s->base + (uintptr_t)idx * s->slot_size + sl->off;
	c->size = sl->size;
	c->version = sl->version;
	c->state = sl->state;
	c->hist = sl->hist;
	c->large = false;
	c->api = sl->api;
}

static void large_chunk(struct large *lg, struct am_chunk *c)
{
	c->start = lg->start;
	c->size = lg->size;
	c->version = lg->version;
	c->state = lg->state;
	c->hist = lg->hist;
	c->large = true;
	c->api = lg->api;
}

/* A large block's whole reservation: its mapping and both guard pages. */
static bool in_reservation(const struct large *lg, uintptr_t a)
{
	return a >= lg->map - AM_PAGE && a < lg->map + lg->map_len + AM_PAGE;
}

/*
 * The released block whose range holds @a (with @exact: whose user
 * pointer is @a).  A walk of the ring, only for a lookup that the live and
 * quarantined blocks did not answer: a stale pointer or a bad free (which
 * walks all the buckets already); never the free of one of ours, of a
 * glibc block (sampled mode asks no lookup for those), or a checked
 * mem/str call on a live block.
 */
static struct large *released_find(uintptr_t a, bool exact)
{
	for (size_t i = 0; i < rcount; i++) {
		struct large *lg = released[(rhead + i) % RELEASED_MAX];

		if (exact ? lg->start == a : in_reservation(lg, a))
			return lg;
	}
	return NULL;
}

static struct large *large_exact(uintptr_t p)
{
	for (struct large *lg = *bucket(p); lg; lg = lg->next)
		if (lg->start == p)
			return lg;
	return NULL;
}

/* Live, quarantined or released: a released range is still ours. */
static struct large *large_containing(uintptr_t a)
{
	if (a < large_lo || a >= large_hi)
		return NULL;
	for (size_t i = 0; i < LARGE_BUCKETS; i++)
		for (struct large *lg = buckets[i]; lg; lg = lg->next)
			if (in_reservation(lg, a))
				return lg;
	return released_find(a, false);
}

/*
 * The allocation (any state) whose slot or mapping holds @a; with @exact,
 * only one whose user pointer is @a.  A slot never used has version 0.
 */
static bool find_chunk(uintptr_t a, bool exact, struct am_chunk *c)
{
	struct slab *s = slab_of(a);
	struct large *lg;

	if (s) {
		uint32_t idx = (uint32_t)((a - s->base) / s->slot_size);

		if (idx >= s->fresh || !s->slots[idx].version)
			return false;
		slot_chunk(s, idx, c);
		return !exact || c->start == a;
	}
	if (exact) {
		lg = large_exact(a);
		if (!lg)
			lg = released_find(a, true);
	} else {
		lg = large_containing(a);
	}
	if (!lg)
		return false;
	large_chunk(lg, c);
	return true;
}

bool am_heap_find_exact(uintptr_t p, struct am_chunk *c)
{
	return find_chunk(p, true, c);
}

bool am_heap_find_containing(uintptr_t a, struct am_chunk *c)
{
	return find_chunk(a, false, c);
}

/*
 * The allocation a faulting access most likely meant: the nearest one, by
 * distance from its bounds, whose pointer version is @v.  Small: look at
 * the slots around @a (up to 16 slots each way, across slab boundaries);
 * large: the mapping that holds @a.
 */
bool am_heap_find_nearest(uintptr_t a, unsigned int v, struct am_chunk *c)
{
	uintptr_t best = UINTPTR_MAX;
	struct am_chunk t;
	struct large *lg;
	bool found = false;

	if (slab_of(a)) {
		uintptr_t lo = a > region + 16 * AM_SMALL_MAX ? a - 16 * AM_SMALL_MAX : region;
		uintptr_t hi = a + 16 * AM_SMALL_MAX;

		for (uintptr_t x = lo; x < hi; ) {
			struct slab *s = slab_of(x);

			if (!s) {
				x = am_round_down(x, slab_size) + slab_size;
				continue;
			}
			uint32_t idx = (uint32_t)((x - s->base) / s->slot_size);
			uintptr_t next = s->base + (uintptr_t)(idx + 1) * s->slot_size;

			if (idx >= s->nslots) {	/* the slab's unused tail */
				x = s->base + slab_size;
				continue;
			}

			if (idx < s->fresh && s->slots[idx].version == v) {
				uintptr_t d;

				slot_chunk(s, idx, &t);
				if (a < t.start)
					d = t.start - a;
				else if (a >= t.start + t.size)
					d = a - (t.start + t.size);
				else
					d = 0;
				/* Prefer live allocations over freed ones at equal distance. */
				if (d < best || (d == best && t.state == AM_LIVE)) {
					best = d;
					*c = t;
					found = true;
				}
			}
			x = next;
		}
		return found;
	}
	lg = large_containing(a);
	if (lg && lg->version == v) {
		large_chunk(lg, c);
		return true;
	}
	return false;
}

static void unmap_released(struct large *lg)
{
	unmap_guarded(lg->map, lg->map_len);
	lg->released = false;
	lg->next = large_free;
	large_free = lg;
}

/*
 * A freed large block leaves the quarantine.  Its pages go back to the
 * system (and their versions with them), but its whole range, guard pages
 * included, stays reserved PROT_NONE in the address-space quarantine: a
 * later access through a stale pointer is then a page fault the SIGSEGV
 * handler reports as a use-after-free, where an unmapped range would soon
 * hold some other, unversioned mapping in which nothing is checked.  The
 * oldest ranges are unmapped to stay within address_quarantine bytes and
 * RELEASED_MAX ranges.  A range larger than the whole bound is unmapped at
 * once and evicts nothing (as quarantine() does).  True if it is kept.
 */
static bool release_large(struct large *lg)
{
	size_t len = lg->map_len + 2 * AM_PAGE;
	struct large **pp = bucket(lg->start);

	while (*pp != lg)
		pp = &(*pp)->next;
	*pp = lg->next;
	account_mapped(-(long)lg->map_len);
	/* MAP_FIXED replaces the mapping: its pages and versions are dropped. */
	if (len > am_opt.address_quarantine ||
	    mmap((void *)(lg->map - AM_PAGE), len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
		 -1, 0) == MAP_FAILED) {
		unmap_released(lg);
		return false;
	}
	while (rcount && (rcount == RELEASED_MAX ||
			  rbytes + len > am_opt.address_quarantine)) {
		struct large *old = released[rhead];

		rbytes -= old->map_len + 2 * AM_PAGE;
		unmap_released(old);
		rhead = (rhead + 1) % RELEASED_MAX;
		rcount--;
	}
	lg->released = true;
	released[(rhead + rcount) % RELEASED_MAX] = lg;
	rcount++;
	rbytes += len;
	return true;
}

static void release(struct qentry *q)
{
	if (q->slab) {
		struct slab *s = q->slab;
		struct slot *sl = &s->slots[q->idx];

		sl->state = AM_FREE;
		sl->next_free = s->free_head;
		s->free_head = q->idx;
		s->nfree++;
		if (!s->in_partial) {
			s->next_partial = partial[s->cls];
			partial[s->cls] = s;
			s->in_partial = true;
		}
	} else {
		release_large(q->lg);
	}
}

/*
 * Hold a freed block back from reuse, releasing the oldest ones to make
 * room.  A block larger than the whole quarantine is released at once and
 * evicts nothing: emptying the queue for it would end the use-after-free
 * window of every small block freed before it.
 */
static void quarantine(struct slab *s, uint32_t idx, struct large *lg, size_t bytes)
{
	struct qentry *q, one = { .slab = s, .bytes = bytes };

	if (bytes > am_opt.quarantine) {
		if (s)
			one.idx = idx;
		else
			one.lg = lg;
		release(&one);
		return;
	}
	while (qcount && (qcount == QUAR_MAX || qbytes + bytes > am_opt.quarantine)) {
		q = &quar[qhead];
		release(q);
		qbytes -= q->bytes;
		qhead = (qhead + 1) % QUAR_MAX;
		qcount--;
	}
	q = &quar[(qhead + qcount) % QUAR_MAX];
	q->slab = s;
	if (s)
		q->idx = idx;
	else
		q->lg = lg;
	q->bytes = bytes;
	qbytes += bytes;
	qcount++;
}

/* Re-versioning at free failed (the kernel is out of memory for versions):
 * say so, since the block's use-after-free window is lost. */
static void warn_unversioned(uintptr_t start, size_t len, int err, const char *what)
{
	static unsigned int warned;
	const char *name = strerrorname_np(err);

	if (++warned > 100)
		return;
	am_printf("==%d==WARNING: adimalloc: cannot re-version freed block "
		  "[0x%lx,0x%lx) (%s): %s\n", (int)getpid(), (unsigned long)start,
		  (unsigned long)(start + len), name ? name : "?", what);
}

/*
 * Each free, with its allocation's stacks, in a ring of the last
 * HISTORY_MAX.  When a freed slot has been reused, the stale pointer no
 * longer matches the slot (its new owner has another version), and the
 * nearest block that carries the pointer's version is some unrelated
 * neighbour: without this history the use-after-free would be reported
 * as that neighbour's overflow.  HWASan keeps such a history for the same
 * reason.
 */
static void remember_free(const struct am_chunk *c)
{
	history[history_count++ % HISTORY_MAX] = *c;
}

/*
 * The most recent remembered free whose pointer carried version @v and
 * whose bytes held @a (the caller has already ruled out the block that
 * holds @a now).
 */
bool am_heap_find_freed(uintptr_t a, unsigned int v, struct am_chunk *c)
{
	size_t n = history_count < HISTORY_MAX ? history_count : HISTORY_MAX;

	for (size_t i = 1; i <= n; i++) {
		const struct am_chunk *h = &history[(history_count - i) % HISTORY_MAX];

		if (h->version == v && a >= h->start && a - h->start < h->size) {
			*c = *h;
			return true;
		}
	}
	return false;
}

static void free_small(struct slab *s, uintptr_t p, uint32_t stack, pid_t tid)
{
	uint32_t idx = (uint32_t)((p - s->base) / s->slot_size);
	struct slot *sl = &s->slots[idx];
	uintptr_t start = s->base + (uintptr_t)idx * s->slot_size;
	unsigned int w = pick_version(block_version(start - 1),
				      block_version(start + s->slot_size),
				      sl->version, 0);

	sl->hist.free_stack = stack;
	sl->hist.free_tid = tid;
	account_requested(-(long)sl->size);
	if (am_set_version(start, s->slot_size, w)) {
		/* Its blocks keep the allocation's versions, which the stale
		 * pointer matches: never reuse it (a new owner's data would be
		 * open to that pointer), and let block_version() keep
		 * describing it as it is. */
		warn_unversioned(start, s->slot_size, errno,
				 "a use-after-free through it is not caught; the "
				 "block is never reused");
		sl->state = AM_RETIRED;
		return;
	}
	sl->fversion = (uint8_t)w;
	sl->state = AM_QUARANTINED;
	{
		struct am_chunk c;

		slot_chunk(s, idx, &c);
		remember_free(&c);
	}
	quarantine(s, idx, NULL, s->slot_size);
}

static void free_large(uintptr_t p, uint32_t stack, pid_t tid)
{
	struct large *lg = large_exact(p);
	uintptr_t u0 = am_round_down(p, AM_BLOCK);
	uintptr_t u1 = am_round_up(p + (lg->size ? lg->size : 1), AM_BLOCK);

	lg->state = AM_QUARANTINED;
	lg->hist.free_stack = stack;
	lg->hist.free_tid = tid;
	account_requested(-(long)lg->size);
	if (am_set_version(u0, u1 - u0, pick_version(lg->version, lg->fence, 0, 0))) {
		int err = errno;

		/* A stale pointer still matches its blocks: skip the
		 * quarantine, release the block now. */
		if (release_large(lg))
			warn_unversioned(u0, u1 - u0, err, "released at once, its "
					 "range made inaccessible: a use-after-free "
					 "through it is reported from the page fault");
		else
			warn_unversioned(u0, u1 - u0, err, "unmapped at once: a "
					 "use-after-free through it is a plain "
					 "SIGSEGV, not a report");
		return;
	}
	{
		struct am_chunk c;

		large_chunk(lg, &c);
		remember_free(&c);
	}
	quarantine(NULL, 0, lg, lg->map_len);
}

bool am_heap_in_large_span(uintptr_t a)
{
	return a >= __atomic_load_n(&large_lo, __ATOMIC_RELAXED) &&
	       a < __atomic_load_n(&large_hi, __ATOMIC_RELAXED);
}

/*
 * Of a block still mapped, only the guard pages: the program may have
 * made a page of its own block PROT_NONE (a guard of its own), and a fault
 * there is its business.
 */
enum am_guard am_heap_find_guard(uintptr_t a, struct am_chunk *c)
{
	struct large *lg = large_containing(a);
	enum am_guard g;

	if (!lg)
		return AM_GUARD_NONE;
	if (lg->released)
		g = AM_GUARD_RELEASED;
	else if (a < lg->map)
		g = AM_GUARD_BEFORE;
	else if (a >= lg->map + lg->map_len)
		g = AM_GUARD_AFTER;
	else
		return AM_GUARD_NONE;
	large_chunk(lg, c);
	return g;
}

void am_heap_set_api(uintptr_t p, enum am_api api)
{
	struct slab *s = slab_of(p);
	struct large *lg;

	if (s)
		s->slots[(p - s->base) / s->slot_size].api = (uint8_t)api;
	else if ((lg = large_exact(p)))
		lg->api = (uint8_t)api;
}

/* @p was checked by the caller: the exact, live, right-version pointer. */
void am_heap_free(uintptr_t p, uint32_t stack, pid_t tid)
{
	struct slab *s = slab_of(p);

	account_live(-1);
	if (s)
		free_small(s, p, stack, tid);
	else
		free_large(p, stack, tid);
}

void am_heap_for_each_live(void (*fn)(const struct am_chunk *c, void *arg), void *arg)
{
	struct am_chunk c;

	/* Slab 0 is the guard: no slots. */
	for (size_t i = 1; i < slabs_used; i++) {
		struct slab *s = slab_tab[i];

		if (!s)
			continue;
		for (uint32_t idx = 0; idx < s->nslots; idx++) {
			if (s->slots[idx].state != AM_LIVE)
				continue;
			slot_chunk(s, idx, &c);
			fn(&c, arg);
		}
	}
	for (size_t b = 0; b < LARGE_BUCKETS; b++) {
		for (struct large *lg = buckets[b]; lg; lg = lg->next) {
			if (lg->state != AM_LIVE)
				continue;
			large_chunk(lg, &c);
			fn(&c, arg);
		}
	}
}

void am_heap_stats(size_t *m, size_t *pm, size_t *r, size_t *pr, size_t *pl)
{
	*m = mapped;
	*pm = peak_mapped;
	*r = requested;
	*pr = peak_requested;
	*pl = peak_live;
}
