/*
 * Shim for <asm/adi_uaccess.h>, for adi_emulate.c: the block size it
 * takes from <asm/adi.h> through it (64 bytes, BIT(ADI_BLOCK_SHIFT) there);
 * the fill buffer of the string copy, which never runs here.
 */
#ifndef ADI_SHIM_EMULATE_ADI_UACCESS_H
#define ADI_SHIM_EMULATE_ADI_UACCESS_H
#define ADI_BLOCK_SIZE BIT(6)
#endif
