// SPDX-License-Identifier: GPL-2.0
/*
 * sockaddr: a service router and bind-time firewall for cgroup v2
 * "containers", built on the cgroup bind/connect/post-bind BPF hooks.
 *
 * State lives in bpffs (default /sys/fs/bpf/sockaddr): the maps, pinned by
 * name, and one pinned link per attached hook (links/<cgroup id>-<hook>:
 * bpffs refuses dots in names).  A pinned link keeps its program attached
 * after this process exits and unpinning it detaches it, so attach and
 * detach need no daemon.  Every other
 * command only reads or writes maps: the programs see configuration
 * changes at their next bind() or connect(), without being re-attached.
 *
 * An attach is all or nothing: a hook that fails undoes the ones attached
 * before it, and status/detach work from the pins themselves, so a pin
 * left by an interrupted attach is shown and removable like any other.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "tool.h"

const char *state_dir = DEFAULT_DIR;
bool verbose;

static const char usage_text[] =
"Usage: sockaddr [-d DIR] [-v] COMMAND [ARGS...]\n"
"\n"
"Service router and bind-time firewall for cgroup v2 directories, using the\n"
"cgroup bind/connect/post-bind BPF hooks.  Needs CAP_BPF, CAP_NET_ADMIN and\n"
"CAP_SYS_ADMIN (root has them; so may any user, e.g. as ambient\n"
"capabilities, with a state directory of its own: -d).\n"
"\n"
"Attachment:\n"
"  attach CGROUP [--publish] [--route] [--firewall] [--foreground] [--force]\n"
"        attach the programs of the named features to CGROUP (all three when\n"
"        none is named).  All or nothing: when one hook cannot be attached,\n"
"        those attached before it are detached again.  They stay attached\n"
"        after the command exits, until 'detach'; with --foreground they\n"
"        stay only while the command runs, and SIGINT, SIGTERM or SIGHUP\n"
"        detaches them, drops CGROUP's firewall rules and published records\n"
"        (as 'detach' does) and exits (after a SIGKILL, the next attach or\n"
"        detach of CGROUP drops them).  The programs act on every process\n"
"        of CGROUP and of its descendants.\n"
"          --publish   record each socket bound in CGROUP (post-bind) and\n"
"                      forget it when the socket is closed\n"
"          --route     rewrite connect() to a routed service address\n"
"          --firewall  apply CGROUP's bind policy (see 'firewall')\n"
"          --force     attach the firewall even to the root cgroup or to a\n"
"                      cgroup holding PID 1 (refused otherwise: its rules\n"
"                      would act on init and on every service below it)\n"
"  detach CGROUP | --all\n"
"        detach the programs from CGROUP and drop its firewall rules and\n"
"        published records; also removes links pinned for CGROUP without a\n"
"        record (left by an interrupted attach).  --all detaches every\n"
"        cgroup and removes all state, routes included\n"
"  status\n"
"        what is attached where, with program ids and firewall counters,\n"
"        and any link pinned without a record (NOT RECORDED)\n"
"  list\n"
"        published services: cgroup, protocol, bound address, pid, command\n"
"\n"
"Routes (one table, used by every cgroup attached with --route):\n"
"  route add SERVICE [--tcp|--udp] [--to ADDR:PORT]... [--to-cgroup CGROUP\n"
"            [--cgroup-port PORT]] [--replace]\n"
"        connect() to SERVICE (ADDR:PORT, IPv6 as [ADDR]:PORT) goes to one of\n"
"        the backends instead, round robin: each --to (at most 8), then each\n"
"        socket that CGROUP published for the same family and protocol (only\n"
"        those bound to PORT with --cgroup-port; the first 4 such sockets\n"
"        bound at a time are routable, 'list' shows all).  TCP unless --udp (UDP\n"
"        routes act on connect(), i.e. connected UDP sockets).  An existing\n"
"        route for SERVICE is an error unless --replace.\n"
"  route del SERVICE [--tcp|--udp]\n"
"  route list\n"
"        routes with their backends, connections routed (hits) and routed\n"
"        connects that found no backend and were left alone (misses)\n"
"\n"
"Firewall (for cgroups attached with --firewall; rules act at bind()):\n"
"  firewall CGROUP default allow|deny [--force]\n"
"        a bind() to a port without a rule is allowed (default) or fails\n"
"        with EPERM.  Port 0 (ephemeral) is not a rule port: see ephemeral.\n"
"        'deny' on the root cgroup or on a cgroup holding PID 1 needs\n"
"        --force: every service there that listens would fail\n"
"  firewall CGROUP allow|deny PORT [--tcp|--udp]\n"
"  firewall CGROUP rewrite PORT NEWPORT [--tcp|--udp]\n"
"        a bind() to PORT lands on NEWPORT instead\n"
"  firewall CGROUP unset PORT [--tcp|--udp]\n"
"        rules apply to TCP and UDP unless --tcp or --udp; an allow/deny/\n"
"        rewrite rule for a port that already has another one is an error\n"
"        (unset it first)\n"
"  firewall CGROUP addr ADDR\n"
"        bind only to listed addresses (repeat to list several; the\n"
"        wildcard 0.0.0.0 or :: must be listed to be allowed)\n"
"  firewall CGROUP addr-any\n"
"        drop the address list\n"
"  firewall CGROUP ephemeral LO-HI | off\n"
"        refuse (EPERM) any bind that ends on a port in LO-HI, explicit or\n"
"        chosen by the kernel, checked after the port is allocated\n"
"  firewall CGROUP show\n"
"        the cgroup's rules, address list, refused range and counters\n"
"\n"
"Options:\n"
"  -d DIR     state directory in bpffs (default " DEFAULT_DIR ")\n"
"  -v         print libbpf's messages (verifier log on a load failure)\n"
"  -h, --help this text\n"
"\n"
"CGROUP is a directory of the cgroup v2 hierarchy, absolute or relative to\n"
"its mount point (e.g. /sys/fs/cgroup/web or web).\n";

static void usage(FILE *f)
{
	fputs(usage_text, f);
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	static const struct cmd cmds[] = {
		{ "attach", cmd_attach }, { "detach", cmd_detach },
		{ "status", cmd_status }, { "list", cmd_list },
		{ "route", cmd_route }, { "firewall", cmd_firewall },
		{ 0 }
	};
	const struct cmd *cmd;
	int i, opt;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
	while ((opt = getopt(argc, argv, "+d:vh")) != -1) {
		switch (opt) {
		case 'd':
			state_dir = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (state_dir[0] != '/')
		die("-d %s: give an absolute path in bpffs", state_dir);
	libbpf_set_print(libbpf_print);
	cmd = cmd_find(cmds, argv[optind]);
	if (cmd)
		return cmd->fn(argc - optind, argv + optind);
	die("unknown command '%s' (see --help)", argv[optind]);
}
