/*
 * Shim for <asm/adi_uaccess.h>, for adi_emulate.c: the block geometry it
 * takes from <asm/adi.h> through it (64-byte blocks, BIT(ADI_BLOCK_SHIFT)
 * there, 64 to a page, which sizes adi_internal.h's struct adi_tags);
 * the fill buffer of the string copy, which never runs here.
 */
#ifndef ADI_SHIM_EMULATE_ADI_UACCESS_H
#define ADI_SHIM_EMULATE_ADI_UACCESS_H
#define ADI_BLOCK_SIZE BIT(6)
#define ADI_VERSIONS_PER_PAGE 64
#endif
