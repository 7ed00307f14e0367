/* Shim for <linux/bits.h>: BIT(), as the kernel defines it (an unsigned long). */
#ifndef ADI_SHIM_LINUX_BITS_H
#define ADI_SHIM_LINUX_BITS_H
#define BIT(nr) (1UL << (nr))
#endif
