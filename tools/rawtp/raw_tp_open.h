/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF_RAW_TRACEPOINT_OPEN, the one copy for the rawtp tool, its suite and
 * the demo.  With a cookie: libbpf 1.1 has no way to pass one, so the
 * command is issued directly.  The fd it returns is the whole attachment:
 * closing it unregisters the probe.  -1 with errno on failure (ENOENT: no
 * such tracepoint).
 */
#ifndef LK417_RAW_TP_OPEN_H
#define LK417_RAW_TP_OPEN_H

#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline int raw_tp_open(int prog_fd, const char *name, __u64 cookie)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.raw_tracepoint.name = (__u64)(unsigned long)name;
	attr.raw_tracepoint.prog_fd = prog_fd;
	attr.raw_tracepoint.cookie = cookie;
	return syscall(__NR_bpf, BPF_RAW_TRACEPOINT_OPEN, &attr, sizeof(attr));
}

#endif
