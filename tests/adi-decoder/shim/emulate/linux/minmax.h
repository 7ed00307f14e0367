/* Shim for <linux/minmax.h>: min() and max() (without the kernel's type checks). */
#ifndef ADI_SHIM_LINUX_MINMAX_H
#define ADI_SHIM_LINUX_MINMAX_H
#define min(a, b) ({ typeof(a) __a = (a); typeof(b) __b = (b); __a < __b ? __a : __b; })
#define max(a, b) ({ typeof(a) __a = (a); typeof(b) __b = (b); __a > __b ? __a : __b; })
#endif
