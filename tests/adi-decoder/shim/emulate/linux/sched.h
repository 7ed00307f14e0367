/*
 * Shim for <linux/sched.h>: the string copy of adi_emulate.c may
 * reschedule between chunks.  This test calls only the decoders; the
 * emulation functions compile but never run here.
 */
#ifndef ADI_SHIM_LINUX_SCHED_H
#define ADI_SHIM_LINUX_SCHED_H
#define current ((void *)0)
static inline void cond_resched(void)
{
}
#endif
