// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Stack traces: captured with libgcc's unwinder (DWARF CFI, so it works in
 * Debian's programs built without frame pointers, and through the signal
 * frame of an ADI fault), kept once each in a depot so that a slot stores a
 * 32-bit id, and printed with dladdr() (exported symbols; link a program
 * with -rdynamic to see its own function names).
 */
#include <dlfcn.h>
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

void am_stack_print(const uintptr_t *pcs, int n)
{
	for (int i = 0; i < n; i++) {
		/* Return addresses point after the call: look up the call. */
		uintptr_t look = i ? pcs[i] - 1 : pcs[i];
		Dl_info info;

		if (dladdr((void *)look, &info) && info.dli_fname) {
			const char *mod = info.dli_fname[0] ? info.dli_fname : "<main>";

			if (info.dli_sname)
				am_printf("    #%d 0x%lx in %s+0x%lx (%s+0x%lx)\n", i,
					  (unsigned long)pcs[i], info.dli_sname,
					  (unsigned long)(pcs[i] - (uintptr_t)info.dli_saddr),
					  mod, (unsigned long)(pcs[i] - (uintptr_t)info.dli_fbase));
			else
				am_printf("    #%d 0x%lx in ?? (%s+0x%lx)\n", i,
					  (unsigned long)pcs[i], mod,
					  (unsigned long)(pcs[i] - (uintptr_t)info.dli_fbase));
		} else {
			am_printf("    #%d 0x%lx\n", i, (unsigned long)pcs[i]);
		}
	}
	if (!n)
		am_printf("    <no stack recorded>\n");
}
