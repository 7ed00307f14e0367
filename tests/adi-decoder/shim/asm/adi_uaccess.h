/*
 * Shim for <asm/adi_uaccess.h>: the kernel's user-access hooks (static key,
 * __user pointers), which adi_internal.h includes for other files of the
 * implementation; the classifier uses none of them.
 */
