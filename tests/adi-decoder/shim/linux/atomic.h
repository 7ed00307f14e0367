/*
 * Shim for <linux/atomic.h>: adi_internal.h declares struct adi_stats with
 * atomic_long_t members.  Nothing here reads or writes them; the type only
 * has to exist for the declaration to compile.
 */
#ifndef ADI_SHIM_LINUX_ATOMIC_H
#define ADI_SHIM_LINUX_ATOMIC_H
typedef struct {
	long counter;
} atomic_long_t;
#endif
