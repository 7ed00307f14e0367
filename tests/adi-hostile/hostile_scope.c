// SPDX-License-Identifier: GPL-2.0
/*
 * gp-scope: the kernel-mode #GP handler completes only the kernel's own
 * user accesses (issue 19, defect 4).  A machine-check-safe copy that a
 * buggy kernel caller runs on a versioned user pointer, outside any
 * STAC/CLAC section, must fail as it does without ADI, even when the
 * version matches.  The kernel's hook (CONFIG_X86_ADI_SELFTEST,
 * /sys/kernel/debug/adi-selftest/copy_mc) does that copy for us; the
 * series before patch 25 completed it.
 */
#include "hostile.h"

#define HOOK "/sys/kernel/debug/adi-selftest/copy_mc"

/* Ask the kernel to copy_mc_to_kernel() 8 bytes from @addr: 0 or -1/errno. */
static int kernel_copy_mc(uint64_t addr)
{
	char text[32];
	int fd = open(HOOK, O_WRONLY | O_CLOEXEC), ret, len, err;

	if (fd < 0)
		return -1;
	len = snprintf(text, sizeof(text), "0x%" PRIx64, addr);
	ret = write(fd, text, len) == len ? 0 : -1;
	err = errno;
	close(fd);
	errno = err;
	return ret;
}

static void gp_scope(void)
{
	uint64_t *mem, match, mismatch;

	if (access(HOOK, W_OK)) {
		tap_skip("kernel without CONFIG_X86_ADI_SELFTEST (KASAN kernels cannot have it)",
			 "copy_mc_to_kernel() through versioned user pointers");
		return;
	}
	mem = adi_region(4096, 5);
	*mem = 0x1122334455667788;
	match = (uint64_t)adi_make_ptr(mem, 5);
	mismatch = (uint64_t)adi_make_ptr(mem, 9);
	tap_errno(kernel_copy_mc(match), EFAULT,
		  "copy_mc_to_kernel() from a matching versioned user pointer, outside a "
		  "user-access section, fails as without ADI");
	tap_errno(kernel_copy_mc(mismatch), EFAULT,
		  "copy_mc_to_kernel() from a mismatching versioned user pointer fails");
	tap_errno(kernel_copy_mc(UINT64_C(0x5fff888000000000)), EINVAL,
		  "the hook takes only versioned user addresses");
	tap_ok(*(volatile uint64_t *)match == 0x1122334455667788,
	       "the program still reads its block through the matching pointer");
}

int main(void)
{
	tap_init();
	hostile_group("gp-scope", gp_scope);
	return tap_done();
}
