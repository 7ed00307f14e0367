/*
 * Shim for <linux/uaccess.h>: the user accesses of adi_emulate.c's
 * emulation functions.  This test calls only its decoders
 * (adi_decode_mov/alu/vmov); every access here fails (-EFAULT, nothing
 * copied), so that the emulation functions compile as they are but could
 * never touch memory if something called them.
 */
#ifndef ADI_SHIM_LINUX_UACCESS_H
#define ADI_SHIM_LINUX_UACCESS_H
#include <linux/types.h>

/* for_each_insn_prefix() needs it; the kernel's uaccess.h has it through linux/kernel.h. */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define PAGE_SIZE 4096UL
#define TASK_SIZE_MAX ((1UL << 47) - PAGE_SIZE)

#define __get_user(x, ptr) ({ (void)(ptr); (x) = 0; -EFAULT; })
#define __put_user(x, ptr) ({ (void)(x); (void)(ptr); -EFAULT; })

static inline unsigned long copy_to_user(void *to, const void *from, unsigned long n)
{
	(void)to;
	(void)from;
	return n;
}

static inline unsigned long copy_from_user(void *to, const void *from, unsigned long n)
{
	(void)to;
	(void)from;
	return n;
}

static inline unsigned long copy_user_generic(void *to, const void *from, unsigned long n)
{
	(void)to;
	(void)from;
	return n;
}
#endif
