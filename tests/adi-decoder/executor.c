// SPDX-License-Identifier: GPL-2.0
/*
 * Run one instruction class on the real CPU and measure its memory access.
 *
 * The instruction, re-encoded onto (%rsi), is copied into an executable
 * page and run by stub_run() with chosen GPRs, flags and vector state
 * (XRSTOR), in a child process per class so that nothing it does to the
 * FPU, the signal state or memory can touch the next one.  Data lives in
 * four pages below 2 GiB (so that a 67h prefix addresses them too):
 *
 *   G0 PROT_NONE | D1 data | D2 data | G3 PROT_NONE
 *
 *   versioned   (%rsi) = D1+1024 with bits 63:60 set: does it #GP, as
 *               it will under ADI?
 *   access      (%rsi) = G3: no fault means it does not access memory
 *               (lea, nop, prefetch)
 *   size        (%rsi) = G3 - k for k = 1, 2, ...: the first k that runs
 *               without a fault is the extent of the access (a #GP at a
 *               k below it is a misaligned address of an aligned form)
 *   below       (%rsi) = D1: a fault in G0 means bytes below the address
 *   write       D1/D2 PROT_READ: a page fault means it writes
 *   read        D1/D2 filled with two different contents: a result (GPRs,
 *               flags, vector and x87 state, the bytes it wrote) that
 *               differs means it reads the old memory; tried with the
 *               immediate as found and as 5a/a5 bytes, since "or $-1,m"
 *               and "and $0,m" read without it showing
 *   registers   which GPRs it changes, and which GPRs' bits 63:60 (where
 *               ADI keeps a version) change a result when flipped
 *
 * The read and register tests run under three sets of flags (so that
 * every cmov/setcc condition is true in one of them) and four sets of
 * GPRs (random, their complement, two that a divide accepts).  A call or
 * jmp through memory finds in its operand the address of the code page's
 * way back; push and pop use the trampoline's own stack.
 */
#include <cpuid.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "conf.h"
#include "stub.h"
#include "splitmix64.h"

#define PAGE 4096UL
#define MAX_SCAN 4096U
#define VERSION_BITS (0xaUL << 60)
#define TOP_BITS (0xfUL << 60)
#define FLAGS_CMP 0xcd5UL		/* CF PF AF ZF SF OF DF */
#define GPR_RSP 4
#define GPR_RSI 6

struct stub_ctx {
	uint64_t gpr_in[16], gpr_out[16];
	uint64_t flags_in, flags_out;
	uint64_t code, saved_rsp, rfbm, xin, xout;
};

_Static_assert(offsetof(struct stub_ctx, gpr_out) == STUB_GPR_OUT, "stub.h");
_Static_assert(offsetof(struct stub_ctx, flags_in) == STUB_FLAGS_IN, "stub.h");
_Static_assert(offsetof(struct stub_ctx, flags_out) == STUB_FLAGS_OUT, "stub.h");
_Static_assert(offsetof(struct stub_ctx, code) == STUB_CODE, "stub.h");
_Static_assert(offsetof(struct stub_ctx, saved_rsp) == STUB_SAVED_RSP, "stub.h");
_Static_assert(offsetof(struct stub_ctx, rfbm) == STUB_RFBM, "stub.h");
_Static_assert(offsetof(struct stub_ctx, xin) == STUB_XIN, "stub.h");
_Static_assert(offsetof(struct stub_ctx, xout) == STUB_XOUT, "stub.h");
_Static_assert(sizeof(struct stub_ctx) == STUB_SIZE, "stub.h");

/* Used by stub.S through RIP-relative addresses. */
struct stub_ctx stub_ctx;
void stub_run(void);
void stub_back(void);

/* ---- CPU features ---- */

void executor_caps(struct cpu_caps *caps)
{
	unsigned int a, b, c, d;

	memset(caps, 0, sizeof(*caps));
	__cpuid(1, a, b, c, d);
	if (!(c & bit_XSAVE) || !(c & bit_OSXSAVE))
		return;
	caps->xsave = true;
	__asm__ volatile("xgetbv" : "=a"(a), "=d"(d) : "c"(0));
	caps->xcr0 = (uint64_t)d << 32 | a;
	caps->avx = (c & bit_AVX) && (caps->xcr0 & 6) == 6;
	__cpuid_count(7, 0, a, b, c, d);
	caps->avx512 = caps->avx && (b & bit_AVX512F) && (b & bit_AVX512BW) &&
		       (b & bit_AVX512VL) && (caps->xcr0 & 0xe0) == 0xe0;
	caps->avx512_any = caps->avx && (b & (bit_AVX512F | bit_AVX512BW | bit_AVX512VL)) &&
			   (caps->xcr0 & 0xe0) == 0xe0;
	__cpuid_count(0xd, 0, a, b, c, d);
	caps->xsave_size = b;
	/* Testing this program: behave as on a CPU without AVX-512. */
	if (getenv("ADI_DECODER_NO_AVX512"))
		caps->avx512 = false;
}

/* ---- one run ---- */

enum outcome { R_DONE, R_PF, R_GP, R_DE, R_UD, R_OTHER };

struct fault {
	int signo, code;
	uint64_t addr, trapno, err, rip;
};

static sigjmp_buf run_jmp;
static volatile struct fault last_fault;

static void on_fault(int signo, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;

	last_fault.signo = signo;
	last_fault.code = si->si_code;
	last_fault.addr = (uint64_t)si->si_addr;
	last_fault.trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
	last_fault.err = uc->uc_mcontext.gregs[REG_ERR];
	last_fault.rip = uc->uc_mcontext.gregs[REG_RIP];
	siglongjmp(run_jmp, 1);
}

struct child {
	uint8_t *g0, *d1, *d2, *g3;	/* the four data pages */
	uint8_t *code;			/* the executable page */
	uint8_t *xin, *xout;		/* XRSTOR / XSAVE images */
	size_t xsize;
	bool branch;			/* lands back through a pointer in memory */
	bool readonly;			/* D1/D2 read-only: plant nothing */
	uint64_t flags;			/* RFLAGS the instruction starts with */
	struct fault fault;		/* of the last run */
};

struct result {
	enum outcome what;
	uint64_t gpr_in[16], gpr_out[16], flags;
	uint8_t *xsave;			/* copy of the state after, xsize bytes */
};

static enum outcome classify_fault(struct child *c)
{
	c->fault = last_fault;
	if (c->fault.rip != (uint64_t)c->code)
		return R_OTHER;		/* not the instruction itself */
	switch (c->fault.signo) {
	case SIGSEGV:
		if (c->fault.trapno == 14)
			return R_PF;
		if (c->fault.trapno == 13)
			return R_GP;
		return R_OTHER;
	case SIGFPE:
		return R_DE;		/* the access itself went through */
	case SIGILL:
		return R_UD;
	}
	return R_OTHER;
}

/*
 * Run @code (@len bytes) with (%rsi) = @addr and the other GPRs from @gpr.
 * For a call/jmp through memory the operand holds the way back.
 */
static enum outcome run(struct child *c, const uint8_t *code, int len,
			const uint64_t gpr[16], uint64_t addr, struct result *r)
{
	static const uint8_t jmp_back[] = { 0xff, 0x25, 0, 0, 0, 0 };
	uint64_t back = (uint64_t)stub_back, land = (uint64_t)c->code + len;
	volatile enum outcome what = R_DONE;

	memcpy(c->code, code, len);
	memcpy(c->code + len, jmp_back, sizeof(jmp_back));
	memcpy(c->code + len + sizeof(jmp_back), &back, 8);
	if (c->branch && !c->readonly && addr >= (uint64_t)c->d1 &&
	    addr + 8 <= (uint64_t)c->g3)
		memcpy((void *)addr, &land, 8);
	memcpy(stub_ctx.gpr_in, gpr, sizeof(stub_ctx.gpr_in));
	stub_ctx.gpr_in[GPR_RSI] = addr;
	stub_ctx.flags_in = c->flags;
	stub_ctx.code = (uint64_t)c->code;
	memset(c->xout, 0, c->xsize);
	if (!sigsetjmp(run_jmp, 0))
		stub_run();
	else
		what = classify_fault(c);
	if (r) {
		r->what = what;
		memcpy(r->gpr_in, stub_ctx.gpr_in, sizeof(r->gpr_in));
		memcpy(r->gpr_out, stub_ctx.gpr_out, sizeof(r->gpr_out));
		r->flags = stub_ctx.flags_out & FLAGS_CMP;
		memcpy(r->xsave, c->xout, c->xsize);
	}
	return what;
}

/* ---- inputs ---- */

/*
 * Random bytes, or their complement: never 00 or ff, so that a divisor
 * read from memory is not zero either way.
 */
static void fill_memory(struct child *c, uint64_t seed, bool invert)
{
	uint64_t s = seed;
	size_t i;

	for (i = 0; i < 2 * PAGE; i++) {
		uint8_t v = splitmix64(&s) >> 56;

		if (v == 0 || v == 0xff)
			v = 0x5b;
		c->d1[i] = invert ? ~v : v;
	}
}

static void xsave_now(uint8_t *buf, uint64_t rfbm)
{
	__asm__ volatile("xsave64 %0" : "+m"(*(uint8_t (*)[4096])buf)
			 : "a"((uint32_t)rfbm), "d"((uint32_t)(rfbm >> 32)));
}

static void component(unsigned int i, unsigned int *off, unsigned int *size)
{
	unsigned int a, b, c, d;

	__cpuid_count(0xd, i, a, b, c, d);
	*off = b;
	*size = a;
}

/*
 * The vector and x87 state every run starts from: random XMM/YMM/ZMM,
 * opmasks all ones (so that masked EVEX forms access every element),
 * four valid x87 registers, all exceptions masked.
 */
static void build_xstate(struct child *c, uint64_t seed)
{
	uint64_t s = seed, rfbm = stub_ctx.rfbm;
	unsigned int i, off, size;
	uint8_t *x = c->xin;

	memset(x, 0, c->xsize);
	xsave_now(x, rfbm);
	memset(x, 0, 32);
	x[0] = 0x7f; x[1] = 0x03;		/* FCW: all masked, extended precision */
	x[4] = 0x0f;				/* FTW: ST0-ST3 valid */
	x[24] = 0x80; x[25] = 0x1f;		/* MXCSR */
	for (i = 0; i < 8; i++) {
		uint64_t mant = splitmix64(&s) | 1ULL << 63;
		uint16_t exp = 0x3fff + (i & 3);

		memset(x + 32 + 16 * i, 0, 16);
		if (i < 4) {
			memcpy(x + 32 + 16 * i, &mant, 8);
			memcpy(x + 40 + 16 * i, &exp, 2);
		}
	}
	for (i = 160; i < 416; i += 8) {
		uint64_t v = splitmix64(&s);

		memcpy(x + i, &v, 8);
	}
	memset(x + 512, 0, 64);			/* XSAVE header: standard form */
	memcpy(x + 512, &rfbm, 8);		/* XSTATE_BV: every component loaded */
	for (i = 2; i < 8; i++) {
		unsigned int j;

		if (!(rfbm & (1UL << i)))
			continue;
		component(i, &off, &size);
		for (j = 0; j + 8 <= size; j += 8) {
			uint64_t v = i == 5 ? ~0ULL : splitmix64(&s);

			memcpy(x + off + j, &v, 8);
		}
	}
}

/* ---- comparing two runs ---- */

/* The parts of an XSAVE image that hold register values. */
static bool xstate_differs(const uint8_t *a, const uint8_t *b)
{
	unsigned int i, off, size;

	if (memcmp(a, b, 416) || memcmp(a + 512, b + 512, 8))
		return true;
	for (i = 2; i < 8; i++) {
		if (!(stub_ctx.rfbm & (1UL << i)))
			continue;
		component(i, &off, &size);
		if (memcmp(a + off, b + off, size))
			return true;
	}
	return false;
}

/*
 * Do two completed runs differ in a result?  Register @flipped had
 * different bits 63:60 on input.
 * @mema/@memb: the bytes the instruction may have written, or NULL.
 */
static bool results_differ(const struct result *a, const struct result *b, int flipped,
			   const uint8_t *mema, const uint8_t *memb, size_t memlen)
{
	int i;

	for (i = 0; i < 16; i++) {
		uint64_t x = a->gpr_out[i], y = b->gpr_out[i];

		/*
		 * The flipped register's own bits 63:60 may pass through
		 * unchanged (not written, or only its low 8/16 bits): that
		 * is not a result depending on them.
		 */
		if (i == flipped && ((x ^ a->gpr_in[i]) & TOP_BITS) == 0 &&
		    ((y ^ b->gpr_in[i]) & TOP_BITS) == 0) {
			x &= ~TOP_BITS;
			y &= ~TOP_BITS;
		}
		if (x != y)
			return true;
	}
	if (a->flags != b->flags || xstate_differs(a->xsave, b->xsave))
		return true;
	return mema && memcmp(mema, memb, memlen);
}

static void changed_gprs(const struct result *r, struct measure *m)
{
	int i;

	for (i = 0; i < 16; i++) {
		if (r->gpr_out[i] != r->gpr_in[i])
			m->gpr_changed |= 1 << i;
		if ((r->gpr_out[i] ^ r->gpr_in[i]) & TOP_BITS)
			m->gpr_top_changed |= 1 << i;
	}
}

/* ---- the measurement ---- */

static void failed(struct measure *m, const char *what, struct child *c)
{
	m->status = MEAS_FAILED;
	snprintf(m->why, sizeof(m->why), "%s (signal %d, trap %lu, address %#lx)",
		 what, c->fault.signo, (unsigned long)c->fault.trapno,
		 (unsigned long)c->fault.addr);
}

static bool in_range(uint64_t a, const uint8_t *lo, const uint8_t *hi)
{
	return a >= (uint64_t)lo && a < (uint64_t)hi;
}

/* The inputs the read and register tests run with. */
static const uint64_t flag_sets[] = {
	0x203,		/* CF */
	0xad7,		/* every arithmetic flag: the other half of the cmov/setcc conditions */
	0x282,		/* SF without OF: "less" */
};

/*
 * The read test and the register tests: @codes[0] is the instruction as
 * found, the others the same with other immediates.  Register sets: random
 * values, their complement, and two for divides; memory: random bytes and
 * their complement, so that every bit of the old value differs.
 */
static void measure_data(struct child *c, uint8_t codes[3][16], int *lens,
			 int ncodes, const uint64_t *gpr, struct measure *m)
{
	uint64_t addr = (uint64_t)c->d1 + 1024, regs[4][16];
	size_t span = m->size ? m->size : 1, f;
	uint8_t *after[2];
	struct result res[2], base, flip;
	int set, v, k, r, i;

	for (k = 0; k < 2; k++) {
		after[k] = malloc(span);
		res[k].xsave = malloc(c->xsize);
	}
	base.xsave = malloc(c->xsize);
	flip.xsave = malloc(c->xsize);
	for (i = 0; i < 16; i++) {
		regs[0][i] = gpr[i];
		regs[1][i] = ~gpr[i];
		regs[2][i] = gpr[i];
		regs[3][i] = gpr[i];
	}
	/*
	 * Divides: edx:eax = 0:1 for the 8/16/32-bit forms, rdx:rax = 0:rax
	 * for the 64-bit one; bits 63:60 set where allowed, so that a
	 * zero-extending write shows.
	 */
	regs[2][0] = regs[3][0] = 0xa000000000000001ULL;
	regs[2][2] = 0xa000000000000000ULL;
	regs[3][2] = 0;

	for (f = 0; f < sizeof(flag_sets) / sizeof(flag_sets[0]); f++) {
		c->flags = flag_sets[f];
		for (set = 0; set < 4; set++) {
			for (v = 0; v < ncodes; v++) {
				for (k = 0; k < 2; k++) {
					fill_memory(c, 0x1000, k);
					run(c, codes[v], lens[v], regs[set], addr, &res[k]);
					memcpy(after[k], (void *)addr, span);
					if (res[k].what == R_DONE) {
						changed_gprs(&res[k], m);
						m->data_runs++;
					}
				}
				if (res[0].what != R_DONE || res[1].what != R_DONE)
					continue;
				if (results_differ(&res[0], &res[1], -1,
						   m->write ? after[0] : NULL, after[1], span))
					m->read_seen = true;
			}
		}

		/*
		 * Bits 63:60 of each GPR but the address register and rsp, from
		 * the first register set that runs through (a divide may not).
		 */
		for (set = 0; set < 4; set++) {
			fill_memory(c, 0x2000, 0);
			if (run(c, codes[0], lens[0], regs[set], addr, &base) == R_DONE)
				break;
		}
		if (set == 4)
			continue;
		memcpy(after[0], (void *)addr, span);
		for (r = 0; r < 16; r++) {
			uint64_t in[16];

			if (r == GPR_RSP || r == GPR_RSI)
				continue;
			memcpy(in, regs[set], sizeof(in));
			in[r] ^= TOP_BITS;
			fill_memory(c, 0x2000, 0);
			if (run(c, codes[0], lens[0], in, addr, &flip) != R_DONE)
				continue;
			memcpy(after[1], (void *)addr, span);
			if (results_differ(&base, &flip, r, m->write ? after[0] : NULL,
					   after[1], span))
				m->gpr_top_used |= 1 << r;
		}
	}
	c->flags = flag_sets[0];
	for (k = 0; k < 2; k++) {
		free(after[k]);
		free(res[k].xsave);
	}
	free(base.xsave);
	free(flip.xsave);
}

/*
 * The extent of the access from the operand address: the first k for
 * which (%rsi) = G3 - k runs without touching G3.  *@aligned: some k was
 * refused with #GP (an aligned form).  0 when it failed (m->why says why).
 */
static unsigned int size_scan(struct child *c, const uint8_t *code, int len,
			      uint64_t *gpr, struct measure *m, bool *aligned)
{
	enum outcome o;
	unsigned int k;

	*aligned = false;
	for (k = 1; k <= MAX_SCAN; k++) {
		o = run(c, code, len, gpr, (uint64_t)c->g3 - k, NULL);
		if (o == R_DONE || o == R_DE)
			return k;
		if (o == R_GP) {
			*aligned = true;	/* misaligned for an aligned form */
			continue;
		}
		if (o != R_PF || !in_range(c->fault.addr, c->g3, c->g3 + PAGE)) {
			failed(m, "unexpected fault while sizing the access", c);
			return 0;
		}
	}
	failed(m, "faults at every distance from the guard page", c);
	return 0;
}

/* Every opmask register, k0-k7, of the starting state set to @v. */
static void set_opmasks(struct child *c, uint64_t v)
{
	unsigned int off, size, j;

	if (!(stub_ctx.rfbm & (1UL << 5)))
		return;
	component(5, &off, &size);
	for (j = 0; j + 8 <= size; j += 8)
		memcpy(c->xin + off + j, &v, 8);
}

/*
 * An EVEX form with an opmask: with only element 0 selected, how much
 * does it access (not measurable for an aligned form: the scan's other
 * addresses are misaligned), and with no element selected, does it
 * access memory at all?  The kernel checks only the selected elements.
 */
static void measure_masks(struct child *c, const uint8_t *code, int len,
			  uint64_t *gpr, struct measure *m, bool aligned)
{
	struct measure scratch = *m;
	enum outcome o;
	bool unused;

	set_opmasks(c, 1);
	if (!aligned)
		m->size_mask1 = size_scan(c, code, len, gpr, &scratch, &unused);
	set_opmasks(c, 0);
	o = run(c, code, len, gpr, (uint64_t)c->g3, NULL);
	m->mask0_accesses = o != R_DONE && o != R_DE;
	set_opmasks(c, ~0ULL);
	m->mask_measured = true;
}

static void measure_child(struct child *c, struct insn *insn, const uint8_t *raw,
			  struct measure *m)
{
	uint8_t codes[3][16];
	int lens[3], ncodes = 1;
	uint64_t gpr[16], seed = 0;
	enum outcome o;
	bool aligned;
	int i;

	lens[0] = encoding_rebase(insn, raw, -1, codes[0]);
	if (lens[0] < 0) {
		m->status = MEAS_FAILED;
		snprintf(m->why, sizeof(m->why), "cannot re-encode");
		return;
	}
	if (insn->immediate.nbytes) {
		lens[1] = encoding_rebase(insn, raw, 0x5a, codes[1]);
		lens[2] = encoding_rebase(insn, raw, 0xa5, codes[2]);
		ncodes = 3;
	}
	for (i = 0; i < lens[0]; i++)
		seed = seed * 131 + codes[0][i];
	for (i = 0; i < 16; i++)
		gpr[i] = splitmix64(&seed);
	build_xstate(c, seed);
	fill_memory(c, 1, false);

	/* Under ADI the address has a version in bits 63:60: does it trap? */
	o = run(c, codes[0], lens[0], gpr, (uint64_t)c->d1 + 1024 + VERSION_BITS, NULL);
	if (o == R_UD) {
		m->status = MEAS_NO_CPU;
		snprintf(m->why, sizeof(m->why), "#UD: this CPU does not have it");
		return;
	}
	m->traps_versioned = o == R_GP;

	o = run(c, codes[0], lens[0], gpr, (uint64_t)c->g3, NULL);
	if (o == R_DONE || o == R_DE) {
		m->status = MEAS_DONE;		/* no memory access at all */
		return;
	}
	if (o != R_PF || !in_range(c->fault.addr, c->g3, c->g3 + PAGE)) {
		failed(m, "unexpected fault with the operand in a PROT_NONE page", c);
		return;
	}
	m->accesses = true;

	m->size = size_scan(c, codes[0], lens[0], gpr, m, &aligned);
	if (!m->size)
		return;
	if (encoding_is_masked(insn))
		measure_masks(c, codes[0], lens[0], gpr, m, aligned);

	o = run(c, codes[0], lens[0], gpr, (uint64_t)c->d1, NULL);
	m->below = o == R_PF && in_range(c->fault.addr, c->g0, c->d1);

	/* Write: the data pages read-only.  The branch's way back goes in first. */
	fill_memory(c, 1, false);
	if (c->branch)
		run(c, codes[0], lens[0], gpr, (uint64_t)c->d1 + 1024, NULL);
	mprotect(c->d1, 2 * PAGE, PROT_READ);
	c->readonly = true;
	o = run(c, codes[0], lens[0], gpr, (uint64_t)c->d1 + 1024, NULL);
	c->readonly = false;
	mprotect(c->d1, 2 * PAGE, PROT_READ | PROT_WRITE);
	if (o == R_PF && in_range(c->fault.addr, c->d1, c->g3)) {
		m->write = true;
	} else if (o != R_DONE && o != R_DE) {
		failed(m, "unexpected fault on read-only data", c);
		return;
	}

	if (!c->branch)
		measure_data(c, codes, lens, ncodes, gpr, m);
	m->status = MEAS_DONE;
}

static void child_main(const struct cpu_caps *caps, struct insn *insn,
		       const uint8_t *raw, struct measure *m)
{
	static uint8_t altstack[1 << 16];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { .sa_sigaction = on_fault,
				.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER };
	struct child c = { .branch = encoding_is_branch(insn), .flags = 0x203 };
	uint8_t *data;

	sigaltstack(&ss, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	alarm(30);

	data = mmap(NULL, 4 * PAGE, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	c.code = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c.xsize = (caps->xsave_size + 63) & ~63UL;
	c.xin = aligned_alloc(64, c.xsize > 4096 ? c.xsize : 4096);
	c.xout = aligned_alloc(64, c.xsize > 4096 ? c.xsize : 4096);
	if (data == MAP_FAILED || c.code == MAP_FAILED || !c.xin || !c.xout) {
		m->status = MEAS_FAILED;
		snprintf(m->why, sizeof(m->why), "out of memory");
		return;
	}
	c.g0 = data;
	c.d1 = data + PAGE;
	c.d2 = data + 2 * PAGE;
	c.g3 = data + 3 * PAGE;
	mprotect(c.d1, 2 * PAGE, PROT_READ | PROT_WRITE);
	stub_ctx.rfbm = caps->xcr0 & 0xe7;	/* x87, SSE, AVX, opmask, ZMM */
	stub_ctx.xin = (uint64_t)c.xin;
	stub_ctx.xout = (uint64_t)c.xout;
	measure_child(&c, insn, raw, m);
}

void executor_measure(const struct cpu_caps *caps, struct insn *insn,
		      const uint8_t *raw, struct measure *m)
{
	struct measure *shared;
	const char *why;
	pid_t pid;
	int status;

	memset(m, 0, sizeof(*m));
	why = encoding_skip_reason(insn);
	if (!why && !caps->xsave)
		why = "no XSAVE on this CPU: the harness needs it";
	if (!why && insn->vex_prefix.nbytes == 4 && !caps->avx512)
		why = "EVEX: this CPU has no AVX-512 (F+BW+VL)";
	if (!why && insn->vex_prefix.nbytes && !caps->avx)
		why = "VEX: this CPU has no AVX";
	if (why) {
		m->status = MEAS_SKIPPED;
		snprintf(m->why, sizeof(m->why), "%s", why);
		return;
	}
	m->mask_note = encoding_mask_note(insn) != NULL;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		m->status = MEAS_FAILED;
		snprintf(m->why, sizeof(m->why), "mmap: out of memory");
		return;
	}
	*shared = *m;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		child_main(caps, insn, raw, shared);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		m->status = MEAS_FAILED;
		snprintf(m->why, sizeof(m->why), "fork/waitpid failed");
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		m->status = MEAS_FAILED;
		snprintf(m->why, sizeof(m->why), "the measuring process died (%s %d)",
			 WIFSIGNALED(status) ? "signal" : "status",
			 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	} else {
		*m = *shared;
	}
	munmap(shared, sizeof(*shared));
}
