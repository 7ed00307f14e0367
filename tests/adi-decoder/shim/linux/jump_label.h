/*
 * Shim for <linux/jump_label.h>: adi_internal.h includes it for the kernel's
 * static keys, which only the (shimmed, empty) asm/adi_uaccess.h uses.
 */
