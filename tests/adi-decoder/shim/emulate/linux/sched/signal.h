/*
 * Shim for <linux/sched/signal.h>: signal_pending() and fatal_signal_pending().
 * They are reached only by the string engine's loop over user memory, which
 * this harness never runs; both say "pending" so a loop that did would stop.
 */
#ifndef ADI_SHIM_LINUX_SCHED_SIGNAL_H
#define ADI_SHIM_LINUX_SCHED_SIGNAL_H
static inline int fatal_signal_pending(void *task)
{
	(void)task;
	return 1;
}

static inline int signal_pending(void *task)
{
	(void)task;
	return 1;
}
#endif
