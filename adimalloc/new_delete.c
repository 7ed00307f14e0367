// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * C++'s operator new and delete, every replaceable form, so that a block
 * is freed by the family that allocated it: new[] with delete, new with
 * free(), malloc() with delete are reported as alloc-dealloc-mismatch
 * (malloc.c), as AddressSanitizer does.  The symbols are the Itanium C++
 * ABI's mangled names; this file is C, and is built with -fexceptions so
 * that a failed throwing new can let libstdc++ throw std::bad_alloc
 * through it.
 *
 * A throwing new that gets no memory calls libstdc++'s own operator new,
 * which asks malloc() again (us: the same family is recorded for what it
 * gets) and then runs the new-handler and throws.
 */
#include <dlfcn.h>
#include <stddef.h>

#include "internal.h"

#define DEFAULT_ALIGN 16	/* __STDCPP_DEFAULT_NEW_ALIGNMENT__ on x86-64 */

/* The family malloc() records while libstdc++'s new runs for us. */
static __thread int tl_new_api __attribute__((tls_model("initial-exec"))) = -1;

static void restore_api(int *saved)
{
	tl_new_api = *saved;
}

/* libstdc++'s operator new (or new[]), to throw for us. */
static void *libstdcxx_new(const char *sym, size_t size, enum am_api api)
{
	void *(*next)(size_t) = (void *(*)(size_t))dlsym(RTLD_NEXT, sym);
	int saved __attribute__((cleanup(restore_api))) = tl_new_api;

	if (!next)
		return NULL;
	tl_new_api = (int)api;
	return next(size);
}

/* malloc()'s family: operator new's while libstdc++'s new runs for us. */
enum am_api am_current_alloc_api(void)
{
	return tl_new_api < 0 ? AM_API_MALLOC : (enum am_api)tl_new_api;
}

static void *new_or_throw(size_t size, size_t align, enum am_api api)
{
	void *p = am_alloc(size, align, api);

	if (p)
		return p;
	return libstdcxx_new(api == AM_API_NEW ? "_Znwm" : "_Znam", size, api);
}

/* operator new(size_t), new[](size_t), and with align_val_t. */
void *_Znwm(size_t n) { return new_or_throw(n, DEFAULT_ALIGN, AM_API_NEW); }
void *_Znam(size_t n) { return new_or_throw(n, DEFAULT_ALIGN, AM_API_NEW_ARRAY); }
void *_ZnwmSt11align_val_t(size_t n, size_t al) { return new_or_throw(n, al, AM_API_NEW); }
void *_ZnamSt11align_val_t(size_t n, size_t al) { return new_or_throw(n, al, AM_API_NEW_ARRAY); }

/* The nothrow forms: NULL on failure. */
void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt)
{
	(void)nt;
	return am_alloc(n, DEFAULT_ALIGN, AM_API_NEW);
}

void *_ZnamRKSt9nothrow_t(size_t n, const void *nt)
{
	(void)nt;
	return am_alloc(n, DEFAULT_ALIGN, AM_API_NEW_ARRAY);
}

void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt)
{
	(void)nt;
	return am_alloc(n, al, AM_API_NEW);
}

void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt)
{
	(void)nt;
	return am_alloc(n, al, AM_API_NEW_ARRAY);
}

/*
 * operator delete and delete[]: plain, sized, aligned, nothrow.  The size
 * and alignment they are given are not needed to free (the heap knows
 * both), hence the unused parameters.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define DELETE(sym, api, name, ...)					\
	void sym(void *p, ##__VA_ARGS__) { am_dealloc(p, api, name); }
DELETE(_ZdlPv, AM_API_NEW, "operator delete")
DELETE(_ZdaPv, AM_API_NEW_ARRAY, "operator delete []")
DELETE(_ZdlPvm, AM_API_NEW, "operator delete", size_t n)
DELETE(_ZdaPvm, AM_API_NEW_ARRAY, "operator delete []", size_t n)
DELETE(_ZdlPvRKSt9nothrow_t, AM_API_NEW, "operator delete", const void *nt)
DELETE(_ZdaPvRKSt9nothrow_t, AM_API_NEW_ARRAY, "operator delete []", const void *nt)
DELETE(_ZdlPvSt11align_val_t, AM_API_NEW, "operator delete", size_t al)
DELETE(_ZdaPvSt11align_val_t, AM_API_NEW_ARRAY, "operator delete []", size_t al)
DELETE(_ZdlPvmSt11align_val_t, AM_API_NEW, "operator delete", size_t n, size_t al)
DELETE(_ZdaPvmSt11align_val_t, AM_API_NEW_ARRAY, "operator delete []", size_t n, size_t al)
DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t, AM_API_NEW, "operator delete",
       size_t al, const void *nt)
DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t, AM_API_NEW_ARRAY, "operator delete []",
       size_t al, const void *nt)
