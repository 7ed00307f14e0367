// SPDX-License-Identifier: GPL-2.0
/*
 * sockaddr, route: services and their backends (the connect hooks' map).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#include "sockaddr.skel.h"
#include "tool.h"

/* ---- routes ---- */

int parse_proto_flag(const char *arg, int *proto)
{
	if (!strcmp(arg, "--tcp"))
		*proto = IPPROTO_TCP;
	else if (!strcmp(arg, "--udp"))
		*proto = IPPROTO_UDP;
	else
		return 0;
	return 1;
}

static void route_key(const struct endpoint *svc, int proto,
		      struct sa_route_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = svc->family;
	k->proto = proto;
	k->port_be = htons(svc->port);
	k->addr = svc->addr;
}

static void route_print(struct maps *m, const struct sa_route_key *k,
			const struct sa_route *r)
{
	char a[80], b[80], name[SA_PATH_MAX + 32];
	__u32 s;

	printf("%s %s ->", proto_name(k->proto),
	       fmt_addr(k->family, &k->addr, ntohs(k->port_be), a, sizeof(a)));
	for (s = 0; s < r->n_static && s < SA_MAX_BACKENDS; s++)
		printf(" %s", fmt_addr(k->family, &r->be[s].addr,
				       ntohs(r->be[s].port_be), b, sizeof(b)));
	if (r->cgid) {
		printf(" published-by:%s",
		       cgroup_name_of(m, r->cgid, name, sizeof(name)));
		if (r->cg_port_be)
			printf(":%u", ntohs(r->cg_port_be));
	}
	printf("  (hits %llu, misses %llu)\n", (unsigned long long)r->hits,
	       (unsigned long long)r->misses);
}

static int do_route_list(int argc, char **argv)
{
	struct sa_route_key *keys;
	struct sa_route r;
	struct maps m;
	size_t n, i;

	(void)argv;
	if (argc != 1)
		die("route list takes no arguments");
	if (!maps_open(&m))
		return 0;
	keys = map_keys(m.routes, sizeof(*keys), &n);
	for (i = 0; i < n; i++)
		if (!bpf_map_lookup_elem(m.routes, &keys[i], &r))
			route_print(&m, &keys[i], &r);
	free(keys);
	return 0;
}

/* "route add|del SERVICE ...", parsed. */
struct route_req {
	const char *op;			/* "add" or "del" */
	struct endpoint svc;
	int proto;
	bool replace;
	const char *to_cgroup, *cg_port;
	struct sa_route r;		/* add: the static backends so far */
	struct sa_route_key k;
	const char *svc_arg;		/* SERVICE as given */
	char svc_name[80];		/* SERVICE as printed back */
};

static void route_add_backend(struct route_req *rq, const char *arg)
{
	struct endpoint be;

	parse_endpoint(arg, &be);
	if (be.family != rq->svc.family)
		die("backend %s and service %s are not the same address family",
		    arg, rq->svc_arg);
	if (rq->r.n_static == SA_MAX_BACKENDS)
		die("at most %d --to backends", SA_MAX_BACKENDS);
	rq->r.be[rq->r.n_static].addr = be.addr;
	rq->r.be[rq->r.n_static].port_be = htons(be.port);
	rq->r.n_static++;
}

/* argv[0] is "add" or "del", argv[1] the service; only add takes backends. */
static void route_parse(int argc, char **argv, struct route_req *rq)
{
	bool add = !strcmp(argv[0], "add");
	int i;

	memset(rq, 0, sizeof(*rq));
	rq->op = argv[0];
	rq->proto = IPPROTO_TCP;
	if (argc < 2)
		die("route %s: which service address?", rq->op);
	parse_endpoint(argv[1], &rq->svc);
	rq->svc_arg = argv[1];
	for (i = 2; i < argc; i++) {
		if (parse_proto_flag(argv[i], &rq->proto))
			continue;
		if (!add)
			die("route del: unexpected argument '%s'", argv[i]);
		if (!strcmp(argv[i], "--replace"))
			rq->replace = true;
		else if (!strcmp(argv[i], "--to") && i + 1 < argc)
			route_add_backend(rq, argv[++i]);
		else if (!strcmp(argv[i], "--to-cgroup") && i + 1 < argc)
			rq->to_cgroup = argv[++i];
		else if (!strcmp(argv[i], "--cgroup-port") && i + 1 < argc)
			rq->cg_port = argv[++i];
		else
			die("route %s: unexpected argument '%s' (see --help)",
			    rq->op, argv[i]);
	}
	route_key(&rq->svc, rq->proto, &rq->k);
	fmt_addr(rq->svc.family, &rq->svc.addr, rq->svc.port, rq->svc_name,
		 sizeof(rq->svc_name));
}

static int do_route_del(int argc, char **argv)
{
	struct route_req rq;
	struct maps m;

	route_parse(argc, argv, &rq);
	if (!maps_open(&m) || bpf_map_delete_elem(m.routes, &rq.k))
		die("no %s route for %s", proto_name(rq.proto), rq.svc_name);
	printf("route %s %s deleted\n", proto_name(rq.proto), rq.svc_name);
	return 0;
}

static int do_route_add(int argc, char **argv)
{
	const char *svc, *proto;
	struct sa_container c;
	struct route_req rq;
	struct cgroup cg;
	struct maps m;

	route_parse(argc, argv, &rq);
	svc = rq.svc_name;
	proto = proto_name(rq.proto);
	if (rq.cg_port && !rq.to_cgroup)
		die("--cgroup-port needs --to-cgroup");
	if (rq.to_cgroup) {
		cgroup_resolve(rq.to_cgroup, &cg);
		rq.r.cgid = cg.id;
		if (rq.cg_port)
			rq.r.cg_port_be = htons(parse_port(rq.cg_port, false));
	}
	if (!rq.r.n_static && !rq.r.cgid)
		die("route add %s: no backend (--to ADDR:PORT or --to-cgroup CGROUP)", svc);
	maps_need(&m);
	if (bpf_map_update_elem(m.routes, &rq.k, &rq.r,
				rq.replace ? BPF_ANY : BPF_NOEXIST)) {
		if (errno == EEXIST)
			die("a %s route for %s exists already (route del it, or --replace)",
			    proto, svc);
		die_bpf("adding the route", errno);
	}
	if (rq.r.cgid && (bpf_map_lookup_elem(m.containers, &rq.r.cgid, &c) ||
			  !(c.features & SA_FEAT_PUBLISH)))
		fprintf(stderr, "sockaddr: note: %s is not attached with --publish yet: "
			"its sockets are recorded once it is\n", cg.name);
	printf("route %s %s added\n", proto, svc);
	return 0;
}

static const struct cmd route_cmds[] = {
	{ "add", do_route_add },
	{ "del", do_route_del },
	{ "list", do_route_list },
	{ 0 }
};

int cmd_route(int argc, char **argv)
{
	const struct cmd *sub;

	if (argc < 2)
		die("route: expected add, del or list (see --help)");
	sub = cmd_find(route_cmds, argv[1]);
	if (!sub)
		die("route: unknown subcommand '%s' (add, del, list)", argv[1]);
	return sub->fn(argc - 1, argv + 1);
}
