// SPDX-License-Identifier: GPL-2.0
/*
 * sockaddr, firewall: per-cgroup bind rules (the bind and post-bind hooks' maps).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#include "sockaddr.skel.h"
#include "tool.h"

/* ---- firewall ---- */

static bool protos_overlap(int a, int b)
{
	return a == b || a == SA_PROTO_ANY || b == SA_PROTO_ANY;
}

/* A rule for PORT whose protocol overlaps PROTO, if any. */
static bool find_rule(struct maps *m, __u64 cgid, __u16 port, int proto,
		      struct sa_port_rule *rule, int *rule_proto)
{
	static const int protos[] = { IPPROTO_TCP, IPPROTO_UDP, SA_PROTO_ANY };
	struct sa_port_key pk;
	size_t i;

	for (i = 0; i < 3; i++) {
		if (!protos_overlap(protos[i], proto))
			continue;
		memset(&pk, 0, sizeof(pk));
		pk.cgid = cgid;
		pk.port = port;
		pk.proto = protos[i];
		if (!bpf_map_lookup_elem(m->fw_ports, &pk, rule)) {
			*rule_proto = protos[i];
			return true;
		}
	}
	return false;
}

/* Is PORT the target of a rewrite rule overlapping PROTO? */
static bool is_rewrite_target(struct maps *m, __u64 cgid, __u16 port, int proto)
{
	struct sa_port_key *keys;
	struct sa_port_rule rule;
	size_t n, i;
	bool found = false;

	keys = map_keys(m->fw_ports, sizeof(*keys), &n);
	for (i = 0; i < n && !found; i++)
		found = keys[i].cgid == cgid &&
			protos_overlap(keys[i].proto, proto) &&
			!bpf_map_lookup_elem(m->fw_ports, &keys[i], &rule) &&
			rule.action == SA_REWRITE && rule.new_port == port;
	free(keys);
	return found;
}

static const char *action_name(int a)
{
	return a == SA_ALLOW ? "allow" : a == SA_DENY ? "deny" :
	       a == SA_REWRITE ? "rewrite" : "?";
}

static void fw_show(struct maps *m, const struct cgroup *cg)
{
	struct sa_port_key *pkeys;
	struct sa_addr_key *akeys;
	struct sa_port_rule rule;
	struct sa_policy pol;
	size_t n, i;
	char a[80];

	memset(&pol, 0, sizeof(pol));
	bpf_map_lookup_elem(m->fw_policy, &cg->id, &pol);
	printf("firewall of %s: default %s", cg->name,
	       pol.default_deny ? "deny" : "allow");
	if (pol.eph_lo)
		printf(", ports %u-%u refused after bind", pol.eph_lo, pol.eph_hi);
	printf("; %llu denied, %llu rewritten\n", (unsigned long long)pol.denied,
	       (unsigned long long)pol.rewritten);
	pkeys = map_keys(m->fw_ports, sizeof(*pkeys), &n);
	for (i = 0; i < n; i++) {
		if (pkeys[i].cgid != cg->id ||
		    bpf_map_lookup_elem(m->fw_ports, &pkeys[i], &rule))
			continue;
		printf("  %-7s %-7s port %u", action_name(rule.action),
		       proto_name(pkeys[i].proto), pkeys[i].port);
		if (rule.action == SA_REWRITE)
			printf(" -> %u", rule.new_port);
		printf("\n");
	}
	free(pkeys);
	if (!pol.addr_restrict)
		return;
	akeys = map_keys(m->fw_addrs, sizeof(*akeys), &n);
	printf("  bind only to:");
	for (i = 0; i < n; i++) {
		if (akeys[i].cgid != cg->id)
			continue;
		inet_ntop(akeys[i].family, akeys[i].addr.a, a, sizeof(a));
		printf(" %s", a);
	}
	printf("\n");
	free(akeys);
}

/* "firewall CGROUP OP [ARGS] [--tcp|--udp] [--force]", parsed. */
struct fw_req {
	const char *op;
	struct cgroup cg;
	struct maps m;
	struct sa_policy pol;	/* the cgroup's policy, changed by OP */
	int proto;		/* SA_PROTO_ANY unless --tcp or --udp */
	bool force;
	int nargs;
	char *args[2];
};

/* What the command does after its operation. */
enum fw_next {
	FW_DONE,		/* nothing more */
	FW_SAVE_POLICY,		/* write the policy back, note if unattached */
};

struct fw_cmd {
	const char *name;
	int nargs;
	enum fw_next (*fn)(struct fw_req *rq);
};

static void need_args(const struct fw_req *rq, int want)
{
	if (rq->nargs != want)
		die("firewall %s: expected %d argument(s)", rq->op, want);
}

static void fw_port_key(const struct fw_req *rq, __u16 port,
			struct sa_port_key *pk)
{
	memset(pk, 0, sizeof(*pk));
	pk->cgid = rq->cg.id;
	pk->port = port;
	pk->proto = rq->proto;
}

static enum fw_next do_fw_show(struct fw_req *rq)
{
	fw_show(&rq->m, &rq->cg);
	return FW_DONE;
}

static enum fw_next do_fw_default(struct fw_req *rq)
{
	if (!strcmp(rq->args[0], "allow"))
		rq->pol.default_deny = 0;
	else if (!strcmp(rq->args[0], "deny"))
		rq->pol.default_deny = 1;
	else
		die("firewall default: allow or deny, not '%s'", rq->args[0]);
	if (rq->pol.default_deny)
		guard_system_wide(&rq->cg, "'default deny'", rq->force);
	return FW_SAVE_POLICY;
}

/* A rewrite must not land on a port that is refused anyway. */
static void check_rewrite_target(struct fw_req *rq, __u16 from, __u16 to)
{
	const struct sa_policy *pol = &rq->pol;
	struct sa_port_rule old;
	int old_proto;

	if (to == from)
		die("firewall rewrite: %u to itself", from);
	if (find_rule(&rq->m, rq->cg.id, to, rq->proto, &old, &old_proto) &&
	    old.action != SA_ALLOW)
		die("conflicting rules: rewrite target %u has a %s %s rule",
		    to, proto_name(old_proto), action_name(old.action));
	if (pol->eph_lo && to >= pol->eph_lo && to <= pol->eph_hi)
		die("conflicting rules: rewrite target %u is in the refused range %u-%u",
		    to, pol->eph_lo, pol->eph_hi);
}

/* allow, deny and rewrite: one rule per port and protocol. */
static enum fw_next fw_port_rule(struct fw_req *rq, enum sa_action action)
{
	struct sa_port_rule rule, old;
	struct sa_port_key pk;
	int old_proto;

	memset(&rule, 0, sizeof(rule));
	rule.action = action;
	fw_port_key(rq, parse_port(rq->args[0], false), &pk);
	if (action == SA_REWRITE) {
		rule.new_port = parse_port(rq->args[1], false);
		check_rewrite_target(rq, pk.port, rule.new_port);
	}
	if (action == SA_DENY && is_rewrite_target(&rq->m, rq->cg.id, pk.port, rq->proto))
		die("conflicting rules: port %u is the target of a rewrite", pk.port);
	if (find_rule(&rq->m, rq->cg.id, pk.port, rq->proto, &old, &old_proto)) {
		if (old_proto == rq->proto && old.action == rule.action &&
		    old.new_port == rule.new_port)
			return FW_DONE;	/* the same rule again */
		die("conflicting rules: port %u already has a %s %s rule (unset it first)",
		    pk.port, proto_name(old_proto), action_name(old.action));
	}
	if (bpf_map_update_elem(rq->m.fw_ports, &pk, &rule, BPF_NOEXIST))
		die_bpf("adding the rule", errno);
	return FW_SAVE_POLICY;
}

static enum fw_next do_fw_allow(struct fw_req *rq)
{
	return fw_port_rule(rq, SA_ALLOW);
}

static enum fw_next do_fw_deny(struct fw_req *rq)
{
	return fw_port_rule(rq, SA_DENY);
}

static enum fw_next do_fw_rewrite(struct fw_req *rq)
{
	return fw_port_rule(rq, SA_REWRITE);
}

static enum fw_next do_fw_unset(struct fw_req *rq)
{
	struct sa_port_key pk;

	fw_port_key(rq, parse_port(rq->args[0], false), &pk);
	if (bpf_map_delete_elem(rq->m.fw_ports, &pk))
		die("no %s rule for port %u in %s", proto_name(rq->proto), pk.port,
		    rq->cg.name);
	return FW_SAVE_POLICY;
}

static enum fw_next do_fw_addr(struct fw_req *rq)
{
	struct sa_addr_key ak;
	int family;
	__u8 one = 1;

	memset(&ak, 0, sizeof(ak));
	if (!parse_addr(rq->args[0], &family, &ak.addr))
		die("firewall addr: '%s' is not an IPv4 or IPv6 address", rq->args[0]);
	ak.cgid = rq->cg.id;
	ak.family = family;
	if (bpf_map_update_elem(rq->m.fw_addrs, &ak, &one, BPF_ANY))
		die_bpf("adding the address", errno);
	rq->pol.addr_restrict = 1;
	return FW_SAVE_POLICY;
}

static enum fw_next do_fw_addr_any(struct fw_req *rq)
{
	map_purge_cgid(rq->m.fw_addrs, sizeof(struct sa_addr_key), rq->cg.id);
	rq->pol.addr_restrict = 0;
	return FW_SAVE_POLICY;
}

static enum fw_next do_fw_ephemeral(struct fw_req *rq)
{
	unsigned int lo, hi, port;
	char extra;

	if (!strcmp(rq->args[0], "off")) {
		rq->pol.eph_lo = rq->pol.eph_hi = 0;
		return FW_SAVE_POLICY;
	}
	if (sscanf(rq->args[0], "%u-%u%c", &lo, &hi, &extra) != 2 ||
	    lo < 1 || lo > hi || hi > 65535)
		die("firewall ephemeral: expected LO-HI (1-65535) or off, not '%s'",
		    rq->args[0]);
	/* A rewrite into the range would turn allowed binds into refusals. */
	for (port = lo; port <= hi; port++)
		if (is_rewrite_target(&rq->m, rq->cg.id, port, SA_PROTO_ANY))
			die("conflicting rules: %u-%u holds port %u, the target of a rewrite",
			    lo, hi, port);
	rq->pol.eph_lo = lo;
	rq->pol.eph_hi = hi;
	return FW_SAVE_POLICY;
}

static const struct fw_cmd fw_cmds[] = {
	{ "show", 0, do_fw_show },
	{ "default", 1, do_fw_default },
	{ "allow", 1, do_fw_allow },
	{ "deny", 1, do_fw_deny },
	{ "rewrite", 2, do_fw_rewrite },
	{ "unset", 1, do_fw_unset },
	{ "addr", 1, do_fw_addr },
	{ "addr-any", 0, do_fw_addr_any },
	{ "ephemeral", 1, do_fw_ephemeral },
	{ 0 }
};

/* argv: "firewall" CGROUP OP, then OP's arguments and the flags in any order. */
static void fw_parse(int argc, char **argv, struct fw_req *rq)
{
	int i;

	if (argc < 3)
		die("firewall: expected CGROUP and an operation (see --help)");
	memset(rq, 0, sizeof(*rq));
	rq->op = argv[2];
	rq->proto = SA_PROTO_ANY;
	for (i = 3; i < argc; i++) {
		if (parse_proto_flag(argv[i], &rq->proto))
			continue;
		if (!strcmp(argv[i], "--force")) {
			rq->force = true;
			continue;
		}
		/* A negative number is an argument (a bad port), not an option. */
		if (argv[i][0] == '-' && argv[i][1] && !isdigit((unsigned char)argv[i][1]))
			die("firewall %s: unknown option '%s'", rq->op, argv[i]);
		if (rq->nargs == 2)
			die("firewall %s: too many arguments", rq->op);
		rq->args[rq->nargs++] = argv[i];
	}
}

static const struct fw_cmd *fw_cmd_find(const char *name)
{
	const struct fw_cmd *c;

	for (c = fw_cmds; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* Counters are the programs': keep the kernel's current values. */
static void fw_save_policy(struct fw_req *rq)
{
	struct sa_policy cur;
	struct sa_container c;

	if (!bpf_map_lookup_elem(rq->m.fw_policy, &rq->cg.id, &cur)) {
		rq->pol.denied = cur.denied;
		rq->pol.rewritten = cur.rewritten;
	}
	if (bpf_map_update_elem(rq->m.fw_policy, &rq->cg.id, &rq->pol, BPF_ANY))
		die_bpf("updating the policy", errno);
	if (bpf_map_lookup_elem(rq->m.containers, &rq->cg.id, &c) ||
	    !(c.features & SA_FEAT_FIREWALL))
		fprintf(stderr, "sockaddr: note: %s is not attached with --firewall: "
			"the rules apply once it is\n", rq->cg.name);
}

int cmd_firewall(int argc, char **argv)
{
	const struct fw_cmd *sub;
	struct fw_req rq;

	fw_parse(argc, argv, &rq);
	cgroup_resolve(argv[1], &rq.cg);
	maps_need(&rq.m);
	bpf_map_lookup_elem(rq.m.fw_policy, &rq.cg.id, &rq.pol);
	sub = fw_cmd_find(rq.op);
	if (!sub)
		die("firewall: unknown operation '%s' (see --help)", rq.op);
	need_args(&rq, sub->nargs);
	if (sub->fn(&rq) == FW_SAVE_POLICY)
		fw_save_policy(&rq);
	return 0;
}
