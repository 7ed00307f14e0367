// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Stacks the program makes out of heap memory: alternate signal stacks
 * (sigaltstack: CPython's faulthandler, on by default under pytest) and
 * coroutine stacks (makecontext).  A stack pointer that carries a version
 * turns every push, call and return into a trap into the kernel, and the
 * instructions that use the stack implicitly are not all ones the kernel
 * can check; so the kernel and glibc get these stacks without their
 * version, and the stack is used unchecked, as any stack is.  The memory
 * keeps its versions: the program's own pointer to it still works and is
 * still checked, and free() of it is an ordinary free.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "internal.h"

/* makecontext() arguments forwarded; glibc reads each as a 64-bit word. */
#define MAX_CONTEXT_ARGS 16

/*
 * The versioned pointer this thread installed as its alternate stack
 * (alternate stacks are per thread): sigaltstack()'s old setting gives it
 * back, so that a program comparing the two (CPython does, to restore the
 * previous stack) sees its own pointer.
 */
static __thread void *tl_altstack __attribute__((tls_model("initial-exec")));

int sigaltstack(const stack_t *ss, stack_t *old)
{
	void *mine = tl_altstack, *installed = NULL;
	stack_t plain;

	if (ss && !(ss->ss_flags & SS_DISABLE) && am_pver(ss->ss_sp)) {
		plain = *ss;
		plain.ss_sp = (void *)am_strip(ss->ss_sp);
		installed = ss->ss_sp;
		ss = &plain;
	}
	if (syscall(SYS_sigaltstack, ss, old))
		return -1;
	if (old && mine && old->ss_sp == (void *)am_strip(mine))
		old->ss_sp = mine;
	if (ss)
		tl_altstack = installed;
	return 0;
}

typedef void (*makecontext_fn)(ucontext_t *, void (*)(void), int, ...);

/*
 * glibc computes the new context's stack pointer, and the address its
 * start-up code returns through, from uc_stack.ss_sp: given the plain
 * address, the coroutine runs on an unversioned stack pointer.  The
 * program's ucontext keeps its own pointer.
 */
void makecontext(ucontext_t *ucp, void (*fn)(void), int argc, ...)
{
	static makecontext_fn real;
	unsigned long a[MAX_CONTEXT_ARGS] = { 0 };
	void *sp = ucp->uc_stack.ss_sp;
	va_list ap;

	if (!real)
		real = (makecontext_fn)dlsym(RTLD_NEXT, "makecontext");
	/* A variadic call cannot be passed on as it is: we forward a fixed
	 * number of words, and dropping arguments silently would be worse
	 * than stopping. */
	if (argc < 0 || argc > MAX_CONTEXT_ARGS || !real) {
		am_printf("adimalloc: makecontext() with %d arguments: at most %d "
			  "are supported\n", argc, MAX_CONTEXT_ARGS);
		_exit(AM_CONFIG_EXIT);
	}
	va_start(ap, argc);
	for (int i = 0; i < argc; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	ucp->uc_stack.ss_sp = (void *)am_strip(sp);
	real(ucp, fn, argc, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
	     a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]);
	ucp->uc_stack.ss_sp = sp;
}
