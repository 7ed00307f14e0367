// SPDX-License-Identifier: GPL-2.0
/*
 * Whole-vector SSE and AVX moves through a versioned pointer, against the
 * CPU.
 *
 * movups, movupd, movaps, movapd, movdqa, movdqu and their VEX forms (xmm
 * and ymm) through a matching versioned pointer are done by the #GP
 * handler (counted in "emulated"), with the register's own semantics: a
 * legacy SSE load leaves the upper half of the ymm register alone, a VEX
 * load of an xmm register zeroes it.  Each form runs twice from the same
 * register and memory contents, through a plain pointer (the CPU) and
 * through the versioned one; the whole ymm register and both pages of
 * memory must end the same, and the counter must say which way it went.
 * Then what the handler leaves to the CPU: an access that crosses a page
 * (stepped), a misaligned movaps (the CPU's #GP: SIGSEGV), a scalar movss
 * (stepped), and a mismatch (reported, the register unchanged).
 */
#include <stdio.h>
#include <string.h>

#include "adi_test.h"

#define V_GOOD	5
#define V_BAD	6
#define PAGE	4096
#define BASE	1024		/* where the pointer points: 32-byte aligned */

/* One form: run(p, in, out) loads the form's register from in[32], runs
 * the instruction on p, stores the register to out[32]. */
struct vform {
	const char *text;
	void (*run)(void *p, const void *in, void *out);
	int emulated;		/* done by the handler, not stepped */
};

#define VFORM(n, insn, reg)						\
	static void vform_##n(void *p, const void *in, void *out)	\
	{								\
		__asm__ volatile("vmovdqu (%1), %%ymm" #reg "\n\t"		\
			     insn "\n\t"				\
			     "vmovdqu %%ymm" #reg ", (%2)"		\
			     : : "r" (p), "r" (in), "r" (out)		\
			     : "xmm" #reg, "memory");			\
	}

#define VFORMS(F)							\
	/* legacy SSE: loads keep the ymm's upper half */		\
	F(1, "movdqu (%0), %%xmm5", 5, 1)				\
	F(2, "movdqu %%xmm5, 8(%0)", 5, 1)				\
	F(3, "movups 16(%0), %%xmm9", 9, 1)				\
	F(4, "movupd %%xmm3, 3(%0)", 3, 1)				\
	F(5, "movaps (%0), %%xmm1", 1, 1)				\
	F(6, "movapd %%xmm2, 32(%0)", 2, 1)				\
	F(7, "movdqa -16(%0), %%xmm15", 15, 1)			\
	F(8, "movdqa %%xmm0, 48(%0)", 0, 1)				\
	/* VEX: an xmm load zeroes the upper half */			\
	F(9, "vmovdqu (%0), %%xmm5", 5, 1)				\
	F(10, "vmovdqu 1(%0), %%ymm7", 7, 1)				\
	F(11, "vmovdqu %%ymm12, 8(%0)", 12, 1)			\
	F(12, "vmovaps (%0), %%ymm4", 4, 1)				\
	F(13, "vmovdqa %%xmm6, 16(%0)", 6, 1)			\
	F(14, "vmovups %%ymm14, 64(%0)", 14, 1)			\
	/* left to the CPU: across a page, a scalar move */		\
	F(15, "movdqu 3064(%0), %%xmm5", 5, 0)			\
	F(16, "vmovdqu %%ymm3, 3056(%0)", 3, 0)			\
	F(17, "movss 4(%0), %%xmm8", 8, 0)

#define DEFINE_VFORM(n, insn, reg, emulated) VFORM(n, insn, reg)
VFORMS(DEFINE_VFORM)

static const struct vform vforms[] = {
#define VFORM_ENTRY(n, insn, reg, emulated) { insn, vform_##n, emulated },
	VFORMS(VFORM_ENTRY)
};

static char *mem;	/* 2 pages of ADI memory, version V_GOOD */

static void fill(void)
{
	for (int i = 0; i < 2 * PAGE; i++)
		mem[i] = (char)(i * 29 + 3);
}

static void reg_in(uint8_t in[32])
{
	for (int i = 0; i < 32; i++)
		in[i] = (uint8_t)(0xa0 + i);
}

static int have_avx(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx");
}

/* The form's asm text as a reader writes it: %%xmm5 as %xmm5, %0 as %ptr. */
static const char *shown(const char *text)
{
	static char buf[64];
	size_t n = 0;

	for (const char *c = text; *c && n + 4 < sizeof(buf); c++) {
		if (c[0] == '%' && c[1] == '%')
			continue;
		if (c[0] == '%' && c[1] == '0') {
			memcpy(buf + n, "%ptr", 4);
			n += 4;
			c++;
			continue;
		}
		buf[n++] = *c;
	}
	buf[n] = 0;
	return buf;
}

static void test_vforms(void)
{
	static char want_mem[2 * PAGE];
	uint8_t in[32] __attribute__((aligned(32))), want[32], got[32];
	int avx = have_avx();

	for (size_t i = 0; i < sizeof(vforms) / sizeof(vforms[0]); i++) {
		const struct vform *f = &vforms[i];
		const char *t = shown(f->text);
		long before;
		int sig, diff = -1;

		/* Every form loads and stores the whole ymm register around it. */
		if (!avx) {
			tap_skip("no AVX on this CPU", "%s", t);
			continue;
		}
		reg_in(in);
		fill();
		f->run(mem + BASE, in, want);
		memcpy(want_mem, mem, sizeof(want_mem));

		fill();
		memset(got, 0, sizeof(got));
		before = adi_counter("emulated");
		sig = TRY(f->run(adi_make_ptr(mem + BASE, V_GOOD), in, got));
		adi_expect_no_signal(sig, "%s: no signal through the matching pointer", t);
		tap_eq_mem(got, want, 32, "%s: the whole ymm register as the CPU leaves it", t);
		for (int j = 0; j < 2 * PAGE && diff < 0; j++)
			if (mem[j] != want_mem[j])
				diff = j;
		tap_eq_long(diff, -1, "%s: memory as the CPU leaves it (first byte that "
			    "differs, -1: none)", t);
		if (before >= 0)
			tap_eq_long(adi_counter("emulated") - before, f->emulated,
				    "%s: %s (emulated count)", t,
				    f->emulated ? "done by the handler" : "stepped by the CPU");
		else
			tap_skip("no /sys/kernel/debug/adi/emulated", "%s: emulated count",
				 t);
	}
}

static void misaligned_movaps(void *p)
{
	__asm__ volatile("movaps 8(%0), %%xmm5" : : "r" (p) : "xmm5", "memory");
}

/*
 * movaps at an address that is not 16-byte aligned: the CPU raises #GP;
 * so must the versioned pointer's, after the version check (not done by
 * the handler, which would load it).
 */
static void test_misaligned(void)
{
	long before = adi_counter("emulated");
	int sig_plain, sig, code_plain;

	sig_plain = TRY(misaligned_movaps(mem + BASE));
	code_plain = caught.code;
	tap_eq_long(sig_plain, SIGSEGV, "misaligned movaps, plain pointer: the CPU's SIGSEGV");
	sig = TRY(misaligned_movaps(adi_make_ptr(mem + BASE, V_GOOD)));
	tap_eq_long(sig, SIGSEGV, "misaligned movaps, versioned pointer: SIGSEGV too");
	tap_eq_long(caught.code, code_plain, "misaligned movaps, versioned pointer: "
		    "the same si_code as the plain pointer's");
	if (before >= 0)
		tap_eq_long(adi_counter("emulated") - before, 0,
			    "misaligned movaps: not done by the handler");
}

static void load_xmm5(void *p)
{
	__asm__ volatile("movdqu (%0), %%xmm5" : : "r" (p) : "xmm5", "memory");
}

/* A mismatch is reported, at the versioned address, before anything moves. */
static void test_mismatch(void)
{
	void *bad = adi_make_ptr(mem + BASE, V_BAD);

	TRY(load_xmm5(bad));
	adi_expect_segv(SEGV_ADIPERR, bad, "movdqu through a mismatching pointer");
}

int main(void)
{
	tap_init();
	mem = adi_map(2 * PAGE);
	must_set_version(mem, 2 * PAGE, V_GOOD);
	tap_group("vector forms", test_vforms);
	tap_group("vector misaligned", test_misaligned);
	tap_group("vector mismatch", test_mismatch);
	return tap_done();
}
