// SPDX-License-Identifier: LGPL-2.1-or-later
/* libadi: see libadi.h. */
#include <errno.h>
#include <linux/prctl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "libadi.h"

int adi_get_caps(struct adi_caps *caps)
{
	unsigned long blksz = getauxval(AT_ADI_BLKSZ);

	if (!blksz) {
		errno = ENOTSUP;
		return -1;
	}
	caps->block_size = blksz;
	caps->version_bits = getauxval(AT_ADI_NBITS);
	caps->ue_version = getauxval(AT_ADI_UEONADI);
	return 0;
}

bool adi_is_available(void)
{
	return getauxval(AT_ADI_BLKSZ) != 0;
}

int adi_enable(void *addr, size_t len, int prot)
{
	return mprotect(adi_strip_ptr(addr), len, prot | PROT_ADI);
}

int adi_set_version(void *addr, size_t len, unsigned int version)
{
	return prctl(PR_ADI_SET_VERSION, (unsigned long)addr, len, version, 0);
}

int adi_get_version(const void *addr)
{
	return prctl(PR_ADI_GET_VERSION, (unsigned long)addr, 0, 0, 0);
}

int adi_set_precise(bool precise)
{
	return prctl(PR_ADI_SET_PRECISE, precise ? 1 : 0, 0, 0, 0);
}

int adi_get_precise(void)
{
	return prctl(PR_ADI_GET_PRECISE, 0, 0, 0, 0);
}
