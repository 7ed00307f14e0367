/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libadi: Application Data Integrity on x86-64 (the lk417 kernel series)
 * for programs.  Memory in a PROT_ADI mapping carries a 4-bit version per
 * 64-byte block; pointers carry a version in bits 63:60; a mismatching
 * access raises SIGSEGV (SEGV_ADIPERR or SEGV_ADIDERR).
 *
 * Functions return 0 (or a value) on success and -1 with errno on failure.
 */
#ifndef LIBADI_H
#define LIBADI_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/platform/x86.h>

/*
 * The ABI comes from the patched kernel's exported uapi headers (KHDR,
 * first on the include path as -isystem), never from copies: a renumbered
 * value follows, a missing one breaks the build.  PR_ADI_*: linux/prctl.h;
 * AT_ADI_*: asm/auxvec.h; PROT_ADI: asm/mman.h.  SEGV_ACCADI, SEGV_ADIDERR
 * and SEGV_ADIPERR are SPARC's generic si_codes, which glibc's <signal.h>
 * already has.
 */
#include <asm/auxvec.h>
#include <asm/mman.h>
#include <linux/prctl.h>

#define ADI_VERSION_SHIFT	60
#define ADI_VERSION_MASK	(UINT64_C(0xf) << ADI_VERSION_SHIFT)
#define ADI_VERSION_MAX		15

struct adi_caps {
	unsigned long block_size;	/* bytes per versioned block (64) */
	unsigned long version_bits;	/* version bits in a pointer (4) */
	unsigned long ue_version;	/* version after a memory error */
};

/* Fill @caps from the aux vector; -1 with ENOTSUP when ADI is absent. */
int adi_get_caps(struct adi_caps *caps);
bool adi_is_available(void);

/*
 * mprotect(addr, len, prot | PROT_ADI): check versions in this range.
 * -1 with EOPNOTSUPP when adi_libc_uses_avx512(): see below.
 */
int adi_enable(void *addr, size_t len, int prot);

/*
 * The kernel's ADI checker does not classify EVEX (AVX-512) instructions
 * yet, and on a CPU with AVX-512 glibc runs its string and memory
 * functions in EVEX code (__strlen_evex, __memmove_avx512_unaligned_erms):
 * every such call on versioned memory would end the program with a plain
 * SIGSEGV.  This GLIBC_TUNABLES setting (ADI_GLIBC_HWCAPS followed by
 * ADI_GLIBC_HWCAPS_NO_AVX512), in the environment when a program starts,
 * makes glibc choose its AVX2 variants, as on a CPU without AVX-512
 * (tests/adi-decoder checks that no EVEX code is left selected); adirun
 * sets it.  adi_libc_uses_avx512() says whether this process's
 * glibc uses AVX-512, i.e. the setting is needed and missing.
 */
#define ADI_GLIBC_HWCAPS		"glibc.cpu.hwcaps="
#define ADI_GLIBC_HWCAPS_NO_AVX512	"-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD"

/*
 * glibc's view, not CPUID's: CPU_FEATURE_ACTIVE() is false once
 * GLIBC_TUNABLES masked the feature, and that is what chose the IFUNCs.
 * ADI_TEST_LIBC_AVX512=1 (or 0) pretends, so the guest (TCG: no AVX-512)
 * can test what depends on it.
 */
static inline bool adi_libc_uses_avx512(void)
{
	const char *pretend = getenv("ADI_TEST_LIBC_AVX512");

	if (pretend && *pretend)
		return strcmp(pretend, "0") != 0;
	return CPU_FEATURE_ACTIVE(AVX512F) || CPU_FEATURE_ACTIVE(AVX512VL) ||
	       CPU_FEATURE_ACTIVE(AVX512BW);
}

/* Version every 64-byte block of [addr, addr + len); both 64-aligned. */
int adi_set_version(void *addr, size_t len, unsigned int version);
/* The version of the block that holds @addr, or -1. */
int adi_get_version(const void *addr);

/* Precise mode: store mismatches report the data address (this thread). */
int adi_set_precise(bool precise);
int adi_get_precise(void);

/*
 * Syscall signal: a system call that meets a mismatch also raises SIGSEGV
 * (SEGV_ADIPERR) in this thread, besides failing with EFAULT or a short
 * count.  Inherited by threads and children.
 */
int adi_set_syscall_signal(bool on);
int adi_get_syscall_signal(void);

/*
 * Read-ahead ranges: mismatching loads by code in a range complete without
 * a signal (glibc's string functions read whole vectors past their data).
 */
int adi_add_readahead(const void *start, size_t len);
int adi_clear_readahead(const void *start, size_t len);	/* NULL, 0: all */
long adi_readahead_count(void);
int adi_set_readahead_strict(bool strict);
/*
 * Register the executable segments of the loaded C library: libc.so.6 and
 * the dynamic linker (ld-linux-x86-64.so.2, found at AT_BASE), which runs
 * its own copies of the string functions, e.g. strlen() of a dlopen()
 * path.  Returns the number of ranges registered, or -1 with errno (ENOENT when
 * no shared C library is loaded, e.g. in a static program).
 */
int adi_register_libc(void);

static inline void *adi_make_ptr(const void *p, unsigned int version)
{
	return (void *)(((uintptr_t)p & ~ADI_VERSION_MASK) |
			((uintptr_t)(version & 0xf) << ADI_VERSION_SHIFT));
}

static inline void *adi_strip_ptr(const void *p)
{
	return (void *)((uintptr_t)p & ~ADI_VERSION_MASK);
}

static inline unsigned int adi_ptr_version(const void *p)
{
	return (uintptr_t)p >> ADI_VERSION_SHIFT;
}

#endif
