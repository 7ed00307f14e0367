/*
 * Shim for <asm/adi_uaccess.h>: the kernel's user-access hooks (static key,
 * __user pointers), which adi_internal.h includes for other files of the
 * implementation; the classifier uses none of them.  The real header
 * includes <asm/adi.h>, whose block geometry adi_internal.h's struct
 * adi_tags is sized by.
 */
#ifndef ADI_SHIM_ASM_ADI_UACCESS_H
#define ADI_SHIM_ASM_ADI_UACCESS_H
#define ADI_VERSIONS_PER_PAGE	64	/* PAGE_SIZE / ADI_BLOCK_SIZE */
#endif
