/* Shim for <linux/bitops.h>: the two helpers adi_emulate.c uses, as the kernel defines them. */
#ifndef ADI_SHIM_LINUX_BITOPS_H
#define ADI_SHIM_LINUX_BITOPS_H
#include <linux/types.h>

#define hweight8(w) __builtin_popcount((u8)(w))

/* Sign-extend @value from bit @index (0-based), as the kernel's. */
static inline int64_t sign_extend64(uint64_t value, int index)
{
	uint8_t shift = 63 - index;

	return (int64_t)(value << shift) >> shift;
}
#endif
