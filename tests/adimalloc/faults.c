// SPDX-License-Identifier: GPL-2.0
/*
 * Faults and failures the allocator must survive, made to happen at a
 * chosen moment.  This program defines mprotect() and prctl() itself
 * (linked -rdynamic, so the preloaded library's calls reach these):
 * each passes through to the system call unless armed.
 *
 *   faults inlock     a stale heap read inside mprotect(), which the
 *                     allocator calls with its heap lock held (new slab):
 *                     the SIGSEGV handler must not wait for that lock
 *   faults readonly   a mismatching read of a read-only ADI mapping: its
 *                     version cannot be changed (EACCES), so with
 *                     halt_on_error=0 the access can never proceed
 *   faults freefail   free() whose re-versioning fails (ENOMEM)
 *   faults allocfail  malloc() whose first version setting fails
 *
 * Prints what happened after each step on stdout; the suite checks the
 * exit status and the report.
 */
#include <errno.h>
#include <stdarg.h>
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
static volatile int fail_versions;	/* PR_ADI_SET_VERSION calls to fail */

int mprotect(void *addr, size_t len, int prot)
{
	volatile char *p = stale;

	if (p) {
		stale = NULL;	/* once: halt_on_error=0 goes on from here */
		sink = p[3];
	}
	return (int)syscall(SYS_mprotect, addr, len, prot);
}

int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_ADI_SET_VERSION && fail_versions > 0) {
		fail_versions--;
		errno = ENOMEM;
		return -1;
	}
	return (int)syscall(SYS_prctl, option, a[0], a[1], a[2], a[3]);
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
	    prctl(PR_ADI_SET_VERSION, (unsigned long)m, 4096UL, 3UL, 0UL) ||
	    mprotect(m, 4096, PROT_READ | PROT_ADI)) {
		perror("readonly: setup");
		exit(3);
	}
	printf("readonly: reading\n");
	fflush(stdout);
	sink = *(volatile char *)adi_make_ptr(m + 100, 5);
	printf("readonly: read done\n");
}

static void freefail(void)
{
	char *p = malloc(40);

	fprintf(stderr, "bug: ptr=%p\n", (void *)p);
	fail_versions = 1000;
	free(p);
	fail_versions = 0;
	printf("freefail: free returned\n");
}

/* The second 1100-byte block takes a fresh slot of an existing slab; its
 * first version setting is the slot's padding. */
static void allocfail(void)
{
	char *a = malloc(1100), *b, *c;
	int err;

	fail_versions = 1;
	errno = 0;
	b = malloc(1100);
	err = errno;
	fail_versions = 0;
	c = malloc(1100);
	printf("allocfail: got %s (%s), want NULL (ENOMEM); the next malloc: %s\n",
	       b ? "a block" : "NULL", err ? strerrorname_np(err) : "0",
	       c ? "a block" : "NULL");
	free(a);
	free(b);
	free(c);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(what, "inlock"))
		inlock();
	else if (!strcmp(what, "readonly"))
		readonly();
	else if (!strcmp(what, "freefail"))
		freefail();
	else if (!strcmp(what, "allocfail"))
		allocfail();
	else {
		fprintf(stderr, "faults: inlock|readonly|freefail|allocfail\n");
		return 2;
	}
	return 0;
}
