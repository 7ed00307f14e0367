/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Map layouts shared by the BPF programs (sockaddr.bpf.c) and the
 * command-line tool (sockaddr.c).  Every map is pinned by name under the
 * tool's bpffs directory, so each "attach" loads a fresh copy of the
 * programs that works on the same maps as the others.
 *
 * Keys have explicit padding: user space zeroes whole keys, so a hash
 * lookup never depends on uninitialised bytes.
 */
#ifndef SOCKADDR_H
#define SOCKADDR_H

#include <linux/types.h>

#define SA_MAX_BACKENDS	8	/* static backends of one route */
/*
 * Published sockets of one cgroup, per family and protocol, that a route
 * can use.  The connect program walks them twice; the verifier explores
 * the walk path by path, so its cost grows exponentially with this number
 * (program load under TCG: 0.9 s with 4, 52 s with 16).
 */
#define SA_MAX_SLOTS	4
#define SA_PATH_MAX	256

/* Features of one attachment (the "features" .rodata constant). */
#define SA_FEAT_PUBLISH		0x1
#define SA_FEAT_ROUTE		0x2
#define SA_FEAT_FIREWALL	0x4
#define SA_FEAT_ALL		0x7

/* An IPv4 (a[0]) or IPv6 address, network byte order. */
struct sa_addr {
	__u32 a[4];
};

/*
 * Ports: a field ending in _be is in network byte order (__be16, as the
 * connect hooks read and write it); every other port is in host order.
 */

struct sa_backend {
	struct sa_addr addr;
	__be16 port_be;
	__u16 pad;
};

/* routes: a service address clients connect to. */
struct sa_route_key {
	__u8 family;		/* AF_INET or AF_INET6 */
	__u8 proto;		/* IPPROTO_TCP or IPPROTO_UDP */
	__be16 port_be;		/* as connect() gives it */
	struct sa_addr addr;
};

struct sa_route {
	__u32 n_static;		/* entries used in be[] */
	__be16 cg_port_be;	/* published backends: only this port, 0 any */
	__u16 pad;
	__u64 cgid;		/* published backends of this cgroup, 0 none */
	__u64 next;		/* round-robin counter */
	__u64 hits;		/* connects rewritten */
	__u64 misses;		/* matched, but no backend available */
	struct sa_backend be[SA_MAX_BACKENDS];
};

/* services: one record per bound socket, keyed by socket cookie. */
struct sa_service {
	__u64 cgid;		/* the attached cgroup the socket belongs to */
	__u32 pid;		/* tgid of the process that bound it */
	__u8 family;
	__u8 proto;
	__u16 port;		/* host byte order */
	struct sa_addr addr;
	__u32 slot;		/* index in pub_slots, SA_NO_SLOT when full */
	char comm[16];
};

#define SA_NO_SLOT	0xffffffffu

/* pub_slots: where the published sockets of a cgroup can be reached. */
struct sa_slot_key {
	__u64 cgid;
	__u8 family;
	__u8 proto;
	__u16 slot;
	__u32 pad;
};

/* fw_policy: per attached cgroup. */
struct sa_policy {
	__u8 default_deny;	/* bind to a port without a rule: EPERM */
	__u8 addr_restrict;	/* bind only to addresses in fw_addrs */
	__u16 eph_lo;		/* post-bind refuses ports eph_lo..eph_hi */
	__u16 eph_hi;		/* (host order; eph_lo 0: no range) */
	__u16 pad;
	__u64 denied;		/* binds refused (counter) */
	__u64 rewritten;	/* binds whose port was rewritten (counter) */
};

#define SA_PROTO_ANY	0

struct sa_port_key {
	__u64 cgid;
	__u16 port;		/* host byte order */
	__u8 proto;		/* IPPROTO_TCP, IPPROTO_UDP or SA_PROTO_ANY */
	__u8 pad[5];
};

enum sa_action {
	SA_ALLOW = 1,
	SA_DENY = 2,
	SA_REWRITE = 3,
};

struct sa_port_rule {
	__u8 action;		/* enum sa_action */
	__u8 pad;
	__u16 new_port;		/* SA_REWRITE: host byte order */
	__u32 pad2;
};

struct sa_addr_key {
	__u64 cgid;
	__u32 family;
	struct sa_addr addr;
	__u32 pad;
};

/* containers: what the tool attached where (for status and detach). */
struct sa_container {
	char path[SA_PATH_MAX];	/* cgroup path as given to attach */
	__u32 features;
	__u32 pid;		/* foreground attach: its pid, else 0 */
};

#endif
