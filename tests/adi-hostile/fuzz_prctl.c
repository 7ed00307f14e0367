// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-prctl: every ADI prctl() with random and boundary arguments, mixed
 * with random mmap()/mprotect()/munmap() with PROT_ADI over a private
 * arena.  Each call must come back (2 s bound, from a child that records
 * every call before making it), with success or an errno the interface
 * can give; the child must never be killed.  Versioning memory that is
 * not ADI memory raises SIGSEGV (SEGV_ACCADI) by contract: the child
 * catches and counts it.  Seeded: ADI_HOSTILE_SEED replays a run.
 */
#include <linux/prctl.h>
#include <sys/prctl.h>

#include "hostile.h"

#ifndef PROT_SEM
#define PROT_SEM	0x8	/* asm-generic/mman-common.h */
#endif

#define BATCH		200	/* calls per child */
#define CALL_MS_BASE	2000
#define CALL_MS		(CALL_MS_BASE * hostile_slow())
#define ARENA		(16UL << 20)
#define MAX_ERRNO	140

enum kind {
	K_SET_VERSION, K_GET_VERSION, K_SET_PRECISE, K_GET_PRECISE, K_ADD_READAHEAD,
	K_CLEAR_READAHEAD, K_GET_READAHEAD_COUNT, K_SET_READAHEAD_STRICT,
#ifdef PR_ADI_SET_SYSCALL_SIGNAL
	K_SET_SYSCALL_SIGNAL, K_GET_SYSCALL_SIGNAL,
#endif
	K_MPROTECT, K_MMAP, K_MUNMAP, NKINDS
};

static const char *const kind_name[NKINDS] = {
	[K_SET_VERSION] = "PR_ADI_SET_VERSION",
	[K_GET_VERSION] = "PR_ADI_GET_VERSION",
	[K_SET_PRECISE] = "PR_ADI_SET_PRECISE",
	[K_GET_PRECISE] = "PR_ADI_GET_PRECISE",
	[K_ADD_READAHEAD] = "PR_ADI_ADD_READAHEAD",
	[K_CLEAR_READAHEAD] = "PR_ADI_CLEAR_READAHEAD",
	[K_GET_READAHEAD_COUNT] = "PR_ADI_GET_READAHEAD_COUNT",
	[K_SET_READAHEAD_STRICT] = "PR_ADI_SET_READAHEAD_STRICT",
#ifdef PR_ADI_SET_SYSCALL_SIGNAL
	[K_SET_SYSCALL_SIGNAL] = "PR_ADI_SET_SYSCALL_SIGNAL",
	[K_GET_SYSCALL_SIGNAL] = "PR_ADI_GET_SYSCALL_SIGNAL",
#endif
	[K_MPROTECT] = "mprotect",
	[K_MMAP] = "mmap",
	[K_MUNMAP] = "munmap",
};

static const int kind_option[NKINDS] = {
	[K_SET_VERSION] = PR_ADI_SET_VERSION,
	[K_GET_VERSION] = PR_ADI_GET_VERSION,
	[K_SET_PRECISE] = PR_ADI_SET_PRECISE,
	[K_GET_PRECISE] = PR_ADI_GET_PRECISE,
	[K_ADD_READAHEAD] = PR_ADI_ADD_READAHEAD,
	[K_CLEAR_READAHEAD] = PR_ADI_CLEAR_READAHEAD,
	[K_GET_READAHEAD_COUNT] = PR_ADI_GET_READAHEAD_COUNT,
	[K_SET_READAHEAD_STRICT] = PR_ADI_SET_READAHEAD_STRICT,
#ifdef PR_ADI_SET_SYSCALL_SIGNAL
	[K_SET_SYSCALL_SIGNAL] = PR_ADI_SET_SYSCALL_SIGNAL,
	[K_GET_SYSCALL_SIGNAL] = PR_ADI_GET_SYSCALL_SIGNAL,
#endif
};

struct prctl_stats {
	long calls[NKINDS];
	long errs[NKINDS][MAX_ERRNO + 1];	/* [0]: successes; [MAX_ERRNO]: beyond */
	long accadi;				/* SIGSEGV SEGV_ACCADI caught */
	long unexpected;
	char first_unexpected[4][200];
	long children, bad_children, timeouts, unkillable;
	char first_bad[300];
};

static struct prctl_stats *st;
static char *arena;

static void catch_accadi(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (si->si_code == SEGV_ACCADI) {
		st->accadi++;
		return;
	}
	signal(sig, SIG_DFL);	/* anything else: die of it, and fail */
}

/* An address: boundaries, the arena (aligned or not, versioned or not), random. */
static uint64_t pick_addr(uint64_t *rs)
{
	static const uint64_t edges[] = {
		0, ~0ULL, 1ULL << 47, (1ULL << 47) - 4096, (1ULL << 47) - 64, 1ULL << 56,
		1ULL << 63, 0x7ffffffff000ULL, 0x00007fffffffffc0ULL, 0xffff800000000000ULL,
		ADI_VERSION_MASK, 4096, 64, 1,
	};
	uint64_t a;

	switch (rnd_below(rs, 6)) {
	case 0:
		return edges[rnd_below(rs, sizeof(edges) / sizeof(edges[0]))];
	case 1:
		return rnd_next(rs);
	case 2:		/* in the arena, versioned */
		a = (uint64_t)(uintptr_t)arena + (rnd_below(rs, ARENA) & ~63ULL);
		return a | rnd_below(rs, 16) << ADI_VERSION_SHIFT;
	case 3:		/* in the arena, unaligned */
		return (uint64_t)(uintptr_t)arena + rnd_below(rs, ARENA);
	case 4:		/* our own code: a place where read-ahead ranges may go */
		return (uint64_t)(uintptr_t)pick_addr + (rnd_below(rs, 8192) - 4096);
	default:	/* in the arena, page-aligned */
		return (uint64_t)(uintptr_t)arena + (rnd_below(rs, ARENA) & ~4095ULL);
	}
}

static uint64_t pick_len(uint64_t *rs)
{
	static const uint64_t edges[] = {
		0, 1, 63, 64, 4096, 4097, ARENA, ARENA + 4096, ~0ULL, 1ULL << 47, 1ULL << 63,
		(uint64_t)-64, (uint64_t)-4096,
	};

	switch (rnd_below(rs, 4)) {
	case 0:
		return edges[rnd_below(rs, sizeof(edges) / sizeof(edges[0]))];
	case 1:
		return rnd_next(rs);
	case 2:
		return (rnd_below(rs, 64) + 1) * 64;
	default:
		return (rnd_below(rs, 64) + 1) * 4096;
	}
}

static uint64_t pick_small(uint64_t *rs)
{
	static const uint64_t edges[] = { 0, 1, 2, 15, 16, ~0ULL, 1ULL << 63, 0x100000000ULL };

	if (rnd_below(rs, 3))
		return rnd_below(rs, 17);
	return rnd_below(rs, 2) ? rnd_next(rs) : edges[rnd_below(rs, 8)];
}

static int pick_prot(uint64_t *rs)
{
	static const int bits[] = { PROT_READ, PROT_WRITE, PROT_EXEC, PROT_ADI, PROT_SEM,
				    PROT_GROWSDOWN, PROT_GROWSUP, 0x20, 0x40, 1 << 30 };
	int prot = PROT_READ | PROT_WRITE | PROT_ADI;

	if (rnd_below(rs, 2))
		return prot & (int)rnd_below(rs, 0x20);
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (rnd_below(rs, 3) == 0)
			prot ^= bits[i];
	return prot;
}

/* Fixed mappings only inside the arena, or the child would unmap itself. */
static int in_arena(uint64_t addr, uint64_t len)
{
	uint64_t a = addr & ~ADI_VERSION_MASK, lo = (uint64_t)(uintptr_t)arena;

	return a >= lo && len <= ARENA && a - lo <= ARENA - len;
}

/* The errnos a call may give: the interface's own, nothing else. */
static int errno_allowed(int kind, int e)
{
	switch (e) {
	case EINVAL: case EFAULT: case ENOMEM: case EACCES: case EPERM: case ERANGE:
	case EOPNOTSUPP: case ENXIO:
		return 1;
	case ENOSPC:	/* documented: more than PR_ADI_MAX_READAHEAD ranges */
		return kind == K_ADD_READAHEAD;
	default:
		return 0;
	}
}

static void one_call(uint64_t *rs, int kind, uint64_t seedv, int n)
{
	uint64_t a2 = 0, a3 = 0, a4 = 0, a5 = 0;
	long ret;
	int e;

	switch (kind) {
	case K_SET_VERSION:
		a2 = pick_addr(rs); a3 = pick_len(rs); a4 = pick_small(rs);
		a5 = rnd_below(rs, 8) ? 0 : pick_small(rs);
		break;
	case K_GET_VERSION:
		a2 = pick_addr(rs);
		if (!rnd_below(rs, 8))
			a3 = pick_small(rs);
		break;
	case K_ADD_READAHEAD:
	case K_CLEAR_READAHEAD:
		a2 = pick_addr(rs); a3 = pick_len(rs);
		if (!rnd_below(rs, 8))
			a4 = pick_small(rs);
		if (kind == K_CLEAR_READAHEAD && !rnd_below(rs, 4))
			a2 = a3 = 0;
		break;
	case K_MPROTECT:
	case K_MUNMAP:
		a2 = pick_addr(rs); a3 = pick_len(rs); a4 = pick_prot(rs);
		if (!in_arena(a2, a3)) {	/* keep it off our own memory */
			a2 = (uint64_t)(uintptr_t)arena + (rnd_below(rs, ARENA / 2) & ~4095ULL);
			a3 = (rnd_below(rs, 64) + 1) * 4096;
			a2 |= rnd_below(rs, 2) ? rnd_below(rs, 16) << ADI_VERSION_SHIFT : 0;
		}
		break;
	case K_MMAP:
		a2 = pick_addr(rs); a3 = pick_len(rs); a4 = pick_prot(rs);
		a5 = (rnd_below(rs, 2) ? MAP_PRIVATE : MAP_SHARED) | MAP_ANONYMOUS;
		if (rnd_below(rs, 2) && in_arena(a2, a3) && !(a2 & ADI_VERSION_MASK))
			a5 |= MAP_FIXED;
		if (!rnd_below(rs, 4) && a3 <= ARENA)	/* populating 1 TiB would be the OOM killer's */
			a5 |= MAP_POPULATE;
		break;
	default:
		a2 = pick_small(rs);
		if (!rnd_below(rs, 8))
			a3 = pick_small(rs);
	}
	hb_beat("batch seed %#" PRIx64 " call %d: %s(%#" PRIx64 ", %#" PRIx64 ", %#" PRIx64
		", %#" PRIx64 ")", seedv, n, kind_name[kind], a2, a3, a4, a5);
	errno = 0;
	switch (kind) {
	case K_MPROTECT:
		ret = mprotect((void *)(uintptr_t)a2, a3, (int)a4);
		break;
	case K_MUNMAP:
		ret = munmap((void *)(uintptr_t)a2, a3);
		break;
	case K_MMAP: {
		void *p = mmap((void *)(uintptr_t)a2, a3, (int)a4, (int)a5, -1, 0);

		ret = p == MAP_FAILED ? -1 : 0;
		if (p != MAP_FAILED && !(a5 & MAP_FIXED))
			munmap(p, a3);
		break;
	}
	default:
		ret = prctl(kind_option[kind], a2, a3, a4, a5);
	}
	e = ret < 0 ? errno : 0;
	st->calls[kind]++;
	st->errs[kind][e < MAX_ERRNO ? e : MAX_ERRNO]++;
	if (ret < 0 && !errno_allowed(kind, e)) {
		if (st->unexpected < 4)
			snprintf(st->first_unexpected[st->unexpected], 200, "%.180s: %s",
				 hb->what, errno_name(e));
		st->unexpected++;
	}
}

static void prctl_batch(void *arg)
{
	uint64_t rs = (uint64_t)(uintptr_t)arg;
	struct sigaction sa = { .sa_sigaction = catch_accadi, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	arena = mmap(NULL, ARENA, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED)
		_exit(2);
	/* Some ADI memory to begin with, so the version calls find some. */
	adi_enable(arena, ARENA / 4, PROT_READ | PROT_WRITE);
	for (int n = 0; n < BATCH; n++)
		one_call(&rs, rnd_below(&rs, NKINDS), (uint64_t)(uintptr_t)arg, n);
	_exit(0);
}

static void test_fuzz_prctl(void)
{
	uint64_t seed = hostile_seed("fuzz-prctl");
	long seconds = hostile_seconds(30, 600);
	long long end = now_ms() + seconds * 1000;
	long total = 0;
	struct bounded r;

	st = hostile_shared(sizeof(*st));
	hb_init();
	tap_diag("fuzz-prctl: %ld s, %d calls per child", seconds, BATCH);
	for (uint64_t b = 0; now_ms() < end; b++) {
		run_bounded(prctl_batch, (void *)(uintptr_t)batch_seed(seed, b), CALL_MS, &r);
		st->children++;
		if (r.timed_out) {
			st->timeouts++;
			st->unkillable += !r.reaped;
		}
		if (!exited_zero(&r)) {
			st->bad_children++;
			tap_diag("fuzz-prctl: batch %" PRIu64 ": %s", b, describe(&r));
			if (!st->first_bad[0])
				snprintf(st->first_bad, sizeof(st->first_bad), "batch %" PRIu64 ": %s",
					 b, describe(&r));
		}
		if (r.timed_out && !r.reaped)
			break;
	}
	for (int k = 0; k < NKINDS; k++) {
		char line[600];
		int n = snprintf(line, sizeof(line), "%s: %ld calls:", kind_name[k], st->calls[k]);

		total += st->calls[k];
		for (int e = 0; e <= MAX_ERRNO && n < (int)sizeof(line) - 40; e++)
			if (st->errs[k][e])
				n += snprintf(line + n, sizeof(line) - n, " %s %ld",
					      e == MAX_ERRNO ? "errno>=140" : errno_name(e),
					      st->errs[k][e]);
		tap_diag("fuzz-prctl: %s", line);
	}
	tap_diag("fuzz-prctl: %ld calls in %ld children, %ld SIGSEGV SEGV_ACCADI caught", total,
		 st->children, st->accadi);
	for (int i = 0; i < st->unexpected && i < 4; i++)
		tap_diag("fuzz-prctl: unexpected errno: %s", st->first_unexpected[i]);
	tap_ok(total > 0, "fuzz-prctl: the children made calls (got %ld, want > 0)", total);
	tap_eq_long(st->timeouts, 0, "fuzz-prctl: every call returned within %d ms: children "
		    "timed out (%ld of them not killable)", CALL_MS, st->unkillable);
	tap_ok(st->bad_children == 0,
	       "fuzz-prctl: no child was killed (got %ld children not ending with exit 0; want 0%s%s)",
	       st->bad_children, st->first_bad[0] ? "; first: " : "", st->first_bad);
	tap_ok(st->unexpected == 0,
	       "fuzz-prctl: every failure is EINVAL, EFAULT, ENOMEM, EACCES, EPERM, ERANGE, "
	       "EOPNOTSUPP or ENXIO (ENOSPC for a 9th read-ahead range) (got %ld others; want 0%s%s)",
	       st->unexpected, st->unexpected ? "; first: " : "", st->first_unexpected[0]);
}

int main(void)
{
	tap_init();
	hostile_group("fuzz-prctl", test_fuzz_prctl);
	return tap_done();
}
