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
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sockaddr.h"
#include "sockaddr.skel.h"

#define DEFAULT_DIR	"/sys/fs/bpf/sockaddr"

static const char *state_dir = DEFAULT_DIR;
static bool verbose;

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

/*
 * Commands and subcommands, bpftool style: a table of names, one do_ or
 * cmd_ function each, called with argv[0] its own name.
 */
struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct cmd *cmd_find(const struct cmd *table, const char *name)
{
	for (; table->name; table++)
		if (!strcmp(table->name, name))
			return table;
	return NULL;
}

__attribute__((format(printf, 1, 2), noreturn))
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("sockaddr: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static const struct {
	int cap;
	const char *name;
} needed_caps[] = {
	{ CAP_BPF, "CAP_BPF" },
	{ CAP_NET_ADMIN, "CAP_NET_ADMIN" },
	{ CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
};

/*
 * The needed capabilities missing from this process's effective set, as
 * "CAP_X, CAP_Y" ("" when it has them all).  Capabilities, not the uid:
 * root without them is refused by the kernel, a user with them is not.
 */
static const char *missing_caps(char *buf, size_t len)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	size_t i;

	buf[0] = 0;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data)) {
		snprintf(buf, len, "(capget: %s)", strerror(errno));
		return buf;
	}
	for (i = 0; i < sizeof(needed_caps) / sizeof(needed_caps[0]); i++) {
		int c = needed_caps[i].cap;

		if (data[c / 32].effective & (1u << (c % 32)))
			continue;
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			 buf[0] ? ", " : "", needed_caps[i].name);
	}
	return buf;
}

/*
 * Explain an errno the kernel gave (bpf() or bpffs); permission is the
 * usual one, and then the missing capabilities are what to fix.
 */
__attribute__((noreturn))
static void die_bpf(const char *what, int err)
{
	char missing[128];

	if (err < 0)
		err = -err;
	if ((err == EPERM || err == EACCES) && *missing_caps(missing, sizeof(missing)))
		die("%s: %s: this process lacks %s (the tool needs CAP_BPF, CAP_NET_ADMIN and "
		    "CAP_SYS_ADMIN: run it as root or grant them)", what, strerror(err), missing);
	die("%s: %s", what, strerror(err));
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG || (!verbose && level == LIBBPF_INFO))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* ---- cgroups ---- */

struct cgroup {
	char abs[PATH_MAX];	/* real path */
	char name[SA_PATH_MAX];	/* path below the cgroup2 mount, "/" for the root */
	__u64 id;
};

static const char *cgroup2_mount(void)
{
	static char mnt[PATH_MAX];
	char dev[256], dir[PATH_MAX], type[64];
	FILE *f;

	if (mnt[0])
		return mnt;
	f = fopen("/proc/self/mounts", "r");
	if (!f)
		die("cannot read /proc/self/mounts: %s", strerror(errno));
	while (fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3) {
		if (!strcmp(type, "cgroup2")) {
			snprintf(mnt, sizeof(mnt), "%s", dir);
			break;
		}
	}
	fclose(f);
	if (!mnt[0])
		die("cgroup v2 is not mounted (mount -t cgroup2 none /sys/fs/cgroup)");
	return mnt;
}

static bool is_cgroup2_dir(const char *path)
{
	struct statfs sfs;
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode) && !statfs(path, &sfs) &&
	       sfs.f_type == CGROUP2_SUPER_MAGIC;
}

/*
 * Resolve a CGROUP argument.  The cgroup id is the directory's inode
 * number on cgroup2 (kernfs node id on 64-bit), which is what
 * bpf_get_current_cgroup_id() and friends report.
 */
static void cgroup_resolve(const char *arg, struct cgroup *cg)
{
	const char *mnt = cgroup2_mount();
	char try[PATH_MAX];
	size_t ml = strlen(mnt);
	struct stat st;

	if (arg[0] == '/' && is_cgroup2_dir(arg))
		snprintf(try, sizeof(try), "%s", arg);
	else
		snprintf(try, sizeof(try), "%s/%s", mnt, arg);
	if (!is_cgroup2_dir(try)) {
		if (arg[0] == '/' && !access(arg, F_OK) && !is_cgroup2_dir(arg))
			die("%s is not a cgroup v2 directory", arg);
		die("cgroup %s not found (no directory %s in the cgroup v2 hierarchy at %s)",
		    arg, try, mnt);
	}
	if (!realpath(try, cg->abs))
		die("%s: %s", try, strerror(errno));
	if (strncmp(cg->abs, mnt, ml) || (cg->abs[ml] && cg->abs[ml] != '/'))
		die("%s is outside the cgroup v2 hierarchy at %s", arg, mnt);
	snprintf(cg->name, sizeof(cg->name), "%s", cg->abs[ml] ? cg->abs + ml : "/");
	if (stat(cg->abs, &st))
		die("%s: %s", cg->abs, strerror(errno));
	cg->id = st.st_ino;
}

/* Is one of the two cgroup names an ancestor of (or equal to) the other? */
static bool cgroup_nested(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), l = la < lb ? la : lb;

	if (!strcmp(a, "/") || !strcmp(b, "/"))
		return true;
	return !strncmp(a, b, l) && (a[l] == '/' || a[l] == 0) &&
	       (b[l] == '/' || b[l] == 0);
}

/* ---- state directory and maps ---- */

struct maps {
	int routes, services, pub_slots, fw_policy, fw_ports, fw_addrs, containers;
};

static const char *const map_names[] = {
	"routes", "services", "pub_slots", "fw_policy", "fw_ports",
	"fw_addrs", "containers",
};

static void check_bpffs(void)
{
	char parent[PATH_MAX], *slash;
	struct statfs sfs;

	snprintf(parent, sizeof(parent), "%s", state_dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = 0;
	if (statfs(parent, &sfs) || sfs.f_type != BPF_FS_MAGIC)
		die("%s is not on a bpf filesystem (mount -t bpf bpf /sys/fs/bpf, or use -d)",
		    state_dir);
}

/* Is there state?  A directory we may not look into is an error, not "no". */
static bool state_exists(void)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/containers", state_dir);
	if (!access(p, F_OK))
		return true;
	if (errno != ENOENT)
		die_bpf(p, errno);
	return false;
}

/* Open the pinned maps; false when there are none yet. */
static bool maps_open(struct maps *m)
{
	int *fds[] = {
		&m->routes, &m->services, &m->pub_slots, &m->fw_policy,
		&m->fw_ports, &m->fw_addrs, &m->containers,
	};
	char p[PATH_MAX];
	size_t i;

	check_bpffs();
	if (!state_exists())
		return false;
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", state_dir, map_names[i]);
		*fds[i] = bpf_obj_get(p);
		if (*fds[i] < 0)
			die_bpf(p, errno);
	}
	return true;
}

/* Open a skeleton whose maps are the pinned ones (created if missing). */
static struct sockaddr_bpf *skel_open(__u64 cgid, __u32 features)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = state_dir);
	struct sockaddr_bpf *skel;
	int err;

	if (mkdir(state_dir, 0700) && errno != EEXIST)
		die_bpf(state_dir, errno);
	skel = sockaddr_bpf__open_opts(&opts);
	if (!skel)
		die_bpf("opening the BPF object", errno);
	skel->rodata->container_id = cgid;
	skel->rodata->features = features;
	err = sockaddr_bpf__load(skel);
	if (err)
		die_bpf("loading the BPF programs (-v shows the verifier log)", err);
	return skel;
}

/* Maps for a configuration command: create them when nothing exists yet. */
static void maps_need(struct maps *m)
{
	if (maps_open(m))
		return;
	sockaddr_bpf__destroy(skel_open(0, 0));
	if (!maps_open(m))
		die("maps missing in %s after creating them", state_dir);
}

/* ---- addresses ---- */

struct endpoint {
	int family;
	struct sa_addr addr;
	__u16 port;		/* host byte order */
};

static __u16 parse_port(const char *s, bool zero_ok)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < (zero_ok ? 0 : 1) || v > 65535)
		die("bad port '%s' (%d-65535)", s, zero_ok ? 0 : 1);
	return v;
}

static bool parse_addr(const char *s, int *family, struct sa_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &a->a[0]) == 1) {
		*family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, s, a->a) == 1) {
		*family = AF_INET6;
		return true;
	}
	return false;
}

/* ADDR:PORT or [ADDR6]:PORT */
static void parse_endpoint(const char *s, struct endpoint *ep)
{
	char buf[128], *colon, *host;

	if (strlen(s) >= sizeof(buf))
		die("bad address '%s'", s);
	strcpy(buf, s);
	colon = strrchr(buf, ':');
	if (!colon)
		die("bad address '%s': expected ADDR:PORT or [ADDR]:PORT", s);
	*colon = 0;
	host = buf;
	if (host[0] == '[') {
		size_t l = strlen(host);

		if (l < 2 || host[l - 1] != ']')
			die("bad address '%s': unbalanced brackets", s);
		host[l - 1] = 0;
		host++;
	} else if (strchr(host, ':')) {
		die("bad address '%s': write IPv6 as [ADDR]:PORT", s);
	}
	if (!parse_addr(host, &ep->family, &ep->addr))
		die("bad address '%s': '%s' is not an IPv4 or IPv6 address", s, host);
	ep->port = parse_port(colon + 1, false);
}

static const char *fmt_addr(int family, const struct sa_addr *a, __u16 port,
			    char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	inet_ntop(family, a->a, ip, sizeof(ip));
	if (family == AF_INET6)
		snprintf(buf, len, "[%s]:%u", ip, port);
	else
		snprintf(buf, len, "%s:%u", ip, port);
	return buf;
}

static const char *proto_name(int proto)
{
	switch (proto) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case SA_PROTO_ANY:
		return "tcp+udp";
	default:
		return "?";
	}
}

/* ---- attach / detach / status ---- */

static const struct hook {
	const char *name;
	__u32 feature;		/* attached when any of these features is on */
	enum bpf_attach_type type;
} hooks[] = {
	{ "bind4", SA_FEAT_FIREWALL, BPF_CGROUP_INET4_BIND },
	{ "bind6", SA_FEAT_FIREWALL, BPF_CGROUP_INET6_BIND },
	{ "post_bind4", SA_FEAT_FIREWALL | SA_FEAT_PUBLISH, BPF_CGROUP_INET4_POST_BIND },
	{ "post_bind6", SA_FEAT_FIREWALL | SA_FEAT_PUBLISH, BPF_CGROUP_INET6_POST_BIND },
	{ "sock_release", SA_FEAT_PUBLISH, BPF_CGROUP_INET_SOCK_RELEASE },
	{ "connect4", SA_FEAT_ROUTE, BPF_CGROUP_INET4_CONNECT },
	{ "connect6", SA_FEAT_ROUTE, BPF_CGROUP_INET6_CONNECT },
};
#define N_HOOKS (sizeof(hooks) / sizeof(hooks[0]))

static struct bpf_program *hook_prog(struct sockaddr_bpf *s, size_t i)
{
	struct bpf_program *progs[N_HOOKS] = {
		s->progs.sa_bind4, s->progs.sa_bind6, s->progs.sa_post_bind4,
		s->progs.sa_post_bind6, s->progs.sa_sock_release,
		s->progs.sa_connect4, s->progs.sa_connect6,
	};

	return progs[i];
}

static void link_path(char *buf, size_t len, __u64 cgid, const char *hook)
{
	snprintf(buf, len, "%s/links/%llu-%s", state_dir,
		 (unsigned long long)cgid, hook);
}

static const char *features_str(__u32 f, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", f & SA_FEAT_PUBLISH ? "publish " : "",
		 f & SA_FEAT_ROUTE ? "route " : "",
		 f & SA_FEAT_FIREWALL ? "firewall " : "");
	if (buf[0])
		buf[strlen(buf) - 1] = 0;
	return buf;
}

static bool pid_alive(__u32 pid)
{
	return pid && (!kill(pid, 0) || errno == EPERM);
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* All keys of a hash map, so that callers may delete while walking. */
static void *map_keys(int fd, size_t ksize, size_t *n)
{
	size_t cap = 64;
	char *keys = malloc(cap * ksize), *prev = NULL;

	if (!keys)
		die("out of memory");
	*n = 0;
	for (;;) {
		if (*n == cap) {
			cap *= 2;
			keys = realloc(keys, cap * ksize);
			if (!keys)
				die("out of memory");
		}
		prev = *n ? keys + (*n - 1) * ksize : NULL;
		if (bpf_map_get_next_key(fd, prev, keys + *n * ksize))
			break;
		(*n)++;
	}
	return keys;
}

/* Delete every entry whose key starts with this cgroup id. */
static void map_purge_cgid(int fd, size_t ksize, __u64 cgid)
{
	size_t n, i;
	char *keys = map_keys(fd, ksize, &n);

	for (i = 0; i < n; i++)
		if (!memcmp(keys + i * ksize, &cgid, sizeof(cgid)))
			bpf_map_delete_elem(fd, keys + i * ksize);
	free(keys);
}

/* Drop the cgroup's records, firewall configuration and attachment record. */
static void forget_cgroup(struct maps *m, __u64 cgid)
{
	struct sa_service svc;
	size_t n, i;
	__u64 *cookies = map_keys(m->services, sizeof(__u64), &n);

	for (i = 0; i < n; i++)
		if (!bpf_map_lookup_elem(m->services, &cookies[i], &svc) &&
		    svc.cgid == cgid)
			bpf_map_delete_elem(m->services, &cookies[i]);
	free(cookies);
	map_purge_cgid(m->pub_slots, sizeof(struct sa_slot_key), cgid);
	map_purge_cgid(m->fw_ports, sizeof(struct sa_port_key), cgid);
	map_purge_cgid(m->fw_addrs, sizeof(struct sa_addr_key), cgid);
	bpf_map_delete_elem(m->fw_policy, &cgid);
	bpf_map_delete_elem(m->containers, &cgid);
}

/* ---- pins ---- */

/* How many hook links are pinned for CGID, whatever the records say. */
static int cgroup_pin_count(__u64 cgid)
{
	char p[PATH_MAX];
	int n = 0;
	size_t h;

	for (h = 0; h < N_HOOKS; h++) {
		link_path(p, sizeof(p), cgid, hooks[h].name);
		n += !access(p, F_OK);
	}
	return n;
}

/* Unpin every hook link of CGID: removing the last reference detaches it. */
static void cgroup_unpin_all(__u64 cgid)
{
	char p[PATH_MAX];
	size_t h;

	for (h = 0; h < N_HOOKS; h++) {
		link_path(p, sizeof(p), cgid, hooks[h].name);
		if (unlink(p) && errno != ENOENT)
			die("cannot remove %s: %s", p, strerror(errno));
	}
}

/* Is this pin (cgroup id, hook name) part of a recorded attachment? */
static bool pin_recorded(struct maps *m, __u64 cgid, const char *hook)
{
	struct sa_container c;
	size_t h;

	if (bpf_map_lookup_elem(m->containers, &cgid, &c) || c.pid)
		return false;
	for (h = 0; h < N_HOOKS; h++)
		if (!strcmp(hooks[h].name, hook))
			return hooks[h].feature & c.features;
	return false;
}

/* Find the cgroup directory with inode ID below DIR (depth-first). */
static bool cgroup_find_id(const char *dir, __u64 id, char *buf, size_t len,
			   int depth)
{
	char p[PATH_MAX + 256];
	struct dirent *de;
	struct stat st;
	bool found = false;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (!stat(p, &st) && st.st_ino == id) {
			snprintf(buf, len, "%s", p + strlen(cgroup2_mount()));
			found = true;
		} else if (depth < 32) {
			found = cgroup_find_id(p, id, buf, len, depth + 1);
		}
	}
	closedir(d);
	return found;
}

/* The path below the cgroup2 mount of cgroup ID, or a note that it is gone. */
static const char *cgroup_path_of_id(__u64 id, char *buf, size_t len)
{
	const char *mnt = cgroup2_mount();
	struct stat st;

	if (!stat(mnt, &st) && st.st_ino == id)
		snprintf(buf, len, "/");
	else if (!cgroup_find_id(mnt, id, buf, len, 0))
		snprintf(buf, len, "(cgroup removed)");
	return buf;
}

/* ---- the root cgroup and PID 1 ---- */

/* Is INNER the cgroup OUTER or one of its descendants? */
static bool cgroup_within(const char *inner, const char *outer)
{
	size_t lo = strlen(outer);

	return !strcmp(outer, "/") ||
	       (!strncmp(inner, outer, lo) && (inner[lo] == '/' || !inner[lo]));
}

/* The cgroup v2 path of PID 1, as /proc/1/cgroup gives it. */
static bool pid1_cgroup(char *buf, size_t len)
{
	char line[SA_PATH_MAX + 8];
	bool found = false;
	FILE *f = fopen("/proc/1/cgroup", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(buf, len, "%s", line + 3);
		found = true;
	}
	fclose(f);
	return found;
}

/*
 * A firewall rule on the root cgroup acts on every process; on a cgroup
 * holding PID 1 it acts on init and on every service init starts there.
 * Either way one wrong "deny" can stop the system's servers from
 * listening, so such a change needs --force.
 */
static void guard_system_wide(const struct cgroup *cg, const char *what,
			      bool force)
{
	char init_cg[SA_PATH_MAX + 8];

	if (force)
		return;
	if (!strcmp(cg->name, "/"))
		die("refusing %s on /: it is the root cgroup, so every bind() of "
		    "every process would be subject to it (--force to do it anyway)", what);
	if (pid1_cgroup(init_cg, sizeof(init_cg)) && cgroup_within(init_cg, cg->name))
		die("refusing %s on %s: it holds PID 1 (init, in %s), so init and every "
		    "service it starts there would be subject to it (--force to do it anyway)",
		    what, cg->name, init_cg);
}

/* ---- attach ---- */

struct attach_opts {
	const char *path;
	__u32 features;
	bool foreground, force;
};

static void parse_attach(int argc, char **argv, struct attach_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--publish"))
			o->features |= SA_FEAT_PUBLISH;
		else if (!strcmp(argv[i], "--route"))
			o->features |= SA_FEAT_ROUTE;
		else if (!strcmp(argv[i], "--firewall"))
			o->features |= SA_FEAT_FIREWALL;
		else if (!strcmp(argv[i], "--foreground"))
			o->foreground = true;
		else if (!strcmp(argv[i], "--force"))
			o->force = true;
		else if (argv[i][0] == '-' || o->path)
			die("attach: unexpected argument '%s' (see --help)", argv[i]);
		else
			o->path = argv[i];
	}
	if (!o->path)
		die("attach: which cgroup? (attach CGROUP [--publish] [--route] [--firewall])");
	if (!o->features)
		o->features = SA_FEAT_ALL;
}

/*
 * One attachment per cgroup; no unrecorded pins of it in the way; and no
 * publishing in two nested cgroups, where both post-bind programs would
 * run for the same socket and record it twice.
 */
static void attach_check(struct maps *m, const struct cgroup *cg, __u32 features)
{
	struct sa_container c, other;
	__u64 next, *key = NULL;
	char fs[64];

	if (!bpf_map_lookup_elem(m->containers, &cg->id, &c)) {
		if (!c.pid || pid_alive(c.pid))
			die("%s is already attached (%s); detach it first", cg->name,
			    features_str(c.features, fs, sizeof(fs)));
		/* A --foreground attach killed by SIGKILL: finish its exit. */
		forget_cgroup(m, cg->id);
	}
	if (cgroup_pin_count(cg->id))
		die("%s has links pinned in %s/links without a record (an interrupted "
		    "attach?): 'status' shows them, 'detach %s' removes them",
		    cg->name, state_dir, cg->name);
	for (; !bpf_map_get_next_key(m->containers, key, &next); key = &next) {
		if (bpf_map_lookup_elem(m->containers, &next, &other))
			continue;
		if ((other.features & features & SA_FEAT_PUBLISH) &&
		    cgroup_nested(other.path, cg->name))
			die("cannot publish in %s: %s, nested with it, already publishes",
			    cg->name, other.path);
	}
}

/*
 * Attach, and unless FOREGROUND pin, the hook of each feature.  Returns -1,
 * or the index of the hook that failed with errno set; links[] then holds
 * what was made before it, for attach_release().
 */
static int attach_hooks(struct sockaddr_bpf *skel, const struct cgroup *cg,
			__u32 features, bool foreground, struct bpf_link **links)
{
	char p[PATH_MAX];
	int cgfd, err;
	size_t h;

	cgfd = open(cg->abs, O_RDONLY | O_DIRECTORY);
	if (cgfd < 0)
		die("%s: %s", cg->abs, strerror(errno));
	snprintf(p, sizeof(p), "%s/links", state_dir);
	if (mkdir(p, 0700) && errno != EEXIST)
		die_bpf(p, errno);
	for (h = 0; h < N_HOOKS; h++) {
		if (!(hooks[h].feature & features))
			continue;
		links[h] = bpf_program__attach_cgroup(hook_prog(skel, h), cgfd);
		if (!links[h])
			break;
		if (foreground)
			continue;
		link_path(p, sizeof(p), cg->id, hooks[h].name);
		if (bpf_link__pin(links[h], p))
			break;
	}
	err = errno;
	close(cgfd);
	errno = err;
	return h < N_HOOKS ? (int)h : -1;
}

/* Unpin and close each link: the programs are detached, nothing is left. */
static void attach_release(struct bpf_link **links)
{
	size_t h;

	for (h = 0; h < N_HOOKS; h++) {
		if (!links[h])
			continue;
		if (bpf_link__pin_path(links[h]))
			bpf_link__unpin(links[h]);
		bpf_link__destroy(links[h]);
		links[h] = NULL;
	}
}

/*
 * Why hook H could not be attached to CG.  With the capabilities there,
 * EPERM means a program attached without BPF_F_ALLOW_MULTI, here or in an
 * ancestor, which admits no other.
 */
__attribute__((noreturn))
static void die_attach(const struct cgroup *cg, size_t h, int err)
{
	__u32 flags = 0, ids[1], cnt = 1;
	char what[SA_PATH_MAX + 96], missing[128];
	int cgfd = open(cg->abs, O_RDONLY | O_DIRECTORY);

	snprintf(what, sizeof(what), "attaching %s to %s (nothing left attached)",
		 hooks[h].name, cg->name);
	if (err != EPERM || *missing_caps(missing, sizeof(missing)) || cgfd < 0)
		die_bpf(what, err);
	if (!bpf_prog_query(cgfd, hooks[h].type, 0, &flags, ids, &cnt) && cnt &&
	    !(flags & BPF_F_ALLOW_MULTI))
		die("%s: %s: prog id %u is attached there without BPF_F_ALLOW_MULTI "
		    "and admits no other program", what, strerror(err), ids[0]);
	die("%s: %s: an ancestor cgroup may hold a program attached there without "
	    "BPF_F_ALLOW_MULTI", what, strerror(err));
}

static bool attach_record(struct maps *m, const struct cgroup *cg,
			  __u32 features, bool foreground)
{
	struct sa_container c;

	memset(&c, 0, sizeof(c));
	snprintf(c.path, sizeof(c.path), "%s", cg->name);
	c.features = features;
	c.pid = foreground ? getpid() : 0;
	return !bpf_map_update_elem(m->containers, &cg->id, &c, BPF_ANY);
}

/*
 * --foreground: hold the links until SIGINT, SIGTERM or SIGHUP, then leave
 * nothing behind: the programs, and what they and 'firewall' stored for
 * the cgroup, as 'detach' does.  The signals are blocked on entry.
 */
static void run_foreground(struct maps *m, const struct cgroup *cg,
			   struct bpf_link **links, const sigset_t *unblocked)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while (!stop)
		sigsuspend(unblocked);
	/* Programs first, so that none records anything after the purge. */
	attach_release(links);
	forget_cgroup(m, cg->id);
	printf("detached from %s, its firewall rules and published records dropped\n",
	       cg->name);
}

static int cmd_attach(int argc, char **argv)
{
	struct bpf_link *links[N_HOOKS] = { 0 };
	struct sockaddr_bpf *skel;
	struct attach_opts o;
	sigset_t block, old;
	struct maps m;
	struct cgroup cg;
	char fs[64];
	int failed, err;

	parse_attach(argc, argv, &o);
	cgroup_resolve(o.path, &cg);
	if (o.features & SA_FEAT_FIREWALL)
		guard_system_wide(&cg, "to attach the firewall", o.force);
	maps_need(&m);
	attach_check(&m, &cg, o.features);
	skel = skel_open(cg.id, o.features);

	/* From the first link to the record, a signal must not split the attach. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	failed = attach_hooks(skel, &cg, o.features, o.foreground, links);
	err = errno;
	if (failed >= 0) {
		attach_release(links);
		die_attach(&cg, failed, err);
	}
	if (!attach_record(&m, &cg, o.features, o.foreground)) {
		err = errno;
		attach_release(links);
		die_bpf("recording the attachment (nothing left attached)", err);
	}
	printf("attached to %s (cgroup id %llu): %s\n", cg.name,
	       (unsigned long long)cg.id, features_str(o.features, fs, sizeof(fs)));
	fflush(stdout);
	if (o.foreground)
		run_foreground(&m, &cg, links, &old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* Pinned links outlive the skeleton: only the pins hold them now. */
	sockaddr_bpf__destroy(skel);
	return 0;
}

/* ---- detach ---- */

/* Stop a --foreground attach: it detaches on SIGTERM. */
static void stop_foreground(__u32 pid)
{
	int i;

	if (!pid_alive(pid))
		return;
	kill(pid, SIGTERM);
	for (i = 0; i < 100 && pid_alive(pid); i++)
		usleep(20000);
}

static void detach_one(struct maps *m, __u64 cgid)
{
	struct sa_container c;

	if (!bpf_map_lookup_elem(m->containers, &cgid, &c) && c.pid)
		stop_foreground(c.pid);
	cgroup_unpin_all(cgid);
	forget_cgroup(m, cgid);
}

/* Every pin in links/ (also of cgroups removed since), then links/ itself. */
static void remove_all_pins(void)
{
	char p[PATH_MAX], lp[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;

	snprintf(p, sizeof(p), "%s/links", state_dir);
	d = opendir(p);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(lp, sizeof(lp), "%s/%s", p, de->d_name);
		unlink(lp);
	}
	if (d)
		closedir(d);
	rmdir(p);
}

static int detach_all(struct maps *m)
{
	char p[PATH_MAX];
	__u64 *ids;
	size_t n, i;

	ids = map_keys(m->containers, sizeof(__u64), &n);
	for (i = 0; i < n; i++)
		detach_one(m, ids[i]);
	free(ids);
	remove_all_pins();
	for (i = 0; i < sizeof(map_names) / sizeof(map_names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", state_dir, map_names[i]);
		unlink(p);
	}
	if (rmdir(state_dir) && errno != ENOENT)
		die("cannot remove %s: %s", state_dir, strerror(errno));
	printf("detached everything, removed %s\n", state_dir);
	return 0;
}

static int cmd_detach(int argc, char **argv)
{
	struct sa_container c;
	struct maps m;
	struct cgroup cg;
	bool recorded;
	int pins;

	if (argc != 2)
		die("detach: expected one CGROUP or --all");
	if (!maps_open(&m)) {
		if (!strcmp(argv[1], "--all"))
			return 0;
		die("nothing is attached (no state in %s)", state_dir);
	}
	if (!strcmp(argv[1], "--all"))
		return detach_all(&m);
	cgroup_resolve(argv[1], &cg);
	recorded = !bpf_map_lookup_elem(m.containers, &cg.id, &c);
	pins = cgroup_pin_count(cg.id);
	if (!recorded && !pins)
		die("%s is not attached", cg.name);
	detach_one(&m, cg.id);
	if (recorded)
		printf("detached from %s\n", cg.name);
	else
		printf("detached from %s: removed %d pinned link(s) without a record\n",
		       cg.name, pins);
	return 0;
}

/* ---- status ---- */

/* Program id behind a pinned link, 0 when there is none. */
static __u32 pinned_prog_id(__u64 cgid, const char *hook)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	char p[PATH_MAX];
	int fd;

	link_path(p, sizeof(p), cgid, hook);
	fd = bpf_obj_get(p);
	if (fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.prog_id = 0;
	close(fd);
	return info.prog_id;
}

static void status_recorded(struct maps *m, __u64 id, const struct sa_container *c)
{
	struct sa_policy pol;
	char fs[64];
	size_t h;

	printf("%s (cgroup id %llu): %s", c->path, (unsigned long long)id,
	       features_str(c->features, fs, sizeof(fs)));
	if (c->pid)
		printf(", foreground pid %u%s", c->pid,
		       pid_alive(c->pid) ? "" : " (gone: stale entry)");
	printf("\n");
	for (h = 0; h < N_HOOKS; h++) {
		__u32 prog;

		if (!(hooks[h].feature & c->features))
			continue;
		prog = c->pid ? 0 : pinned_prog_id(id, hooks[h].name);
		if (c->pid)
			printf("  %-13s attached (held by pid %u)\n", hooks[h].name, c->pid);
		else if (prog)
			printf("  %-13s prog id %u\n", hooks[h].name, prog);
		else
			printf("  %-13s MISSING (link pin gone)\n", hooks[h].name);
	}
	if ((c->features & SA_FEAT_FIREWALL) &&
	    !bpf_map_lookup_elem(m->fw_policy, &id, &pol))
		printf("  firewall: %llu binds denied, %llu rewritten\n",
		       (unsigned long long)pol.denied, (unsigned long long)pol.rewritten);
}

/* Pins that no record accounts for: an interrupted attach, say.  Count. */
static int status_unrecorded(struct maps *m)
{
	char p[PATH_MAX], hook[64], cgpath[PATH_MAX];
	unsigned long long id;
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(p, sizeof(p), "%s/links", state_dir);
	d = opendir(p);
	while (d && (de = readdir(d))) {
		if (sscanf(de->d_name, "%llu-%63s", &id, hook) != 2 ||
		    pin_recorded(m, id, hook))
			continue;
		cgroup_path_of_id(id, cgpath, sizeof(cgpath));
		printf("%s (cgroup id %llu): NOT RECORDED: %s pinned (prog id %u) "
		       "without a record; 'detach %s' removes it\n", cgpath, id, hook,
		       pinned_prog_id(id, hook), cgpath[0] == '/' ? cgpath : "--all");
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

static int cmd_status(int argc, char **argv)
{
	struct sa_container c;
	struct maps m;
	__u64 *ids;
	size_t n, i;

	(void)argv;
	if (argc != 1)
		die("status takes no arguments");
	if (!maps_open(&m)) {
		printf("nothing attached (no state in %s)\n", state_dir);
		return 0;
	}
	ids = map_keys(m.containers, sizeof(__u64), &n);
	for (i = 0; i < n; i++)
		if (!bpf_map_lookup_elem(m.containers, &ids[i], &c))
			status_recorded(&m, ids[i], &c);
	if (!status_unrecorded(&m) && !n)
		printf("nothing attached (state in %s)\n", state_dir);
	free(ids);
	return 0;
}

static const char *cgroup_name_of(struct maps *m, __u64 cgid, char *buf,
				  size_t len)
{
	struct sa_container c;

	if (!bpf_map_lookup_elem(m->containers, &cgid, &c))
		snprintf(buf, len, "%s", c.path);
	else
		snprintf(buf, len, "cgroup-id:%llu", (unsigned long long)cgid);
	return buf;
}

static int cmd_list(int argc, char **argv)
{
	struct sa_service svc;
	struct maps m;
	__u64 *cookies;
	size_t n, i;
	char a[80], name[SA_PATH_MAX + 32];

	(void)argv;
	if (argc != 1)
		die("list takes no arguments");
	if (!maps_open(&m))
		return 0;
	cookies = map_keys(m.services, sizeof(__u64), &n);
	printf("%-24s %-5s %-30s %-8s %s\n", "CGROUP", "PROTO", "BOUND", "PID", "COMMAND");
	for (i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(m.services, &cookies[i], &svc))
			continue;
		printf("%-24s %-5s %-30s %-8u %.16s\n",
		       cgroup_name_of(&m, svc.cgid, name, sizeof(name)),
		       proto_name(svc.proto),
		       fmt_addr(svc.family, &svc.addr, svc.port, a, sizeof(a)),
		       svc.pid, svc.comm);
	}
	free(cookies);
	return 0;
}

/* ---- routes ---- */

static int parse_proto_flag(const char *arg, int *proto)
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

static int cmd_route(int argc, char **argv)
{
	const struct cmd *sub;

	if (argc < 2)
		die("route: expected add, del or list (see --help)");
	sub = cmd_find(route_cmds, argv[1]);
	if (!sub)
		die("route: unknown subcommand '%s' (add, del, list)", argv[1]);
	return sub->fn(argc - 1, argv + 1);
}

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

static int cmd_firewall(int argc, char **argv)
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
