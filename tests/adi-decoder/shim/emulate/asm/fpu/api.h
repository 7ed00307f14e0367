/* Shim for <asm/fpu/api.h>: the FPU register lock around a vector move (never run here). */
#ifndef ADI_SHIM_ASM_FPU_API_H
#define ADI_SHIM_ASM_FPU_API_H
static inline void fpregs_lock_and_load(void)
{
}

static inline void fpregs_unlock(void)
{
}
#endif
