// SPDX-License-Identifier: GPL-2.0
/*
 * Faults and failures the allocator must survive, made to happen at a
 * chosen moment.  This program defines mprotect() itself (linked
 * -rdynamic, so the preloaded library's calls reach it): it passes
 * through to the system call unless armed.
 *
 *   faults inlock     a stale heap read inside mprotect(), which the
 *                     allocator calls with its heap lock held (new slab):
 *                     the SIGSEGV handler must not wait for that lock
 *   faults readonly   a mismatching read of a read-only ADI mapping: its
 *                     version cannot be changed (EACCES), so with
 *                     halt_on_error=0 the access can never proceed
 *
 * Prints what happened after each step on stdout; the suite checks the
 * exit status and the report.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "libadi.h"

static volatile char sink;
static volatile char *volatile stale;	/* read inside mprotect() when set */

int mprotect(void *addr, size_t len, int prot)
{
	volatile char *p = stale;

	if (p) {
		stale = NULL;	/* once: halt_on_error=0 goes on from here */
		sink = p[3];
	}
	return (int)syscall(SYS_mprotect, addr, len, prot);
}

/* Fill 16 KiB slots (4 per slab) until the allocator maps a new slab. */
static void inlock(void)
{
	char *p = malloc(40);

	free(p);
	stale = p;
	for (int i = 0; i < 5; i++)
		sink = *(volatile char *)malloc(16384);
	printf("inlock: malloc returned, stale read %s\n", stale ? "not done" : "done");
}

static void readonly(void)
{
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_ADI,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED ||
	    syscall(SYS_prctl, PR_ADI_SET_VERSION, (unsigned long)m, 4096UL, 3UL, 0UL) ||
	    mprotect(m, 4096, PROT_READ | PROT_ADI)) {
		perror("readonly: setup");
		exit(3);
	}
	printf("readonly: reading\n");
	fflush(stdout);
	sink = *(volatile char *)adi_make_ptr(m + 100, 5);
	printf("readonly: read done\n");
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(what, "inlock"))
		inlock();
	else if (!strcmp(what, "readonly"))
		readonly();
	else {
		fprintf(stderr, "faults: inlock|readonly\n");
		return 2;
	}
	return 0;
}
