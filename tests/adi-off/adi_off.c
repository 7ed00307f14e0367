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
	tap_eq_long(getauxval(AT_ADI_BLKSZ), 0, "no AT_ADI_* aux vectors: AT_ADI_BLKSZ");
	tap_eq_long(getauxval(AT_ADI_NBITS), 0, "no AT_ADI_* aux vectors: AT_ADI_NBITS");
	tap_eq_long(getauxval(AT_ADI_UEONADI), 0, "no AT_ADI_* aux vectors: AT_ADI_UEONADI");
	tap_ok(!adi_is_available(), "libadi says ADI is not available");
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE | PROT_ADI, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tap_errno((long)p, EINVAL, "mmap with PROT_ADI: EINVAL");
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		/* The calls below would be refused for the bad address, not for ADI. */
		tap_ok(0, "mmap of a plain page for the checks below: got MAP_FAILED (%s), "
		       "want a mapping", tap_errname(errno));
		return tap_done();
	}
	tap_errno(mprotect(p, pg, PROT_READ | PROT_ADI), EINVAL, "mprotect with PROT_ADI: EINVAL");
	tap_errno(adi_set_version(p, 64, 1), EINVAL, "PR_ADI_SET_VERSION: EINVAL");
	tap_errno(adi_get_version(p), EINVAL, "PR_ADI_GET_VERSION: EINVAL");
	tap_errno(adi_set_precise(true), EINVAL, "PR_ADI_SET_PRECISE: EINVAL");
	return tap_done();
}
