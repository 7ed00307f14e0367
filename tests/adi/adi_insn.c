// SPDX-License-Identifier: GPL-2.0
/*
 * Every instruction class the ADI checker must know, through inline asm:
 * with the matching version the data must be right; with another version
 * the right signal, code and address, and memory unchanged.
 */
#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adi_test.h"

#define V_GOOD	5
#define V_BAD	6

static char *mem;	/* 2 pages; blocks 0-31 version 5, the rest 0 */

static void *plain(size_t off) { return mem + off; }
static void *good(size_t off) { return adi_make_ptr(mem + off, V_GOOD); }
static void *bad(size_t off) { return adi_make_ptr(mem + off, V_BAD); }

/* The byte fill() writes at offset @i. */
static char pattern(int i)
{
	return (char)(i * 7 + 1);
}

/* What fill() wrote, unversioned: the want side of whole-range compares. */
static char image[8192];

/*
 * Each group runs in a child; it versions its own copy of the memory
 * (fill() writes, which copies the pages on write after fork).
 */
static void fill(void)
{
	for (int i = 0; i < 8192; i++)
		image[i] = mem[i] = pattern(i);
	must_set_version(mem, 2048, V_GOOD);
}

/*
 * Nothing of the 8192 bytes changed since fill(), in the style of tap.h's
 * tap_eq_mem(): a failure names the first byte that did.
 */
__attribute__((format(printf, 1, 2)))
static int expect_unchanged(const char *fmt, ...)
{
	char tail[128];
	va_list ap;
	int ok;

	ok = tap_mem_diff(tail, sizeof(tail), mem, image, sizeof(image)) < 0;
	va_start(ap, fmt);
	ok = tap_ok_tail(ok, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/*
 * A load through good() must give what the same code reads through a plain
 * pointer (unchecked); a load through bad() must be caught.
 */
#define CHECK_LOAD(name, type, expr_plain, expr_good, expr_bad, off)		\
do {										\
	type v = 0, want;							\
	int sig;								\
	fill();									\
	want = (expr_plain);							\
	fill();									\
	sig = TRY(v = (expr_good));						\
	adi_expect_no_signal(sig, "%s: matching version load: no signal", name); \
	tap_eq_hex((uint64_t)v, (uint64_t)want, "%s: matching version loads the data", \
		   name);							\
	fill();									\
	sig = TRY(v = (expr_bad));						\
	adi_expect_segv(SEGV_ADIPERR, bad(off),					\
			"%s: mismatch is SEGV_ADIPERR at the data address", name); \
	expect_unchanged("%s: mismatching load leaves memory unchanged", name);	\
} while (0)

/*
 * A store: matching writes (@got, read after it, is @want); mismatching
 * is caught and writes nothing.
 */
#define CHECK_STORE(name, stmt_good, stmt_bad, got, want)			\
do {										\
	int sig;								\
	fill();									\
	sig = TRY(stmt_good);							\
	adi_expect_no_signal(sig, "%s: matching version store: no signal", name); \
	tap_eq_hex((uint64_t)(got), (uint64_t)(want), "%s: matching version stores", name); \
	fill();									\
	sig = TRY(stmt_bad);							\
	adi_expect_derr("%s: mismatch is SEGV_ADIDERR at the instruction", name); \
	expect_unchanged("%s: mismatching store leaves memory unchanged", name); \
} while (0)

static uint8_t ld_movzb(void *p) { uint32_t v; __asm__ volatile("movzbl (%1), %0" : "=r"(v) : "r"(p) : "memory"); return v; }
static uint16_t ld_movzw(void *p) { uint32_t v; __asm__ volatile("movzwl (%1), %0" : "=r"(v) : "r"(p) : "memory"); return v; }
static uint32_t ld_movl(void *p) { uint32_t v; __asm__ volatile("movl (%1), %0" : "=r"(v) : "r"(p) : "memory"); return v; }
static uint64_t ld_movq(void *p) { uint64_t v; __asm__ volatile("movq (%1), %0" : "=r"(v) : "r"(p) : "memory"); return v; }
static int64_t ld_movsbq(void *p) { int64_t v; __asm__ volatile("movsbq (%1), %0" : "=r"(v) : "r"(p) : "memory"); return v; }
static int64_t ld_movslq(void *p) { int64_t v; __asm__ volatile("movslq (%1), %0" : "=r"(v) : "r"(p) : "memory"); return v; }

/* The destination is the base register: the version must not come back. */
static uint64_t ld_self(void *p)
{
	uint64_t v = (uint64_t)p;

	__asm__ volatile("movq 8(%0), %0" : "+r"(v) : : "memory");
	return v;
}

/* The version is in the index register. */
static uint64_t ld_index(void *p)
{
	uint64_t v, off = 16;

	__asm__ volatile("movq (%2,%1,1), %0" : "=r"(v) : "r"(p), "r"(off) : "memory");
	return v;
}

/* rbp as the base: #SS on hardware, #GP under TCG; both must work. */
static uint64_t ld_rbp(void *p)
{
	uint64_t v;

	__asm__ volatile("lea -128(%%rsp), %%rsp\n\t"
		     "push %%rbp\n\t"
		     "mov %1, %%rbp\n\t"
		     "movq 24(%%rbp), %0\n\t"
		     "pop %%rbp\n\t"
		     "lea 128(%%rsp), %%rsp"
		     : "=r"(v) : "r"(p) : "memory");
	return v;
}

static uint64_t alu_add(void *p) { uint64_t v = 3; __asm__ volatile("addq (%1), %0" : "+r"(v) : "r"(p) : "memory", "cc"); return v; }
static uint64_t alu_cmp(void *p) { uint8_t e; __asm__ volatile("cmpq $0, (%1); sete %0" : "=r"(e) : "r"(p) : "memory", "cc"); return e; }
static uint64_t alu_test(void *p) { uint8_t z; __asm__ volatile("testl $0xff, (%1); setz %0" : "=r"(z) : "r"(p) : "memory", "cc"); return z; }
static uint64_t sse_load(void *p)
{
	uint64_t lo;

	__asm__ volatile("movdqu (%1), %%xmm0; movq %%xmm0, %0" : "=r"(lo) : "r"(p) : "memory", "xmm0");
	return lo;
}
static uint64_t avx_load(void *p)
{
	uint64_t lo;

	__asm__ volatile("vmovdqu (%1), %%ymm0; vmovq %%xmm0, %0; vzeroupper"
		     : "=r"(lo) : "r"(p) : "memory", "xmm0");
	return lo;
}
static uint64_t avx_cmp(void *p)
{
	uint32_t mask;

	__asm__ volatile("vpxor %%xmm1, %%xmm1, %%xmm1; vpcmpeqb (%1), %%ymm1, %%ymm0;"
		     "vpmovmskb %%ymm0, %0; vzeroupper"
		     : "=r"(mask) : "r"(p) : "memory", "xmm0", "xmm1");
	return mask;
}

/* What OpenSSL's libcrypto runs on its fast paths (series patch 47). */
static uint64_t ld_adcx(void *p)
{
	uint64_t v;

	/* The xor clears CF: v = 0 + mem + 0. */
	__asm__ volatile("xorl %k0, %k0\n\tadcx (%1), %0" : "=&r"(v) : "r"(p) : "memory", "cc");
	return v;
}

static uint64_t ld_adox(void *p)
{
	uint64_t v;

	/* The xor clears OF. */
	__asm__ volatile("xorl %k0, %k0\n\tadox (%1), %0" : "=&r"(v) : "r"(p) : "memory", "cc");
	return v;
}

/* aesenclast of a zero state: 0x63 in every byte (S-box of 0) ^ m128. */
static uint64_t ld_aesenclast(void *p)
{
	uint64_t v;

	__asm__ volatile("pxor %%xmm0, %%xmm0\n\taesenclast (%1), %%xmm0\n\tmovq %%xmm0, %0"
			 : "=r"(v) : "r"(p) : "memory", "xmm0");
	return v;
}

static uint32_t cpuid_bit(unsigned int leaf, int reg, unsigned int bit)
{
	unsigned int r[4] = { 0 };

	__cpuid_count(leaf, 0, r[0], r[1], r[2], r[3]);
	return (r[reg] >> bit) & 1;
}

static void test_crypto_loads(void)
{
	if (cpuid_bit(7, 1, 19)) {	/* CPUID.7:EBX.ADX */
		CHECK_LOAD("adcx", uint64_t, ld_adcx(plain(40)), ld_adcx(good(40)), ld_adcx(bad(40)), 40);
		CHECK_LOAD("adox", uint64_t, ld_adox(plain(48)), ld_adox(good(48)), ld_adox(bad(48)), 48);
	} else {
		tap_skip("no ADX", "adcx, adox");
	}
	if (cpuid_bit(1, 2, 25))	/* CPUID.1:ECX.AES */
		CHECK_LOAD("aesenclast", uint64_t, ld_aesenclast(plain(128)),
			   ld_aesenclast(good(128)), ld_aesenclast(bad(128)), 128);
	else
		tap_skip("no AES-NI", "aesenclast");
}

/* stmxcsr stores 4 bytes; clflush is checked as a 1-byte read. */
static void test_state_and_flush(void)
{
	uint32_t mxcsr;
	long before;
	int sig;

	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	CHECK_STORE("stmxcsr", __asm__ volatile("stmxcsr (%0)" : : "r"(good(60)) : "memory"),
		    __asm__ volatile("stmxcsr (%0)" : : "r"(bad(60)) : "memory"),
		    *(uint32_t *)(mem + 60), mxcsr);
	before = adi_counter("checks");
	sig = TRY(__asm__ volatile("clflush (%0)" : : "r"(good(200)) : "memory"));
	adi_expect_no_signal(sig, "clflush: matching version: no signal");
	/* QEMU's TCG does not raise #GP for clflush of a non-canonical address. */
	if (before >= 0 && adi_counter("checks") == before) {
		tap_skip("this CPU does not fault on clflush of a versioned pointer (QEMU TCG)",
			 "clflush: mismatch");
		return;
	}
	TRY(__asm__ volatile("clflush (%0)" : : "r"(bad(200)) : "memory"));
	adi_expect_segv(SEGV_ADIPERR, bad(200), "clflush: mismatch is SEGV_ADIPERR at the address");
}

static void test_loads(void)
{
	CHECK_LOAD("movzbl", uint8_t, ld_movzb(plain(63)), ld_movzb(good(63)), ld_movzb(bad(63)), 63);
	CHECK_LOAD("movzwl", uint16_t, ld_movzw(plain(62)), ld_movzw(good(62)), ld_movzw(bad(62)), 62);
	CHECK_LOAD("movl", uint32_t, ld_movl(plain(60)), ld_movl(good(60)), ld_movl(bad(60)), 60);
	CHECK_LOAD("movq", uint64_t, ld_movq(plain(56)), ld_movq(good(56)), ld_movq(bad(56)), 56);
	CHECK_LOAD("movsbq", int64_t, ld_movsbq(plain(64)), ld_movsbq(good(64)), ld_movsbq(bad(64)), 64);
	CHECK_LOAD("movslq", int64_t, ld_movslq(plain(128)), ld_movslq(good(128)), ld_movslq(bad(128)), 128);
	CHECK_LOAD("movq 8(%r),%r (base overwritten)", uint64_t, ld_self(plain(0)), ld_self(good(0)), ld_self(bad(0)), 8);
	CHECK_LOAD("movq (%r,%idx) (version in index)", uint64_t, ld_index(plain(0)), ld_index(good(0)), ld_index(bad(0)), 16);
	CHECK_LOAD("movq 24(%rbp) (#SS path)", uint64_t, ld_rbp(plain(0)), ld_rbp(good(0)), ld_rbp(bad(0)), 24);
	CHECK_LOAD("movdqu xmm (16 bytes)", uint64_t, sse_load(plain(32)), sse_load(good(32)), sse_load(bad(32)), 32);
	if (__builtin_cpu_supports("avx2"))
		CHECK_LOAD("vmovdqu ymm (32 bytes)", uint64_t, avx_load(plain(64)), avx_load(good(64)), avx_load(bad(64)), 64);
	else
		tap_skip("no AVX2", "vmovdqu ymm");
}

static void test_alu(void)
{
	uint64_t want, v = 0;
	int sig;

	fill();
	memcpy(&want, mem + 8, 8);
	sig = TRY(v = alu_add(good(8)));
	adi_expect_no_signal(sig, "add (mem), reg: matching: no signal");
	tap_eq_hex(v, want + 3, "add (mem), reg: matching: the sum");
	sig = TRY(v = alu_add(bad(8)));
	adi_expect_segv(SEGV_ADIPERR, bad(8), "add (mem), reg: mismatch caught");
	sig = TRY(v = alu_cmp(good(16)));
	adi_expect_no_signal(sig, "cmpq $0, (mem): matching: no signal");
	tap_eq_hex(v, 0, "cmpq $0, (mem): matching: sete after it (the word is not 0)");
	sig = TRY(v = alu_cmp(bad(16)));
	adi_expect_segv(SEGV_ADIPERR, bad(16), "cmpq $0, (mem): mismatch caught");
	sig = TRY(v = alu_test(good(24)));
	adi_expect_no_signal(sig, "testl (mem): matching: no signal");
	tap_eq_hex(v, (mem[24] & 0xff) == 0, "testl (mem): matching: setz after it");
	sig = TRY(v = alu_test(bad(24)));
	adi_expect_segv(SEGV_ADIPERR, bad(24), "testl (mem): mismatch caught");

	/* Read-modify-write instructions report as loads: precise. */
	CHECK_LOAD("incq (mem) result", uint64_t, *(uint64_t *)(mem + 40),
		   ({ __asm__ volatile("incq (%0)" : : "r"(good(40)) : "memory", "cc"); *(uint64_t *)(mem + 40) - 1; }),
		   ({ __asm__ volatile("incq (%0)" : : "r"(bad(40)) : "memory", "cc"); 0; }), 40);
	CHECK_LOAD("decl (mem) result", uint32_t, *(uint32_t *)(mem + 44),
		   ({ __asm__ volatile("decl (%0)" : : "r"(good(44)) : "memory", "cc"); *(uint32_t *)(mem + 44) + 1; }),
		   ({ __asm__ volatile("decl (%0)" : : "r"(bad(44)) : "memory", "cc"); 0; }), 44);
	CHECK_LOAD("addq reg, (mem) result", uint64_t, *(uint64_t *)(mem + 48),
		   ({ __asm__ volatile("addq %1, (%0)" : : "r"(good(48)), "r"(10UL) : "memory", "cc"); *(uint64_t *)(mem + 48) - 10; }),
		   ({ __asm__ volatile("addq %1, (%0)" : : "r"(bad(48)), "r"(10UL) : "memory", "cc"); 0; }), 48);
}

static void test_atomics(void)
{
	volatile uint64_t old = 0;
	uint64_t want;
	int sig;

	fill();
	memcpy(&want, mem + 32, 8);
	old = 1;
	sig = TRY({ uint64_t o = old; __asm__ volatile("lock xaddq %0, (%1)" : "+r"(o) : "r"(good(32)) : "memory", "cc"); old = o; });
	adi_expect_no_signal(sig, "lock xadd: matching: no signal");
	tap_eq_hex(old, want, "lock xadd: matching: the register gets the old value");
	tap_eq_hex(*(uint64_t *)(mem + 32), want + 1, "lock xadd: matching: memory gets the sum");
	fill();
	old = 1;
	sig = TRY({ uint64_t o = old; __asm__ volatile("lock xaddq %0, (%1)" : "+r"(o) : "r"(bad(32)) : "memory", "cc"); old = o; });
	adi_expect_segv(SEGV_ADIPERR, bad(32), "lock xadd: mismatch caught");
	expect_unchanged("lock xadd: mismatch leaves memory unchanged");

	fill();
	memcpy(&want, mem + 40, 8);
	{
		uint64_t expect = want, repl = 77;

		sig = TRY(__asm__ volatile("lock cmpxchgq %2, (%1)" : "+a"(expect) : "r"(good(40)), "r"(repl) : "memory", "cc"));
		adi_expect_no_signal(sig, "lock cmpxchg: matching: no signal");
		tap_eq_hex(*(uint64_t *)(mem + 40), 77, "lock cmpxchg: matching swaps");
		fill();
		expect = want;
		sig = TRY(__asm__ volatile("lock cmpxchgq %2, (%1)" : "+a"(expect) : "r"(bad(40)), "r"(repl) : "memory", "cc"));
		adi_expect_segv(SEGV_ADIPERR, bad(40), "lock cmpxchg: mismatch caught");
		expect_unchanged("lock cmpxchg: mismatch leaves memory unchanged");
	}
	{
		uint64_t lo, hi;

		(void)&lo;
		(void)&hi;
		fill();
		memcpy(&lo, mem + 48, 8);
		memcpy(&hi, mem + 56, 8);
		sig = TRY(__asm__ volatile("lock cmpxchg16b (%2)" : "+a"(lo), "+d"(hi)
				       : "r"(good(48)), "b"(1UL), "c"(2UL) : "memory", "cc"));
		adi_expect_no_signal(sig, "lock cmpxchg16b: matching: no signal");
		tap_eq_hex(*(uint64_t *)(mem + 48), 1,
			   "lock cmpxchg16b: matching swaps 16 bytes: the low quadword");
		tap_eq_hex(*(uint64_t *)(mem + 56), 2,
			   "lock cmpxchg16b: matching swaps 16 bytes: the high quadword");
		fill();
		memcpy(&lo, mem + 48, 8);
		memcpy(&hi, mem + 56, 8);
		sig = TRY(__asm__ volatile("lock cmpxchg16b (%2)" : "+a"(lo), "+d"(hi)
				       : "r"(bad(48)), "b"(1UL), "c"(2UL) : "memory", "cc"));
		adi_expect_segv(SEGV_ADIPERR, bad(48), "lock cmpxchg16b: mismatch caught");
		expect_unchanged("lock cmpxchg16b: mismatch leaves memory unchanged");
	}
}

static void test_stores(void)
{
	CHECK_STORE("movb", __asm__ volatile("movb $0x5a, (%0)" : : "r"(good(63)) : "memory"),
		    __asm__ volatile("movb $0x5a, (%0)" : : "r"(bad(63)) : "memory"),
		    (uint8_t)mem[63], 0x5a);
	CHECK_STORE("movw", __asm__ volatile("movw $0x5a5a, (%0)" : : "r"(good(62)) : "memory"),
		    __asm__ volatile("movw $0x5a5a, (%0)" : : "r"(bad(62)) : "memory"),
		    *(uint16_t *)(mem + 62), 0x5a5a);
	CHECK_STORE("movl", __asm__ volatile("movl $7, (%0)" : : "r"(good(60)) : "memory"),
		    __asm__ volatile("movl $7, (%0)" : : "r"(bad(60)) : "memory"),
		    *(uint32_t *)(mem + 60), 7);
	CHECK_STORE("movq", __asm__ volatile("movq %1, (%0)" : : "r"(good(8)), "r"(~0UL) : "memory"),
		    __asm__ volatile("movq %1, (%0)" : : "r"(bad(8)), "r"(~0UL) : "memory"),
		    *(uint64_t *)(mem + 8), ~0UL);
	CHECK_STORE("movdqu store (16 bytes)",
		    __asm__ volatile("pcmpeqb %%xmm0, %%xmm0; movdqu %%xmm0, (%0)"
				     : : "r"(good(16)) : "memory", "xmm0"),
		    __asm__ volatile("pcmpeqb %%xmm0, %%xmm0; movdqu %%xmm0, (%0)"
				     : : "r"(bad(16)) : "memory", "xmm0"),
		    *(uint64_t *)(mem + 24), ~0UL);
	if (__builtin_cpu_supports("avx2")) {
		CHECK_STORE("vmovdqu store (32 bytes)",
			    __asm__ volatile("vpcmpeqb %%ymm0, %%ymm0, %%ymm0;"
					     " vmovdqu %%ymm0, (%0); vzeroupper"
					     : : "r"(good(96)) : "memory", "xmm0"),
			    __asm__ volatile("vpcmpeqb %%ymm0, %%ymm0, %%ymm0;"
					     " vmovdqu %%ymm0, (%0); vzeroupper"
					     : : "r"(bad(96)) : "memory", "xmm0"),
			    *(uint64_t *)(mem + 120), ~0UL);
		CHECK_LOAD("vpcmpeqb ymm, m256", uint64_t, avx_cmp(plain(128)), avx_cmp(good(128)), avx_cmp(bad(128)), 128);
	} else {
		tap_skip("no AVX2", "vmovdqu store");
		tap_skip("no AVX2", "vpcmpeqb");
	}
}

static void test_strings(void)
{
	int sig;
	void *volatile d, *volatile s;
	volatile size_t n;

	/* rep movsb across many blocks, both versioned. */
	fill();
	d = good(1024);
	s = good(64);
	n = 900;
	sig = TRY(__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory"));
	adi_expect_no_signal(sig, "rep movsb: no signal");
	tap_eq_long(n, 0, "rep movsb: rcx = 0");
	tap_eq_hex((uint64_t)d, (uint64_t)good(1924),
		   "rep movsb: advances rdi by 900 keeping its version");
	tap_eq_hex((uint64_t)s, (uint64_t)good(964),
		   "rep movsb: advances rsi by 900 keeping its version");
	tap_eq_hex((uint8_t)mem[1024], (uint8_t)pattern(64), "rep movsb: copies the first byte");
	tap_eq_hex((uint8_t)mem[1923], (uint8_t)pattern(963), "rep movsb: copies the last byte");
	tap_eq_mem(mem + 1024, image + 64, 900, "rep movsb: copies all 900 bytes");
	fill();
	d = bad(1024);
	s = good(64);
	n = 900;
	sig = TRY(__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory"));
	adi_expect_derr("rep movsb: destination mismatch caught");
	expect_unchanged("rep movsb: destination mismatch: nothing copied");
	fill();
	d = good(1024);
	s = bad(64);
	n = 900;
	sig = TRY(__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory"));
	adi_expect_segv(SEGV_ADIPERR, bad(64), "rep movsb: source mismatch caught");
	expect_unchanged("rep movsb: source mismatch: nothing copied");
	/* The destination runs into block 32, given version 9 here. */
	fill();
	must_set_version(mem + 2048, 64, 9);
	d = good(1984);
	s = good(0);
	n = 128;
	sig = TRY(__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory"));
	adi_expect_derr("rep movsb: a mismatch in the middle of the range is caught");
	expect_unchanged("rep movsb: a mismatch in the middle of the range stops it all");
	must_set_version(mem + 2048, 64, 0);

	fill();
	d = good(200);
	n = 1000;
	sig = TRY(__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(0xab) : "memory"));
	adi_expect_no_signal(sig, "rep stosb: no signal");
	tap_eq_long(n, 0, "rep stosb: rcx = 0");
	tap_eq_hex((uint8_t)mem[200], 0xab, "rep stosb: fills exactly the range: the first byte");
	tap_eq_hex((uint8_t)mem[1199], 0xab, "rep stosb: fills exactly the range: the last byte");
	tap_eq_hex((uint8_t)mem[1200], (uint8_t)pattern(1200),
		   "rep stosb: fills exactly the range: the byte after it untouched");
	fill();
	d = bad(200);
	n = 1000;
	sig = TRY(__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(0xab) : "memory"));
	adi_expect_derr("rep stosb: mismatch caught");
	expect_unchanged("rep stosb: mismatch: nothing written");
	/* es:rdi cannot be overridden: an fs prefix changes nothing (fs is TLS). */
	fill();
	d = good(200);
	n = 100;
	sig = TRY(__asm__ volatile("fs rep stosb" : "+D"(d), "+c"(n) : "a"(0xcd) : "memory"));
	adi_expect_no_signal(sig, "fs rep stosb: the prefix does not apply to es:rdi: no signal");
	tap_eq_long(n, 0, "fs rep stosb: rcx = 0");
	tap_eq_hex((uint8_t)mem[200], 0xcd, "fs rep stosb: range filled: the first byte");
	tap_eq_hex((uint8_t)mem[299], 0xcd, "fs rep stosb: range filled: the last byte");
	tap_eq_hex((uint8_t)mem[300], (uint8_t)pattern(300),
		   "fs rep stosb: range filled: the byte after it untouched");

	fill();
	d = good(512);
	s = good(8);
	sig = TRY(__asm__ volatile("movsq" : "+D"(d), "+S"(s) : : "memory"));
	adi_expect_no_signal(sig, "movsq (no rep): no signal");
	tap_eq_hex(*(uint64_t *)(mem + 512), *(uint64_t *)(mem + 8),
		   "movsq (no rep): copies 8 bytes");
	tap_eq_hex((uint64_t)d, (uint64_t)good(520), "movsq (no rep): advances rdi by 8");
	tap_eq_hex((uint64_t)s, (uint64_t)good(16), "movsq (no rep): advances rsi by 8");
	fill();
	d = good(512);
	n = 4;
	sig = TRY(__asm__ volatile("rep stosq" : "+D"(d), "+c"(n) : "a"(0x0102030405060708UL) : "memory"));
	adi_expect_no_signal(sig, "rep stosq: no signal");
	tap_eq_hex(*(uint64_t *)(mem + 536), 0x0102030405060708UL,
		   "rep stosq: 8-byte elements: the last one stored");
	tap_eq_hex((uint64_t)d, (uint64_t)good(544), "rep stosq: advances rdi by 4 * 8");
	{
		volatile uint64_t v = 0;

		fill();
		s = good(256);
		sig = TRY(__asm__ volatile("lodsq" : "=a"(v), "+S"(s) : : "memory"));
		adi_expect_no_signal(sig, "lodsq (stepped): no signal");
		tap_eq_hex(v, *(uint64_t *)(mem + 256), "lodsq (stepped): loads the word");
		tap_eq_hex((uint64_t)s, (uint64_t)good(264),
			   "lodsq (stepped): advances rsi keeping its version");
	}
}

static void test_crossing(void)
{
	volatile uint64_t v = 0;

	/* 8 bytes at offset 60 of the last version-5 block: 4 in the next. */
	fill();
	must_set_version(mem + 2048, 64, 9);
	TRY(v = ld_movq(good(2044)));
	adi_expect_segv(SEGV_ADIPERR, good(2048),
			"a load straddling into a block of another version: caught at that block");
	(void)v;
}

/*
 * The register that carries the version is also the data: a pointer
 * stored through itself (head->next = head) and compared with the word it
 * points to (head->next == head).  The stored and compared value must be
 * the whole pointer, version included.
 */
#define ARITH_FLAGS 0x8d5UL	/* CF PF AF ZF SF OF */

static unsigned long flags_cmp_mr(void *p)
{
	unsigned long fl;

	__asm__ volatile("cmpq %1, (%1); pushfq; popq %0" : "=r"(fl) : "r"(p) : "memory", "cc");
	return fl & ARITH_FLAGS;
}

static unsigned long flags_cmp_rm(void *p)
{
	unsigned long fl;

	__asm__ volatile("cmpq (%1), %1; pushfq; popq %0" : "=r"(fl) : "r"(p) : "memory", "cc");
	return fl & ARITH_FLAGS;
}

static unsigned long flags_test(void *p)
{
	unsigned long fl;

	__asm__ volatile("testq %1, (%1); pushfq; popq %0" : "=r"(fl) : "r"(p) : "memory", "cc");
	return fl & ARITH_FLAGS;
}

/* The same operations on plain registers: what the flags must be. */
static unsigned long want_flags(uint64_t a, uint64_t b, int op)
{
	unsigned long fl;

	if (op == 't')
		__asm__ volatile("testq %2, %1; pushfq; popq %0" : "=r"(fl) : "r"(a), "r"(b) : "cc");
	else
		__asm__ volatile("cmpq %2, %1; pushfq; popq %0" : "=r"(fl) : "r"(a), "r"(b) : "cc");
	return fl & ARITH_FLAGS;
}

static void test_self_operand(void)
{
	uint64_t *word = (uint64_t *)(mem + 320);
	void *p = good(320), *q = good(328);
	uint64_t probe[] = { (uint64_t)p, (uint64_t)adi_strip_ptr(p), (uint64_t)p + 1, ~0UL, 0 };
	int sig, ok_mr = 1, ok_rm = 1, ok_test = 1;
	uint64_t before;
	uint32_t high;

	fill();
	sig = TRY(__asm__ volatile("movq %0, (%0)" : : "r"(p) : "memory"));
	adi_expect_no_signal(sig, "movq %%reg, (%%reg): no signal");
	tap_eq_hex(*word, (uint64_t)p,
		   "movq %%reg, (%%reg): the stored pointer keeps its version");
	fill();
	sig = TRY(__asm__ volatile("movq %0, -8(%0)" : : "r"(q) : "memory"));
	adi_expect_no_signal(sig, "movq %%reg, -8(%%reg): no signal");
	tap_eq_hex(*word, (uint64_t)q,
		   "movq %%reg, -8(%%reg): the stored pointer keeps its version");
	fill();
	high = word[0] >> 32;
	sig = TRY(__asm__ volatile("movl %k0, (%0)" : : "r"(p) : "memory"));
	adi_expect_no_signal(sig, "movl %%reg32, (%%reg): no signal");
	tap_eq_hex((uint32_t)word[0], (uint32_t)(uint64_t)p,
		   "movl %%reg32, (%%reg): the low half stored");
	tap_eq_hex(word[0] >> 32, high,
		   "movl %%reg32, (%%reg): nothing else (the high half kept)");
	fill();
	sig = TRY(__asm__ volatile("movq %0, (%0)" : : "r"(bad(320)) : "memory"));
	adi_expect_derr("movq %%reg, (%%reg) with a mismatching version: caught");
	expect_unchanged("movq %%reg, (%%reg) with a mismatching version: memory unchanged");

	for (unsigned int i = 0; i < sizeof(probe) / sizeof(probe[0]); i++) {
		fill();
		*word = probe[i];
		if (TRY(ok_mr &= flags_cmp_mr(p) == want_flags(probe[i], (uint64_t)p, 'c')) ||
		    TRY(ok_rm &= flags_cmp_rm(p) == want_flags((uint64_t)p, probe[i], 'c')) ||
		    TRY(ok_test &= flags_test(p) == want_flags(probe[i], (uint64_t)p, 't')))
			ok_mr = ok_rm = ok_test = 0;
	}
	tap_ok(ok_mr, "cmpq %%reg, (%%reg): flags as for the whole pointer");
	tap_ok(ok_rm, "cmpq (%%reg), %%reg: flags as for the whole pointer");
	tap_ok(ok_test, "testq %%reg, (%%reg): flags as for the whole pointer");
	fill();
	TRY(flags_cmp_mr(bad(320)));
	adi_expect_segv(SEGV_ADIPERR, bad(320),
			"cmpq %%reg, (%%reg) with a mismatching version: caught");

	/* An add is done by the handler: with the whole register, as the CPU would. */
	fill();
	before = *word;
	sig = TRY(__asm__ volatile("addq %0, (%0)" : : "r"(p) : "memory", "cc"));
	tap_eq_long(sig, 0, "addq %%reg, (%%reg): no signal");
	tap_eq_long(*word, before + (uint64_t)p,
		    "addq %%reg, (%%reg): adds the pointer with its version");

	/* Neither done by the handler nor steppable: refused, never computed
	 * with a stripped pointer. */
	fill();
	sig = TRY({
		void *x = p;

		__asm__ volatile("imulq (%0), %0" : "+r"(x) : : "memory", "cc");
	});
	adi_expect_refused("imulq (%%reg), %%reg: plain SIGSEGV");
	expect_unchanged("imulq (%%reg), %%reg: memory unchanged");
}

/*
 * BMI and F16C: VEX.vvvv names a general-purpose register, read or
 * written; vcvtph2ps reads half a vector.  Each result through the
 * versioned pointer must be what the CPU gives for the whole pointer.
 */
#define WORD_OFF	384
#define WORD_VALUE	0xfedcba9876543211UL	/* odd: x * (version << 60) != 0 */

static uint64_t *word_at(void)
{
	uint64_t *w = plain(WORD_OFF);

	fill();
	*w = WORD_VALUE;
	return w;
}

static void test_vex_gpr(void)
{
	uint64_t x = WORD_VALUE, r, hi, mult = 0x10001;
	void *p = good(WORD_OFF);
	int sig;

	if (!__builtin_cpu_supports("bmi") || !__builtin_cpu_supports("bmi2")) {
		tap_skip("no BMI1/BMI2", "blsr, mulx, andn, pdep");
		return;
	}
	word_at();
	r = (uint64_t)p;
	sig = TRY(__asm__ volatile("blsrq (%0), %0" : "+r"(r) : : "memory", "cc"));
	adi_expect_no_signal(sig, "blsr into the address register: no signal");
	tap_eq_hex(r, x & (x - 1), "blsr into the address register: the result");

	word_at();
	r = (uint64_t)p;
	sig = TRY(__asm__ volatile("blsmskq (%0), %0" : "+r"(r) : : "memory", "cc"));
	adi_expect_no_signal(sig, "blsmsk into the address register: no signal");
	tap_eq_hex(r, x ^ (x - 1), "blsmsk into the address register: the result");

	word_at();
	r = (uint64_t)p;
	sig = TRY(__asm__ volatile("mulxq (%0), %0, %1" : "+r"(r), "=r"(hi) : "d"(mult) : "memory"));
	adi_expect_no_signal(sig, "mulx low half into the address register: no signal");
	tap_eq_hex(r, x * mult, "mulx low half into the address register: the result");

	/*
	 * The version is an input of the result: the right value or a plain
	 * SIGSEGV (refused), never a value computed from a stripped pointer.
	 */
	word_at();
	r = 0;
	sig = TRY(__asm__ volatile("andnq (%1), %1, %0" : "=r"(r) : "r"(p) : "memory", "cc"));
	tap_ok(sig ? sig == SIGSEGV && caught.code == 128 : r == (~(uint64_t)p & x),
	       "andn with the address register as the inverted input: got %#lx (sig %d code %d), want %#lx or refused",
	       (unsigned long)r, sig, sig ? caught.code : 0, (unsigned long)(~(uint64_t)p & x));

	word_at();
	r = 0;
	sig = TRY(__asm__ volatile("mulxq (%%rdx), %0, %1" : "=r"(r), "=r"(hi) : "d"(p) : "memory"));
	tap_ok(sig ? sig == SIGSEGV && caught.code == 128 : r == x * (uint64_t)p,
	       "mulx through rdx, its own multiplier: got %#lx (sig %d code %d), want %#lx or refused",
	       (unsigned long)r, sig, sig ? caught.code : 0, (unsigned long)(x * (uint64_t)p));

	word_at();
	r = (uint64_t)bad(WORD_OFF);
	TRY(__asm__ volatile("blsrq (%0), %0" : "+r"(r) : : "memory", "cc"));
	adi_expect_segv(SEGV_ADIPERR, bad(WORD_OFF), "blsr with a mismatching version: caught");
}

/*
 * Results narrower than 32 bits merge into their register, so a version
 * in that register must survive; pcmpistri writes ecx whole, so a version
 * in rcx must not come back.  (Found by the host conformance test,
 * tests/adi-decoder.)
 */
static void test_partial_regs(void)
{
	uint64_t x = WORD_VALUE, want, ptr, d;
	void *p = good(WORD_OFF);
	uint32_t idx_plain = 0;
	int sig;

	/* dh is ModRM.reg 6 without REX, which is also rsi's number. */
	word_at();
	ptr = (uint64_t)p;
	d = 0;
	sig = TRY(__asm__ volatile("movb (%%rsi), %%dh" : "+S"(ptr), "+d"(d) : : "memory"));
	adi_expect_no_signal(sig, "movb (%%rsi), %%dh: no signal");
	tap_eq_hex(ptr, (uint64_t)p, "movb (%%rsi), %%dh: rsi keeps its version");
	tap_eq_hex((d >> 8) & 0xff, x & 0xff, "movb (%%rsi), %%dh: dh gets the byte");

	word_at();
	ptr = (uint64_t)p;
	want = ((uint64_t)p & ~0xffffUL) | (x & 0xffff);
	sig = TRY(__asm__ volatile("movw (%0), %w0" : "+r"(ptr) : : "memory"));
	adi_expect_no_signal(sig, "movw (%%reg), %%reg16: no signal");
	tap_eq_hex(ptr, want, "movw (%%reg), %%reg16: the 16-bit load merges under the version");

	fill();
	memset(plain(2000), 'a', 16);
	((char *)plain(2000))[5] = 0;
	__asm__ volatile("pxor %%xmm1, %%xmm1; pcmpistri $0x3a, (%1), %%xmm1"
		     : "=c"(idx_plain) : "r"(plain(2000)) : "xmm1", "cc");
	ptr = (uint64_t)good(2000);
	sig = TRY(__asm__ volatile("pxor %%xmm1, %%xmm1; pcmpistri $0x3a, (%%rcx), %%xmm1"
				   : "+c"(ptr) : : "memory", "xmm1", "cc"));
	adi_expect_no_signal(sig, "pcmpistri through rcx: no signal");
	tap_eq_hex(ptr, idx_plain, "pcmpistri through rcx: rcx is the index, without the version");
}

/* vcvtph2ps ymm reads 16 bytes: the last 16 of a block, not into the next. */
static void test_f16c(void)
{
	uint64_t lo = 0, want = 0;
	int sig;

	if (!__builtin_cpu_supports("f16c") || !__builtin_cpu_supports("avx")) {
		tap_skip("no F16C", "vcvtph2ps");
		return;
	}
	fill();
	__asm__ volatile("vcvtph2ps (%1), %%ymm0; vmovq %%xmm0, %0; vzeroupper"
		     : "=r"(want) : "r"(plain(2032)) : "memory", "xmm0");
	must_set_version(mem + 2048, 64, 9);
	sig = TRY(__asm__ volatile("vcvtph2ps (%1), %%ymm0; vmovq %%xmm0, %0; vzeroupper"
			       : "=r"(lo) : "r"(good(2032)) : "memory", "xmm0"));
	adi_expect_no_signal(sig, "vcvtph2ps ymm, the last 16 bytes of a block: no signal");
	tap_eq_hex(lo, want, "vcvtph2ps ymm, the last 16 bytes of a block: the data");
	fill();
	TRY(__asm__ volatile("vcvtph2ps (%0), %%ymm0; vzeroupper" : : "r"(bad(2032)) : "memory", "xmm0"));
	adi_expect_segv(SEGV_ADIPERR, bad(2032), "vcvtph2ps with a mismatching version: caught");
}

static void test_unsupported(void)
{
	/* x87 is not on the checker's list: plain SIGSEGV, never a guess. */
	TRY(__asm__ volatile("fldt (%0); fstp %%st(0)" : : "r"(good(0)) : "memory"));
	adi_expect_refused("an instruction the checker does not know: plain SIGSEGV");
}

int main(void)
{
	tap_init();
	mem = adi_map(8192);
	tap_group("loads", test_loads);
	tap_group("crypto loads", test_crypto_loads);
	tap_group("mxcsr and clflush", test_state_and_flush);
	tap_group("alu", test_alu);
	tap_group("atomics", test_atomics);
	tap_group("stores", test_stores);
	tap_group("strings", test_strings);
	tap_group("self operand", test_self_operand);
	tap_group("crossing", test_crossing);
	tap_group("vex gpr operands", test_vex_gpr);
	tap_group("f16c", test_f16c);
	tap_group("partial registers", test_partial_regs);
	tap_group("unsupported", test_unsupported);
	return tap_done();
}
