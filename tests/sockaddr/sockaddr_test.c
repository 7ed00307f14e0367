// SPDX-License-Identifier: GPL-2.0
/*
 * The sockaddr tool end to end, in the guest: three "containers" (cgroups
 * A, B, C under /sys/fs/cgroup/sa-test) with real TCP and UDP servers and
 * clients, IPv4 and IPv6.  A runs clients and has the route program; B and
 * C run servers and publish them; B also has the firewall.  Processes
 * outside the cgroups (this one) must never be affected.
 *
 * The tool is $SOCKADDR_TOOL, else $LK417_TESTBIN/sockaddr.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <bpf/bpf.h>

#include "tap.h"

#define CG	"/sys/fs/cgroup/sa-test"
#define TCP	SOCK_STREAM
#define UDP	SOCK_DGRAM
#define NOBODY	65534

/*
 * The err of a server or client whose own machinery (pipe, fork, the
 * report) failed: never an errno, so that no check of an expected errno
 * can pass on a broken test.
 */
#define HARNESS_FAILED	(-1)

static char tool_path[1024];
static char out[16384];		/* output of the last tool() call */

/* An errno by name (ECONNREFUSED), for got/want messages. */
static const char *errname(int e)
{
	const char *n;

	if (e == HARNESS_FAILED)
		return "test harness failure";
	if (!e)
		return "success";
	n = strerrorname_np(e);
	return n ? n : "unknown errno";
}

/* Whom the tool runs as. */
enum creds {
	AS_ROOT,		/* this process's credentials */
	ROOT_NO_CAPS,		/* uid 0 with an empty capability bounding set */
	NOBODY_NO_CAPS,		/* uid/gid 65534, no capabilities */
	NOBODY_WITH_CAPS,	/* uid/gid 65534, CAP_BPF, CAP_NET_ADMIN and
				 * CAP_SYS_ADMIN as ambient capabilities */
};

static const int tool_caps[] = { CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN };
#define N_TOOL_CAPS (sizeof(tool_caps) / sizeof(tool_caps[0]))

/* Set this process's capability sets: all three to the tool's or none. */
static int caps_set(bool tool_ones)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	size_t i;

	memset(d, 0, sizeof(d));
	for (i = 0; tool_ones && i < N_TOOL_CAPS; i++) {
		d[tool_caps[i] / 32].effective |= 1u << (tool_caps[i] % 32);
		d[tool_caps[i] / 32].permitted |= 1u << (tool_caps[i] % 32);
		d[tool_caps[i] / 32].inheritable |= 1u << (tool_caps[i] % 32);
	}
	return syscall(SYS_capset, &hdr, d);
}

/* Become NOBODY; keep the tool's capabilities as ambient ones if asked. */
static int become_nobody(bool with_caps)
{
	size_t i;

	if (with_caps && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return -1;
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return -1;
	if (!with_caps)
		return 0;
	if (caps_set(true))
		return -1;
	for (i = 0; i < N_TOOL_CAPS; i++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, tool_caps[i], 0, 0))
			return -1;
	return 0;
}

/* In a child about to exec: take on CREDS, or exit 98 saying why not. */
static void set_creds(enum creds c)
{
	int cap, err = 0;

	switch (c) {
	case AS_ROOT:
		break;
	case ROOT_NO_CAPS:
		/* Without a bounding set, exec gives uid 0 no capabilities. */
		for (cap = 0; cap <= 63; cap++)
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL)
				err = -1;
		if (!err)
			err = caps_set(false);
		break;
	case NOBODY_NO_CAPS:
	case NOBODY_WITH_CAPS:
		err = become_nobody(c == NOBODY_WITH_CAPS);
		break;
	}
	if (err) {
		dprintf(1, "test: cannot set credentials %d: %s\n", c, strerror(errno));
		_exit(98);
	}
}

/* Run the tool as CREDS with these arguments; stdout+stderr land in out[]. */
__attribute__((format(printf, 2, 0)))
static int vtool(enum creds creds, const char *fmt, va_list ap)
{
	char cmd[2200], args[1024];
	size_t n = 0;
	ssize_t r;
	int pfd[2], st;
	pid_t pid;

	vsnprintf(args, sizeof(args), fmt, ap);
	snprintf(cmd, sizeof(cmd), "exec %s %s 2>&1", tool_path, args);
	if (pipe(pfd))
		return HARNESS_FAILED;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		set_creds(creds);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while (pid > 0 && (r = read(pfd[0], out + n, sizeof(out) - 1 - n)) > 0)
		n += r;
	out[n] = 0;
	close(pfd[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return HARNESS_FAILED;
	if (n && strncmp(out, "sockaddr:", 9) && getenv("SA_TEST_VERBOSE"))
		printf("# $ sockaddr %s\n%s", args, out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Run the tool (as this process) with these arguments. */
__attribute__((format(printf, 1, 2)))
static int tool(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vtool(AS_ROOT, fmt, ap);
	va_end(ap);
	return rc;
}

__attribute__((format(printf, 2, 3)))
static int tool_as(enum creds creds, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vtool(creds, fmt, ap);
	va_end(ap);
	return rc;
}

static bool out_has(const char *s)
{
	return strstr(out, s) != NULL;
}

static void join_cgroup(const char *cg)
{
	char p[256];
	int fd;

	if (!cg)
		return;
	snprintf(p, sizeof(p), "%s/%s/cgroup.procs", CG, cg);
	fd = open(p, O_WRONLY);
	if (fd < 0 || write(fd, "0", 1) != 1) {
		perror(p);
		_exit(99);
	}
	close(fd);
}

static socklen_t make_sa(int family, const char *addr, int port,
			 struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (void *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		inet_pton(AF_INET, addr, &in->sin_addr);
		return sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (void *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		inet_pton(AF_INET6, addr, &in6->sin6_addr);
		return sizeof(*in6);
	}
}

static int sa_port(const struct sockaddr_storage *ss)
{
	return ntohs(ss->ss_family == AF_INET ?
		     ((const struct sockaddr_in *)ss)->sin_port :
		     ((const struct sockaddr_in6 *)ss)->sin6_port);
}

static void sa_ip(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void *a = ss->ss_family == AF_INET ?
		(const void *)&((const struct sockaddr_in *)ss)->sin_addr :
		(const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr;

	inet_ntop(ss->ss_family, a, buf, len);
}

/* ---- servers ---- */

struct server {
	pid_t pid;
	int port;		/* where it landed (getsockname) */
	int err;		/* errno of bind(), 0 when bound */
};

#define MAX_SERVERS 32
static pid_t servers[MAX_SERVERS];
static int n_servers;

/*
 * Start a server in cgroup CG (NULL: this cgroup) bound to ADDR:PORT.  It
 * answers every TCP connection or UDP datagram with TAG.  A server whose
 * bind fails reports the errno and exits.
 */
static struct server server(const char *cg, int family, int type,
			    const char *addr, int port, const char *tag)
{
	struct server s = { .pid = -1, .err = HARNESS_FAILED };
	struct sockaddr_storage ss;
	int pfd[2], rep[2];
	socklen_t len;

	if (pipe(pfd))
		return s;
	s.pid = fork();
	if (s.pid == 0) {
		int fd, one = 1;

		close(pfd[0]);
		join_cgroup(cg);
		fd = socket(family, type, 0);
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		len = make_sa(family, addr, port, &ss);
		rep[0] = bind(fd, (struct sockaddr *)&ss, len) ? errno : 0;
		len = sizeof(ss);
		getsockname(fd, (struct sockaddr *)&ss, &len);
		rep[1] = sa_port(&ss);
		if (!rep[0] && type == TCP && listen(fd, 64))
			rep[0] = errno;
		if (write(pfd[1], rep, sizeof(rep)) != sizeof(rep) || rep[0])
			_exit(0);
		close(pfd[1]);
		for (;;) {
			char buf[64];

			len = sizeof(ss);
			if (type == TCP) {
				int c = accept(fd, NULL, NULL);

				if (c < 0)
					continue;
				if (write(c, tag, strlen(tag)) < 0)
					perror("server write");
				close(c);
			} else if (recvfrom(fd, buf, sizeof(buf), 0,
					    (struct sockaddr *)&ss, &len) >= 0) {
				sendto(fd, tag, strlen(tag), 0,
				       (struct sockaddr *)&ss, len);
			}
		}
	}
	close(pfd[1]);
	if (s.pid < 0 || read(pfd[0], rep, sizeof(rep)) != sizeof(rep)) {
		s.err = HARNESS_FAILED;
	} else {
		s.err = rep[0];
		s.port = rep[1];
	}
	close(pfd[0]);
	if (s.err) {
		if (s.pid > 0)
			waitpid(s.pid, NULL, 0);
		s.pid = -1;
	} else if (n_servers < MAX_SERVERS) {
		servers[n_servers++] = s.pid;
	}
	return s;
}

static void server_stop(struct server *s)
{
	int i;

	if (s->pid <= 0)
		return;
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
	for (i = 0; i < n_servers; i++)
		if (servers[i] == s->pid)
			servers[i] = 0;
	s->pid = -1;
}

/* ---- clients ---- */

struct reply {
	int err;		/* errno of connect() or of the exchange, 0 ok,
				 * HARNESS_FAILED when the test itself failed */
	char tag[32];		/* what the server said */
	char peer[64];		/* getpeername() address */
	int peer_port;
};

/* Connect from cgroup CG (NULL: this cgroup) to ADDR:PORT and talk. */
static struct reply client(const char *cg, int family, int type,
			   const char *addr, int port)
{
	struct reply r = { .err = HARNESS_FAILED };
	int pfd[2];
	pid_t pid;

	if (pipe(pfd))
		return r;
	pid = fork();
	if (pid == 0) {
		struct timeval tv = { .tv_sec = 5 };
		struct sockaddr_storage ss;
		socklen_t len;
		ssize_t n;
		int fd;

		close(pfd[0]);
		join_cgroup(cg);
		memset(&r, 0, sizeof(r));
		fd = socket(family, type, 0);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		len = make_sa(family, addr, port, &ss);
		if (connect(fd, (struct sockaddr *)&ss, len)) {
			r.err = errno;
			goto done;
		}
		len = sizeof(ss);
		getpeername(fd, (struct sockaddr *)&ss, &len);
		sa_ip(&ss, r.peer, sizeof(r.peer));
		r.peer_port = sa_port(&ss);
		if (type == UDP && send(fd, "ping", 4, 0) != 4) {
			r.err = errno;
			goto done;
		}
		n = recv(fd, r.tag, sizeof(r.tag) - 1, 0);
		if (n <= 0)
			r.err = n < 0 ? errno : EPIPE;
done:
		if (write(pfd[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (pid < 0 || read(pfd[0], &r, sizeof(r)) != sizeof(r))
		r.err = HARNESS_FAILED;
	close(pfd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return r;
}

/* N connections to ADDR:PORT from CG: how many reached each of two tags. */
static void spread(const char *cg, int family, int type, const char *addr,
		   int port, int n, const char *t1, const char *t2, int *c1,
		   int *c2, int *other)
{
	int i;

	*c1 = *c2 = *other = 0;
	for (i = 0; i < n; i++) {
		struct reply r = client(cg, family, type, addr, port);

		if (!r.err && !strcmp(r.tag, t1))
			(*c1)++;
		else if (!r.err && !strcmp(r.tag, t2))
			(*c2)++;
		else
			(*other)++;
	}
}

/* Bind a socket in CG to ADDR:PORT and report errno (0) and the port. */
static int try_bind(const char *cg, int family, int type, const char *addr,
		    int port, int *landed)
{
	struct server s = server(cg, family, type, addr, port, "x");

	if (landed)
		*landed = s.err ? -1 : s.port;
	server_stop(&s);
	return s.err;
}

/* A text line of `list` for this cgroup and bound address? */
static bool listed(const char *cg, const char *proto, const char *bound)
{
	char want[128], *line, *save;

	if (tool("list"))
		return false;
	snprintf(want, sizeof(want), "/sa-test/%s", cg);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char c[128], p[16], b[80];

		if (sscanf(line, "%127s %15s %79s", c, p, b) == 3 &&
		    !strcmp(c, want) && !strcmp(p, proto) && !strcmp(b, bound))
			return true;
	}
	return false;
}

/* The tool's message: its "sockaddr: " line, else the first line. */
static const char *said(void)
{
	static char line[512];
	const char *p = strstr(out, "sockaddr: ");

	if (!p)
		p = out;
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
	return line;
}

static const enum bpf_attach_type sa_hooks[] = {
	BPF_CGROUP_INET4_BIND, BPF_CGROUP_INET6_BIND, BPF_CGROUP_INET4_POST_BIND,
	BPF_CGROUP_INET6_POST_BIND, BPF_CGROUP_INET_SOCK_RELEASE,
	BPF_CGROUP_INET4_CONNECT, BPF_CGROUP_INET6_CONNECT,
};

/* Programs attached to cgroup CGN itself at TYPE, by the kernel; -1: error. */
static int progs_at(const char *cgn, enum bpf_attach_type type)
{
	__u32 cnt = 0, flags = 0;
	char p[256];
	int fd, err;

	snprintf(p, sizeof(p), CG "/%s", cgn);
	fd = open(p, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -1;
	err = bpf_prog_query(fd, type, 0, &flags, NULL, &cnt);
	close(fd);
	return err ? -1 : (int)cnt;
}

/* ... at every hook the tool uses. */
static int progs_at_all(const char *cgn)
{
	size_t i;
	int n = 0, k;

	for (i = 0; i < sizeof(sa_hooks) / sizeof(sa_hooks[0]); i++) {
		k = progs_at(cgn, sa_hooks[i]);
		if (k < 0)
			return -1;
		n += k;
	}
	return n;
}

static __u64 cgroup_id(const char *cgn)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), CG "/%s", cgn);
	return stat(p, &st) ? 0 : st.st_ino;
}

/* Pins in the tool's links directory for cgroup id ID. */
static int count_pins(__u64 id)
{
	char pre[32], p[320];
	int n = 0, i;

	snprintf(pre, sizeof(pre), "%llu-", (unsigned long long)id);
	for (i = 0; i < (int)(sizeof(sa_hooks) / sizeof(sa_hooks[0])); i++) {
		static const char *const names[] = {
			"bind4", "bind6", "post_bind4", "post_bind6",
			"sock_release", "connect4", "connect6",
		};

		snprintf(p, sizeof(p), "/sys/fs/bpf/sockaddr/links/%s%s", pre, names[i]);
		n += !access(p, F_OK);
	}
	return n;
}

/* A sock_addr program for hook TYPE that allows everything (r0 = 1). */
static int allow_prog(enum bpf_attach_type type)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type);

	return bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "sa_test_allow", "GPL",
			     prog, 2, &opts);
}

/*
 * Is a socket listed at BOUND under any cgroup name (a record whose cgroup
 * is no longer recorded shows as cgroup-id:N)?  -1 when list fails, so a
 * failing tool never reads as "gone".
 */
static int listed_at(const char *bound)
{
	char *line, *save;

	if (tool("list"))
		return -1;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char c[128], p[16], b[80];

		if (sscanf(line, "%127s %15s %79s", c, p, b) == 3 && !strcmp(b, bound))
			return 1;
	}
	return 0;
}

/* ---- the expected_attach_type check, on the bare syscalls ---- */

static void attach_type_checks(void)
{
	/* r0 = 1; exit: "allow" in any sock_addr hook. */
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = BPF_CGROUP_INET4_BIND);
	int fd, cg, err;

	cg = open(CG "/A", O_RDONLY | O_DIRECTORY);
	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "sa_bind4_only", "GPL",
			   prog, 2, &opts);
	if (!tap_ok(fd >= 0 && cg >= 0,
		    "expected_attach_type: a sock_addr program loads for bind4 (fd %d)", fd))
		return;
	err = bpf_prog_attach(fd, cg, BPF_CGROUP_INET4_CONNECT, BPF_F_ALLOW_MULTI);
	tap_ok(err && errno == EINVAL,
	       "expected_attach_type: the bind4 program cannot be attached at connect4 (EINVAL, got %s)",
	       err ? strerror(errno) : "success");
	err = bpf_link_create(fd, cg, BPF_CGROUP_INET4_CONNECT, NULL);
	tap_ok(err < 0 && errno == EINVAL,
	       "expected_attach_type: nor linked at connect4 with BPF_LINK_CREATE (EINVAL)");
	if (err >= 0)
		close(err);
	err = bpf_prog_attach(fd, cg, BPF_CGROUP_INET4_BIND, BPF_F_ALLOW_MULTI);
	tap_ok(!err, "expected_attach_type: it attaches at bind4, its own hook (%s)",
	       err ? strerror(errno) : "ok");
	if (!err)
		bpf_prog_detach2(fd, cg, BPF_CGROUP_INET4_BIND);
	close(fd);

	/* A sock_addr program must say where it goes: load-time check. */
	opts.expected_attach_type = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "sa_no_type", "GPL",
			   prog, 2, &opts);
	tap_ok(fd < 0 && errno == EINVAL,
	       "expected_attach_type: a sock_addr program without one is refused at load (EINVAL)");
	if (fd >= 0)
		close(fd);
	close(cg);
}

/* Program ids in `status`, to see that configuration never re-attaches. */
static void status_ids(char *buf, size_t len)
{
	char *p, *line;

	buf[0] = 0;
	if (tool("status"))
		return;
	for (line = strtok_r(out, "\n", &p); line; line = strtok_r(NULL, "\n", &p))
		if (strstr(line, "prog id"))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s\n", line);
}

/* ---- privilege: the kernel refuses, the capabilities decide ---- */

#define CAPS_DIR "/sys/fs/bpf/sa-caps"

static void privilege_checks(int backend_port)
{
	struct reply r;
	int err, n;

	/* uid 0 passes any uid check; only the kernel can refuse it here. */
	err = tool_as(ROOT_NO_CAPS, "attach sa-test/E --route");
	n = progs_at_all("E");
	tap_ok(err == 1 && out_has("Operation not permitted") &&
	       out_has("lacks CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN") && n == 0,
	       "uid 0 without capabilities: attach gets the kernel's EPERM, names the missing CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN, attaches nothing (exit %d, want 1; programs on E %d, want 0; said: %s)",
	       err, n, said());
	err = tool_as(NOBODY_NO_CAPS, "status");
	tap_ok(err == 1 && out_has("Permission denied") && out_has("lacks CAP_BPF"),
	       "uid 65534 without capabilities: status gets bpffs's EACCES on root's state and names the missing capabilities (exit %d, want 1; said: %s)",
	       err, said());

	/* A user with the three capabilities needs no root: its own state. */
	tool_as(NOBODY_WITH_CAPS, "-d " CAPS_DIR " detach --all");
	err = tool_as(NOBODY_WITH_CAPS, "-d " CAPS_DIR " attach sa-test/E --route");
	tap_ok(!err && progs_at("E", BPF_CGROUP_INET4_CONNECT) == 1,
	       "uid 65534 with CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN (ambient): attach E --route with -d " CAPS_DIR " (exit %d, want 0; said: %s)",
	       err, said());
	err = tool_as(NOBODY_WITH_CAPS, "-d " CAPS_DIR " route add 127.0.0.1:7300 --to 127.0.0.1:%d",
		      backend_port);
	r = client("E", AF_INET, TCP, "127.0.0.1", 7300);
	tap_ok(!err && !r.err && !strcmp(r.tag, "B1"),
	       "... its route add works: E's connect to 127.0.0.1:7300 reaches B (exit %d; got '%s', %s; want 'B1')",
	       err, r.tag, errname(r.err));
	err = tool_as(NOBODY_WITH_CAPS, "-d " CAPS_DIR " detach --all");
	r = client("E", AF_INET, TCP, "127.0.0.1", 7300);
	tap_ok(!err && r.err == ECONNREFUSED && progs_at_all("E") == 0,
	       "... and its detach --all: E is not routed any more (exit %d; got %s, want ECONNREFUSED)",
	       err, errname(r.err));
}

/* ---- state safety: all-or-nothing attach, pins status and detach see ---- */

/*
 * A real part-way failure: another program holds E's connect6 without
 * BPF_F_ALLOW_MULTI, which admits no link; connect6 is the last hook an
 * attach of all features makes, after six others.
 */
static void rollback_checks(void)
{
	int fd = allow_prog(BPF_CGROUP_INET6_CONNECT);
	int cg = open(CG "/E", O_RDONLY | O_DIRECTORY);
	int err, n, pins;
	bool dup;

	if (!tap_ok(fd >= 0 && cg >= 0 && !bpf_prog_attach(fd, cg, BPF_CGROUP_INET6_CONNECT, 0),
		    "set-up: another program holds E's connect6 exclusively (no BPF_F_ALLOW_MULTI)"))
		goto out;
	err = tool("attach sa-test/E");
	tap_ok(err == 1 && out_has("connect6") && out_has("BPF_F_ALLOW_MULTI"),
	       "attach E (all features) fails at its last hook, connect6, and names the exclusive program (exit %d, want 1; said: %s)",
	       err, said());
	n = progs_at_all("E");
	pins = count_pins(cgroup_id("E"));
	tool("status");
	dup = out_has("/sa-test/E");
	tap_ok(n == 1 && !pins && !dup,
	       "... all or nothing: the six hooks attached before it are detached again (programs on E: got %d, want 1, the exclusive one; pins: got %d, want 0; in status: %s, want no)",
	       n, pins, dup ? "yes" : "no");
	bpf_prog_detach2(fd, cg, BPF_CGROUP_INET6_CONNECT);
	err = tool("attach sa-test/E");
	n = progs_at_all("E");
	tap_ok(!err && n == 7,
	       "without the exclusive program, attach E works at once (exit %d, want 0; programs on E: got %d, want 7; said: %s)",
	       err, n, said());
	err = tool("detach sa-test/E");
	tap_ok(!err && progs_at_all("E") == 0, "detach E: no program left on it (exit %d)", err);
out:
	if (fd >= 0)
		close(fd);
	if (cg >= 0)
		close(cg);
}

/* What an interrupted attach leaves: a link pinned as E's, no record. */
static bool plant_unrecorded_pin(void)
{
	char pin[256];
	int fd = allow_prog(BPF_CGROUP_INET4_BIND);
	int cg = open(CG "/E", O_RDONLY | O_DIRECTORY);
	int link = -1;
	bool ok;

	snprintf(pin, sizeof(pin), "/sys/fs/bpf/sockaddr/links/%llu-bind4",
		 (unsigned long long)cgroup_id("E"));
	if (fd >= 0 && cg >= 0)
		link = bpf_link_create(fd, cg, BPF_CGROUP_INET4_BIND, NULL);
	ok = link >= 0 && !bpf_obj_pin(link, pin);
	if (link >= 0)
		close(link);
	if (fd >= 0)
		close(fd);
	if (cg >= 0)
		close(cg);
	return ok;
}

static void unrecorded_pin_checks(void)
{
	char want[128];
	int err, n, pins;

	if (!tap_ok(plant_unrecorded_pin(),
		    "set-up: a link on E's bind4 pinned where the tool pins E's, with no record"))
		return;
	tool("status");
	snprintf(want, sizeof(want), "/sa-test/E (cgroup id %llu): NOT RECORDED: bind4",
		 (unsigned long long)cgroup_id("E"));
	tap_ok(out_has(want), "status shows the unrecorded pin (want '%s')", want);
	err = tool("attach sa-test/E");
	tap_ok(err == 1 && out_has("without a record") && out_has("detach /sa-test/E"),
	       "attach E is refused while it is there, saying how to remove it (exit %d, want 1; said: %s)",
	       err, said());
	err = tool("detach sa-test/E");
	n = progs_at_all("E");
	pins = count_pins(cgroup_id("E"));
	tap_ok(!err && out_has("removed 1 pinned link") && n == 0 && !pins,
	       "detach E removes it (exit %d, want 0; programs on E: got %d, want 0; pins: got %d, want 0; said: %s)",
	       err, n, pins, said());
	err = tool("attach sa-test/E --route");
	tap_ok(!err, "attach E works afterwards (exit %d; said: %s)", err, said());
	tool("detach sa-test/E");
}

/* ---- the root cgroup and PID 1 ---- */

static bool move_pid1(const char *cgdir)
{
	char p[256];
	int fd;
	bool ok;

	snprintf(p, sizeof(p), "%s/cgroup.procs", cgdir);
	fd = open(p, O_WRONLY);
	ok = fd >= 0 && write(fd, "1", 1) == 1;
	if (fd >= 0)
		close(fd);
	return ok;
}

static void root_cgroup_checks(void)
{
	int err;
	bool attached;

	err = tool("attach / --firewall");
	tap_ok(err == 1 && out_has("root cgroup") && out_has("--force"),
	       "attach / --firewall: refused without --force, saying why (exit %d, want 1; said: %s)",
	       err, said());
	if (!err)
		tool("detach /");
	err = tool("firewall / default deny");
	tap_ok(err == 1 && out_has("root cgroup") && out_has("--force"),
	       "firewall / default deny: refused without --force, saying why (exit %d, want 1; said: %s)",
	       err, said());
	if (!err)
		tool("firewall / default allow");
	err = tool("attach / --firewall --force");
	tool("status");
	attached = out_has("\n/ (cgroup id") || !strncmp(out, "/ (cgroup id", 12);
	tap_ok(!err && attached, "attach / --firewall --force: attached (exit %d; said: %s)",
	       err, said());
	tool("detach /");
}

static void pid1_cgroup_checks(void)
{
	int err;

	mkdir(CG "/P1", 0755);
	if (!tap_ok(move_pid1(CG "/P1"), "set-up: PID 1 moved into sa-test/P1"))
		return;
	err = tool("firewall sa-test/P1 default deny");
	tap_ok(err == 1 && out_has("holds PID 1") && out_has("--force"),
	       "firewall P1 default deny with PID 1 in P1: refused, saying why (exit %d, want 1; said: %s)",
	       err, said());
	if (!err)
		tool("firewall sa-test/P1 default allow");
	err = tool("attach sa-test --firewall");
	tap_ok(err == 1 && out_has("holds PID 1"),
	       "attach sa-test --firewall, P1's parent: refused, PID 1 is below it (exit %d, want 1; said: %s)",
	       err, said());
	if (!err)
		tool("detach sa-test");
	err = tool("firewall sa-test/P1 default deny --force");
	tap_ok(!err && !tool("firewall sa-test/P1 show") && out_has("default deny"),
	       "with --force, default deny is set on P1 (exit %d; said: %s)", err, said());
	tool("firewall sa-test/P1 default allow");
	tap_ok(move_pid1("/sys/fs/cgroup"), "PID 1 moved back to the root cgroup");
	rmdir(CG "/P1");
}

/* ---- foreground attach: its end leaves nothing behind ---- */

static pid_t start_foreground(const char *cgn)
{
	pid_t fg = fork();
	char want[128];
	int i;

	if (fg == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 1);
		execl(tool_path, "sockaddr", "attach", cgn, "--foreground", (char *)NULL);
		_exit(127);
	}
	snprintf(want, sizeof(want), "/%s (cgroup id", cgn);
	for (i = 0; i < 200; i++) {
		tool("status");
		if (out_has(want))
			break;
		usleep(50000);
	}
	return fg;
}

static void foreground_checks(int sig)
{
	const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";
	struct server s;
	struct reply r;
	char bound[64];
	bool rule, pub, in_status;
	int st = 0, left;
	pid_t fg;

	fg = start_foreground("sa-test/D");
	rule = !tool("firewall sa-test/D deny 82");
	s = server("D", AF_INET, TCP, "127.0.0.1", 0, "D1");
	snprintf(bound, sizeof(bound), "127.0.0.1:%d", s.port);
	pub = !s.err && listed("D", "tcp", bound);
	r = client("D", AF_INET, TCP, "127.0.0.1", 7000);
	tap_ok(!r.err && !strcmp(r.tag, "B1") && rule && pub,
	       "--foreground attach of D (to end by %s): D is routed to B (got '%s', want 'B1'), a rule (deny 82) and D's server %s published",
	       name, r.tag, bound);
	kill(fg, sig);
	waitpid(fg, &st, 0);
	r = client("D", AF_INET, TCP, "127.0.0.1", 7000);
	tool("status");
	in_status = out_has("/sa-test/D");
	tap_ok(WIFEXITED(st) && !WEXITSTATUS(st) && r.err == ECONNREFUSED && !in_status,
	       "after %s: exit 0, D not routed (got %s, want ECONNREFUSED), status forgot D (%s)",
	       name, errname(r.err), in_status ? "still there" : "yes");
	tool("firewall sa-test/D show");
	tap_ok(!out_has("port 82"), "after %s: D's firewall rule is gone (firewall show: %s)",
	       name, out_has("port 82") ? "deny 82 still listed" : "no rule");
	left = listed_at(bound);
	tap_ok(left == 0,
	       "after %s: the published record of D's %s is gone while its server still runs (list: %s)",
	       name, bound, left < 0 ? "failed" : left ? "still listed" : "not listed");
	server_stop(&s);
}

int main(void)
{
	static char ids_before[4096], ids_after[4096];
	struct server b1, b2, c1, b6, bu, bu6, s;
	struct reply r;
	int n1, n2, other, landed, err, i;
	const char *e;

	tap_init();
	e = getenv("SOCKADDR_TOOL");
	if (e)
		snprintf(tool_path, sizeof(tool_path), "%s", e);
	else
		snprintf(tool_path, sizeof(tool_path), "%s/sockaddr",
			 getenv("LK417_TESTBIN") ? getenv("LK417_TESTBIN") : ".");

	tool("detach --all");
	mkdir(CG, 0755);
	mkdir(CG "/A", 0755);
	mkdir(CG "/B", 0755);
	mkdir(CG "/C", 0755);
	mkdir(CG "/D", 0755);
	mkdir(CG "/E", 0755);

	/* ---- help and bad input ---- */
	err = tool("--help");
	tap_ok(!err && out_has("attach CGROUP") && out_has("detach CGROUP") &&
	       out_has("status") && out_has("route add") && out_has("route del") &&
	       out_has("route list") && out_has("firewall CGROUP rewrite") &&
	       out_has("ephemeral") && out_has("--foreground"),
	       "--help exits 0 and names every command");
	err = tool("attach sa-test/nope");
	tap_ok(err == 1 && out_has("not found"), "attach to a missing cgroup: exit 1, 'not found'");
	err = tool("route add 127.0.0.1 --to 127.0.0.1:1");
	tap_ok(err == 1 && out_has("bad address"), "route add without a port: exit 1, 'bad address'");
	err = tool("route add 127.0.0.1:7000 --to [::1]:7001");
	tap_ok(err == 1 && out_has("address family"),
	       "route add mixing IPv4 and IPv6: exit 1");
	err = tool("frobnicate");
	tap_ok(err == 1 && out_has("unknown command"), "unknown command: exit 1");
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd),
			 "unshare -m sh -c 'umount /sys/fs/cgroup && %s attach sa-test/A' 2>&1 | grep -q 'cgroup v2 is not mounted'",
			 tool_path);
		tap_ok(system(cmd) == 0, "cgroup v2 not mounted: a clear error");
	}

	/* ---- attach ---- */
	tap_ok(!tool("attach sa-test/A --route"), "attach A --route");
	tap_ok(!tool("attach sa-test/B --publish --firewall"), "attach B --publish --firewall");
	tap_ok(!tool("attach /sys/fs/cgroup/sa-test/C --publish"),
	       "attach C --publish (absolute path)");
	err = tool("attach sa-test/B");
	tap_ok(err == 1 && out_has("already attached"), "a second attach of B: exit 1, 'already attached'");
	err = tool("attach sa-test --publish");
	tap_ok(err == 1 && out_has("already publishes"),
	       "publishing in the parent of a publishing cgroup: refused");
	tool("status");
	tap_ok(out_has("/sa-test/A") && out_has("connect4") && out_has("connect6") &&
	       out_has("/sa-test/B") && out_has("post_bind4") && out_has("bind6") &&
	       out_has("sock_release") && !out_has("MISSING"),
	       "status shows each cgroup with its hooks and program ids");
	status_ids(ids_before, sizeof(ids_before));

	attach_type_checks();

	/* ---- publish ---- */
	b1 = server("B", AF_INET, TCP, "127.0.0.1", 0, "B1");
	tap_ok(!b1.err, "a TCP server in B binds 127.0.0.1:0 (port %d)", b1.port);
	{
		char bound[64];

		snprintf(bound, sizeof(bound), "127.0.0.1:%d", b1.port);
		tap_ok(listed("B", "tcp", bound), "list: B's TCP server at %s", bound);
	}
	c1 = server("C", AF_INET, TCP, "127.0.0.1", 0, "C1");
	b6 = server("B", AF_INET6, TCP, "::1", 0, "B6");
	bu = server("B", AF_INET, UDP, "127.0.0.1", 0, "BU");
	bu6 = server("B", AF_INET6, UDP, "::1", 0, "BU6");
	tap_ok(!c1.err && !b6.err && !bu.err && !bu6.err,
	       "servers: TCP in C, TCP6, UDP and UDP6 in B");
	{
		char b[64], b2s[64], b3[64];

		snprintf(b, sizeof(b), "[::1]:%d", b6.port);
		snprintf(b2s, sizeof(b2s), "127.0.0.1:%d", bu.port);
		snprintf(b3, sizeof(b3), "[::1]:%d", bu6.port);
		tap_ok(listed("B", "tcp", b) && listed("B", "udp", b2s) && listed("B", "udp", b3),
		       "list: B's TCP6, UDP and UDP6 servers");
	}

	/* ---- route to the published backend ---- */
	tap_ok(!tool("route add 127.0.0.1:7000 --to-cgroup sa-test/B"),
	       "route add 127.0.0.1:7000 --to-cgroup B");
	r = client("A", AF_INET, TCP, "127.0.0.1", 7000);
	tap_ok(!r.err && !strcmp(r.tag, "B1") && !strcmp(r.peer, "127.0.0.1") &&
	       r.peer_port == b1.port,
	       "TCP: A's connect to 127.0.0.1:7000 reaches B (said '%s', peer %s:%d, err %d)",
	       r.tag, r.peer, r.peer_port, r.err);
	r = client(NULL, AF_INET, TCP, "127.0.0.1", 7000);
	tap_ok(r.err == ECONNREFUSED,
	       "TCP: the same connect from outside the cgroups is not routed (%s)",
	       strerror(r.err));
	r = client("C", AF_INET, TCP, "127.0.0.1", 7000);
	tap_ok(r.err == ECONNREFUSED, "TCP: nor from C, which has no route program");

	tap_ok(!tool("route add [::1]:7000 --to-cgroup sa-test/B"), "route add [::1]:7000");
	r = client("A", AF_INET6, TCP, "::1", 7000);
	tap_ok(!r.err && !strcmp(r.tag, "B6") && !strcmp(r.peer, "::1") &&
	       r.peer_port == b6.port,
	       "TCP6: A reaches B's IPv6 server (said '%s', peer [%s]:%d)",
	       r.tag, r.peer, r.peer_port);

	tap_ok(!tool("route add 127.0.0.1:7000 --udp --to-cgroup sa-test/B"),
	       "route add 127.0.0.1:7000 --udp");
	r = client("A", AF_INET, UDP, "127.0.0.1", 7000);
	tap_ok(!r.err && !strcmp(r.tag, "BU") && r.peer_port == bu.port,
	       "UDP: A's connected socket talks to B's UDP server (said '%s', peer port %d, err %d)",
	       r.tag, r.peer_port, r.err);
	tap_ok(!tool("route add [::1]:7000 --udp --to-cgroup sa-test/B"), "route add [::1]:7000 --udp");
	r = client("A", AF_INET6, UDP, "::1", 7000);
	tap_ok(!r.err && !strcmp(r.tag, "BU6") && r.peer_port == bu6.port,
	       "UDP6: A reaches B's UDP6 server (said '%s', peer port %d)", r.tag, r.peer_port);
	/* Loopback answers a datagram to a closed port with ICMP: refused. */
	r = client(NULL, AF_INET, UDP, "127.0.0.1", 7000);
	tap_ok(r.err == ECONNREFUSED,
	       "UDP: from outside, nothing answers on 127.0.0.1:7000 (got %s, want ECONNREFUSED)",
	       errname(r.err));

	/* A virtual IP that exists nowhere, to a configured backend. */
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "route add 10.99.0.1:80 --to 127.0.0.1:%d", c1.port);
		tap_ok(!tool("%s", cmd), "route add 10.99.0.1:80 --to C's server");
	}
	r = client("A", AF_INET, TCP, "10.99.0.1", 80);
	tap_ok(!r.err && !strcmp(r.tag, "C1") && r.peer_port == c1.port,
	       "virtual IP: A's connect to 10.99.0.1:80 reaches C (said '%s')", r.tag);
	/* The guest has no route but loopback's: no route to 10/8. */
	r = client(NULL, AF_INET, TCP, "10.99.0.1", 80);
	tap_ok(r.err == ENETUNREACH,
	       "virtual IP: from outside it is unreachable (got %s, want ENETUNREACH)",
	       errname(r.err));

	err = tool("route add 127.0.0.1:7000 --to 127.0.0.1:1");
	tap_ok(err == 1 && out_has("exists already"), "a second route for the same service: refused");

	/* ---- load balancing ---- */
	{
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "route add 127.0.0.1:7100 --to 127.0.0.1:%d --to 127.0.0.1:%d",
			 b1.port, c1.port);
		tap_ok(!tool("%s", cmd), "route add 127.0.0.1:7100 with two backends (B and C)");
	}
	spread("A", AF_INET, TCP, "127.0.0.1", 7100, 10, "B1", "C1", &n1, &n2, &other);
	tap_ok(n1 == 5 && n2 == 5 && !other,
	       "two configured backends: 10 connections split %d/%d (%d failed)", n1, n2, other);

	b2 = server("B", AF_INET, TCP, "127.0.0.1", 0, "B2");
	spread("A", AF_INET, TCP, "127.0.0.1", 7000, 10, "B1", "B2", &n1, &n2, &other);
	tap_ok(!b2.err && n1 == 5 && n2 == 5 && !other,
	       "two published backends in B: 10 connections split %d/%d (%d failed)", n1, n2, other);

	/* Records go with their sockets. */
	{
		char bound[64];

		snprintf(bound, sizeof(bound), "127.0.0.1:%d", b2.port);
		tap_ok(listed("B", "tcp", bound), "list: the second server %s is published", bound);
		server_stop(&b2);
		tap_ok(listed_at(bound) == 0, "list: ... and gone once its process exited");
	}
	spread("A", AF_INET, TCP, "127.0.0.1", 7000, 6, "B1", "B2", &n1, &n2, &other);
	tap_ok(n1 == 6 && !n2 && !other,
	       "after it left, all connections go to the remaining backend (%d/%d/%d)", n1, n2, other);

	tool("route list");
	tap_ok(out_has("tcp 127.0.0.1:7000 -> published-by:/sa-test/B") && out_has("hits"),
	       "route list shows routes, backends and hit counts");

	/* ---- firewall ---- */
	tap_ok(!tool("firewall sa-test/B deny 81"), "firewall B deny 81");
	tap_ok(try_bind("B", AF_INET, TCP, "127.0.0.1", 81, NULL) == EPERM,
	       "bind to :81 in B: EPERM");
	tap_ok(try_bind("B", AF_INET6, UDP, "::1", 81, NULL) == EPERM,
	       "bind to [::1]:81 (UDP) in B: EPERM");
	tap_ok(try_bind(NULL, AF_INET, TCP, "127.0.0.1", 81, NULL) == 0,
	       "bind to :81 outside the cgroups: allowed");
	tap_ok(try_bind("C", AF_INET, TCP, "127.0.0.1", 81, NULL) == 0,
	       "bind to :81 in C (no firewall): allowed");
	err = tool("firewall sa-test/B allow 81");
	tap_ok(err == 1 && out_has("conflicting"), "allow 81 on top of deny 81: 'conflicting rules'");

	tap_ok(!tool("firewall sa-test/B rewrite 80 8080"), "firewall B rewrite 80 8080");
	s = server("B", AF_INET, TCP, "127.0.0.1", 80, "B80");
	tap_ok(!s.err && s.port == 8080, "bind to :80 in B lands on %d (getsockname)", s.port);
	r = client(NULL, AF_INET, TCP, "127.0.0.1", 8080);
	tap_ok(!r.err && !strcmp(r.tag, "B80"), "a client reaches it on 8080 (said '%s')", r.tag);
	tap_ok(listed("B", "tcp", "127.0.0.1:8080"), "list: published at the rewritten port 8080");
	server_stop(&s);
	try_bind("B", AF_INET6, TCP, "::1", 80, &landed);
	tap_ok(landed == 8080, "IPv6: bind to [::1]:80 in B lands on %d", landed);
	err = tool("firewall sa-test/B deny 8080");
	tap_ok(err == 1 && out_has("conflicting"), "deny of a rewrite target: 'conflicting rules'");
	err = tool("firewall sa-test/B ephemeral 8000-9000");
	tap_ok(err == 1 && out_has("conflicting"),
	       "a refused range over a rewrite target: 'conflicting rules'");

	tap_ok(!tool("firewall sa-test/B ephemeral 32768-60999"), "firewall B ephemeral 32768-60999");
	tap_ok(try_bind("B", AF_INET, UDP, "127.0.0.1", 0, &landed) == EPERM,
	       "bind to port 0 in B: the kernel's pick is refused at post-bind (EPERM)");
	tap_ok(try_bind("B", AF_INET, TCP, "127.0.0.1", 5000, &landed) == 0 && landed == 5000,
	       "bind to 5000 in B (outside the range): allowed");
	tap_ok(try_bind(NULL, AF_INET, UDP, "127.0.0.1", 0, NULL) == 0,
	       "bind to port 0 outside the cgroups: allowed");
	err = tool("firewall sa-test/B ephemeral off");
	tap_ok(!err, "firewall B ephemeral off (exit %d; said: %s)", err, said());

	tap_ok(!tool("firewall sa-test/B default deny") && !tool("firewall sa-test/B allow 5001 --tcp"),
	       "firewall B default deny, allow 5001/tcp");
	tap_ok(try_bind("B", AF_INET, TCP, "127.0.0.1", 5001, NULL) == 0 &&
	       try_bind("B", AF_INET, TCP, "127.0.0.1", 5002, NULL) == EPERM &&
	       try_bind("B", AF_INET, UDP, "127.0.0.1", 5001, NULL) == EPERM,
	       "default deny: 5001/tcp allowed, 5002/tcp and 5001/udp EPERM");
	err = tool("firewall sa-test/B default allow");
	tap_ok(!err, "firewall B default allow (exit %d; said: %s)", err, said());

	tap_ok(!tool("firewall sa-test/B addr 127.0.0.1") && !tool("firewall sa-test/B addr ::1"),
	       "firewall B addr 127.0.0.1, addr ::1");
	tap_ok(try_bind("B", AF_INET, TCP, "127.0.0.1", 5003, NULL) == 0 &&
	       try_bind("B", AF_INET, TCP, "127.0.0.2", 5003, NULL) == EPERM &&
	       try_bind("B", AF_INET, TCP, "0.0.0.0", 5003, NULL) == EPERM &&
	       try_bind("B", AF_INET6, TCP, "::1", 5003, NULL) == 0,
	       "address list: 127.0.0.1 and ::1 allowed, 127.0.0.2 and 0.0.0.0 EPERM");
	err = tool("firewall sa-test/B addr-any");
	tap_ok(!err, "firewall B addr-any (exit %d; said: %s)", err, said());
	tap_ok(try_bind("B", AF_INET, TCP, "127.0.0.2", 5003, NULL) == 0, "addr-any: 127.0.0.2 allowed again");

	tool("firewall sa-test/B show");
	tap_ok(out_has("deny    tcp+udp port 81") && out_has("rewrite tcp+udp port 80 -> 8080") &&
	       out_has("denied"), "firewall show lists the rules and counters");

	/* Changes went through maps: the same programs are attached. */
	status_ids(ids_after, sizeof(ids_after));
	tap_ok(ids_before[0] && !strcmp(ids_before, ids_after),
	       "every change above went through maps: program ids unchanged");

	privilege_checks(b1.port);
	rollback_checks();
	unrecorded_pin_checks();
	root_cgroup_checks();
	pid1_cgroup_checks();
	foreground_checks(SIGTERM);
	foreground_checks(SIGINT);

	/* ---- detach ---- */
	tap_ok(!tool("detach sa-test/A"), "detach A");
	r = client("A", AF_INET, TCP, "127.0.0.1", 7000);
	tap_ok(r.err == ECONNREFUSED, "after detach, A's connect to 127.0.0.1:7000 is not routed");
	r = client("A", AF_INET, TCP, "127.0.0.1", b1.port);
	tap_ok(!r.err && !strcmp(r.tag, "B1"), "... and A still reaches B's real address");
	tap_ok(!tool("detach --all"), "detach --all");
	tap_ok(try_bind("B", AF_INET, TCP, "127.0.0.1", 81, NULL) == 0,
	       "after detach, bind to :81 in B is allowed");
	try_bind("B", AF_INET, TCP, "127.0.0.1", 80, &landed);
	tap_ok(landed == 80, "after detach, bind to :80 in B lands on %d", landed);
	tool("status");
	tap_ok(out_has("nothing attached") && access("/sys/fs/bpf/sockaddr", F_OK),
	       "status: nothing attached, state directory removed");

	for (i = 0; i < n_servers; i++)
		if (servers[i] > 0) {
			kill(servers[i], SIGKILL);
			waitpid(servers[i], NULL, 0);
		}
	rmdir(CG "/A");
	rmdir(CG "/B");
	rmdir(CG "/C");
	rmdir(CG "/D");
	rmdir(CG "/E");
	rmdir(CG);
	return tap_done();
}
