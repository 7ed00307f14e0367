// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-insn: random instructions whose memory operand goes through a
 * versioned pointer.  Every such access traps (#GP or #SS) and the
 * kernel decodes the instruction: prefixes, REX, VEX, EVEX, ModRM, SIB.
 * Random bytes there must end in a signal the program can catch (or in
 * the instruction running), never in a hang, a kernel splat, or a signal
 * the kernel forces on the program (a frame it cannot write).
 *
 * Each child (one per batch of instructions, bounded 500 ms from the
 * start of its latest instruction) builds one instruction at a time on an
 * executable page far from all other code, sets every general register
 * but rsp to a versioned pointer into an ADI region (the SIB index to a
 * small number), switches to a scratch stack and jumps in.  The
 * instruction is followed by ud2, so every run ends in a signal; the
 * handler (on an unversioned alternate stack, in case rsp was clobbered)
 * counts it and siglongjmp()s back, which restores rsp and the
 * callee-saved registers.  Seeded: ADI_HOSTILE_SEED replays a run.
 */
#include <setjmp.h>
#include <sys/time.h>
#include <ucontext.h>

#include "hostile.h"

#define BATCH		64	/* instructions per child */
#define INSN_MS		500	/* bound per instruction (the child's deadline) */
#define REGION		(64 * 1024)
#define SCRATCH		(256 * 1024)
#define ALTSTACK	(64 * 1024)
/* Far from the program, its libraries and its stack: a random rel32 jump
 * from here lands in nothing mapped. */
#define CODE_HINT	((void *)0x100000000000UL)
#define NSIG_SLOTS	32
#define NCODE_SLOTS	32	/* si_code + 16 */

struct fuzz_stats {
	long insns, children;
	long exit_zero, exit_other, killed, timeouts, unkillable, slow_kill;
	long counts[NSIG_SLOTS][NCODE_SLOTS];
	char first_bad[300];
};

static struct fuzz_stats *st;

/* ---- the trampoline -------------------------------------------------------- */

/*
 * fuzz_enter(regs, code, stack): load rax..r15 (not rsp) from regs[16],
 * run on @stack, jump to @code.  It does not return: the ud2 after the
 * instruction (or the instruction itself) raises a signal and the handler
 * siglongjmp()s to the sigsetjmp() just before the call.
 */
void fuzz_enter(const uint64_t *regs, void *code, void *stack) __attribute__((noreturn));
__asm__(".text\n"
	".globl fuzz_enter\n"
	".type fuzz_enter, @function\n"
	"fuzz_enter:\n\t"
	"mov %rsi, fuzz_target(%rip)\n\t"
	"mov %rsp, fuzz_saved_rsp(%rip)\n\t"
	"mov %rdx, %rsp\n\t"
	"mov 0(%rdi), %rax\n\t"
	"mov 8(%rdi), %rcx\n\t"
	"mov 16(%rdi), %rdx\n\t"
	"mov 24(%rdi), %rbx\n\t"
	"mov 40(%rdi), %rbp\n\t"
	"mov 48(%rdi), %rsi\n\t"
	"mov 64(%rdi), %r8\n\t"
	"mov 72(%rdi), %r9\n\t"
	"mov 80(%rdi), %r10\n\t"
	"mov 88(%rdi), %r11\n\t"
	"mov 96(%rdi), %r12\n\t"
	"mov 104(%rdi), %r13\n\t"
	"mov 112(%rdi), %r14\n\t"
	"mov 120(%rdi), %r15\n\t"
	"mov 56(%rdi), %rdi\n\t"
	"jmp *fuzz_target(%rip)\n"
	".size fuzz_enter, .-fuzz_enter\n"
	".bss\n"
	".balign 8\n"
	".globl fuzz_target\n"
	"fuzz_target: .quad 0\n"
	".globl fuzz_saved_rsp\n"
	"fuzz_saved_rsp: .quad 0\n"
	".text\n");

/* The program's rsp at the last fuzz_enter(): siglongjmp() puts it back. */
extern uint64_t fuzz_saved_rsp;

/* ---- the child -------------------------------------------------------------- */

static sigjmp_buf back;
static unsigned char *code, *region, *scratch;
static unsigned char chunk_version[REGION / 1024];

static void fuzz_handler(int sig, siginfo_t *si, void *ctx)
{
	int code_slot = si->si_code + 16;

	(void)ctx;
	/* A popf may have set AC (alignment checks) or TF: clear them here. */
	__asm__ volatile("pushfq\n\tandq $~0x40100, (%%rsp)\n\tpopfq" : : : "memory", "cc");
	if (sig < NSIG_SLOTS && code_slot >= 0 && code_slot < NCODE_SLOTS)
		st->counts[sig][code_slot]++;
	siglongjmp(back, 1);
}

static void child_setup(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGALRM };
	struct sigaction sa = { .sa_sigaction = fuzz_handler,
				.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER };
	stack_t ss = { .ss_size = ALTSTACK };

	ss.ss_sp = mmap(NULL, ALTSTACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	code = mmap(CODE_HINT, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	scratch = mmap(NULL, SCRATCH, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ss.ss_sp == MAP_FAILED || code == MAP_FAILED || scratch == MAP_FAILED ||
	    sigaltstack(&ss, NULL)) {
		tap_diag("fuzz-insn: child setup: %s", strerror(errno));
		_exit(2);
	}
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	region = adi_region(REGION, -1);
}

/* Random data and random versions (per KiB) in the region. */
static void region_randomize(uint64_t *rs)
{
	for (size_t i = 0; i < REGION; i += 8) {
		uint64_t v = rnd_next(rs);

		memcpy(region + i, &v, 8);
	}
	for (size_t i = 0; i < sizeof(chunk_version); i++) {
		chunk_version[i] = rnd_below(rs, 16);
		adi_set_version(region + i * 1024, 1024, chunk_version[i]);
	}
}

static const unsigned char legacy_prefixes[] = {
	0x66, 0x67, 0xf2, 0xf3, 0x2e, 0x3e, 0x26, 0x64, 0x65, 0xf0,
};

/*
 * One-byte opcodes left out: the escape and the bytes that are prefixes
 * or VEX/EVEX in 64-bit mode (generated on purpose elsewhere), int n and
 * the segment loads (mov to sreg): a system call with random registers,
 * or a wrong fs for the C library's TLS, would end the child for reasons
 * that have nothing to do with ADI.  Also far returns, far calls and
 * iret (ca, cb, cf, 9a, ea; and ff /3, ff /5 in emit_modrm()): QEMU's TCG
 * (7.2, Debian 12) reads their stack with kernel privilege, and the
 * guest kernel, seeing a supervisor page fault on a user address, oopses
 * ("BUG: unable to handle page fault ... supervisor read access in user
 * mode"), with or without ADI (a bare lretq from a fresh stack does it).
 * A jump can land inside an instruction's later bytes, so no byte of it
 * may be one of these (tcg_unsafe()).
 */
static int bad_onebyte(unsigned int op)
{
	return op == 0x0f || op == 0xcd || op == 0x8e || op == 0xc4 || op == 0xc5 ||
	       op == 0xca || op == 0xcb || op == 0xcf || op == 0x9a || op == 0xea ||
	       op == 0x62 || (op >= 0x40 && op <= 0x4f) || op == 0x26 || op == 0x2e ||
	       op == 0x36 || op == 0x3e || (op >= 0x64 && op <= 0x67) || op == 0xf0 ||
	       op == 0xf2 || op == 0xf3;
}

/*
 * Two-byte opcodes left out: syscall/sysret/sysenter/sysexit, pop fs/gs,
 * lss/lfs/lgs (the same reasons), and group 15, whose xrstor would load
 * PKRU and the rest of the extended state from random memory.
 */
static int bad_twobyte(unsigned int op)
{
	return op == 0x05 || op == 0x07 || op == 0x34 || op == 0x35 || op == 0xa1 ||
	       op == 0xa9 || op == 0xb2 || op == 0xb4 || op == 0xb5 || op == 0xae;
}

/*
 * A ModRM (and SIB) with a memory operand based on a register we set:
 * mod != 3, no RIP-relative or base-less form, no rsp/r12 base (rsp is
 * ours).  Returns the SIB index register field (0-7, 4 = none) or -1.
 */
static int emit_modrm(unsigned char **pp, uint64_t *rs, unsigned int bad_regs)
{
	unsigned char *p = *pp;
	unsigned int mod, reg, rm, sib = 0, index = 4;
	int32_t disp;

	do {
		mod = rnd_below(rs, 3);
		reg = rnd_below(rs, 8);
		rm = rnd_below(rs, 8);
		if (rm == 4) {
			sib = rnd_below(rs, 256);
			index = (sib >> 3) & 7;
		}
	} while ((bad_regs >> reg & 1) || (mod == 0 && rm == 5) ||
		 (rm == 4 && ((sib & 7) == 4 || (mod == 0 && (sib & 7) == 5))));
	*p++ = mod << 6 | reg << 3 | rm;
	if (rm == 4)
		*p++ = sib;
	/* Displacements stay within the region around the pointer. */
	disp = (int32_t)rnd_below(rs, 16384) - 8192;
	if (mod == 1) {
		*p++ = (unsigned char)(int8_t)disp;
	} else if (mod == 2) {
		memcpy(p, &disp, 4);
		p += 4;
	}
	*pp = p;
	return rm == 4 ? (int)index : -1;
}

static int tcg_unsafe(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] == 0xca || p[i] == 0xcb || p[i] == 0xcf || p[i] == 0xff)
			return 1;
	return 0;
}

/* Writes one instruction; returns its index register (0-15) or -1. */
static int make_insn_once(unsigned char *p, uint64_t *rs, size_t *len)
{
	unsigned char *start = p;
	unsigned int form = rnd_below(rs, 100), rex = 0, x_ext = 0;
	unsigned int bad_regs = 0;
	int index;

	for (int n = rnd_below(rs, 4); n > 0; n--)
		*p++ = legacy_prefixes[rnd_below(rs, sizeof(legacy_prefixes))];
	if (form < 80 && rnd_below(rs, 2)) {
		rex = 0x40 | rnd_below(rs, 16);
		*p++ = rex;
		x_ext = (rex >> 1) & 1;
	}
	if (form < 40) {				/* one-byte map */
		unsigned int op;

		do
			op = rnd_below(rs, 256);
		while (bad_onebyte(op));
		*p++ = op;
		if (op == 0xff)
			bad_regs = 1 << 3 | 1 << 5;	/* call far, jmp far */
	} else if (form < 70) {				/* 0f xx */
		unsigned int op;

		do
			op = rnd_below(rs, 256);
		while (bad_twobyte(op) || op == 0x38 || op == 0x3a);
		*p++ = 0x0f;
		*p++ = op;
	} else if (form < 80) {				/* 0f 38 xx, 0f 3a xx */
		*p++ = 0x0f;
		*p++ = rnd_below(rs, 2) ? 0x38 : 0x3a;
		*p++ = rnd_below(rs, 256);
	} else if (form < 86) {				/* 2-byte VEX */
		/*
		 * VEX.L and EVEX.L'L stay 0: QEMU 7.2's TCG aborts the whole
		 * emulator on some 256-bit forms (gen_pinsr: "vec_len == 16").
		 */
		unsigned int b1 = rnd_below(rs, 256) & ~0x04;

		*p++ = 0xc5;
		*p++ = b1;
		*p++ = rnd_below(rs, 256);
	} else if (form < 94) {				/* 3-byte VEX, maps 1-3 */
		unsigned int b1 = (rnd_below(rs, 8) << 5) | (1 + rnd_below(rs, 3));

		*p++ = 0xc4;
		*p++ = b1;
		*p++ = rnd_below(rs, 256) & ~0x04;
		*p++ = rnd_below(rs, 256);
		x_ext = !((b1 >> 6) & 1);
	} else {					/* EVEX */
		unsigned int p0 = (rnd_below(rs, 16) << 4) | (1 + rnd_below(rs, 3));

		*p++ = 0x62;
		*p++ = p0;
		*p++ = (rnd_below(rs, 256) & ~0x04) | 0x04;
		*p++ = rnd_below(rs, 256) & ~0x60;
		*p++ = rnd_below(rs, 256);
		x_ext = !((p0 >> 6) & 1);
	}
	index = emit_modrm(&p, rs, bad_regs);
	/* An immediate, for the opcodes that take one. */
	for (int n = rnd_below(rs, 5); n > 0; n--)
		*p++ = rnd_below(rs, 256);
	*len = p - start;
	if (index < 0)
		return -1;
	if (index == 4)		/* "no index", unless REX.X/VEX.X makes it r12 */
		return x_ext ? 12 : -1;
	return index | (int)(x_ext << 3);
}

static int make_insn(unsigned char *p, uint64_t *rs, size_t *len)
{
	int index;

	do
		index = make_insn_once(p, rs, len);
	while (tcg_unsafe(p, *len));
	return index;
}

static void fuzz_batch(void *arg)
{
	uint64_t rs = (uint64_t)(uintptr_t)arg, regs[16];
	struct itimerval loop_guard = { .it_value = { 0, 50000 } }, off = { { 0, 0 }, { 0, 0 } };
	volatile int i;

	child_setup();
	region_randomize(&rs);
	for (i = 0; i < BATCH; i++) {
		size_t len, off_in = 16384 + (rnd_below(&rs, 32768) & ~7UL);
		unsigned int v = chunk_version[off_in / 1024], pick = rnd_below(&rs, 10);
		int index;
		char bytes[3 * 24 + 1] = "";
		uint64_t ptr;

		/* Mostly matching (the access then runs), often not. */
		if (pick >= 5)
			v = pick >= 9 ? 0 : rnd_below(&rs, 16);
		ptr = (uint64_t)(uintptr_t)adi_make_ptr(region + off_in, v);
		index = make_insn(code, &rs, &len);
		/* ud2 after it, and ud2s to the end of the page: no way out. */
		memset(code + len, 0x0b, 4096 - len);
		for (size_t k = len; k + 1 < 4096; k += 2)
			code[k] = 0x0f;
		for (int r = 0; r < 16; r++)
			regs[r] = rnd_below(&rs, 5) ? ptr : rnd_below(&rs, 16);
		if (index >= 0)
			regs[index] = rnd_below(&rs, 16);
		memset(scratch, 0, SCRATCH);
		for (size_t k = 0; k < len && k < 24; k++)
			snprintf(bytes + 3 * k, 4, "%02x ", code[k]);
		hb_beat("batch seed %#" PRIx64 " insn %d: %s(pointer %#" PRIx64 ")",
			(uint64_t)(uintptr_t)arg, i, bytes, ptr);
		st->insns++;
		if (sigsetjmp(back, 0) == 0) {
			setitimer(ITIMER_REAL, &loop_guard, NULL);
			fuzz_enter(regs, code, scratch + SCRATCH / 2);
		}
		setitimer(ITIMER_REAL, &off, NULL);
	}
	_exit(0);
}

static const char *sig_name(int sig)
{
	static char text[16];

	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGTRAP: return "SIGTRAP";
	case SIGALRM: return "SIGALRM(loop)";
	default:
		snprintf(text, sizeof(text), "sig%d", sig);
		return text;
	}
}

static void test_fuzz_insn(void)
{
	uint64_t seed = hostile_seed("fuzz-insn");
	long seconds = hostile_seconds(60, 600);
	long long end = now_ms() + seconds * 1000;
	struct bounded r;
	char line[512];

	st = hostile_shared(sizeof(*st));
	tap_diag("fuzz-insn: %ld s, %d instructions per child", seconds, BATCH);
	for (uint64_t b = 0; now_ms() < end; b++) {
		run_bounded(fuzz_batch, (void *)(uintptr_t)batch_seed(seed, b), INSN_MS, &r);
		st->children++;
		if (r.timed_out) {
			st->timeouts++;
			if (!r.reaped)
				st->unkillable++;
			else if (r.kill_ms > KILL_WANT_MS)
				st->slow_kill++;
		} else if (WIFSIGNALED(r.status)) {
			st->killed++;
		} else if (WEXITSTATUS(r.status)) {
			st->exit_other++;
		} else {
			st->exit_zero++;
		}
		if (!exited_zero(&r) && !st->first_bad[0])
			snprintf(st->first_bad, sizeof(st->first_bad), "batch %" PRIu64 ": %s", b,
				 describe(&r));
		if (!exited_zero(&r))
			tap_diag("fuzz-insn: batch %" PRIu64 ": %s", b, describe(&r));
		if (r.timed_out && !r.reaped)
			break;		/* a task stuck in the kernel: stop here */
	}
	tap_diag("fuzz-insn: %ld instructions in %ld children: %ld exit 0, %ld other exits, "
		 "%ld killed by a signal, %ld timed out (%ld not killable)", st->insns,
		 st->children, st->exit_zero, st->exit_other, st->killed, st->timeouts,
		 st->unkillable);
	for (int s = 0; s < NSIG_SLOTS; s++)
		for (int c = 0; c < NCODE_SLOTS; c++)
			if (st->counts[s][c]) {
				snprintf(line, sizeof(line), "%s si_code %d: %ld", sig_name(s), c - 16,
					 st->counts[s][c]);
				tap_diag("fuzz-insn: %s", line);
			}
	tap_ok(st->children > 0 && st->unkillable == 0 && st->slow_kill == 0,
	       "fuzz-insn: every child ended or died within %d ms of SIGKILL (got %ld not killable, "
	       "%ld slow, of %ld timed out; want 0, 0)", KILL_WANT_MS, st->unkillable, st->slow_kill,
	       st->timeouts);
	tap_ok(st->timeouts == 0,
	       "fuzz-insn: no instruction kept the kernel for %d ms (got %ld timed out; want 0)",
	       INSN_MS, st->timeouts);
	tap_ok(st->killed == 0 && st->exit_other == 0,
	       "fuzz-insn: every child caught every signal and exited 0 (got %ld killed, %ld other "
	       "exits; want 0, 0%s%s)", st->killed, st->exit_other,
	       st->first_bad[0] ? "; first: " : "", st->first_bad);
}

int main(void)
{
	tap_init();
	hostile_group("fuzz-insn", test_fuzz_insn);
	return tap_done();
}
