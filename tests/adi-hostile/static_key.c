// SPDX-License-Identifier: GPL-2.0
/*
 * Run first in a fresh boot: a request to set versions that fails (no ADI
 * memory) must not switch ADI's version paths on for the whole system
 * (/sys/kernel/debug/adi/in_use stays 0); a valid one does.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>

#include "libadi.h"
#include "tap.h"

static int in_use(void)
{
	FILE *f = fopen("/sys/kernel/debug/adi/in_use", "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* force_sig_fault() overrides SIG_IGN: catch the SEGV_ACCADI instead. */
static void ignore(int sig)
{
	(void)sig;
}

int main(void)
{
	char *plain, *adi;
	int ret;

	tap_init();
	signal(SIGSEGV, ignore);	/* non-ADI memory raises SEGV_ACCADI */
	tap_ok(in_use() == 0, "fresh boot: in_use (got %d, want 0)", in_use());
	plain = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = 0;
	ret = adi_set_version(plain, 64, 5);
	tap_ok(ret == -1 && errno == EACCES && in_use() == 0,
	       "a failed set-version on plain memory leaves in_use off (got ret %d errno %d in_use %d; want -1, EACCES, 0)",
	       ret, errno, in_use());
	adi = mmap(NULL, 4096, PROT_READ | PROT_ADI, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = 0;
	ret = adi_set_version(adi, 64, 5);
	tap_ok(ret == -1 && errno == EACCES && in_use() == 0,
	       "a refused set-version on read-only ADI memory leaves in_use off (got ret %d errno %d in_use %d; want -1, EACCES, 0)",
	       ret, errno, in_use());
	mprotect(adi, 4096, PROT_READ | PROT_WRITE | PROT_ADI);
	ret = adi_set_version(adi, 64, 5);
	tap_ok(ret == 0 && in_use() == 1, "a valid set-version turns in_use on (got ret %d in_use %d; want 0, 1)",
	       ret, in_use());
	return tap_done();
}
