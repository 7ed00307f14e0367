/* SPDX-License-Identifier: GPL-2.0 */
/* Shared between sockmsg.bpf.c and sockmsg.c. */
#ifndef SOCKMSG_H
#define SOCKMSG_H

#define SM_MODE_PASS		0
#define SM_MODE_DROP		1
#define SM_MODE_REDIRECT	2

#define SM_PATTERN_MAX		8
/* The content policy scans at most this many bytes of the current window. */
#define SM_SCAN_MAX		512

/* Map slots: the sender, its peer, the second connection's two ends. */
#define SM_KEY_SENDER		0
#define SM_KEY_PEER		1
#define SM_KEY_OTHER_CLIENT	2
#define SM_KEY_OTHER_PEER	3
#define SM_NKEYS		4

struct sm_config {
	__u32 mode;
	__u32 redir_key;
	__u64 redir_flags;
	__u32 apply;		/* 0: whole message */
	__u32 cork;		/* 0: no cork */
	__u32 pull_start;
	__u32 pull_end;		/* 0: no pull */
	__u32 pattern_len;	/* 0: no content policy */
	__u8 pattern[SM_PATTERN_MAX];
};

struct sm_counters {
	__u64 runs;
	__u64 pass;
	__u64 drop;
	__u64 redirect;
	__u64 policy_drop;
	__u64 pull_errors;
	__u64 bytes_seen;	/* sum of msg->size over runs */
};

#endif
