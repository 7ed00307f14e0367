// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Stack traces: captured with libgcc's unwinder (DWARF CFI, so it works in
 * Debian's programs built without frame pointers, and through the signal
 * frame of an ADI fault), kept once each in a depot so that a slot stores a
 * 32-bit id, and printed with the names and file:line eu-addr2line finds
 * (symbolize.c), or else with dladdr() (exported symbols only: a program
 * linked without -rdynamic shows its own functions as ??).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

#include "internal.h"

#define DEPOT_SIZE	(1U << 16)

struct depot_entry {
	uint32_t hash;
	uint16_t n;
	uintptr_t pcs[AM_STACK_MAX];
};

static struct depot_entry *depot;
static uintptr_t self_lo, self_hi;	/* our own code: not shown in stacks */
/* Set while this thread is in the unwinder (see am_stack_capture()). */
static __thread bool am_in_unwind __attribute__((tls_model("initial-exec")));
/*
 * Whether the next stack printed on this thread starts at an exact pc.
 * Every frame of a stack is a return address (the instruction after a
 * call, whose line may be the next statement's: it is looked up one byte
 * back), except the first frame of the access stack in a fault report,
 * which is the faulting instruction itself.  That stack is captured by the
 * SIGSEGV handler (the only caller that asks for more than AM_STACK_MAX
 * frames) and printed at once (print_access_stack() in report.c); any
 * print consumes the mark, so the allocation stacks that follow are not
 * mistaken for it even when the faulting store comes right after the
 * call to malloc().
 */
static __thread bool am_first_exact __attribute__((tls_model("initial-exec")));

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t me = (uintptr_t)data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    me >= lo && me < lo + ph->p_memsz) {
			self_lo = lo;
			self_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

void am_stack_init(void)
{
	dl_iterate_phdr(find_self, (void *)(uintptr_t)am_stack_init);

	void *d = mmap(NULL, DEPOT_SIZE * sizeof(*depot), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	depot = d == MAP_FAILED ? NULL : d;
}

struct capture {
	uintptr_t *pcs;
	int n, max;
	bool skip_self;
};

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct capture *c = arg;
	uintptr_t ip = _Unwind_GetIP(ctx);

	if (!ip)
		return _URC_END_OF_STACK;
	/* Leading frames in this library are the allocator, not the caller. */
	if (!c->n && c->skip_self && ip >= self_lo && ip < self_hi)
		return _URC_NO_REASON;
	c->pcs[c->n++] = ip;
	return c->n == c->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

/* Frames of the caller's caller onwards are what matter; the unwinder's
 * first frames are ours and are left to the caller to skip. */
int am_stack_capture(uintptr_t *pcs, int max)
{
	/* The signal handler wants its own frames (to find the faulting pc);
	 * it asks for more than AM_STACK_MAX frames. */
	struct capture c = { pcs, 0, max, max <= AM_STACK_MAX };

	am_first_exact = max > AM_STACK_MAX;
	if (max <= 0 || am_in_unwind)
		return 0;
	/* The unwinder may call malloc the first time (it should not, but an
	 * allocation from it must not try to unwind again). */
	am_in_unwind = true;
	_Unwind_Backtrace(one_frame, &c);
	am_in_unwind = false;
	return c.n;
}

uint32_t am_stack_save(const uintptr_t *pcs, int n)
{
	uint32_t h = 2166136261u, i;

	if (!depot || n <= 0)
		return 0;
	for (int k = 0; k < n; k++)
		h = (h ^ (uint32_t)(pcs[k] ^ (pcs[k] >> 32))) * 16777619u;
	for (i = 0; i < 64; i++) {
		struct depot_entry *e = &depot[(h + i) & (DEPOT_SIZE - 1)];

		if (!e->n) {
			e->hash = h;
			e->n = (uint16_t)n;
			memcpy(e->pcs, pcs, (size_t)n * sizeof(*pcs));
			return ((h + i) & (DEPOT_SIZE - 1)) + 1;
		}
		if (e->hash == h && e->n == n &&
		    !memcmp(e->pcs, pcs, (size_t)n * sizeof(*pcs)))
			return ((h + i) & (DEPOT_SIZE - 1)) + 1;
	}
	return 0;		/* depot crowded: no stack for this one */
}

int am_stack_get(uint32_t id, const uintptr_t **pcs)
{
	if (!depot || !id || id > DEPOT_SIZE)
		return 0;
	*pcs = depot[id - 1].pcs;
	return depot[id - 1].n;
}

/*
 * One frame as eu-addr2line sees it, as ASan prints it: "in FUNC FILE:LINE
 * (MODULE+OFF)", with dladdr()'s module.  false: it knew nothing.
 */
static bool print_symbol(int i, uintptr_t pc, uintptr_t look, const struct am_symbol *sym)
{
	const char *fn = sym->function ? sym->function : "??";
	/* .symtab names carry their symbol version: __libc_start_main@@GLIBC_2.34. */
	int len = (int)strcspn(fn, "@");
	const char *mod;
	Dl_info info;

	if (!sym->function && !sym->file)
		return false;
	if (!dladdr((void *)look, &info) || !info.dli_fname) {
		/* Code no loaded object covers (eu-addr2line reads the maps). */
		if (sym->file)
			am_printf("    #%d 0x%lx in %.*s %s:%d\n", i, (unsigned long)pc,
				  len, fn, sym->file, sym->line);
		else
			am_printf("    #%d 0x%lx in %.*s\n", i, (unsigned long)pc, len, fn);
		return true;
	}
	mod = info.dli_fname[0] ? info.dli_fname : "<main>";
	if (sym->file)
		am_printf("    #%d 0x%lx in %.*s %s:%d (%s+0x%lx)\n", i, (unsigned long)pc,
			  len, fn, sym->file, sym->line, mod,
			  (unsigned long)(pc - (uintptr_t)info.dli_fbase));
	else
		am_printf("    #%d 0x%lx in %.*s (%s+0x%lx)\n", i, (unsigned long)pc,
			  len, fn, mod, (unsigned long)(pc - (uintptr_t)info.dli_fbase));
	return true;
}

/* One frame as dladdr() sees it: exported symbols only. */
static void print_dladdr(int i, uintptr_t pc, uintptr_t look)
{
	Dl_info info;

	if (dladdr((void *)look, &info) && info.dli_fname) {
		const char *mod = info.dli_fname[0] ? info.dli_fname : "<main>";

		if (info.dli_sname)
			am_printf("    #%d 0x%lx in %s+0x%lx (%s+0x%lx)\n", i,
				  (unsigned long)pc, info.dli_sname,
				  (unsigned long)(pc - (uintptr_t)info.dli_saddr),
				  mod, (unsigned long)(pc - (uintptr_t)info.dli_fbase));
		else
			am_printf("    #%d 0x%lx in ?? (%s+0x%lx)\n", i,
				  (unsigned long)pc, mod,
				  (unsigned long)(pc - (uintptr_t)info.dli_fbase));
	} else {
		am_printf("    #%d 0x%lx\n", i, (unsigned long)pc);
	}
}

void am_stack_print(const uintptr_t *pcs, int n)
{
	bool exact = am_first_exact, symbolize;
	int saved = errno;	/* we print from inside free() and the handler */

	am_first_exact = false;
	symbolize = n > 0 && am_symbolize_begin();
	for (int i = 0; i < n; i += AM_STACK_MAX) {
		int k = n - i < AM_STACK_MAX ? n - i : AM_STACK_MAX;
		uintptr_t look[AM_STACK_MAX];
		struct am_symbol sym[AM_STACK_MAX];
		bool known;

		/* A return address: look up the call (see am_first_exact). */
		for (int j = 0; j < k; j++)
			look[j] = i + j || !exact ? pcs[i + j] - 1 : pcs[i + j];
		/* One eu-addr2line process for the frames not seen before. */
		known = symbolize && am_symbolize(look, k, sym);
		for (int j = 0; j < k; j++)
			if (!known || !print_symbol(i + j, pcs[i + j], look[j], &sym[j]))
				print_dladdr(i + j, pcs[i + j], look[j]);
	}
	if (symbolize)
		am_symbolize_end();
	if (!n)
		am_printf("    <no stack recorded>\n");
	errno = saved;
}
