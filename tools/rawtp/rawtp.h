/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between rawtp.bpf.c and the loaders: map keys and the record
 * streamed through the perf buffer.  Plain fixed-size types only, so the
 * BPF object and user space agree without BTF.
 */
#ifndef RAWTP_H
#define RAWTP_H

/* How many tracepoints one run can attach; the attach cookie is the index. */
#define RAWTP_MAX_TP		64
/* Slot of the per-CPU totals array that counts events whose task key did
 * not fit in the task map (so a full map shows instead of hiding counts).
 */
#define RAWTP_DROPPED_SLOT	RAWTP_MAX_TP
/* The kernel passes at most 12 arguments to a raw tracepoint program. */
#define RAWTP_MAX_ARGS		12
#define RAWTP_COMM_LEN		16
#define RAWTP_STR_LEN		64
#define RAWTP_MAX_TASKS		10240
#define RAWTP_MAX_STACKS	4096
#define RAWTP_STACK_DEPTH	32

struct rawtp_task_key {
	__u32 tp;
	__u32 pid;		/* thread group id, what user space calls a pid */
	char comm[RAWTP_COMM_LEN];
};

struct rawtp_stack_key {
	__u32 tp;
	__s32 stackid;
};

struct rawtp_event {
	__u32 tp;
	__u32 pid;
	__u32 tid;
	__u32 nargs;
	__u64 args[RAWTP_MAX_ARGS];
	char comm[RAWTP_COMM_LEN];
	/* the argument named by --str-arg, read as a kernel string */
	char str[RAWTP_STR_LEN];
};

#endif
