/* Shim for <linux/sched/signal.h>: fatal_signal_pending() (never run here). */
#ifndef ADI_SHIM_LINUX_SCHED_SIGNAL_H
#define ADI_SHIM_LINUX_SCHED_SIGNAL_H
static inline int fatal_signal_pending(void *task)
{
	(void)task;
	return 1;
}
#endif
