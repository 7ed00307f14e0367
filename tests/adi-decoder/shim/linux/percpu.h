/*
 * Shim for <linux/percpu.h>: adi_internal.h declares the per-CPU ADI
 * counters and the inline helpers that bump them.  The classifier never
 * counts; the declarations only have to compile.
 */
#ifndef ADI_SHIM_LINUX_PERCPU_H
#define ADI_SHIM_LINUX_PERCPU_H
#define DECLARE_PER_CPU(type, name) extern __typeof__(type) name
#define this_cpu_inc(var) ((void)&(var))
#define this_cpu_dec(var) ((void)&(var))
#define this_cpu_add(var, n) ((void)&(var), (void)(n))
#endif
