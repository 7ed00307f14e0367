// SPDX-License-Identifier: GPL-2.0
/*
 * The same work, one per-CPU counter increment, in the three program
 * types the seed compares: raw tracepoint, classic tracepoint (through
 * perf_event_open) and kprobe.  Only the way in differs.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static __always_inline void hit(void)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&hits, &key);

	if (v)
		(*v)++;
}

SEC("raw_tp")
int bench_raw_tp(void *ctx)
{
	hit();
	return 0;
}

SEC("tracepoint")
int bench_tp(void *ctx)
{
	hit();
	return 0;
}

SEC("kprobe")
int bench_kprobe(void *ctx)
{
	hit();
	return 0;
}
