/*
 * Shim for the kernel's force-included <linux/compiler_types.h>, for
 * adi_emulate.c only (the Makefile passes it with -include, as the
 * kernel's build does its own): the annotations that file uses.
 */
#ifndef ADI_SHIM_COMPILER_TYPES_H
#define ADI_SHIM_COMPILER_TYPES_H
#define __user
#define __force
#define fallthrough __attribute__((__fallthrough__))
#endif
