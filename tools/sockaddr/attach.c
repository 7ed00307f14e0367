// SPDX-License-Identifier: GPL-2.0
/*
 * sockaddr, attach, detach, status and list: pinned links and the records
 * beside them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sockaddr.skel.h"
#include "tool.h"

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
void *map_keys(int fd, size_t ksize, size_t *n)
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
void map_purge_cgid(int fd, size_t ksize, __u64 cgid)
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
void guard_system_wide(const struct cgroup *cg, const char *what,
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

int cmd_attach(int argc, char **argv)
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

int cmd_detach(int argc, char **argv)
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

int cmd_status(int argc, char **argv)
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

const char *cgroup_name_of(struct maps *m, __u64 cgid, char *buf,
			   size_t len)
{
	struct sa_container c;

	if (!bpf_map_lookup_elem(m->containers, &cgid, &c))
		snprintf(buf, len, "%s", c.path);
	else
		snprintf(buf, len, "cgroup-id:%llu", (unsigned long long)cgid);
	return buf;
}

int cmd_list(int argc, char **argv)
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
