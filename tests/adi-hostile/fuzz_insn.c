// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-insn: instructions whose memory operand goes through a versioned
 * pointer.  Every such access traps (#GP, or #SS for an rbp base) and the
 * kernel decodes the instruction (prefixes, REX, VEX, ModRM, SIB), checks
 * the versions and emulates or steps it.  Whatever the encoding, that
 * must end in the instruction running or in a signal the program can
 * catch, never in a hang, a kernel splat, or a signal the kernel forces
 * on the program.
 *
 * The instructions come from a WHITELIST (make_insn()): the forms real
 * code uses with a memory operand and that the ADI decoder is meant to
 * handle, each with random legacy prefixes where they make sense, random
 * REX bits, and a random ModRM/SIB/displacement.  Random opcode bytes
 * are not used any more: QEMU 7.2's TCG (Debian 12) mis-emulates enough
 * of them to take down the guest kernel or QEMU itself (far returns and
 * iret read the stack with kernel privilege and the guest oopses with
 * "supervisor read access in user mode"; 256-bit VEX vpinsr aborts QEMU
 * with "gen_pinsr: Assertion vec_len == 16"; a random branch into the
 * filler oopsed on a stack address cut to 32 bits).  See BASELINE.md.
 * Never generated: control flow of any kind, int/int3/into, syscall,
 * sysenter, hlt, segment register loads or stores, push/pop, pushf/popf,
 * enter/leave, far pointers, rsp as a base or index, anything that writes
 * rsp (no ModRM.reg register operand is rsp), and no EVEX: the TCG guest
 * has no AVX-512 (-cpu max of QEMU 7.2), so EVEX forms would only #UD;
 * the EVEX decoder needs a test on a host CPU that has AVX-512.
 *
 * Each child (one per batch of instructions, bounded 500 ms from the
 * start of its latest instruction) builds one instruction at a time on an
 * executable page far from all other code, sets the base (or the index)
 * register to a versioned pointer such that the effective address is a
 * chosen target in an ADI region, the other registers to the same
 * pointer, small numbers or random values, switches to a scratch stack
 * and jumps in.  The instruction is followed by ud2, so every run ends in
 * a signal: SIGILL at the ud2 means the instruction completed.  The
 * handler (on an unversioned alternate stack) records and counts the
 * signal and siglongjmp()s back, which restores rsp and the callee-saved
 * registers.  Seeded: ADI_HOSTILE_SEED replays a run.
 *
 * Because the fuzzer knows the effective address and the versions of the
 * region, it also checks the answers: executions through a MATCHING
 * versioned pointer (every block the access may touch matches) must
 * mostly complete without a signal (a floor of 10%; some legitimately
 * fault: div by zero, misaligned movdqa/cmpxchg16b), and every plain
 * mov load or store (88/89/8a/8b) through a MISMATCHING one must raise
 * SIGSEGV with SEGV_ADIPERR or SEGV_ADIDERR.
 */
#include <setjmp.h>
#include <sys/time.h>
#include <ucontext.h>

#include "hostile.h"

#define BATCH		64	/* instructions per child */
#define INSN_MS_BASE	500	/* bound per instruction (the child's deadline) */
#define INSN_MS		(INSN_MS_BASE * hostile_slow())
#define LOOP_GUARD_US	200000	/* SIGALRM if one instruction runs this long */
#define REGION		(64 * 1024)
#define CHUNK		1024	/* the region's versions change per KiB at most */
#define TARGET_LO	4096	/* targets: [TARGET_LO, TARGET_HI) of the region */
#define TARGET_HI	(REGION - 4096 - 8 * 300)
#define SCRATCH		(256 * 1024)
#define ALTSTACK	(64 * 1024)
/* Far from the program, its libraries and its stack. */
#define CODE_HINT	((void *)0x100000000000UL)
#define NSIG_SLOTS	32
#define NCODE_SLOTS	32	/* si_code + 16 */
#define NBAD		6	/* failing mismatch cases kept for the report */

/* ---- the whitelist's families ---------------------------------------------- */

enum family {
	FAM_MOV, FAM_MOVX, FAM_MOVSXD, FAM_ALU, FAM_ALUI, FAM_TEST, FAM_GRP3, FAM_INCDEC, FAM_XCHG,
	FAM_XADD, FAM_CMPXCHG, FAM_CX8B16B, FAM_BT, FAM_SETCC, FAM_CMOV, FAM_SHIFT, FAM_BSCAN,
	FAM_IMUL, FAM_MOVBE, FAM_SSEMOV, FAM_SSECMP, FAM_PCMPEQ, FAM_VEXMOV, FAM_VPCMPEQB, FAM_STRING,
	NFAM
};

static const char *const fam_name[NFAM] = {
	"mov 88/89/8a/8b/c6/c7", "movzx/movsx", "movsxd", "alu 00-3b", "alu 80/81/83",
	"test 84/85", "f6/f7 grp3", "inc/dec fe/ff", "xchg 86/87", "xadd", "cmpxchg",
	"cmpxchg8b/16b", "bt/bts/btr/btc", "setcc", "cmovcc", "shift/rotate",
	"bsf/bsr/popcnt/lzcnt/tzcnt", "imul 0f af", "movbe", "sse mov", "sse ucomis/comis",
	"sse pcmpeq", "vex vmov", "vex vpcmpeqb", "string ops",
};

/* Relative weights: plain moves and the ALU most, like real code. */
static const unsigned char fam_weight[NFAM] = {
	[FAM_MOV] = 16, [FAM_MOVX] = 5, [FAM_MOVSXD] = 2, [FAM_ALU] = 10, [FAM_ALUI] = 6,
	[FAM_TEST] = 3, [FAM_GRP3] = 4, [FAM_INCDEC] = 3, [FAM_XCHG] = 2, [FAM_XADD] = 3,
	[FAM_CMPXCHG] = 3, [FAM_CX8B16B] = 2, [FAM_BT] = 4, [FAM_SETCC] = 2, [FAM_CMOV] = 3,
	[FAM_SHIFT] = 4, [FAM_BSCAN] = 3, [FAM_IMUL] = 2, [FAM_MOVBE] = 2, [FAM_SSEMOV] = 5,
	[FAM_SSECMP] = 2, [FAM_PCMPEQ] = 2, [FAM_VEXMOV] = 5, [FAM_VPCMPEQB] = 2, [FAM_STRING] = 8,
};

struct fuzz_stats {
	long insns, children;
	long exit_zero, exit_other, killed, timeouts, unkillable, slow_kill;
	long counts[NSIG_SLOTS][NCODE_SLOTS];
	long fam_exec[NFAM], fam_match[NFAM], fam_clean[NFAM];
	long match, match_clean;	/* through matching versioned pointers */
	long mov_mismatch, mov_mismatch_adi;	/* mov 88-8b, mismatching */
	long locked, addr32, fsgs;
	int nbad;
	char bad[NBAD][200];
	char fam_example[NFAM][200];	/* first matching run that signalled */
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
	"cld\n\t"
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

/* ---- one instruction ------------------------------------------------------- */

#define R_RSP		4
#define R_RCX		1
#define R_RSI		6
#define R_RDI		7
#define NO_INDEX	-1

struct insn {
	unsigned char b[16];
	size_t len;
	int fam;
	int has_modrm;
	int base, index, scale;		/* scale as a shift, 0-3 */
	int32_t disp;
	int ptr_in_index;		/* the version travels in the index (scale 1) */
	int reg_small;			/* ModRM.reg register holds a bit offset 0-63 */
	int reg;			/* ModRM.reg with REX.R/VEX.R, or -1 */
	int size;			/* the most bytes the access can touch */
	int align;			/* 16 or 32 when the form wants alignment */
	int lock, addr32, fsgs;
	int strict_mov;			/* mov 88-8b, no fs/gs/67: checked exactly */
	int str_src, str_dst, str_rep;	/* string op: uses rsi, rdi; rep */
};

static int has_movbe, has_avx, has_avx2;

static const unsigned char seg_common[] = { 0x2e, 0x3e, 0x26 };

/*
 * A random legacy prefix from @pool (its common members), or now and then
 * one of the rare ones: fs/gs (the segment base joins the address) and 67
 * (the address is cut to 32 bits and just faults).
 */
static unsigned char pick_prefix(uint64_t *rs, const unsigned char *pool, size_t n,
				 struct insn *in)
{
	unsigned int r = rnd_below(rs, 100);

	if (r < 2) {
		in->addr32 = 1;
		return 0x67;
	}
	if (r < 6) {
		in->fsgs = 1;
		return r < 4 ? 0x64 : 0x65;
	}
	return pool[rnd_below(rs, n)];
}

static int pick_reg(uint64_t *rs, int not1, int not2)
{
	int r;

	do
		r = rnd_below(rs, 16);
	while (r == R_RSP || r == not1 || r == not2);
	return r;
}

/*
 * Make one whitelisted instruction in @in.  Operand registers: the base is
 * any register but rsp (rbp and r13 need a displacement with mod 0 and
 * get mod 1 or 2, r12 needs a SIB), the index any but rsp and the base.
 */
static void make_insn(struct insn *in, uint64_t *rs)
{
	unsigned char pfx[8], mand = 0, op = 0, rex = 0;
	unsigned int npfx = 0, map = 0, imm = 0, vex = 0, vex_l = 0, vex_pp = 0, vex_v = 0;
	int ext = -1, lockable = 0, gpr = 1, byte_map0 = 0, no66 = 0, sse_reg = 0, w = -1;
	unsigned int want_pfx, total, r;
	unsigned char *p;
	int fam;

	memset(in, 0, sizeof(*in));
	in->reg = -1;
	in->index = NO_INDEX;
	in->has_modrm = 1;
	in->size = 8;
	/* The family, by weight. */
	for (;;) {
		unsigned int sum = 0, pick;

		for (int f = 0; f < NFAM; f++)
			sum += fam_weight[f];
		pick = rnd_below(rs, sum);
		for (fam = 0; pick >= fam_weight[fam]; fam++)
			pick -= fam_weight[fam];
		if (fam == FAM_MOVBE && !has_movbe)
			continue;
		if ((fam == FAM_VEXMOV || fam == FAM_VPCMPEQB) && !has_avx)
			continue;
		break;
	}
	in->fam = fam;
	switch (fam) {
	case FAM_MOV: {
		static const unsigned char ops[] = { 0x88, 0x89, 0x8a, 0x8b, 0xc6, 0xc7 };

		op = ops[rnd_below(rs, 6)];
		if (op >= 0xc6) {
			ext = 0;
			imm = op == 0xc6 ? 1 : 'z';
		} else {
			in->strict_mov = 1;
		}
		byte_map0 = 1;
		break;
	}
	case FAM_MOVX: {
		static const unsigned char ops[] = { 0xb6, 0xb7, 0xbe, 0xbf };

		map = 1;
		op = ops[rnd_below(rs, 4)];
		break;
	}
	case FAM_MOVSXD:
		op = 0x63;
		byte_map0 = 1;
		break;
	case FAM_ALU: {
		unsigned int alu = rnd_below(rs, 8), dir = rnd_below(rs, 4);

		op = alu * 8 + dir;
		lockable = dir < 2 && alu != 7;	/* memory destination, not cmp */
		byte_map0 = 1;
		break;
	}
	case FAM_ALUI: {
		static const unsigned char ops[] = { 0x80, 0x81, 0x83 };

		op = ops[rnd_below(rs, 3)];
		ext = rnd_below(rs, 8);
		imm = op == 0x81 ? 'z' : 1;
		lockable = ext != 7;
		byte_map0 = 1;
		break;
	}
	case FAM_TEST:
		op = 0x84 + rnd_below(rs, 2);
		byte_map0 = 1;
		break;
	case FAM_GRP3: {
		static const unsigned char exts[] = { 0, 2, 3, 4, 5, 6, 7 };

		op = 0xf6 + rnd_below(rs, 2);
		ext = exts[rnd_below(rs, 7)];	/* /6 /7 div: SIGFPE is fine */
		if (ext == 0)
			imm = op == 0xf6 ? 1 : 'z';
		lockable = ext == 2 || ext == 3;
		byte_map0 = 1;
		break;
	}
	case FAM_INCDEC:
		/* fe/ff /0 /1 only: ff /2-/7 are calls, jumps and push. */
		op = 0xfe + rnd_below(rs, 2);
		ext = rnd_below(rs, 2);
		lockable = 1;
		byte_map0 = 1;
		break;
	case FAM_XCHG:
		op = 0x86 + rnd_below(rs, 2);
		lockable = 1;
		byte_map0 = 1;
		break;
	case FAM_XADD:
		map = 1;
		op = 0xc0 + rnd_below(rs, 2);
		lockable = 1;
		break;
	case FAM_CMPXCHG:
		map = 1;
		op = 0xb0 + rnd_below(rs, 2);
		lockable = 1;
		break;
	case FAM_CX8B16B:
		map = 1;
		op = 0xc7;
		ext = 1;
		lockable = 1;
		no66 = 1;
		in->size = 16;
		in->align = 16;		/* cmpxchg16b: #GP when not 16-aligned */
		break;
	case FAM_BT:
		map = 1;
		in->size = 16;
		if (rnd_below(rs, 2)) {
			static const unsigned char ops[] = { 0xa3, 0xab, 0xb3, 0xbb };

			op = ops[rnd_below(rs, 4)];
			lockable = op != 0xa3;
			in->reg_small = 1;	/* the bit offset: keep it near */
		} else {
			op = 0xba;
			ext = 4 + rnd_below(rs, 4);
			imm = 1;
			lockable = ext != 4;
		}
		break;
	case FAM_SETCC:
		map = 1;
		op = 0x90 + rnd_below(rs, 16);
		ext = 0;
		in->size = 1;
		break;
	case FAM_CMOV:
		map = 1;
		op = 0x40 + rnd_below(rs, 16);
		break;
	case FAM_SHIFT: {
		static const unsigned char ops[] = { 0xd0, 0xd1, 0xd3, 0xc0, 0xc1 };

		op = ops[rnd_below(rs, 5)];
		do
			ext = rnd_below(rs, 8);
		while (ext == 6);		/* /6: the undocumented sal alias */
		imm = op == 0xc0 || op == 0xc1;
		byte_map0 = 1;
		break;
	}
	case FAM_BSCAN:
		map = 1;
		switch (rnd_below(rs, 5)) {
		case 0: op = 0xbc; break;		/* bsf */
		case 1: op = 0xbd; break;		/* bsr */
		case 2: op = 0xb8; mand = 0xf3; break;	/* popcnt */
		case 3: op = 0xbc; mand = 0xf3; break;	/* tzcnt */
		default: op = 0xbd; mand = 0xf3; break;	/* lzcnt */
		}
		break;
	case FAM_IMUL:
		map = 1;
		op = 0xaf;
		break;
	case FAM_MOVBE:
		map = 2;
		op = 0xf0 + rnd_below(rs, 2);
		break;
	case FAM_SSEMOV:
		map = 1;
		gpr = 0;
		sse_reg = 1;
		in->size = 16;
		switch (rnd_below(rs, 3)) {
		case 0: {	/* movups/movupd/movss/movsd */
			static const unsigned char m[] = { 0, 0x66, 0xf3, 0xf2 };

			op = 0x10 + rnd_below(rs, 2);
			mand = m[rnd_below(rs, 4)];
			break;
		}
		case 1:		/* movaps/movapd */
			op = 0x28 + rnd_below(rs, 2);
			mand = rnd_below(rs, 2) ? 0x66 : 0;
			in->align = 16;
			break;
		default: {	/* movq (mmx), movdqa, movdqu */
			static const unsigned char m[] = { 0, 0x66, 0xf3 };

			op = rnd_below(rs, 2) ? 0x6f : 0x7f;
			mand = m[rnd_below(rs, 3)];
			in->align = mand == 0x66 ? 16 : 0;
			break;
		}
		}
		break;
	case FAM_SSECMP:	/* ucomiss/comiss, ucomisd/comisd */
		map = 1;
		gpr = 0;
		sse_reg = 1;
		in->size = 16;
		op = 0x2e + rnd_below(rs, 2);
		mand = rnd_below(rs, 2) ? 0x66 : 0;
		break;
	case FAM_PCMPEQ:	/* pcmpeqb/w/d: legacy SSE wants 16-byte alignment */
		map = 1;
		gpr = 0;
		sse_reg = 1;
		in->size = 16;
		in->align = 16;
		op = 0x74 + rnd_below(rs, 3);
		mand = 0x66;
		break;
	case FAM_VEXMOV:
		/*
		 * vmovups 0f 10/11 (pp none), vmovdqa 0f 6f/7f (66), vmovdqu
		 * 0f 6f/7f (f3), VEX.L 0 and 1, vvvv unused (1111).  Nothing else from
		 * VEX: vpinsrb/w/d/q and vpextr with VEX.L 1 (which is #UD)
		 * abort QEMU 7.2 ("gen_pinsr: Assertion vec_len == 16").
		 */
		vex = 1;
		gpr = 0;
		sse_reg = 1;
		map = 1;
		vex_l = has_avx ? rnd_below(rs, 2) : 0;
		switch (rnd_below(rs, 3)) {
		case 0: op = 0x10 + rnd_below(rs, 2); vex_pp = 0; break;
		case 1: op = rnd_below(rs, 2) ? 0x6f : 0x7f; vex_pp = 1; in->align = 16 << vex_l; break;
		default: op = rnd_below(rs, 2) ? 0x6f : 0x7f; vex_pp = 2; break;
		}
		in->size = 16 << vex_l;
		break;
	case FAM_VPCMPEQB:	/* vpcmpeqb 66 0f 74: VEX.L 1 needs AVX2 */
		vex = 1;
		gpr = 0;
		sse_reg = 1;
		map = 1;
		op = 0x74;
		vex_pp = 1;
		vex_l = has_avx2 ? rnd_below(rs, 2) : 0;
		vex_v = rnd_below(rs, 16);
		in->size = 16 << vex_l;
		break;
	default: {	/* FAM_STRING: movs, cmps, stos, lods, scas */
		static const unsigned char ops[] = { 0xa4, 0xa5, 0xa6, 0xa7, 0xaa, 0xab,
						     0xac, 0xad, 0xae, 0xaf };

		op = ops[rnd_below(rs, 10)];
		in->has_modrm = 0;
		in->str_src = op <= 0xa7 || op == 0xac || op == 0xad;
		in->str_dst = op <= 0xa7 || op == 0xaa || op == 0xab || op >= 0xae;
		byte_map0 = 1;
		break;
	}
	}

	/* ModRM, SIB, displacement. */
	if (in->has_modrm) {
		int need_sib;

		in->base = pick_reg(rs, -1, -1);
		need_sib = (in->base & 7) == 4;	/* r12 */
		if (need_sib || rnd_below(rs, 2)) {
			in->scale = rnd_below(rs, 4);
			if (rnd_below(rs, 3))
				in->index = pick_reg(rs, in->base, -1);
			if (in->index != NO_INDEX && rnd_below(rs, 4) == 0) {
				in->ptr_in_index = 1;	/* "version in the index" */
				in->scale = 0;
			}
		}
		if (ext >= 0) {
			in->reg = ext | (int)rnd_below(rs, 2) << 3;	/* REX.R ignored */
		} else if (sse_reg) {
			in->reg = rnd_below(rs, 16);
		} else {
			/* A register operand: never rsp (nor spl with REX). */
			in->reg = in->reg_small ? pick_reg(rs, in->base, in->index)
						: pick_reg(rs, -1, -1);
		}
	}

	/* Legacy prefixes: segment overrides everywhere, and where they mean
	 * something, 66 (operand size), f2/f3 (rep, or ignored/HLE hints on
	 * one-byte ALU forms), lock on the forms that take it. */
	{
		unsigned char pool[8];
		size_t n = 0;

		memcpy(pool, seg_common, sizeof(seg_common));
		n = sizeof(seg_common);
		if (gpr && !no66)
			pool[n++] = 0x66;
		if (gpr && (byte_map0 || fam == FAM_STRING) && mand == 0) {
			pool[n++] = 0xf3;
			pool[n++] = 0xf2;
		}
		r = rnd_below(rs, 20);
		want_pfx = r < 10 ? 0 : r < 16 ? 1 : r < 19 ? 2 : 3;
		for (unsigned int k = 0; k < want_pfx; k++)
			pfx[npfx++] = pick_prefix(rs, pool, n, in);
	}
	if (lockable && rnd_below(rs, 2)) {
		unsigned int at = rnd_below(rs, npfx + 1);

		memmove(pfx + at + 1, pfx + at, npfx - at);
		pfx[at] = 0xf0;
		npfx++;
		in->lock = 1;
	}
	if (fam == FAM_STRING && rnd_below(rs, 2)) {
		/* rep (f3) or repne (f2: for cmps/scas; a plain rep elsewhere) */
		pfx[npfx++] = rnd_below(rs, 4) ? 0xf3 : 0xf2;
	}
	for (unsigned int k = 0; k < npfx; k++)
		if (pfx[k] == 0xf3 || pfx[k] == 0xf2)
			in->str_rep = fam == FAM_STRING;

	/* Too long (over 15 bytes) is #GP of its own: drop prefixes. */
	total = npfx + (mand != 0) + 1 /* rex */ + (vex ? 3 : map + 1) + 2 /* modrm sib */ +
		4 /* disp */ + 4 /* imm */;
	while (total > 15 && npfx) {
		if (pfx[npfx - 1] == 0xf0)
			in->lock = 0;
		npfx--;
		total--;
	}

	/* Emit. */
	p = in->b;
	memcpy(p, pfx, npfx);
	p += npfx;
	if (mand)
		*p++ = mand;
	if (in->has_modrm) {
		unsigned int mod, rm, sibb = 0, use_sib, idx_field, x, bb, rr;

		use_sib = (in->base & 7) == 4 || in->index != NO_INDEX || rnd_below(rs, 4) == 0;
		mod = rnd_below(rs, 3);
		if (mod == 0 && (in->base & 7) == 5)	/* rbp/r13: no base with mod 0 */
			mod = 1 + rnd_below(rs, 2);
		idx_field = in->index == NO_INDEX ? 4 : (in->index & 7);
		x = in->index == NO_INDEX ? 0 : in->index >> 3;
		bb = in->base >> 3;
		rr = in->reg >> 3 & 1;
		if (!use_sib)
			in->scale = 0;
		rm = use_sib ? 4 : (in->base & 7);
		sibb = in->scale << 6 | idx_field << 3 | (in->base & 7);
		if (vex) {
			if (x || bb || rnd_below(rs, 3) == 0) {
				*p++ = 0xc4;
				*p++ = (!rr) << 7 | (!x) << 6 | (!bb) << 5 | 1;
				*p++ = (rnd_below(rs, 2) << 7) | (~vex_v & 0xf) << 3 | vex_l << 2 |
				       vex_pp;
			} else {
				*p++ = 0xc5;
				*p++ = (!rr) << 7 | (~vex_v & 0xf) << 3 | vex_l << 2 | vex_pp;
			}
		} else {
			int want_rex = rr || x || bb || rnd_below(rs, 3) == 0;

			if (want_rex) {
				w = gpr ? (int)rnd_below(rs, 2) : (int)rnd_below(rs, 4) == 0;
				rex = 0x40 | w << 3 | rr << 2 | x << 1 | bb;
				*p++ = rex;
			}
			if (map == 1) {
				*p++ = 0x0f;
			} else if (map == 2) {
				*p++ = 0x0f;
				*p++ = 0x38;
			}
		}
		*p++ = op;
		*p++ = mod << 6 | (in->reg & 7) << 3 | rm;
		if (use_sib)
			*p++ = sibb;
		if (mod == 1) {
			in->disp = (int32_t)rnd_below(rs, 256) - 128;
			*p++ = (unsigned char)(int8_t)in->disp;
		} else if (mod == 2) {
			in->disp = (int32_t)rnd_below(rs, 8193) - 4096;
			memcpy(p, &in->disp, 4);
			p += 4;
		}
	} else {
		if (rnd_below(rs, 2)) {
			*p++ = 0x40 | rnd_below(rs, 16);
			w = p[-1] >> 3 & 1;
		}
		*p++ = op;
	}
	/* The immediate: ib, or iz (2 bytes with 66, else 4). */
	if (imm == 'z') {
		int has66 = 0;

		for (unsigned int k = 0; k < npfx; k++)
			has66 |= pfx[k] == 0x66;
		imm = has66 && w != 1 ? 2 : 4;
	}
	for (unsigned int k = 0; k < imm; k++)
		*p++ = rnd_below(rs, 256);
	in->len = p - in->b;
	if (in->fsgs || in->addr32)
		in->strict_mov = 0;
}

/* ---- the child -------------------------------------------------------------- */

static sigjmp_buf back;
static unsigned char *code, *region, *scratch;
static unsigned char chunk_version[REGION / CHUNK];
static volatile int got_sig, got_code;
static void *volatile got_addr;

static void fuzz_handler(int sig, siginfo_t *si, void *ctx)
{
	int code_slot = si->si_code + 16;

	(void)ctx;
	/* Nothing generated sets AC or TF, but a kernel bug might: clear them. */
	__asm__ volatile("pushfq\n\tandq $~0x40100, (%%rsp)\n\tpopfq" : : : "memory", "cc");
	got_sig = sig;
	got_code = si->si_code;
	got_addr = si->si_addr;
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

/*
 * Random data and random versions (per KiB, often the same as the KiB
 * before, so longer accesses can match too): mostly 1-14; now and then 0
 * or 15, which match every pointer.
 */
static void region_randomize(uint64_t *rs)
{
	for (size_t i = 0; i < REGION; i += 8) {
		uint64_t v = rnd_next(rs);

		memcpy(region + i, &v, 8);
	}
	for (size_t i = 0; i < sizeof(chunk_version); i++) {
		unsigned int r = rnd_below(rs, 32);

		if (i && rnd_below(rs, 2))
			chunk_version[i] = chunk_version[i - 1];
		else
			chunk_version[i] = r == 0 ? 0 : r == 1 ? 15 : 1 + rnd_below(rs, 14);
		adi_set_version(region + i * CHUNK, CHUNK, chunk_version[i]);
	}
}

static int block_matches(size_t off, unsigned int ptr_version)
{
	unsigned int mem = chunk_version[off / CHUNK];

	return mem == 0 || mem == 15 || mem == ptr_version;
}

/* Every block of [off, off + len) matches @ptr_version (a versioned one). */
static int range_matches(size_t off, size_t len, unsigned int ptr_version)
{
	if (!ptr_version)
		return 0;
	for (size_t o = off & ~(size_t)(BLK - 1); o < off + len; o += BLK)
		if (!block_matches(o, ptr_version))
			return 0;
	return 1;
}

/* A target offset in the region, aligned (to 32) three times in four. */
static size_t pick_target(uint64_t *rs, int align)
{
	size_t off = TARGET_LO + rnd_below(rs, TARGET_HI - TARGET_LO);

	if (align || rnd_below(rs, 4))
		off &= ~(size_t)31;
	return off;
}

/* The version of a pointer to @off: matching (3 in 5), mismatching, or 0. */
static unsigned int pick_version(uint64_t *rs, size_t off)
{
	unsigned int r = rnd_below(rs, 20), mem = chunk_version[off / CHUNK], v;

	if (r < 12)
		return mem ? mem : 1 + rnd_below(rs, 15);
	if (r == 19)
		return 0;	/* unversioned: not checked, not trapped */
	do
		v = 1 + rnd_below(rs, 15);
	while (v == mem);
	return v;
}

static uint64_t vptr(size_t off, unsigned int v)
{
	return (uint64_t)(uintptr_t)adi_make_ptr(region + off, v);
}

static void note_bad(const char *fmt, ...)
{
	va_list ap;
	int k = __atomic_fetch_add(&st->nbad, 1, __ATOMIC_RELAXED);

	if (k >= NBAD)
		return;
	va_start(ap, fmt);
	vsnprintf(st->bad[k], sizeof(st->bad[k]), fmt, ap);
	va_end(ap);
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

static void fuzz_batch(void *arg)
{
	uint64_t rs = (uint64_t)(uintptr_t)arg, regs[16];
	struct itimerval loop_guard = { .it_value = { 0, LOOP_GUARD_US } },
			 off = { { 0, 0 }, { 0, 0 } };
	volatile int i;

	child_setup();
	region_randomize(&rs);
	for (i = 0; i < BATCH; i++) {
		struct insn in;
		size_t target, src = 0, dst = 0, count = 0;
		unsigned int v, vs = 0, vd = 0;
		int matching = 0, mismatch_mov = 0, completed;
		char bytes[3 * 16 + 1] = "";
		uint64_t ptr;

		make_insn(&in, &rs);
		target = pick_target(&rs, in.align);
		v = pick_version(&rs, target);
		ptr = vptr(target, v);
		/* Other registers: the pointer, a small number, or anything. */
		for (int r = 0; r < 16; r++) {
			unsigned int k = rnd_below(&rs, 3);

			regs[r] = k == 0 ? ptr : k == 1 ? rnd_below(&rs, 64) : rnd_next(&rs);
		}
		if (in.has_modrm) {
			uint64_t idx = rnd_below(&rs, 16), base = ptr - (uint64_t)(int64_t)in.disp;

			if (in.reg_small)
				regs[in.reg] = rnd_below(&rs, 64);
			if (in.ptr_in_index) {
				uint64_t small = rnd_below(&rs, 256);

				regs[in.base] = small;
				regs[in.index] = base - small;
			} else {
				if (in.index != NO_INDEX)
					regs[in.index] = idx;
				else
					idx = 0;
				regs[in.base] = base - (idx << in.scale);
			}
			matching = !in.addr32 && !in.fsgs && range_matches(target, in.size, v);
			mismatch_mov = in.strict_mov && v && !block_matches(target, v);
		} else {
			/* String op: rsi and rdi each to a target of its own. */
			unsigned int r = rnd_below(&rs, 3);

			count = rnd_below(&rs, r == 0 ? 17 : r == 1 ? 65 : 301);
			regs[R_RCX] = count;
			src = pick_target(&rs, 0);
			dst = pick_target(&rs, 0);
			vs = pick_version(&rs, src);
			vd = pick_version(&rs, dst);
			regs[R_RSI] = vptr(src, vs);
			regs[R_RDI] = vptr(dst, vd);
			ptr = in.str_src ? regs[R_RSI] : regs[R_RDI];
			if (!in.str_rep)
				count = 1;
			matching = !in.addr32 && count &&
				   (!in.str_src || (!in.fsgs && range_matches(src, count * 8, vs))) &&
				   (!in.str_dst || range_matches(dst, count * 8, vd));
		}
		memcpy(code, in.b, in.len);
		/* ud2 after it, and ud2s to the end of the page: no way out. */
		for (size_t k = in.len; k + 1 < 4096; k += 2) {
			code[k] = 0x0f;
			code[k + 1] = 0x0b;
		}
		memset(scratch, 0, SCRATCH);
		for (size_t k = 0; k < in.len; k++)
			snprintf(bytes + 3 * k, 4, "%02x ", in.b[k]);
		hb_beat("batch seed %#" PRIx64 " insn %d: %s: %s(pointer %#" PRIx64 ")",
			(uint64_t)(uintptr_t)arg, i, fam_name[in.fam], bytes, ptr);
		st->insns++;
		st->fam_exec[in.fam]++;
		st->locked += in.lock;
		st->addr32 += in.addr32;
		st->fsgs += in.fsgs;
		got_sig = 0;
		if (sigsetjmp(back, 0) == 0) {
			setitimer(ITIMER_REAL, &loop_guard, NULL);
			fuzz_enter(regs, code, scratch + SCRATCH / 2);
		}
		setitimer(ITIMER_REAL, &off, NULL);
		completed = got_sig == SIGILL && got_addr == code + in.len;
		if (matching) {
			st->match++;
			st->fam_match[in.fam]++;
			if (completed) {
				st->match_clean++;
				st->fam_clean[in.fam]++;
			} else if (!st->fam_example[in.fam][0]) {
				snprintf(st->fam_example[in.fam], sizeof(st->fam_example[0]),
					 "%s(pointer %#" PRIx64 "): %s si_code %d addr %p", bytes,
					 ptr, sig_name(got_sig), got_code, got_addr);
			}
		}
		if (mismatch_mov) {
			st->mov_mismatch++;
			if (got_sig == SIGSEGV && (got_code == SEGV_ADIPERR || got_code == SEGV_ADIDERR))
				st->mov_mismatch_adi++;
			else
				note_bad("%s(pointer %#" PRIx64 ", memory version %u): %s %d si_code %d",
					 bytes, ptr, chunk_version[target / CHUNK],
					 completed ? "completed, then signal" : "signal", got_sig,
					 got_code);
		}
	}
	_exit(0);
}

/* The guest's CPU features, as the kernel reports them. */
static void read_cpu_flags(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		strcat(line, " ");
		has_movbe = strstr(line, " movbe ") != NULL;
		has_avx = strstr(line, " avx ") != NULL;
		has_avx2 = strstr(line, " avx2 ") != NULL;
		if (strstr(line, " avx512f "))
			tap_diag("fuzz-insn: the CPU has AVX-512, but EVEX forms are not generated");
		break;
	}
	fclose(f);
}

static void test_fuzz_insn(void)
{
	uint64_t seed = hostile_seed("fuzz-insn");
	long seconds = hostile_seconds(60, 600);
	long long end = now_ms() + seconds * 1000;
	struct bounded r;
	char line[512];

	st = hostile_shared(sizeof(*st));
	read_cpu_flags();
	tap_diag("fuzz-insn: %ld s, %d instructions per child; movbe %s, AVX %s, AVX2 %s",
		 seconds, BATCH, has_movbe ? "yes" : "no", has_avx ? "yes" : "no",
		 has_avx2 ? "yes" : "no");
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
	tap_diag("fuzz-insn: %ld lock-prefixed, %ld with 67 (32-bit address), %ld with fs/gs",
		 st->locked, st->addr32, st->fsgs);
	for (int s = 0; s < NSIG_SLOTS; s++)
		for (int c = 0; c < NCODE_SLOTS; c++)
			if (st->counts[s][c]) {
				snprintf(line, sizeof(line), "%s si_code %d: %ld", sig_name(s), c - 16,
					 st->counts[s][c]);
				tap_diag("fuzz-insn: %s", line);
			}
	tap_diag("fuzz-insn: per family: executed, through a matching pointer, of those completed");
	for (int f = 0; f < NFAM; f++)
		tap_diag("fuzz-insn:   %-26s %7ld %7ld %7ld", fam_name[f], st->fam_exec[f],
			 st->fam_match[f], st->fam_clean[f]);
	for (int f = 0; f < NFAM; f++)
		if (st->fam_example[f][0])
			tap_diag("fuzz-insn: %s, first matching run with a signal: %s", fam_name[f],
				 st->fam_example[f]);
	for (int k = 0; k < st->nbad && k < NBAD; k++)
		tap_diag("fuzz-insn: mismatching mov without an ADI SIGSEGV: %s", st->bad[k]);
	tap_ok(st->children > 0, "fuzz-insn: the fuzzer ran children (got %ld, want > 0)",
	       st->children);
	tap_eq_long(st->unkillable, 0, "fuzz-insn: every child that timed out died of SIGKILL: "
		    "children not killable (of %ld timed out)", st->timeouts);
	tap_eq_long(st->slow_kill, 0, "fuzz-insn: every child that timed out died within %d ms "
		    "of SIGKILL: children slower to die (of %ld timed out)", KILL_WANT_MS,
		    st->timeouts);
	tap_ok(st->timeouts == 0,
	       "fuzz-insn: no instruction kept the kernel for %d ms (got %ld timed out; want 0)",
	       INSN_MS, st->timeouts);
	tap_ok(st->killed == 0 && st->exit_other == 0,
	       "fuzz-insn: every child caught every signal and exited 0 (got %ld killed, %ld other "
	       "exits; want 0, 0%s%s)", st->killed, st->exit_other,
	       st->first_bad[0] ? "; first: " : "", st->first_bad);
	tap_ok(st->match > 0, "fuzz-insn: instructions ran through matching versioned pointers "
	       "(got %ld, want > 0)", st->match);
	tap_ok(st->match_clean * 10 >= st->match,
	       "fuzz-insn: instructions through matching versioned pointers ran without a signal "
	       "(got %ld of %ld, %.1f%%; want at least 10%%)", st->match_clean, st->match,
	       st->match ? 100.0 * st->match_clean / st->match : 0.0);
	tap_ok(st->mov_mismatch > 0, "fuzz-insn: mov loads/stores (88/89/8a/8b) ran through "
	       "mismatching pointers (got %ld, want > 0)", st->mov_mismatch);
	tap_eq_long(st->mov_mismatch_adi, st->mov_mismatch,
		    "fuzz-insn: every mov load/store (88/89/8a/8b) through a mismatching pointer "
		    "raised SIGSEGV with SEGV_ADIPERR or SEGV_ADIDERR: how many did");
}

int main(void)
{
	tap_init();
	hostile_group("fuzz-insn", test_fuzz_insn);
	return tap_done();
}
