// SPDX-License-Identifier: GPL-2.0
/*
 * rep movs and rep stos through versioned pointers, against the CPU.
 *
 * The #GP handler does a program's checked movs and stos itself, with the
 * code that also does the kernel's own string copies through a versioned
 * pointer.  Each case here runs twice from the same memory: through plain
 * pointers (the CPU) and through versioned ones.  Both runs must end with
 * the same bytes in all four pages, the same rdi, rsi and rcx (versions
 * kept), and the same signal, si_code and address when the copy runs into
 * a read-only or inaccessible page part-way.  The "emulated" counter says
 * whether the handler did the elements or left them to the CPU.  Cases:
 * both directions, every element size, overlapping source and destination
 * at distances above and below one element (where the CPU's element order
 * decides what is read), misaligned wide elements, faults part-way, and
 * hostile plain destinations.  Last, the kernel's copy_to_user() into the
 * same versioned buffer (pread) must write the same bytes and stop at the
 * same byte as the program's rep movsb.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "adi_test.h"

#define V	5
#define PAGE	4096
#define PAGES	4
#define AX	0x1122334455667788UL

/* Page 2, where a copy meets a fault part-way. */
#define FAULT_PAGE	(2 * PAGE)

struct sregs {
	uint64_t di, si, cx;
};

#define SFN(name, text)							\
	static void name(struct sregs *r)				\
	{								\
		uint64_t di = r->di, si = r->si, cx = r->cx;		\
		__asm__ volatile(text : "+D"(di), "+S"(si), "+c"(cx)	\
				 : "a"(AX) : "memory", "cc");		\
		r->di = di;						\
		r->si = si;						\
		r->cx = cx;						\
	}

SFN(movsb, "rep movsb")
SFN(movsw, "rep movsw")
SFN(movsl, "rep movsl")
SFN(movsq, "rep movsq")
SFN(stosb, "rep stosb")
SFN(stosw, "rep stosw")
SFN(stosl, "rep stosl")
SFN(stosq, "rep stosq")
SFN(std_movsb, "std\n\trep movsb\n\tcld")
SFN(std_movsl, "std\n\trep movsl\n\tcld")
SFN(std_movsq, "std\n\trep movsq\n\tcld")
SFN(std_stosb, "std\n\trep stosb\n\tcld")
SFN(std_stosl, "std\n\trep stosl\n\tcld")

struct form {
	const char *text;
	void (*run)(struct sregs *r);
	unsigned int esize;
	int movs, down;
};

static const struct form F_MOVSB = { "rep movsb", movsb, 1, 1, 0 };
static const struct form F_MOVSW = { "rep movsw", movsw, 2, 1, 0 };
static const struct form F_MOVSL = { "rep movsl", movsl, 4, 1, 0 };
static const struct form F_MOVSQ = { "rep movsq", movsq, 8, 1, 0 };
static const struct form F_STOSB = { "rep stosb", stosb, 1, 0, 0 };
static const struct form F_STOSW = { "rep stosw", stosw, 2, 0, 0 };
static const struct form F_STOSL = { "rep stosl", stosl, 4, 0, 0 };
static const struct form F_STOSQ = { "rep stosq", stosq, 8, 0, 0 };
static const struct form F_STD_MOVSB = { "std; rep movsb", std_movsb, 1, 1, 1 };
static const struct form F_STD_MOVSL = { "std; rep movsl", std_movsl, 4, 1, 1 };
static const struct form F_STD_MOVSQ = { "std; rep movsq", std_movsq, 8, 1, 1 };
static const struct form F_STD_STOSB = { "std; rep stosb", std_stosb, 1, 0, 1 };
static const struct form F_STD_STOSL = { "std; rep stosl", std_stosl, 4, 0, 1 };

enum fault { NO_FAULT, READ_ONLY, NO_ACCESS };

/*
 * One case.  dst and src are the lowest bytes the ranges cover, as
 * offsets into the pages; the registers start at the first element in
 * the instruction's direction.  emulated: the handler does the elements
 * (all of them, or those before a fault); else the CPU does them.
 */
struct scase {
	const char *what;
	const struct form *f;
	long dst, src;
	unsigned long count;
	enum fault fault;
	int emulated;
};

static const struct scase cases[] = {
	{ "1 byte", &F_MOVSB, 9000, 100, 1, NO_FAULT, 1 },
	{ "100 bytes", &F_MOVSB, 9000, 100, 100, NO_FAULT, 1 },
	{ "5000 bytes across pages", &F_MOVSB, 8100, 100, 5000, NO_FAULT, 1 },
	{ "333 words", &F_MOVSW, 9000, 102, 333, NO_FAULT, 1 },
	{ "1000 longs", &F_MOVSL, 8000, 100, 1000, NO_FAULT, 1 },
	{ "600 quads", &F_MOVSQ, 8000, 96, 600, NO_FAULT, 1 },
	{ "fill 1 byte", &F_STOSB, 9000, 0, 1, NO_FAULT, 1 },
	{ "fill 4097 bytes", &F_STOSB, 5000, 0, 4097, NO_FAULT, 1 },
	{ "fill 10 words", &F_STOSW, 9002, 0, 10, NO_FAULT, 1 },
	{ "fill 999 longs", &F_STOSL, 4000, 0, 999, NO_FAULT, 1 },
	{ "fill 700 quads", &F_STOSQ, 3000, 0, 700, NO_FAULT, 1 },
	{ "down, 5000 bytes", &F_STD_MOVSB, 8100, 100, 5000, NO_FAULT, 1 },
	{ "down, 600 quads", &F_STD_MOVSQ, 8000, 96, 600, NO_FAULT, 1 },
	{ "down, fill 5000 bytes", &F_STD_STOSB, 3001, 0, 5000, NO_FAULT, 1 },
	{ "down, fill 999 longs", &F_STD_STOSL, 4000, 0, 999, NO_FAULT, 1 },
	/* Overlaps: the CPU's element order decides what is read. */
	{ "overlap, destination 1 above", &F_MOVSB, 3001, 3000, 3000, NO_FAULT, 1 },
	{ "overlap, destination 100 above", &F_MOVSB, 3100, 3000, 3000, NO_FAULT, 1 },
	{ "overlap, destination 1 below", &F_MOVSB, 2999, 3000, 3000, NO_FAULT, 1 },
	{ "overlap, destination 100 below", &F_MOVSB, 2900, 3000, 3000, NO_FAULT, 1 },
	{ "overlap, destination 8 above", &F_MOVSQ, 3008, 3000, 300, NO_FAULT, 1 },
	{ "overlap, destination 8 below", &F_MOVSQ, 2992, 3000, 300, NO_FAULT, 1 },
	{ "overlap, destination 24 above", &F_MOVSQ, 3024, 3000, 300, NO_FAULT, 1 },
	{ "overlap closer than an element: the CPU's", &F_MOVSQ, 3004, 3000, 10, NO_FAULT, 0 },
	{ "down, overlap, destination 1 below", &F_STD_MOVSB, 2999, 3000, 3000, NO_FAULT, 1 },
	{ "down, overlap, destination 100 above", &F_STD_MOVSB, 3100, 3000, 3000, NO_FAULT, 1 },
	{ "down, overlap, destination 8 above", &F_STD_MOVSQ, 3008, 3000, 300, NO_FAULT, 1 },
	{ "down, overlap, destination 4 below", &F_STD_MOVSL, 2996, 3000, 500, NO_FAULT, 1 },
	/* Misaligned wide elements, which may cross a page: the CPU's. */
	{ "misaligned destination", &F_MOVSQ, 8001, 96, 50, NO_FAULT, 0 },
	{ "misaligned source", &F_MOVSW, 9000, 101, 50, NO_FAULT, 0 },
	{ "misaligned fill across a page", &F_STOSL, 4094, 0, 10, NO_FAULT, 0 },
	/* Into page 2 part-way: the elements before it done, then the fault. */
	{ "into a read-only page", &F_MOVSB, 7000, 100, 3000, READ_ONLY, 1 },
	{ "fill into a read-only page", &F_STOSQ, 7000, 0, 300, READ_ONLY, 1 },
	{ "down, into a read-only page", &F_STD_MOVSB, 11288, 100, 2000, READ_ONLY, 1 },
	{ "down, fill into a read-only page", &F_STD_STOSL, 11288, 0, 500, READ_ONLY, 1 },
	{ "down, starting in a read-only page", &F_STD_MOVSB, 7000, 100, 2000, READ_ONLY, 1 },
	{ "overlap, destination 100 below, into a read-only page", &F_MOVSB, 7000, 7100,
	  3000, READ_ONLY, 1 },
	{ "source into an inaccessible page", &F_MOVSB, 1000, 7000, 3000, NO_ACCESS, 1 },
	{ "down, source into an inaccessible page", &F_STD_MOVSQ, 1000, 11288, 250,
	  NO_ACCESS, 1 },
};

static char *mem;		/* PAGES pages of ADI memory, version V */
static char want_mem[PAGES * PAGE], got_mem[PAGES * PAGE];

static void set_fault(enum fault fault)
{
	int prot = PROT_READ | PROT_WRITE | PROT_ADI;

	if (fault == READ_ONLY)
		prot = PROT_READ | PROT_ADI;
	else if (fault == NO_ACCESS)
		prot = PROT_NONE;
	if (mprotect(mem + FAULT_PAGE, PAGE, prot)) {
		tap_diag("mprotect: %s", strerror(errno));
		exit(1);
	}
}

/* Every page writable, version V, the same bytes. */
static void reset(void)
{
	set_fault(NO_FAULT);
	must_set_version(mem, PAGES * PAGE, V);
	for (int i = 0; i < PAGES * PAGE; i++)
		mem[i] = (char)(i * 29 + 3 + i / 251);
}

struct outcome {
	int sig, code;
	uint64_t addr;		/* si_addr without its version */
	struct sregs r;
};

static struct outcome run_case(const struct scase *c, int versioned)
{
	const struct form *f = c->f;
	unsigned long first = f->down ? (c->count - 1) * f->esize : 0;
	char *dst = mem + c->dst + first, *src = mem + c->src + first;
	struct outcome o = { 0 };

	o.r.di = (uint64_t)(versioned ? adi_make_ptr(dst, V) : dst);
	o.r.si = (uint64_t)(versioned && f->movs ? adi_make_ptr(src, V) : src);
	o.r.cx = c->count;
	reset();
	set_fault(c->fault);
	o.sig = TRY(f->run(&o.r));
	if (o.sig) {
		o.code = caught.code;
		o.addr = (uint64_t)adi_strip_ptr(caught.addr);
		o.r.di = caught.gregs[REG_RDI];
		o.r.si = caught.gregs[REG_RSI];
		o.r.cx = caught.gregs[REG_RCX];
	}
	set_fault(NO_FAULT);
	return o;
}

static uint64_t with_version(uint64_t plain)
{
	return (uint64_t)adi_make_ptr((void *)plain, V);
}

static void test_case(const struct scase *c)
{
	const struct form *f = c->f;
	struct outcome want, got;
	long before;
	char t[96];

	snprintf(t, sizeof(t), "%s, %s", f->text, c->what);
	want = run_case(c, 0);
	memcpy(want_mem, mem, sizeof(want_mem));
	before = adi_counter("emulated");
	got = run_case(c, 1);
	memcpy(got_mem, mem, sizeof(got_mem));

	tap_eq_long(got.sig, want.sig, "%s: signal as the CPU's (0: none)", t);
	if (want.sig) {
		tap_eq_long(got.code, want.code, "%s: si_code as the CPU's", t);
		tap_eq_hex(got.addr, want.addr, "%s: fault address as the CPU's", t);
	}
	tap_eq_mem(got_mem, want_mem, sizeof(want_mem), "%s: all %d pages as the CPU leaves them",
		   t, PAGES);
	tap_eq_hex(got.r.di, with_version(want.r.di), "%s: rdi as the CPU's, version kept", t);
	tap_eq_hex(got.r.si, f->movs ? with_version(want.r.si) : want.r.si,
		   "%s: rsi as the CPU's%s", t, f->movs ? ", version kept" : "");
	tap_eq_long(got.r.cx, want.r.cx, "%s: rcx as the CPU's", t);
	if (before < 0) {
		tap_skip("no /sys/kernel/debug/adi/emulated", "%s: emulated count", t);
		return;
	}
	/* The elements the CPU did before stopping: all, or those before the fault. */
	tap_eq_long(adi_counter("emulated") - before,
		    c->emulated ? (long)(c->count - want.r.cx) : 0,
		    "%s: elements done by the handler (emulated count)", t);
}

static void test_cases(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		test_case(&cases[i]);
}

static void movsb_to(uint64_t dst, const void *src, unsigned long n, int down,
		     struct sregs *r)
{
	r->di = dst;
	r->si = (uint64_t)src;
	r->cx = n;
	if (down)
		std_movsb(r);
	else
		movsb(r);
}

/*
 * A plain destination that is not user memory, with a versioned source:
 * the handler checks the source and must not write the destination
 * itself; the CPU's fault, as without the version.  A non-canonical
 * destination written from the kernel would be a #GP in the kernel (a
 * warning in the log, which fails the suite); a copy going down from near
 * 0 would wrap into the kernel's half.
 */
static void test_hostile_destination(void)
{
	static const struct {
		const char *what;
		uint64_t dst;
		unsigned long count;
		int down;
	} h[] = {
		{ "non-canonical plain destination", 0x0000800000000000UL, 64, 0 },
		{ "plain destination at the top of the user half", 0x00007ffffffff000UL, 8192, 0 },
		{ "down from a plain destination near 0: wraps", 0x100UL, 8192, 1 },
	};

	for (size_t i = 0; i < sizeof(h) / sizeof(h[0]); i++) {
		char *src = mem + 4096 + (h[i].down ? 8191 : 0);
		struct sregs r;
		int sig_plain, code_plain, sig;
		uint64_t addr_plain;

		reset();
		sig_plain = TRY(movsb_to(h[i].dst, src, h[i].count, h[i].down, &r));
		code_plain = caught.code;
		addr_plain = (uint64_t)caught.addr;
		sig = TRY(movsb_to(h[i].dst, adi_make_ptr(src, V), h[i].count, h[i].down, &r));
		tap_eq_long(sig_plain, SIGSEGV, "%s: plain source: SIGSEGV", h[i].what);
		tap_eq_long(sig, SIGSEGV, "%s: versioned source: SIGSEGV", h[i].what);
		tap_eq_long(caught.code, code_plain, "%s: versioned source: the same si_code",
			    h[i].what);
		tap_eq_hex((uint64_t)caught.addr, addr_plain,
			   "%s: versioned source: the same fault address", h[i].what);
	}
}

/*
 * The kernel's copy into a versioned buffer (pread(), copy_to_user()) and
 * the program's rep movsb, into the same buffer running into a read-only
 * page: the same bytes written, and the kernel's short count is the
 * program's count of bytes done before its fault.
 */
static void test_kernel_agrees(void)
{
	static const struct { long dst; unsigned long len; } k[] = {
		{ 9000, 2000 },		/* no fault */
		{ 7000, 3000 },		/* 1192 bytes, then page 2 */
		{ 8192, 100 },		/* page 2 from its first byte */
	};
	static char src[PAGE];
	int fd = memfd_create("adi_string", 0);

	for (int i = 0; i < PAGE; i++)
		src[i] = (char)(i * 7 + 1);
	if (fd < 0 || write(fd, src, PAGE) != PAGE) {
		tap_diag("memfd: %s", strerror(errno));
		exit(1);
	}
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		char *dst = mem + k[i].dst;
		struct sregs r;
		long done_program, done_kernel;
		int sig;

		reset();
		set_fault(k[i].dst + (long)k[i].len > FAULT_PAGE ? READ_ONLY : NO_FAULT);
		sig = TRY(movsb_to((uint64_t)adi_make_ptr(dst, V), src, k[i].len, 0, &r));
		done_program = sig ? (long)(k[i].len - caught.gregs[REG_RCX]) : (long)k[i].len;
		set_fault(NO_FAULT);
		memcpy(want_mem, mem, sizeof(want_mem));

		reset();
		set_fault(k[i].dst + (long)k[i].len > FAULT_PAGE ? READ_ONLY : NO_FAULT);
		done_kernel = pread(fd, adi_make_ptr(dst, V), k[i].len, 0);
		if (done_kernel < 0)
			done_kernel = errno == EFAULT ? 0 : -errno;
		set_fault(NO_FAULT);

		tap_eq_long(done_kernel, done_program,
			    "%lu bytes at page offset %ld: pread() copies as many bytes as "
			    "rep movsb does (0: EFAULT)", k[i].len, k[i].dst % PAGE);
		tap_eq_mem(mem, want_mem, sizeof(want_mem),
			   "%lu bytes at page offset %ld: pread() writes the bytes rep movsb writes",
			   k[i].len, k[i].dst % PAGE);
	}
	close(fd);
}

int main(void)
{
	tap_init();
	mem = adi_map(PAGES * PAGE);
	tap_group("string against the CPU", test_cases);
	tap_group("string hostile destination", test_hostile_destination);
	tap_group("string kernel copy agrees", test_kernel_agrees);
	return tap_done();
}
