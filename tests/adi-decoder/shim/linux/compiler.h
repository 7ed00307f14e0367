/* Shim for <linux/compiler.h>: READ_ONCE(), which adi_internal.h's inline helpers use. */
#ifndef ADI_SHIM_LINUX_COMPILER_H
#define ADI_SHIM_LINUX_COMPILER_H
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#endif
