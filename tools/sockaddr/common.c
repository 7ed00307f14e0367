// SPDX-License-Identifier: GPL-2.0
/*
 * sockaddr, errors and capabilities, cgroups, the state directory and its maps,
 * addresses: what every command uses.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sockaddr.skel.h"
#include "tool.h"

const struct cmd *cmd_find(const struct cmd *table, const char *name)
{
	for (; table->name; table++)
		if (!strcmp(table->name, name))
			return table;
	return NULL;
}

__attribute__((format(printf, 1, 2), noreturn))
void die(const char *fmt, ...)
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
const char *missing_caps(char *buf, size_t len)
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
void die_bpf(const char *what, int err)
{
	char missing[128];

	if (err < 0)
		err = -err;
	if ((err == EPERM || err == EACCES) && *missing_caps(missing, sizeof(missing)))
		die("%s: %s: this process lacks %s (the tool needs CAP_BPF, CAP_NET_ADMIN and "
		    "CAP_SYS_ADMIN: run it as root or grant them)", what, strerror(err), missing);
	die("%s: %s", what, strerror(err));
}

int libbpf_print(enum libbpf_print_level level, const char *fmt,
		 va_list ap)
{
	if (level == LIBBPF_DEBUG || (!verbose && level == LIBBPF_INFO))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* ---- cgroups ---- */

const char *cgroup2_mount(void)
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
void cgroup_resolve(const char *arg, struct cgroup *cg)
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
bool cgroup_nested(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), l = la < lb ? la : lb;

	if (!strcmp(a, "/") || !strcmp(b, "/"))
		return true;
	return !strncmp(a, b, l) && (a[l] == '/' || a[l] == 0) &&
	       (b[l] == '/' || b[l] == 0);
}

/* ---- state directory and maps ---- */

const char *const map_names[SA_N_MAPS] = {
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
bool maps_open(struct maps *m)
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
struct sockaddr_bpf *skel_open(__u64 cgid, __u32 features)
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
void maps_need(struct maps *m)
{
	if (maps_open(m))
		return;
	sockaddr_bpf__destroy(skel_open(0, 0));
	if (!maps_open(m))
		die("maps missing in %s after creating them", state_dir);
}

/* ---- addresses ---- */

__u16 parse_port(const char *s, bool zero_ok)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < (zero_ok ? 0 : 1) || v > 65535)
		die("bad port '%s' (%d-65535)", s, zero_ok ? 0 : 1);
	return v;
}

bool parse_addr(const char *s, int *family, struct sa_addr *a)
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
void parse_endpoint(const char *s, struct endpoint *ep)
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

const char *fmt_addr(int family, const struct sa_addr *a, __u16 port,
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

const char *proto_name(int proto)
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
