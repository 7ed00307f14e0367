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
	uintptr_t ldso_base;	/* getauxval(AT_BASE): where ld.so is loaded */
	int found;		/* objects matched */
	int registered;		/* ranges added */
	int error;
};

static bool name_is(const char *path, const char *prefix)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, prefix, strlen(prefix)) == 0;
}

/*
 * ld.so is the object loaded at AT_BASE.  Its name is a fallback for a
 * program started as "ld.so PROG", where AT_BASE is 0.
 */
static bool is_ldso(const struct dl_phdr_info *info, uintptr_t ldso_base)
{
	if (ldso_base)
		return info->dlpi_addr == ldso_base;
	return name_is(info->dlpi_name, "ld-linux-x86-64.so");
}

static int register_text(const struct dl_phdr_info *info, struct libc_search *s)
{
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
	return 0;
}

static int register_if_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	struct libc_search *s = data;

	(void)size;
	if (!name_is(info->dlpi_name, "libc.so") && !is_ldso(info, s->ldso_base))
		return 0;
	s->found++;
	if (register_text(info, s))
		return 1;	/* error: stop */
	return s->found == 2;	/* both found: stop */
}

/*
 * Why ld.so as well as libc: ld.so is linked with its own copies of the
 * string functions (strlen, memcpy, strcmp..., the SSE2 versions: it runs
 * before IFUNCs can be resolved), and it runs them on the program's heap
 * strings, e.g. strlen() of the path given to dlopen() in _dl_new_object().
 * These read aligned vectors past the end of a string like libc's do.
 * No other object that python3 or perl load carries string code of its
 * own that reads ahead (objdump -d of Debian 12's python3.11, libpython3.11,
 * lib-dynload's _sqlite3/_json/_ctypes, libsqlite3, libffi, libexpat, libz,
 * liblzma, libbz2, libm, libstdc++, perl, its XS modules and libcrypt):
 * their few pcmpeqb/pmovmskb compare registers in compiler-vectorised
 * loops on data they own; ld.so's other vector compares (vpcmpeqb) check
 * registers it saved on its own stack in _dl_runtime_profile.  Two ranges
 * of the kernel's eight: libc's text and ld.so's.
 */
int adi_register_libc(void)
{
	struct libc_search s = { .ldso_base = getauxval(AT_BASE) };

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
