/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the ADI tests: versioned test memory and catching the
 * SIGSEGV a mismatch raises.
 *
 *   sig = TRY(statement);       run it; the signal it raised (0: none),
 *                               details in 'caught'
 *   Checks of what the last TRY() caught, in tap.h's style: one TAP line
 *   that ends in "got <signal, si_code, si_addr, rip>, want ...":
 *   adi_expect_no_signal(sig, fmt, ...);   @sig (TRY()'s value) is 0
 *   adi_expect_segv(code, addr, fmt, ...); SIGSEGV, si_code @code, si_addr
 *                               @addr (SEGV_ADIPERR: the versioned data
 *                               address, as is_adi_perr())
 *   adi_expect_perr(fmt, ...);  SIGSEGV SEGV_ADIPERR at any address, for a
 *                               caller that cannot know it or checks it
 *                               apart
 *   adi_expect_derr(fmt, ...);  SIGSEGV SEGV_ADIDERR at the faulting
 *                               instruction (si_addr == rip, is_adi_derr())
 *   adi_expect_refused(fmt, ...);  a plain SIGSEGV, si_code SI_KERNEL
 *                               (128): the checker refused an instruction
 *                               it does not know; no address is promised
 *   adi_expect_code(code, fmt, ...);  SIGSEGV with si_code @code at any
 *                               address (adi_expect_code_v: with a va_list)
 *   adi_expect_caught(ok, want, fmt, ...);  a want of one's own: @ok says
 *                               whether it held, @want describes it
 */
#ifndef ADI_TEST_H
#define ADI_TEST_H

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "libadi.h"
#include "tap.h"

#define BLK 64

/* What the last caught signal said. */
struct caught {
	int signo;
	int code;
	void *addr;
	unsigned long rip;
	unsigned long eflags;
	greg_t gregs[NGREG];
};

static struct caught caught;
static sigjmp_buf catch_env;
static volatile sig_atomic_t catching;

static void catch_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	caught.signo = sig;
	caught.code = si->si_code;
	caught.addr = si->si_addr;
	caught.rip = uc->uc_mcontext.gregs[REG_RIP];
	caught.eflags = uc->uc_mcontext.gregs[REG_EFL];
	memcpy(caught.gregs, uc->uc_mcontext.gregs, sizeof(caught.gregs));
	if (catching)
		siglongjmp(catch_env, 1);
	/* Not expected: die of it, so the group reports the crash. */
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline void catch_install(void)
{
	struct sigaction sa = { .sa_sigaction = catch_handler, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/*
 * TRY(statement): run it; evaluates to the signal it raised (0 if none),
 * with the details in 'caught'.
 */
#define TRY(stmt) ({							\
	memset(&caught, 0, sizeof(caught));				\
	catch_install();						\
	catching = 1;							\
	if (!sigsetjmp(catch_env, 1)) {					\
		stmt;							\
	}								\
	catching = 0;							\
	caught.signo;							\
})

/* A mismatch report as the contract describes it. */
static inline int is_adi_perr(void *tagged_addr)
{
	return caught.signo == SIGSEGV && caught.code == SEGV_ADIPERR &&
	       caught.addr == tagged_addr;
}

static inline int is_adi_derr(void)
{
	return caught.signo == SIGSEGV && caught.code == SEGV_ADIDERR &&
	       (unsigned long)caught.addr == caught.rip;
}

/* The name of si_code @code of signal @signo, for messages. */
static inline const char *adi_code_name(int signo, int code)
{
	if (code == SI_KERNEL)
		return "SI_KERNEL";
	if (signo != SIGSEGV)
		return "?";
	switch (code) {
	case SEGV_MAPERR:
		return "SEGV_MAPERR";
	case SEGV_ACCERR:
		return "SEGV_ACCERR";
	case SEGV_ACCADI:
		return "SEGV_ACCADI";
	case SEGV_ADIDERR:
		return "SEGV_ADIDERR";
	case SEGV_ADIPERR:
		return "SEGV_ADIPERR";
	}
	return "?";
}

/*
 * tap_ok_tail() with "got <what the last TRY() caught>, want @want": the
 * whole report, so that a failure under the emulator says what came
 * instead without a rerun.
 */
static inline int adi_expect_caught_v(int ok, const char *want, const char *fmt, va_list ap)
{
	const char *abbrev = caught.signo ? sigabbrev_np(caught.signo) : NULL;
	char tail[320];

	if (!caught.signo)
		snprintf(tail, sizeof(tail), "got no signal, want %s", want);
	else
		snprintf(tail, sizeof(tail), "got SIG%s code %d (%s) addr %p rip %#lx, want %s",
			 abbrev ? abbrev : "?", caught.code,
			 adi_code_name(caught.signo, caught.code), caught.addr, caught.rip, want);
	return tap_ok_tail(ok, tail, fmt, ap);
}

__attribute__((format(printf, 2, 3)))
static inline int adi_expect_no_signal(int sig, const char *fmt, ...)
{
	va_list ap;
	int ok;

	va_start(ap, fmt);
	ok = adi_expect_caught_v(sig == 0, "no signal", fmt, ap);
	va_end(ap);
	return ok;
}

/*
 * One claim, the report the contract promises: the si_code means nothing
 * without SIGSEGV, nor the address without the code.
 */
__attribute__((format(printf, 3, 4)))
static inline int adi_expect_segv(int code, const void *addr, const char *fmt, ...)
{
	char want[96];
	va_list ap;
	int ok;

	snprintf(want, sizeof(want), "SIGSEGV code %d (%s) addr %p", code,
		 adi_code_name(SIGSEGV, code), addr);
	va_start(ap, fmt);
	ok = adi_expect_caught_v(caught.signo == SIGSEGV && caught.code == code &&
				 caught.addr == addr, want, fmt, ap);
	va_end(ap);
	return ok;
}

/* SIGSEGV with si_code @code, any si_addr: adi_expect_perr(), _refused(). */
static inline int adi_expect_code_v(int code, const char *fmt, va_list ap)
{
	char want[96];

	snprintf(want, sizeof(want), "SIGSEGV code %d (%s), any addr", code,
		 adi_code_name(SIGSEGV, code));
	return adi_expect_caught_v(caught.signo == SIGSEGV && caught.code == code, want, fmt,
				   ap);
}

__attribute__((format(printf, 3, 4)))
static inline int adi_expect_caught(int ok, const char *want, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ok = adi_expect_caught_v(ok, want, fmt, ap);
	va_end(ap);
	return ok;
}

/* SIGSEGV with si_code @code, any si_addr. */
__attribute__((format(printf, 2, 3)))
static inline int adi_expect_code(int code, const char *fmt, ...)
{
	va_list ap;
	int ok;

	va_start(ap, fmt);
	ok = adi_expect_code_v(code, fmt, ap);
	va_end(ap);
	return ok;
}

__attribute__((format(printf, 1, 2)))
static inline int adi_expect_perr(const char *fmt, ...)
{
	va_list ap;
	int ok;

	va_start(ap, fmt);
	ok = adi_expect_code_v(SEGV_ADIPERR, fmt, ap);
	va_end(ap);
	return ok;
}

__attribute__((format(printf, 1, 2)))
static inline int adi_expect_refused(const char *fmt, ...)
{
	va_list ap;
	int ok;

	va_start(ap, fmt);
	ok = adi_expect_code_v(SI_KERNEL, fmt, ap);
	va_end(ap);
	return ok;
}

__attribute__((format(printf, 1, 2)))
static inline int adi_expect_derr(const char *fmt, ...)
{
	char want[96];
	va_list ap;
	int ok;

	snprintf(want, sizeof(want), "SIGSEGV code %d (SEGV_ADIDERR) addr == rip",
		 SEGV_ADIDERR);
	va_start(ap, fmt);
	ok = adi_expect_caught_v(is_adi_derr(), want, fmt, ap);
	va_end(ap);
	return ok;
}

/* Does /proc/self/smaps list "ad" in VmFlags for the mapping at @p? */
static inline int smaps_has_ad(void *p)
{
	char line[512], want[32];
	int in = 0, found = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	while (f && fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strstr(line, " ") && line[0] != 'V' &&
		    strncmp(line, want, strlen(want)) == 0)
			in = 1;
		else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			found = strstr(line, " ad") != NULL;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Anonymous ADI memory, version 0 everywhere. */
static inline void *adi_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_ADI,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		tap_diag("mmap PROT_ADI %zu bytes: %s", len, strerror(errno));
		exit(1);
	}
	return p;
}

static inline void must_set_version(void *p, size_t len, unsigned int v)
{
	if (adi_set_version(p, len, v)) {
		tap_diag("adi_set_version(%p, %zu, %u): %s", p, len, v, strerror(errno));
		exit(1);
	}
}

/* A number from /sys/kernel/debug/adi/@name (ADI's counters), or -1. */
static inline long adi_counter(const char *name)
{
	char path[128], text[64] = "";
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/adi/%s", name);
	f = fopen(path, "r");
	if (f) {
		if (fgets(text, sizeof(text), f))
			v = strtol(text, NULL, 10);
		fclose(f);
	}
	return v;
}

#endif
