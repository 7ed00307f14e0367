/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the sockaddr tool's files share: sockaddr.c (usage, main), common.c
 * (errors, cgroups, the state directory and its maps, addresses),
 * attach.c (attach, detach, status, list), route.c (route) and
 * firewall.c (firewall).
 */
#ifndef SOCKADDR_TOOL_H
#define SOCKADDR_TOOL_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <bpf/libbpf.h>

#include "sockaddr.h"

struct sockaddr_bpf;

#define DEFAULT_DIR	"/sys/fs/bpf/sockaddr"

extern const char *state_dir;	/* -d: the bpffs directory of the state */
extern bool verbose;		/* -v: libbpf's informational messages */
#define SA_N_MAPS 7
extern const char *const map_names[SA_N_MAPS];

/*
 * Commands and subcommands, bpftool style: a table of names, one do_ or
 * cmd_ function each, called with argv[0] its own name.
 */
struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};

struct cgroup {
	char abs[PATH_MAX];	/* real path */
	char name[SA_PATH_MAX];	/* path below the cgroup2 mount, "/" for the root */
	__u64 id;
};

struct maps {
	int routes, services, pub_slots, fw_policy, fw_ports, fw_addrs, containers;
};

struct endpoint {
	int family;
	struct sa_addr addr;
	__u16 port;		/* host byte order */
};

const struct cmd *cmd_find(const struct cmd *table, const char *name);
__attribute__((format(printf, 1, 2), noreturn))
void die(const char *fmt, ...);
const char *missing_caps(char *buf, size_t len);
__attribute__((noreturn))
void die_bpf(const char *what, int err);
int libbpf_print(enum libbpf_print_level level, const char *fmt,
		 va_list ap);
const char *cgroup2_mount(void);
void cgroup_resolve(const char *arg, struct cgroup *cg);
bool cgroup_nested(const char *a, const char *b);
bool maps_open(struct maps *m);
struct sockaddr_bpf *skel_open(__u64 cgid, __u32 features);
void maps_need(struct maps *m);
__u16 parse_port(const char *s, bool zero_ok);
bool parse_addr(const char *s, int *family, struct sa_addr *a);
void parse_endpoint(const char *s, struct endpoint *ep);
const char *fmt_addr(int family, const struct sa_addr *a, __u16 port,
		     char *buf, size_t len);
const char *proto_name(int proto);
void *map_keys(int fd, size_t ksize, size_t *n);
void map_purge_cgid(int fd, size_t ksize, __u64 cgid);
void guard_system_wide(const struct cgroup *cg, const char *what,
		       bool force);
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_status(int argc, char **argv);
const char *cgroup_name_of(struct maps *m, __u64 cgid, char *buf,
			   size_t len);
int cmd_list(int argc, char **argv);
int parse_proto_flag(const char *arg, int *proto);
int cmd_route(int argc, char **argv);
int cmd_firewall(int argc, char **argv);

#endif
