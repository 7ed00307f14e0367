// SPDX-License-Identifier: LGPL-2.1-or-later
/* libadi: see libadi.h. */
#include <errno.h>
#include <link.h>
#include <linux/prctl.h>
#include <string.h>
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
	if (adi_libc_uses_avx512()) {
		errno = EOPNOTSUPP;
		return -1;
	}
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

int adi_set_syscall_signal(bool on)
{
	return prctl(PR_ADI_SET_SYSCALL_SIGNAL, on ? 1 : 0, 0, 0, 0);
}

int adi_get_syscall_signal(void)
{
	return prctl(PR_ADI_GET_SYSCALL_SIGNAL, 0, 0, 0, 0);
}

int adi_add_readahead(const void *start, size_t len)
{
	return prctl(PR_ADI_ADD_READAHEAD, (unsigned long)start, len, 0, 0);
}

int adi_clear_readahead(const void *start, size_t len)
{
	return prctl(PR_ADI_CLEAR_READAHEAD, (unsigned long)start, len, 0, 0);
}

long adi_readahead_count(void)
{
	return prctl(PR_ADI_GET_READAHEAD_COUNT, 0, 0, 0, 0);
}

int adi_set_readahead_strict(bool strict)
{
	return prctl(PR_ADI_SET_READAHEAD_STRICT, strict ? 1 : 0, 0, 0, 0);
}

struct libc_search {
	int registered;
	int error;
};

static int register_if_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	struct libc_search *s = data;
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libc.so", 7) != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (adi_add_readahead((const void *)(info->dlpi_addr + ph->p_vaddr),
				      ph->p_memsz)) {
			s->error = errno;
			return 1;
		}
		s->registered++;
	}
	return 1;		/* found: stop */
}

int adi_register_libc(void)
{
	struct libc_search s = { 0, 0 };

	dl_iterate_phdr(register_if_libc, &s);
	if (s.error) {
		errno = s.error;
		return -1;
	}
	if (!s.registered) {
		errno = ENOENT;
		return -1;
	}
	return s.registered;
}
