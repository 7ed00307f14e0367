/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the ADI tests: versioned test memory and catching the
 * SIGSEGV a mismatch raises.
 */
#ifndef ADI_TEST_H
#define ADI_TEST_H

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
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
