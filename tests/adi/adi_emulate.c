// SPDX-License-Identifier: GPL-2.0
/*
 * The checked accesses the kernel does itself, against the CPU.
 *
 * A mov between memory and a general register, and an add, adc, sub, sbb,
 * cmp, and, or, xor or test with a memory operand, through a matching
 * versioned pointer is done by the #GP handler (counted in "emulated");
 * other instructions are single-stepped by the CPU.  Each form below runs
 * twice from the same registers and flags: once through a plain pointer,
 * which the CPU executes, and once through the versioned pointer.  Every
 * general register, the arithmetic flags and both pages of memory must end
 * the same (the pointer register keeps its version), and the counter must
 * say which way the access went.  The flags are compared again over every
 * operation and width, with operands at the edges of each flag.  Then the
 * ways the emulation must step aside: a read-only page, PROT_NONE, a
 * protection key, an armed hardware watchpoint, and a program
 * single-stepping itself with TF.  Last, a process whose only ADI use is a
 * load the handler did still holds the version paths on, as a stepped
 * access does.
 */
#include <cpuid.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adi_test.h"

#define V_GOOD	5
#define PAGE	4096
#define BASE	1024		/* where the pointer points, in the first page */

/* The general registers in encoding order, then RFLAGS. */
enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15 };
static const char *const reg_name[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

struct cpu {
	uint64_t r[16];
	uint64_t flags;
};

/* OF, DF, SF, ZF, AF, PF, CF: what an instruction here may change. */
#define FLAGS_COMPARED	0xcd5UL
#define FLAGS_IN	(0x8d5UL | 0x2)		/* arithmetic flags set */
#define X86_TF		0x100UL

/*
 * run_form(cpu, form): load every register but rsp and RFLAGS from @cpu,
 * call @form (one instruction, then ret), store them back.
 */
void run_form(struct cpu *cpu, void (*form)(void));
extern char run_form_back[];
__asm__(".pushsection .text\n"
	".globl run_form\n.type run_form,@function\n"
	"run_form:\n\t"
	"push %rbx\n\tpush %rbp\n\tpush %r12\n\tpush %r13\n\tpush %r14\n\tpush %r15\n\t"
	"push %rdi\n\tpush %rsi\n\t"
	"pushq 128(%rdi)\n\tpopfq\n\t"
	"mov 0(%rdi), %rax\n\tmov 8(%rdi), %rcx\n\tmov 16(%rdi), %rdx\n\tmov 24(%rdi), %rbx\n\t"
	"mov 40(%rdi), %rbp\n\tmov 48(%rdi), %rsi\n\tmov 64(%rdi), %r8\n\tmov 72(%rdi), %r9\n\t"
	"mov 80(%rdi), %r10\n\tmov 88(%rdi), %r11\n\tmov 96(%rdi), %r12\n\tmov 104(%rdi), %r13\n\t"
	"mov 112(%rdi), %r14\n\tmov 120(%rdi), %r15\n\tmov 56(%rdi), %rdi\n\t"
	"call *(%rsp)\n"
	".globl run_form_back\n"
	"run_form_back:\n\t"
	"pushfq\n\t"
	"xchg %rdi, 16(%rsp)\n\t"
	"mov %rax, 0(%rdi)\n\tmov %rcx, 8(%rdi)\n\tmov %rdx, 16(%rdi)\n\tmov %rbx, 24(%rdi)\n\t"
	"mov %rbp, 40(%rdi)\n\tmov %rsi, 48(%rdi)\n\tmov %r8, 64(%rdi)\n\tmov %r9, 72(%rdi)\n\t"
	"mov %r10, 80(%rdi)\n\tmov %r11, 88(%rdi)\n\tmov %r12, 96(%rdi)\n\tmov %r13, 104(%rdi)\n\t"
	"mov %r14, 112(%rdi)\n\tmov %r15, 120(%rdi)\n\t"
	"mov 16(%rsp), %rax\n\tmov %rax, 56(%rdi)\n\t"
	"pop %rax\n\tmov %rax, 128(%rdi)\n\t"
	"add $16, %rsp\n\t"
	"pop %r15\n\tpop %r14\n\tpop %r13\n\tpop %r12\n\tpop %rbp\n\tpop %rbx\n\t"
	"ret\n"
	".popsection");

#define FORM(fn, text)							\
	void fn(void);							\
	__asm__(".pushsection .text\n.type " #fn ",@function\n" #fn ":\n\t" \
		text "\n\tret\n.popsection")

struct form {
	const char *text;
	void (*fn)(void);
	int ptr;		/* the register that holds the pointer */
	int idx;		/* a register holding @idx_val, or -1 */
	long idx_val;
	int self_off;		/* stores the pointer at ptr + this, or -1 */
	int emulated;		/* done by the handler, not stepped */
};

/*
 * n, text, pointer register, index register and its value, where a store
 * of the pointer itself lands, emulated.  The pointer points at mem + BASE.
 */
#define FORMS(F)								\
	/* loads: every width, high bytes, REX bytes, zero- and sign-extension */ \
	F(1, "movq (%rax), %rax", RAX, -1, 0, -1, 1)				\
	F(2, "movl (%rbx), %ecx", RBX, -1, 0, -1, 1)				\
	F(3, "movw (%rsi), %dx", RSI, -1, 0, -1, 1)				\
	F(4, "movb (%rdi), %al", RDI, -1, 0, -1, 1)				\
	F(5, "movb (%rdx), %ah", RDX, -1, 0, -1, 1)				\
	F(6, "movb (%r8), %sil", R8, -1, 0, -1, 1)				\
	F(7, "movq 8(%r9,%rcx,2), %r10", R9, RCX, 12, -1, 1)			\
	F(8, "movl -16(%r11), %r12d", R11, -1, 0, -1, 1)			\
	F(9, "movzbl (%rax), %ecx", RAX, -1, 0, -1, 1)				\
	F(10, "movzwq (%rbx), %rdx", RBX, -1, 0, -1, 1)				\
	F(11, "movzbw (%rsi), %di", RSI, -1, 0, -1, 1)				\
	F(12, "movsbq (%rcx), %rax", RCX, -1, 0, -1, 1)				\
	F(13, "movswl (%rdx), %esi", RDX, -1, 0, -1, 1)				\
	F(14, "movsbw (%rdi), %r8w", RDI, -1, 0, -1, 1)				\
	F(15, "movslq (%rbp), %r9", RBP, -1, 0, -1, 1)				\
	F(16, "movq (%rcx,%rax,1), %rdx", RAX, RCX, 24, -1, 1)			\
	F(17, "movq 60(%r13), %r14", R13, -1, 0, -1, 1)				\
	F(18, "movl (%r15), %r15d", R15, -1, 0, -1, 1)				\
	/* stores: registers, high bytes, immediates, movnti, the pointer itself */ \
	F(19, "movq %rax, (%rax)", RAX, -1, 0, 0, 1)				\
	F(20, "movl %ecx, (%rbx)", RBX, -1, 0, -1, 1)				\
	F(21, "movw %dx, (%rsi)", RSI, -1, 0, -1, 1)				\
	F(22, "movb %al, (%rdi)", RDI, -1, 0, -1, 1)				\
	F(23, "movb %bh, (%rdx)", RDX, -1, 0, -1, 1)				\
	F(24, "movb %r12b, (%r8)", R8, -1, 0, -1, 1)				\
	F(25, "movq $-5, (%rax)", RAX, -1, 0, -1, 1)				\
	F(26, "movl $0x89abcdef, 4(%rcx)", RCX, -1, 0, -1, 1)			\
	F(27, "movw $0x1234, (%rdx)", RDX, -1, 0, -1, 1)			\
	F(28, "movb $0x7f, (%rsi)", RSI, -1, 0, -1, 1)				\
	F(29, "movnti %rax, (%rbx)", RBX, -1, 0, -1, 1)				\
	F(30, "movnti %ecx, 8(%rdx)", RDX, -1, 0, -1, 1)			\
	F(31, "movq %rbp, 24(%rbp)", RBP, -1, 0, 24, 1)				\
	F(32, "movq %r9, (%r10,%r11,8)", R10, R11, 3, -1, 1)			\
	/* arithmetic and logic: every form, width and direction */		\
	F(33, "addq (%rax), %rcx", RAX, -1, 0, -1, 1)				\
	F(34, "cmpb $0x80, (%rdi)", RDI, -1, 0, -1, 1)				\
	F(37, "addl %edx, (%rbx)", RBX, -1, 0, -1, 1)				\
	F(38, "subw (%rsi), %di", RSI, -1, 0, -1, 1)				\
	F(39, "sbbb %ah, (%rdi)", RDI, -1, 0, -1, 1)				\
	F(40, "adcq $-1, 8(%rdx)", RDX, -1, 0, -1, 1)				\
	F(41, "andl $0xf0f0f0f0, (%rcx)", RCX, -1, 0, -1, 1)			\
	F(42, "orb $0x81, (%r8)", R8, -1, 0, -1, 1)				\
	F(43, "xorq (%r9), %r10", R9, -1, 0, -1, 1)				\
	F(44, "cmpq %rax, (%rax)", RAX, -1, 0, -1, 1)				\
	F(45, "cmpl (%rbx), %ecx", RBX, -1, 0, -1, 1)				\
	F(46, "testb $0x40, (%rsi)", RSI, -1, 0, -1, 1)				\
	F(47, "testl %edx, (%rdi)", RDI, -1, 0, -1, 1)				\
	F(48, "testq $0x7fffffff, (%rdx)", RDX, -1, 0, -1, 1)			\
	F(49, "addq %rax, 24(%rbp)", RBP, -1, 0, -1, 1)				\
	F(50, "cmpw $0x1234, 2(%r11)", R11, -1, 0, -1, 1)			\
	F(51, "subl $1, (%r12)", R12, -1, 0, -1, 1)				\
	F(52, "adcl (%r13), %r14d", R13, -1, 0, -1, 1)				\
	F(53, "orw %ax, (%rcx,%rdx,4)", RCX, RDX, 5, -1, 1)			\
	F(54, "xorb %bh, -1(%rbx)", RBX, -1, 0, -1, 1)				\
	/* not done by the handler: stepped by the CPU, and still the same */	\
	F(35, "xchgq %rdx, (%rbx)", RBX, -1, 0, -1, 0)				\
	F(36, "lock incl (%rsi)", RSI, -1, 0, -1, 0)				\
	F(55, "lock addq %rcx, (%rax)", RAX, -1, 0, -1, 0)			\
	F(56, "imulq (%rax), %rcx", RAX, -1, 0, -1, 0)

#define DEFINE_FORM(n, text, ptr, idx, idx_val, self_off, emulated)	\
	FORM(form_##n, text);
FORMS(DEFINE_FORM)

static const struct form forms[] = {
#define FORM_ENTRY(n, text, ptr, idx, idx_val, self_off, emulated)	\
	{ text, form_##n, ptr, idx, idx_val, self_off, emulated },
	FORMS(FORM_ENTRY)
};

static char *mem;	/* 2 pages of ADI memory, version V_GOOD */

static void fill(void)
{
	for (int i = 0; i < 2 * PAGE; i++)
		mem[i] = (char)(i * 13 + 7);
}

/* Registers with bits in every byte, so merges and extensions show. */
static void cpu_init(struct cpu *c, const struct form *f, void *ptr)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ (uintptr_t)f->text;

	for (int i = 0; i < 16; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		c->r[i] = x | 0x8080808080808080ULL;
	}
	c->flags = FLAGS_IN;
	c->r[f->ptr] = (uintptr_t)ptr;
	if (f->idx >= 0)
		c->r[f->idx] = f->idx_val;
}

/*
 * Run @f through the plain and through the versioned pointer; say what
 * differs beyond the pointer's version in @why.  Returns the number of
 * "emulated" counts the versioned run added (-1: no counter).
 */
static int compare_form(const struct form *f, char *why, size_t len, long *emulated)
{
	static char want_mem[2 * PAGE];
	void *vptr = adi_make_ptr(mem + BASE, V_GOOD);
	struct cpu in, want, got;
	long before;

	fill();
	cpu_init(&in, f, mem + BASE);
	want = in;
	run_form(&want, f->fn);
	memcpy(want_mem, mem, sizeof(want_mem));
	/* The pointer register keeps its version unless the form wrote it. */
	if (want.r[f->ptr] == in.r[f->ptr])
		want.r[f->ptr] = (uintptr_t)vptr;
	if (f->self_off >= 0)
		memcpy(want_mem + BASE + f->self_off, &vptr, 8);

	fill();
	cpu_init(&got, f, vptr);
	before = adi_counter("emulated");
	run_form(&got, f->fn);
	*emulated = before < 0 ? -1 : adi_counter("emulated") - before;

	for (int i = 0; i < 16; i++) {
		if (i == RSP || got.r[i] == want.r[i])
			continue;
		snprintf(why, len, "%s got %#lx, want %#lx", reg_name[i],
			 (unsigned long)got.r[i], (unsigned long)want.r[i]);
		return 0;
	}
	if ((got.flags ^ want.flags) & FLAGS_COMPARED) {
		snprintf(why, len, "flags got %#lx, want %#lx",
			 (unsigned long)(got.flags & FLAGS_COMPARED),
			 (unsigned long)(want.flags & FLAGS_COMPARED));
		return 0;
	}
	for (int i = 0; i < 2 * PAGE; i++) {
		if (mem[i] == want_mem[i])
			continue;
		snprintf(why, len, "memory byte %d got %#x, want %#x", i - BASE,
			 (uint8_t)mem[i], (uint8_t)want_mem[i]);
		return 0;
	}
	snprintf(why, len, "as on plain memory");
	return 1;
}

static void test_forms(void)
{
	char why[160];
	long emulated;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const struct form *f = &forms[i];
		int same = compare_form(f, why, sizeof(why), &emulated);

		tap_ok(same, "%s: registers, flags and memory (%s)", f->text, why);
		/* -1: debugfs is there, the "emulated" counter is not. */
		if (adi_counter("checks") < 0)
			tap_skip("no /sys/kernel/debug/adi (debugfs not mounted)",
				 "%s: done by the handler", f->text);
		else
			tap_eq_long(emulated, f->emulated, "%s: %s (emulated count)", f->text,
				    f->emulated ? "done by the handler" : "stepped by the CPU");
	}
}

/* ---- arithmetic flags: every operation and width, edge operands --------- */

/* "op (%rbx), %cl" and wider: reg op= mem; test and cmp write no register. */
#define SWEEP_FORMS(op)							\
	FORM(sweep_##op##b, #op "b (%rbx), %cl");			\
	FORM(sweep_##op##w, #op "w (%rbx), %cx");			\
	FORM(sweep_##op##l, #op "l (%rbx), %ecx");			\
	FORM(sweep_##op##q, #op "q (%rbx), %rcx")
SWEEP_FORMS(add); SWEEP_FORMS(adc); SWEEP_FORMS(sub); SWEEP_FORMS(sbb);
SWEEP_FORMS(cmp); SWEEP_FORMS(and); SWEEP_FORMS(or); SWEEP_FORMS(xor);
SWEEP_FORMS(test);

#define SWEEP_ROW(op) { #op, { sweep_##op##b, sweep_##op##w, sweep_##op##l, sweep_##op##q } }
static const struct {
	const char *op;
	void (*fn[4])(void);
} sweeps[] = {
	SWEEP_ROW(add), SWEEP_ROW(adc), SWEEP_ROW(sub), SWEEP_ROW(sbb), SWEEP_ROW(cmp),
	SWEEP_ROW(and), SWEEP_ROW(or), SWEEP_ROW(xor), SWEEP_ROW(test),
};

/*
 * Operands at the edges each flag turns on, scaled to @size bytes: zero,
 * one, the nibble carry (AF), the sign boundary (OF, SF), all ones (CF),
 * alternating bits (PF).
 */
#define SWEEP_VALUES 12
static void sweep_values(int size, uint64_t *v)
{
	uint64_t sign = 1ULL << (size * 8 - 1), mask = sign | (sign - 1);
	const uint64_t base[SWEEP_VALUES] = {
		0, 1, 0xf, 0x10, sign - 1, sign, sign + 1, mask - 1, mask,
		0x5555555555555555ULL, 0xaaaaaaaaaaaaaaaaULL, 0x0123456789abcdefULL,
	};

	for (int i = 0; i < SWEEP_VALUES; i++)
		v[i] = base[i] & mask;
}

/*
 * One run of @fn with rcx = @a and the @size bytes at the pointer = @b,
 * from @flags; the result in @c, the memory operand in *@m.
 */
static void sweep_run(void (*fn)(void), void *ptr, uint64_t a, uint64_t b, int size,
		      uint64_t flags, struct cpu *c, uint64_t *m)
{
	memset(c, 0, sizeof(*c));
	c->r[RCX] = a | 0xdead000000000000ULL * (size < 8);	/* merges show */
	c->r[RBX] = (uintptr_t)ptr;
	c->flags = flags;
	memcpy(mem + BASE, &b, 8);
	run_form(c, fn);
	memcpy(m, mem + BASE, 8);
}

static void test_flag_sweep(void)
{
	void *vptr = adi_make_ptr(mem + BASE, V_GOOD);
	static const int sizes[4] = { 1, 2, 4, 8 };
	uint64_t v[SWEEP_VALUES];

	for (size_t o = 0; o < sizeof(sweeps) / sizeof(sweeps[0]); o++) {
		for (int w = 0; w < 4; w++) {
			int size = sizes[w], runs = 0, diffs = 0;
			char first[200] = "none";
			long before = adi_counter("emulated");

			sweep_values(size, v);
			fill();
			for (int i = 0; i < SWEEP_VALUES; i++)
			for (int j = 0; j < SWEEP_VALUES; j++)
			for (int cin = 0; cin < 2; cin++) {
				/* CF in, and every other arithmetic flag in or out. */
				uint64_t flags = 0x2 | cin | ((i + j) % 2 ? 0x8d4 : 0);
				struct cpu want, got;
				uint64_t want_m, got_m;

				sweep_run(sweeps[o].fn[w], mem + BASE, v[i], v[j], size, flags,
					  &want, &want_m);
				want.r[RBX] = (uintptr_t)vptr;
				sweep_run(sweeps[o].fn[w], vptr, v[i], v[j], size, flags,
					  &got, &got_m);
				runs++;
				if (got.r[RCX] == want.r[RCX] && got.r[RBX] == want.r[RBX] &&
				    !((got.flags ^ want.flags) & FLAGS_COMPARED) && got_m == want_m)
					continue;
				if (!diffs++)
					snprintf(first, sizeof(first),
						 "rcx=%#lx mem=%#lx CF=%d: rcx got %#lx want %#lx, "
						 "flags got %#lx want %#lx",
						 (unsigned long)v[i], (unsigned long)v[j], cin,
						 (unsigned long)got.r[RCX], (unsigned long)want.r[RCX],
						 (unsigned long)(got.flags & FLAGS_COMPARED),
						 (unsigned long)(want.flags & FLAGS_COMPARED));
			}
			tap_eq_long(diffs, 0, "%s%c (%%rbx), rcx: %d runs differing from the CPU's "
				    "(first: %s)", sweeps[o].op, "bwlq"[w], runs, first);
			if (before >= 0)
				tap_eq_long(adi_counter("emulated") - before, runs,
					    "%s%c: every run done by the handler (emulated count)",
					    sweeps[o].op, "bwlq"[w]);
		}
	}
}

/* ---- lods, scas, cmps: done whole, element by element ------------------- */

/* DF set inside the form and cleared before the C code sees it again. */
FORM(str_lodsb, "lodsb");
FORM(str_lodsw, "lodsw");
FORM(str_lodsl, "lodsl");
FORM(str_lodsq, "lodsq");
FORM(str_rep_lodsb, "rep lodsb");
FORM(str_scasb, "scasb");
FORM(str_repne_scasb, "repne scasb");
FORM(str_repe_scasb, "repe scasb");
FORM(str_repne_scasl, "repne scasl");
FORM(str_repe_scasq, "repe scasq");
FORM(str_std_repne_scasb, "std\n\trepne scasb\n\tcld");
FORM(str_cmpsb, "cmpsb");
FORM(str_repe_cmpsb, "repe cmpsb");
FORM(str_repe_cmpsq, "repe cmpsq");
FORM(str_repne_cmpsw, "repne cmpsw");
FORM(str_std_repe_cmpsb, "std\n\trepe cmpsb\n\tcld");

struct str_case {
	const char *text;
	void (*fn)(void);
	int si_off, di_off;	/* from mem; -1: the register is not used */
	long rcx;
	int rax_from;		/* rax = the 8 bytes at this offset, or -1: 0 */
	int equal;		/* bytes at di_off made equal to si_off's */
	int scan_end;		/* for scas: bytes from di_off the same as rax's low byte */
};

/*
 * Runs that cross 64-byte blocks and the page boundary at 4096.  The fill
 * repeats every 256 bytes: compared ranges sit at distances that are no
 * multiple of 256, so they differ wherever a case does not make them equal.
 */
static const struct str_case str_cases[] = {
	{ "lodsb", str_lodsb, 1024, -1, 0, -1, 0, 0 },
	{ "lodsw", str_lodsw, 1026, -1, 0, -1, 0, 0 },
	{ "lodsl", str_lodsl, 1030, -1, 0, -1, 0, 0 },
	{ "lodsq", str_lodsq, 4092, -1, 0, -1, 0, 0 },
	{ "rep lodsb, 300 bytes", str_rep_lodsb, 3900, -1, 300, -1, 0, 0 },
	{ "scasb", str_scasb, -1, 1024, 0, 1024, 0, 0 },
	{ "repne scasb, found after 201", str_repne_scasb, -1, 3900, 1000, 4100, 0, 0 },
	{ "repne scasb, not found in 150", str_repne_scasb, -1, 1024, 150, 3000, 0, 0 },
	{ "repe scasb, 130 the same", str_repe_scasb, -1, 1000, 400, 1000, 0, 130 },
	{ "repne scasl, found after 40", str_repne_scasl, -1, 1024, 100, 1184, 0, 0 },
	{ "repe scasq, rcx runs out", str_repe_scasq, -1, 1024, 20, 1024, 0, 200 },
	{ "std; repne scasb, found 90 back", str_std_repne_scasb, -1, 4150, 500, 4060, 0, 0 },
	{ "cmpsb", str_cmpsb, 1024, 6200, 0, -1, 1, 0 },
	{ "repe cmpsb, 300 equal", str_repe_cmpsb, 3900, 5000, 1000, -1, 300, 0 },
	{ "repe cmpsb, rcx runs out", str_repe_cmpsb, 1024, 6200, 256, -1, 300, 0 },
	{ "repe cmpsq, 33 equal", str_repe_cmpsq, 1024, 6200, 100, -1, 264, 0 },
	{ "repne cmpsw, first equal at 50", str_repne_cmpsw, 1024, 6200, 200, -1, 0, 0 },
	{ "std; repe cmpsb, 100 equal", str_std_repe_cmpsb, 4150, 7000, 400, -1, 0, 0 },
};

/* The memory a case starts from: the fill, then its equal runs. */
static void str_setup(const struct str_case *c)
{
	fill();
	if (c->equal)
		memcpy(mem + c->di_off, mem + c->si_off, c->equal);
	if (c->scan_end)
		memset(mem + c->di_off, mem[c->rax_from], c->scan_end);
	if (c->fn == str_repne_cmpsw)	/* the 50th word of each the same */
		memcpy(mem + c->di_off + 98, mem + c->si_off + 98, 2);
	if (c->fn == str_std_repe_cmpsb)	/* 100 equal bytes, going down */
		memcpy(mem + c->di_off - 99, mem + c->si_off - 99, 100);
}

static void str_regs(const struct str_case *c, struct cpu *cpu, int versioned)
{
	memset(cpu, 0, sizeof(*cpu));
	cpu->flags = FLAGS_IN & ~0x400UL;
	if (c->si_off >= 0)
		cpu->r[RSI] = (uintptr_t)(versioned ? adi_make_ptr(mem + c->si_off, V_GOOD) :
					  mem + c->si_off);
	if (c->di_off >= 0)
		cpu->r[RDI] = (uintptr_t)(versioned ? adi_make_ptr(mem + c->di_off, V_GOOD) :
					  mem + c->di_off);
	cpu->r[RCX] = c->rcx;
	if (c->rax_from >= 0)
		memcpy(&cpu->r[RAX], mem + c->rax_from, 8);
	else
		cpu->r[RAX] = 0x8080808080808080ULL;
}

static void test_strings(void)
{
	static char want_mem[2 * PAGE];
	uint64_t version = (uint64_t)V_GOOD << 60;

	for (size_t i = 0; i < sizeof(str_cases) / sizeof(str_cases[0]); i++) {
		const struct str_case *c = &str_cases[i];
		struct cpu want, got;
		long before, elements;
		char why[160] = "as on plain memory";

		str_setup(c);
		str_regs(c, &want, 0);
		run_form(&want, c->fn);
		memcpy(want_mem, mem, sizeof(want_mem));
		if (c->si_off >= 0)
			want.r[RSI] |= version;
		if (c->di_off >= 0)
			want.r[RDI] |= version;
		/* The elements the CPU did: one, or what rcx counted down. */
		elements = c->rcx ? c->rcx - (long)want.r[RCX] : 1;

		str_setup(c);
		str_regs(c, &got, 1);
		before = adi_counter("emulated");
		run_form(&got, c->fn);
		for (int r = 0; r < 16; r++) {
			if (r != RSP && got.r[r] != want.r[r]) {
				snprintf(why, sizeof(why), "%s got %#lx, want %#lx", reg_name[r],
					 (unsigned long)got.r[r], (unsigned long)want.r[r]);
				break;
			}
		}
		if (!strcmp(why, "as on plain memory") && ((got.flags ^ want.flags) & FLAGS_COMPARED))
			snprintf(why, sizeof(why), "flags got %#lx, want %#lx",
				 (unsigned long)(got.flags & FLAGS_COMPARED),
				 (unsigned long)(want.flags & FLAGS_COMPARED));
		if (!strcmp(why, "as on plain memory") && memcmp(mem, want_mem, sizeof(want_mem)))
			snprintf(why, sizeof(why), "memory changed");
		tap_ok(!strcmp(why, "as on plain memory"), "%s (%ld elements): registers, flags "
		       "and memory (%s)", c->text, elements, why);
		if (before >= 0)
			tap_eq_long(adi_counter("emulated") - before, elements,
				    "%s: every element done by the handler (emulated count)", c->text);
	}
}

/*
 * A repe cmpsb over equal bytes meets a block of another version in its
 * fourth block: the SIGSEGV names that block, and the handler sees rsi,
 * rdi and rcx at that element, as single-stepping left them.
 */
static void test_string_mismatch(void)
{
	char *src = adi_make_ptr(mem + 1024, V_GOOD), *dst = adi_make_ptr(mem + 5120, V_GOOD);
	struct cpu c;
	int sig;

	fill();
	memcpy(mem + 5120, mem + 1024, 512);
	if (adi_set_version(mem + 5120 + 192, 64, V_GOOD + 2)) {
		tap_ok(0, "repe cmpsb into a block of another version: setting its version: %s",
		       strerror(errno));
		return;
	}
	memset(&c, 0, sizeof(c));
	c.flags = FLAGS_IN & ~0x400UL;
	c.r[RSI] = (uintptr_t)src;
	c.r[RDI] = (uintptr_t)dst;
	c.r[RCX] = 512;
	sig = TRY(run_form(&c, str_repe_cmpsb));
	tap_eq_long(sig, SIGSEGV, "repe cmpsb into a block of another version: signal");
	tap_eq_long(caught.code, SEGV_ADIPERR, "repe cmpsb into a block of another version: "
		    "si_code (SEGV_ADIPERR)");
	tap_eq_long((long)caught.addr, (long)(dst + 192),
		    "repe cmpsb into a block of another version: si_addr is that block");
	tap_eq_long(caught.gregs[REG_RCX], 512 - 192,
		    "repe cmpsb into a block of another version: rcx at that element");
	tap_eq_long(caught.gregs[REG_RSI], (long)(src + 192),
		    "repe cmpsb into a block of another version: rsi at that element, versioned");
	tap_eq_long(caught.gregs[REG_RDI], (long)(dst + 192),
		    "repe cmpsb into a block of another version: rdi at that element, versioned");
	adi_set_version(mem + 5120 + 192, 64, V_GOOD);
}

/*
 * repne scasb that runs into a PROT_NONE page: the CPU faults on the first
 * byte there, through the plain pointer and through the versioned one,
 * with the same code, address and rcx.
 */
static void test_string_fault(void)
{
	struct cpu c;
	struct caught plain;
	int sig;

	fill();
	memset(mem + 4000, 1, 96);
	if (mprotect(mem + PAGE, PAGE, PROT_NONE | PROT_ADI)) {
		tap_ok(0, "repne scasb into PROT_NONE: mprotect: %s", strerror(errno));
		return;
	}
	for (int versioned = 0; versioned < 2; versioned++) {
		memset(&c, 0, sizeof(c));
		c.flags = FLAGS_IN & ~0x400UL;
		c.r[RDI] = (uintptr_t)(versioned ? adi_make_ptr(mem + 4000, V_GOOD) : mem + 4000);
		c.r[RCX] = 300;
		c.r[RAX] = 0;		/* no 0 in the scanned bytes */
		sig = TRY(run_form(&c, str_repne_scasb));
		if (!versioned) {
			plain = caught;
			adi_expect_code(SEGV_ACCERR, "repne scasb into PROT_NONE, plain pointer");
			continue;
		}
		tap_ok(sig == plain.signo && caught.code == plain.code &&
		       caught.addr == plain.addr && caught.rip == plain.rip,
		       "repne scasb into PROT_NONE, versioned: same fault (got signal %d code %d "
		       "addr %p ip %#lx, want %d %d %p %#lx)", sig, caught.code, caught.addr,
		       caught.rip, plain.signo, plain.code, plain.addr, plain.rip);
		tap_eq_long(caught.gregs[REG_RCX], plain.gregs[REG_RCX],
			    "repne scasb into PROT_NONE, versioned: rcx as the plain run's");
		tap_eq_long(caught.gregs[REG_RDI],
			    plain.gregs[REG_RDI] | (long)((uint64_t)V_GOOD << 60),
			    "repne scasb into PROT_NONE, versioned: rdi as the plain run's, versioned");
	}
	mprotect(mem + PAGE, PAGE, PROT_READ | PROT_WRITE | PROT_ADI);
}

/* ---- faults: the CPU raises them itself ---------------------------------- */

FORM(fault_store, "movl %ecx, (%rbx)");
FORM(fault_load, "movq (%rbx), %rcx");
/* Its load succeeds, its store faults: nothing may change before the step. */
FORM(fault_alu_store, "addl %ecx, (%rbx)");

/*
 * Run @fn with rbx = the plain pointer, then with the versioned one, on
 * memory made inaccessible by @protect; both must raise the same signal,
 * code, address and IP, and the handler must see rbx with its version.
 */
static void compare_fault(const char *what, void (*fn)(void), int (*protect)(void *), int want_code)
{
	void *vptr = adi_make_ptr(mem + BASE, V_GOOD);
	struct caught plain;
	struct cpu c;
	long before;
	int sig;

	fill();
	if (protect(mem)) {
		tap_skip(strerror(errno), "%s: same fault as the CPU's", what);
		return;
	}
	memset(&c, 0, sizeof(c));
	c.flags = FLAGS_IN;
	c.r[RBX] = (uintptr_t)(mem + BASE);
	sig = TRY(run_form(&c, fn));
	plain = caught;
	adi_expect_code(want_code, "%s: plain pointer faults", what);

	c.r[RBX] = (uintptr_t)vptr;
	before = adi_counter("emulated");
	sig = TRY(run_form(&c, fn));
	tap_ok(sig == plain.signo && caught.code == plain.code && caught.addr == plain.addr &&
	       caught.rip == plain.rip,
	       "%s: versioned pointer, same fault (got signal %d code %d addr %p ip %#lx, "
	       "want %d %d %p %#lx)", what, sig, caught.code, caught.addr, caught.rip,
	       plain.signo, plain.code, plain.addr, plain.rip);
	tap_eq_long(caught.gregs[REG_RBX], (long)vptr,
		    "%s: the handler sees the pointer with its version", what);
	if (before >= 0)
		tap_eq_long(adi_counter("emulated") - before, 0, "%s: not emulated", what);
	mprotect(mem, 2 * PAGE, PROT_READ | PROT_WRITE | PROT_ADI);
}

static int read_only(void *p) { return mprotect(p, 2 * PAGE, PROT_READ | PROT_ADI); }
static int no_access(void *p) { return mprotect(p, 2 * PAGE, PROT_NONE | PROT_ADI); }

/* Read-only and sealed (mseal(2), 6.10): mprotect() can no longer undo it. */
static int sealed_read_only(void *p)
{
	if (mprotect(p, 2 * PAGE, PROT_READ | PROT_ADI))
		return -1;
	return syscall(462 /* __NR_mseal */, p, 2 * PAGE, 0);
}

static int pkey_no_write(void *p)
{
	int key = syscall(SYS_pkey_alloc, 0, 0x2 /* PKEY_DISABLE_WRITE */);

	if (key < 0)
		return -1;
	return syscall(SYS_pkey_mprotect, p, 2 * PAGE, PROT_READ | PROT_WRITE | PROT_ADI, key);
}

static void test_faults(void)
{
	compare_fault("store to a read-only page", fault_store, read_only, SEGV_ACCERR);
	compare_fault("load from PROT_NONE", fault_load, no_access, SEGV_ACCERR);
	compare_fault("add into a read-only page", fault_alu_store, read_only, SEGV_ACCERR);
	compare_fault("store under a write-disabled protection key", fault_store, pkey_no_write,
		      4 /* SEGV_PKUERR */);
}

/* A group of its own: the sealed pages stay read-only in this child. */
static void test_sealed(void)
{
	compare_fault("store to a sealed read-only page", fault_store, sealed_read_only, SEGV_ACCERR);
}

/* ---- a hardware watchpoint sees the access ------------------------------- */

/*
 * QEMU's TCG (7.2) hangs the guest kernel when a single-stepped
 * instruction hits a data watchpoint: it raises a second #DB on the first
 * instruction of the #DB handler, with or without ADI (a program that sets
 * TF and stores to a watched word is enough).  Hardware reports both in
 * one #DB.
 */
static int under_tcg(void)
{
	unsigned int a, b, c, d;
	char sig[13] = "";

	__cpuid(1, a, b, c, d);
	if (!(c & (1U << 31)))
		return 0;
	__cpuid(0x40000000, a, b, c, d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	return !strcmp(sig, "TCGTCGTCGTCG");
}

/* A user-only write watchpoint on 4 bytes at @addr, or -1. */
static int watch(void *addr)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(attr),
		.bp_type = HW_BREAKPOINT_W,
		.bp_addr = (uintptr_t)addr,
		.bp_len = HW_BREAKPOINT_LEN_4,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static long hits(int fd)
{
	uint64_t n;

	return read(fd, &n, sizeof(n)) == sizeof(n) ? (long)n : -1;
}

/* Store ecx through rbx = @ptr. */
static void store_through(void *ptr, uint32_t value)
{
	struct cpu c;

	memset(&c, 0, sizeof(c));
	c.flags = FLAGS_IN;
	c.r[RBX] = (uintptr_t)ptr;
	c.r[RCX] = value;
	run_form(&c, fault_store);
}

static void test_watchpoint(void)
{
	void *vptr = adi_make_ptr(mem + BASE, V_GOOD);
	long before;
	int fd;

	/* Armed elsewhere: the handler leaves the access to the CPU. */
	fd = watch(mem + BASE + 512);
	if (fd < 0) {
		tap_skip(strerror(errno), "watchpoint: the CPU makes the access while one is armed");
		return;
	}
	before = adi_counter("emulated");
	store_through(vptr, 0x5a5a5a5a);
	if (before >= 0)
		tap_eq_long(adi_counter("emulated") - before, 0,
			    "watchpoint: with one armed (elsewhere) the CPU makes the access");
	tap_eq_long(*(uint32_t *)(mem + BASE), 0x5a5a5a5a, "watchpoint: and the store happened");
	tap_eq_long(hits(fd), 0, "watchpoint: elsewhere, not hit");
	close(fd);

	/* On the word: the CPU's access, under single-step, hits it. */
	if (under_tcg()) {
		tap_skip("QEMU TCG hangs on a single-step that hits a watchpoint",
			 "watchpoint: a store through the versioned pointer hits it");
		return;
	}
	fd = watch(mem + BASE);
	store_through(mem + BASE, 1);
	tap_eq_long(hits(fd), 1, "watchpoint: a store through the plain pointer hits it (the control)");
	store_through(vptr, 2);
	tap_eq_long(hits(fd), 2, "watchpoint: a store through the versioned pointer hits it");
	close(fd);
}

/* ---- a program single-stepping itself ------------------------------------ */

#define MAX_TRAPS 64
static unsigned long trap_ip[MAX_TRAPS];
static int trap_code[MAX_TRAPS];
static volatile int ntraps;

/* Record where each single-step stops; stop tracing once the form returned. */
static void trap_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	unsigned long ip = uc->uc_mcontext.gregs[REG_RIP];

	(void)sig;
	if (ntraps < MAX_TRAPS) {
		trap_ip[ntraps] = ip;
		trap_code[ntraps] = si->si_code;
		ntraps++;
	}
	if (ip == (unsigned long)run_form_back || ntraps >= MAX_TRAPS)
		uc->uc_mcontext.gregs[REG_EFL] &= ~X86_TF;
}

static int trace_form(void (*fn)(void), void *ptr, unsigned long *ip, int *code)
{
	struct sigaction sa = { .sa_sigaction = trap_handler, .sa_flags = SA_SIGINFO };
	struct cpu c;
	int n;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, NULL);
	memset(&c, 0, sizeof(c));
	c.flags = FLAGS_IN | X86_TF;
	c.r[RAX] = c.r[RBX] = (uintptr_t)ptr;
	ntraps = 0;
	run_form(&c, fn);
	n = ntraps;
	memcpy(ip, trap_ip, sizeof(trap_ip));
	memcpy(code, trap_code, sizeof(trap_code));
	return n;
}

FORM(tf_load, "movl (%rbx), %ecx");
FORM(tf_self_store, "movq %rax, (%rax)");
FORM(tf_alu, "addq (%rax), %rcx");
FORM(tf_stepped, "imulq (%rax), %rcx");

static void test_single_step(void)
{
	static const struct { const char *text; void (*fn)(void); } cases[] = {
		{ "movl (%rbx), %ecx", tf_load },
		{ "movq %rax, (%rax)", tf_self_store },
		{ "addq (%rax), %rcx", tf_alu },
		{ "imulq (%rax), %rcx (stepped)", tf_stepped },
	};
	unsigned long want_ip[MAX_TRAPS], got_ip[MAX_TRAPS];
	int want_code[MAX_TRAPS], got_code[MAX_TRAPS];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int want, got, first_diff = -1;

		fill();
		want = trace_form(cases[i].fn, mem + BASE, want_ip, want_code);
		fill();
		got = trace_form(cases[i].fn, adi_make_ptr(mem + BASE, V_GOOD), got_ip, got_code);
		for (int j = 0; j < want && j < got && first_diff < 0; j++)
			if (got_ip[j] != want_ip[j] || got_code[j] != want_code[j])
				first_diff = j;
		tap_eq_long(got, want, "TF, %s: as many single-step traps as on plain memory",
			    cases[i].text);
		tap_ok(want > 2, "TF, %s: the plain run traps more than twice (got %d, want > 2)",
		       cases[i].text, want);
		tap_ok(first_diff < 0,
		       "TF, %s: each trap at the same IP with the same code (first difference: %d, "
		       "got ip %#lx code %d, want ip %#lx code %d)", cases[i].text, first_diff,
		       first_diff < 0 ? 0 : got_ip[first_diff], first_diff < 0 ? 0 : got_code[first_diff],
		       first_diff < 0 ? 0 : want_ip[first_diff], first_diff < 0 ? 0 : want_code[first_diff]);
	}
}

/* ---- an emulated access keeps the version paths on ---------------------- */

/*
 * In a fresh process (its own mm) of ADI memory without versions: one
 * checked load, which the handler does, then a system call with the
 * versioned pointer.  Writes "paths_on read-result errno" to fd 1.
 */
static int fresh_process(void)
{
	char *p = adi_map(PAGE), *vptr = adi_make_ptr(p, 3);
	int fds[2];
	ssize_t n;

	(void)*(volatile uint64_t *)vptr;
	if (pipe(fds) || write(fds[1], "abc", 3) != 3)
		return 1;
	n = read(fds[0], vptr, 3);
	printf("%ld %zd %d\n", adi_counter("paths_on"), n, n < 0 ? errno : 0);
	return 0;
}

static void test_paths_on(void)
{
	long on = -1, paths_on = -1, n = -1, err = -1;
	char out[64] = "";
	int i, fds[2];
	FILE *f;

	/* The programs before this one versioned memory: the paths go off ~1 s after. */
	for (i = 0; i < 50 && (on = adi_counter("paths_on")) > 0; i++)
		usleep(100 * 1000);
	if (on != 0) {
		tap_skip(on < 0 ? "no /sys/kernel/debug/adi/paths_on" : "another process keeps the paths on",
			 "paths on: a process whose only ADI use is an emulated load");
		return;
	}
	if (pipe(fds))
		return;
	if (!fork()) {
		dup2(fds[1], 1);
		execl("/proc/self/exe", "adi_emulate", "--fresh-process", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (f && fgets(out, sizeof(out), f))
		sscanf(out, "%ld %ld %ld", &paths_on, &n, &err);
	if (f)
		fclose(f);
	wait(NULL);
	tap_eq_long(paths_on, 1, "paths on: a process whose only checked access the handler did holds them on");
	tap_eq_long(n, 3, "paths on: and its system calls take the versioned pointer (read() errno %ld)", err);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--fresh-process"))
		return fresh_process();
	tap_init();
	/* First: nothing of this process may hold the paths on yet. */
	tap_group("emulate paths on", test_paths_on);
	mem = adi_map(2 * PAGE);
	must_set_version(mem, 2 * PAGE, V_GOOD);
	tap_group("emulate forms", test_forms);
	tap_group("emulate flags", test_flag_sweep);
	tap_group("emulate strings", test_strings);
	tap_group("emulate string mismatch", test_string_mismatch);
	tap_group("emulate string fault", test_string_fault);
	tap_group("emulate faults", test_faults);
	tap_group("emulate sealed", test_sealed);
	tap_group("emulate watchpoint", test_watchpoint);
	tap_group("emulate single-step", test_single_step);
	return tap_done();
}
