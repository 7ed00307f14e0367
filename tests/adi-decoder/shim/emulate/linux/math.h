/* Shim for <linux/math.h>: rounddown(), as the kernel defines it. */
#ifndef ADI_SHIM_LINUX_MATH_H
#define ADI_SHIM_LINUX_MATH_H
#define rounddown(x, y) ({ typeof(x) __x = (x); __x - (__x % (y)); })
#endif
