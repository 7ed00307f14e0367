// SPDX-License-Identifier: GPL-2.0
/*
 * SK_MSG verdict programs of the sockmsg tool: one body, two entry points
 * (one redirects through the sockmap, one through the sockhash).  The
 * configuration and the verdict counters live in .bss, which the loader
 * reads and writes through the mmap()ed map.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sockmsg.h"

struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, SM_NKEYS);
	__type(key, __u32);
	__type(value, __u32);
} sock_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, SM_NKEYS);
	__type(key, __u32);
	__type(value, __u32);
} sock_hash SEC(".maps");

struct sm_config cfg;
struct sm_counters cnt;

/* 1 when cfg.pattern occurs in the first SM_SCAN_MAX bytes of [data, end). */
static __always_inline int has_pattern(struct sk_msg_md *msg)
{
	__u8 *data = msg->data, *end = msg->data_end;
	__u32 plen = cfg.pattern_len;
	int i, j;

	if (plen == 0 || plen > SM_PATTERN_MAX)
		return 0;
	for (i = 0; i < SM_SCAN_MAX; i++) {
		__u8 *p = data + i;
		int match = 1;

		if (p + SM_PATTERN_MAX > end) {
			/* Tail shorter than the maximum: check byte by byte. */
			if (p + 1 > end)
				break;
		}
#pragma unroll
		for (j = 0; j < SM_PATTERN_MAX; j++) {
			if (j >= plen)
				break;
			if (p + j + 1 > end) {
				match = 0;
				break;
			}
			if (p[j] != cfg.pattern[j]) {
				match = 0;
				break;
			}
		}
		if (match)
			return 1;
	}
	return 0;
}

static __always_inline int verdict(struct sk_msg_md *msg, int hash)
{
	__u32 key = cfg.redir_key;

	__sync_fetch_and_add(&cnt.runs, 1);
	__sync_fetch_and_add(&cnt.bytes_seen, msg->size);
	if (cfg.apply)
		bpf_msg_apply_bytes(msg, cfg.apply);
	if (cfg.cork)
		bpf_msg_cork_bytes(msg, cfg.cork);
	if (cfg.pull_end) {
		if (bpf_msg_pull_data(msg, cfg.pull_start, cfg.pull_end, 0))
			__sync_fetch_and_add(&cnt.pull_errors, 1);
	}
	if (cfg.pattern_len && has_pattern(msg)) {
		__sync_fetch_and_add(&cnt.policy_drop, 1);
		__sync_fetch_and_add(&cnt.drop, 1);
		return SK_DROP;
	}
	switch (cfg.mode) {
	case SM_MODE_DROP:
		__sync_fetch_and_add(&cnt.drop, 1);
		return SK_DROP;
	case SM_MODE_REDIRECT:
		__sync_fetch_and_add(&cnt.redirect, 1);
		if (hash)
			return bpf_msg_redirect_hash(msg, &sock_hash, &key,
						     cfg.redir_flags);
		return bpf_msg_redirect_map(msg, &sock_map, key,
					    cfg.redir_flags);
	default:
		__sync_fetch_and_add(&cnt.pass, 1);
		return SK_PASS;
	}
}

SEC("sk_msg")
int msg_verdict_map(struct sk_msg_md *msg)
{
	return verdict(msg, 0);
}

SEC("sk_msg")
int msg_verdict_hash(struct sk_msg_md *msg)
{
	return verdict(msg, 1);
}

/*
 * Not an SK_MSG program: the tool never loads it; the sockmap suite's
 * sockmsg_errors attaches it as a message verdict to show the refusal.
 */
SEC("socket")
int not_sk_msg(struct __sk_buff *skb)
{
	return skb->len;
}

char LICENSE[] SEC("license") = "GPL";
