// SPDX-License-Identifier: GPL-2.0
/* Booted with adi=off: no aux vectors, PROT_ADI and the prctl()s refused. */
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "libadi.h"
#include "tap.h"

#include <errno.h>
#include <sys/mman.h>

int main(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *p;

	tap_init();
	tap_ok(getauxval(AT_ADI_BLKSZ) == 0 && getauxval(AT_ADI_NBITS) == 0 &&
	       getauxval(AT_ADI_UEONADI) == 0, "no AT_ADI_* aux vectors");
	tap_ok(!adi_is_available(), "libadi says ADI is not available");
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE | PROT_ADI, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tap_ok(p == MAP_FAILED && errno == EINVAL, "mmap with PROT_ADI: EINVAL");
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tap_ok(mprotect(p, pg, PROT_READ | PROT_ADI) == -1 && errno == EINVAL,
	       "mprotect with PROT_ADI: EINVAL");
	tap_ok(adi_set_version(p, 64, 1) == -1 && errno == EINVAL, "PR_ADI_SET_VERSION: EINVAL");
	tap_ok(adi_get_version(p) == -1 && errno == EINVAL, "PR_ADI_GET_VERSION: EINVAL");
	tap_ok(adi_set_precise(true) == -1 && errno == EINVAL, "PR_ADI_SET_PRECISE: EINVAL");
	return tap_done();
}
