// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup sock_addr programs of the sockaddr tool.
 *
 *   bind4/bind6          firewall: allow, deny (EPERM) or rewrite the port
 *   post_bind4/6         firewall: refuse a port range once the port is
 *                        known; publish: record where the socket landed
 *   sock_release         publish: forget the record when the socket goes
 *   connect4/connect6    route: steer a service address to a backend
 *
 * Only uapi context structs are used (the kernel has no BTF).  Each attach
 * loads its own copy with container_id and features set in .rodata, so a
 * program knows which cgroup it serves even when the socket's task sits in
 * a descendant of it.
 */
#include <linux/bpf.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "sockaddr.h"

#define AF_INET		2
#define AF_INET6	10

const volatile __u64 container_id;
const volatile __u32 features;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct sa_route_key);
	__type(value, struct sa_route);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} routes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct sa_service);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} services SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct sa_slot_key);
	__type(value, struct sa_backend);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} pub_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, struct sa_policy);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} fw_policy SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct sa_port_key);
	__type(value, struct sa_port_rule);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} fw_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct sa_addr_key);
	__type(value, __u8);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} fw_addrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, struct sa_container);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} containers SEC(".maps");

/* Returns 1 to let bind() go on (port maybe rewritten), 0 for EPERM. */
static __always_inline int fw_bind(struct bpf_sock_addr *ctx, int family)
{
	struct sa_port_key pk;
	struct sa_port_rule *rule;
	struct sa_policy *pol;
	__u64 cg = container_id;
	__u16 port;

	pol = bpf_map_lookup_elem(&fw_policy, &cg);
	if (!pol)
		return 1;

	if (pol->addr_restrict) {
		struct sa_addr_key ak;

		__builtin_memset(&ak, 0, sizeof(ak));
		ak.cgid = cg;
		ak.family = family;
		if (family == AF_INET) {
			ak.addr.a[0] = ctx->user_ip4;
		} else {
			ak.addr.a[0] = ctx->user_ip6[0];
			ak.addr.a[1] = ctx->user_ip6[1];
			ak.addr.a[2] = ctx->user_ip6[2];
			ak.addr.a[3] = ctx->user_ip6[3];
		}
		if (!bpf_map_lookup_elem(&fw_addrs, &ak))
			goto deny;
	}

	port = bpf_ntohs(ctx->user_port);
	/* Port 0 asks for an ephemeral port: post_bind sees which one. */
	if (!port)
		return 1;

	__builtin_memset(&pk, 0, sizeof(pk));
	pk.cgid = cg;
	pk.port = port;
	pk.proto = ctx->protocol;
	rule = bpf_map_lookup_elem(&fw_ports, &pk);
	if (!rule) {
		pk.proto = SA_PROTO_ANY;
		rule = bpf_map_lookup_elem(&fw_ports, &pk);
	}
	if (!rule) {
		if (!pol->default_deny)
			return 1;
		goto deny;
	}

	switch (rule->action) {
	case SA_ALLOW:
		return 1;
	case SA_REWRITE:
		ctx->user_port = bpf_htons(rule->new_port);
		__sync_fetch_and_add(&pol->rewritten, 1);
		return 1;
	default:
		break;
	}
deny:
	__sync_fetch_and_add(&pol->denied, 1);
	return 0;
}

SEC("cgroup/bind4")
int sa_bind4(struct bpf_sock_addr *ctx)
{
	return fw_bind(ctx, AF_INET);
}

SEC("cgroup/bind6")
int sa_bind6(struct bpf_sock_addr *ctx)
{
	return fw_bind(ctx, AF_INET6);
}

static __always_inline void publish(struct bpf_sock *sk, int family)
{
	struct sa_slot_key skey;
	struct sa_backend be;
	struct sa_service svc;
	__u64 cookie;
	__u32 i;

	__builtin_memset(&svc, 0, sizeof(svc));
	svc.cgid = container_id;
	svc.pid = bpf_get_current_pid_tgid() >> 32;
	svc.family = family;
	svc.proto = sk->protocol;
	svc.port = sk->src_port;
	svc.slot = SA_NO_SLOT;
	/*
	 * family is a constant of the caller: the verifier refuses even a
	 * dead src_ip6 access in a post_bind4 program.
	 */
	if (family == AF_INET) {
		svc.addr.a[0] = sk->src_ip4;
	} else {
		svc.addr.a[0] = sk->src_ip6[0];
		svc.addr.a[1] = sk->src_ip6[1];
		svc.addr.a[2] = sk->src_ip6[2];
		svc.addr.a[3] = sk->src_ip6[3];
	}
	bpf_get_current_comm(svc.comm, sizeof(svc.comm));

	/*
	 * Where a client should connect to reach this socket: a wildcard
	 * bind is reached through loopback, the host being shared.
	 */
	__builtin_memset(&be, 0, sizeof(be));
	be.addr = svc.addr;
	be.port_be = bpf_htons(svc.port);
	if (family == AF_INET && !be.addr.a[0])
		be.addr.a[0] = bpf_htonl(0x7f000001);
	else if (family == AF_INET6 && !(be.addr.a[0] | be.addr.a[1] |
					     be.addr.a[2] | be.addr.a[3]))
		be.addr.a[3] = bpf_htonl(1);

	__builtin_memset(&skey, 0, sizeof(skey));
	skey.cgid = svc.cgid;
	skey.family = svc.family;
	skey.proto = svc.proto;
	for (i = 0; i < SA_MAX_SLOTS; i++) {
		skey.slot = i;
		if (!bpf_map_update_elem(&pub_slots, &skey, &be, BPF_NOEXIST)) {
			svc.slot = i;
			break;
		}
	}

	cookie = bpf_get_socket_cookie(sk);
	bpf_map_update_elem(&services, &cookie, &svc, BPF_ANY);
}

static __always_inline int post_bind(struct bpf_sock *sk, int family)
{
	if (features & SA_FEAT_FIREWALL) {
		__u64 cg = container_id;
		struct sa_policy *pol = bpf_map_lookup_elem(&fw_policy, &cg);
		__u32 port = sk->src_port;

		if (pol && pol->eph_lo && port >= pol->eph_lo &&
		    port <= pol->eph_hi) {
			__sync_fetch_and_add(&pol->denied, 1);
			return 0;
		}
	}
	if (features & SA_FEAT_PUBLISH)
		publish(sk, family);
	return 1;
}

SEC("cgroup/post_bind4")
int sa_post_bind4(struct bpf_sock *sk)
{
	return post_bind(sk, AF_INET);
}

SEC("cgroup/post_bind6")
int sa_post_bind6(struct bpf_sock *sk)
{
	return post_bind(sk, AF_INET6);
}

SEC("cgroup/sock_release")
int sa_sock_release(struct bpf_sock *sk)
{
	__u64 cookie = bpf_get_socket_cookie(sk);
	struct sa_service *svc;

	svc = bpf_map_lookup_elem(&services, &cookie);
	if (!svc)
		return 1;
	if (svc->slot != SA_NO_SLOT) {
		struct sa_slot_key skey;

		__builtin_memset(&skey, 0, sizeof(skey));
		skey.cgid = svc->cgid;
		skey.family = svc->family;
		skey.proto = svc->proto;
		skey.slot = svc->slot;
		bpf_map_delete_elem(&pub_slots, &skey);
	}
	bpf_map_delete_elem(&services, &cookie);
	return 1;
}

/* Is a published slot of the route's cgroup a usable backend? */
static __always_inline struct sa_backend *
slot_backend(struct sa_route *r, struct sa_route_key *k, __u32 i)
{
	struct sa_slot_key skey;
	struct sa_backend *be;

	__builtin_memset(&skey, 0, sizeof(skey));
	skey.cgid = r->cgid;
	skey.family = k->family;
	skey.proto = k->proto;
	skey.slot = i;
	be = bpf_map_lookup_elem(&pub_slots, &skey);
	if (be && r->cg_port_be && be->port_be != r->cg_port_be)
		return NULL;
	return be;
}

/*
 * Pick the next backend of a route, round robin over the static backends
 * followed by the published sockets of the route's cgroup.
 */
static __always_inline struct sa_backend *pick(struct sa_route *r,
					       struct sa_route_key *k)
{
	__u32 n_static = r->n_static, n = 0, want, i;

	if (n_static > SA_MAX_BACKENDS)
		n_static = SA_MAX_BACKENDS;
	n = n_static;
	if (r->cgid) {
		for (i = 0; i < SA_MAX_SLOTS; i++)
			if (slot_backend(r, k, i))
				n++;
	}
	if (!n)
		return NULL;

	want = __sync_fetch_and_add(&r->next, 1) % n;
	if (want < n_static) {
		/* Constant indices: the verifier then knows each is in bounds. */
		for (i = 0; i < SA_MAX_BACKENDS; i++)
			if (i == want)
				return &r->be[i];
		return NULL;
	}
	want -= n_static;
	for (i = 0; i < SA_MAX_SLOTS; i++) {
		struct sa_backend *be = slot_backend(r, k, i);

		if (!be)
			continue;
		if (!want)
			return be;
		want--;
	}
	/* A slot went away between the two walks: leave the connect alone. */
	return NULL;
}

static __always_inline int route(struct bpf_sock_addr *ctx, int family)
{
	struct sa_route_key k;
	struct sa_backend *be;
	struct sa_route *r;

	__builtin_memset(&k, 0, sizeof(k));
	k.family = family;
	k.proto = ctx->protocol;
	k.port_be = ctx->user_port;
	if (family == AF_INET) {
		k.addr.a[0] = ctx->user_ip4;
	} else {
		k.addr.a[0] = ctx->user_ip6[0];
		k.addr.a[1] = ctx->user_ip6[1];
		k.addr.a[2] = ctx->user_ip6[2];
		k.addr.a[3] = ctx->user_ip6[3];
	}
	r = bpf_map_lookup_elem(&routes, &k);
	if (!r)
		return 1;

	be = pick(r, &k);
	if (!be) {
		__sync_fetch_and_add(&r->misses, 1);
		return 1;
	}
	if (family == AF_INET) {
		ctx->user_ip4 = be->addr.a[0];
	} else {
		ctx->user_ip6[0] = be->addr.a[0];
		ctx->user_ip6[1] = be->addr.a[1];
		ctx->user_ip6[2] = be->addr.a[2];
		ctx->user_ip6[3] = be->addr.a[3];
	}
	ctx->user_port = be->port_be;
	__sync_fetch_and_add(&r->hits, 1);
	return 1;
}

SEC("cgroup/connect4")
int sa_connect4(struct bpf_sock_addr *ctx)
{
	return route(ctx, AF_INET);
}

SEC("cgroup/connect6")
int sa_connect6(struct bpf_sock_addr *ctx)
{
	return route(ctx, AF_INET6);
}

char LICENSE[] SEC("license") = "GPL";
