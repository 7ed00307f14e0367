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

/* A whole line of out[] that starts with PREFIX and ends with SUFFIX? */
static bool out_has_line(const char *prefix, const char *suffix)
{
	size_t pl = strlen(prefix), sl = strlen(suffix), len;
	const char *p;

	for (p = out; *p; p += len + (p[len] == '\n')) {
		len = strcspn(p, "\n");
		if (len >= pl + sl && !strncmp(p, prefix, pl) &&
		    !strncmp(p + len - sl, suffix, sl))
			return true;
	}
	return false;
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

static char list_copy[sizeof(out)];	/* what listed() and listed_at() cut up */

/* A text line of `list` for this cgroup and bound address? */
static bool listed(const char *cg, const char *proto, const char *bound)
{
	char want[128], *line, *save;

	if (tool("list"))
		return false;
	snprintf(want, sizeof(want), "/sa-test/%s", cg);
	/* Parse a copy: out stays whole, for a failed check to print. */
	memcpy(list_copy, out, sizeof(out));
	for (line = strtok_r(list_copy, "\n", &save); line;
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

/*
 * ---- checks that say what they saw ----
 *
 * A failure under the emulator costs minutes to rerun, so each check's
 * line says what it got and what it wanted, and a check of the tool's
 * output prints that output (as TAP diagnostics) when it fails.
 */

/* TEXT as "# LABEL| line" diagnostics, at most 60 lines. */
static void dump_text(const char *label, const char *text)
{
	const char *p = text;
	int lines = 0;

	if (!*p)
		tap_diag("%s| (nothing)", label);
	while (*p && lines++ < 60) {
		int len = (int)strcspn(p, "\n");

		tap_diag("%s| %.*s", label, len, p);
		p += len;
		if (*p)
			p++;
	}
	if (*p)
		tap_diag("%s| ...", label);
}

static void dump_out(void)
{
	dump_text("tool output", out);
}

/* The exit status RC of the last tool() call: got/want and what it said. */
__attribute__((format(printf, 3, 4)))
static int check_exit(int rc, int want, const char *fmt, ...)
{
	char tail[640];
	va_list ap;
	int ok;

	snprintf(tail, sizeof(tail), "exit %d, want %d (said: %s)", rc, want, said());
	va_start(ap, fmt);
	ok = tap_ok_tail(rc == want, tail, fmt, ap);
	va_end(ap);
	if (!ok)
		dump_out();
	return ok;
}

/* An errno carried back from a child (a reply's, a bind's): by name. */
__attribute__((format(printf, 3, 4)))
static int check_err(int got, int want, const char *fmt, ...)
{
	char tail[160];
	va_list ap;
	int ok;

	snprintf(tail, sizeof(tail), "got %s, want %s", errname(got), errname(want));
	va_start(ap, fmt);
	ok = tap_ok_tail(got == want, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/* The last tool() output does (PRESENT) or does not contain TEXT. */
__attribute__((format(printf, 3, 0)))
static int vcheck_out(bool present, const char *text, const char *fmt, va_list ap)
{
	char tail[640];
	int ok = out_has(text) == present;

	snprintf(tail, sizeof(tail), "want%s '%s' in the output (said: %s)",
		 present ? "" : " no", text, said());
	ok = tap_ok_tail(ok, tail, fmt, ap);
	if (!ok)
		dump_out();
	return ok;
}

__attribute__((format(printf, 2, 3)))
static int check_out_has(const char *text, const char *fmt, ...)
{
	va_list ap;
	int ok;

	va_start(ap, fmt);
	ok = vcheck_out(true, text, fmt, ap);
	va_end(ap);
	return ok;
}

__attribute__((format(printf, 2, 3)))
static int check_out_lacks(const char *text, const char *fmt, ...)
{
	va_list ap;
	int ok;

	va_start(ap, fmt);
	ok = vcheck_out(false, text, fmt, ap);
	va_end(ap);
	return ok;
}

/*
 * The last tool() output contains every string of WANT (NULL-terminated):
 * one claim about one listing, whose line names the strings missing.
 */
__attribute__((format(printf, 2, 3)))
static int check_out_all(const char *const *want, const char *fmt, ...)
{
	char tail[512] = "";
	va_list ap;
	int i, ok;

	for (i = 0; want[i]; i++)
		if (!out_has(want[i]))
			snprintf(tail + strlen(tail), sizeof(tail) - strlen(tail), "%s'%s'",
				 tail[0] ? ", " : "missing ", want[i]);
	ok = !tail[0];
	if (ok)
		snprintf(tail, sizeof(tail), "all %d present", i);
	va_start(ap, fmt);
	ok = tap_ok_tail(ok, tail, fmt, ap);
	va_end(ap);
	if (!ok)
		dump_out();
	return ok;
}

/*
 * How spread() split its connections: N1 and N2 to the two tags, OTHER
 * failed; one claim about one distribution, shown as "got 5/4, 1 failed,
 * want 5/5, 0 failed".
 */
__attribute__((format(printf, 6, 7)))
static int check_split(int n1, int n2, int other, int want1, int want2, const char *fmt, ...)
{
	char tail[160];
	va_list ap;
	int ok;

	snprintf(tail, sizeof(tail), "got %d/%d, %d failed, want %d/%d, 0 failed",
		 n1, n2, other, want1, want2);
	va_start(ap, fmt);
	ok = tap_ok_tail(n1 == want1 && n2 == want2 && !other, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/* `list` has a line for CG's PROTO socket at BOUND; a failure prints list. */
__attribute__((format(printf, 4, 5)))
static int check_listed(const char *cg, const char *proto, const char *bound,
			const char *fmt, ...)
{
	char tail[200];
	va_list ap;
	int ok = listed(cg, proto, bound);

	snprintf(tail, sizeof(tail), "want a line '/sa-test/%s %s %s': %s", cg, proto, bound,
		 ok ? "found" : "not found");
	va_start(ap, fmt);
	ok = tap_ok_tail(ok, tail, fmt, ap);
	va_end(ap);
	if (!ok)
		dump_out();
	return ok;
}

/*
 * A client's exchange: no error, the server's tag TAG, and, unless NULL or
 * negative, getpeername()'s PEER and PORT; one line for each.
 */
__attribute__((format(printf, 5, 6)))
static int check_reply(const struct reply *r, const char *tag, const char *peer, int port,
		       const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	int ok;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ok = check_err(r->err, 0, "%s: connect and exchange", msg);
	ok &= tap_eq_str(r->tag, tag, "%s: the server's reply", msg);
	if (peer)
		ok &= tap_eq_str(r->peer, peer, "%s: the peer address", msg);
	if (port >= 0)
		ok &= tap_eq_long(r->peer_port, port, "%s: the peer port", msg);
	return ok;
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
	memcpy(list_copy, out, sizeof(out));	/* out stays whole, as in listed() */
	for (line = strtok_r(list_copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char c[128], p[16], b[80];

		if (sscanf(line, "%127s %15s %79s", c, p, b) == 3 && !strcmp(b, bound))
			return 1;
	}
	return 0;
}

/*
 * The last tool() output, a `status`, shows cgroup CGN as the tool prints
 * an attachment (status_recorded() in tools/sockaddr/sockaddr.c): the
 * whole line "/sa-test/CGN (cgroup id ID): FEATURES", ID being the
 * directory's inode, then the indented lines "  HOOK  prog id N" (HOOK
 * padded to 13 columns, N > 0) for exactly the hooks of HOOKS (NULL-
 * terminated), in the tool's order; a firewall's "  firewall: ..." counter
 * line may follow.  Whole lines, so that "bind6" is never satisfied by
 * "post_bind6"; cgroups come in map order, so the block is found by its
 * first line, not its place.
 */
__attribute__((format(printf, 4, 5)))
static int check_status_cgroup(const char *cgn, const char *features,
			       const char *const *hooks, const char *fmt, ...)
{
	char head[160], want[64], tail[512] = "";
	const char *p = out;
	size_t len = 0, n;
	va_list ap;
	int i = 0, ok;

	snprintf(head, sizeof(head), "/sa-test/%s (cgroup id %llu): %s", cgn,
		 (unsigned long long)cgroup_id(cgn), features);
	for (; *p; p += len + (p[len] == '\n')) {
		len = strcspn(p, "\n");
		if (len == strlen(head) && !strncmp(p, head, len))
			break;
	}
	if (!*p)
		snprintf(tail, sizeof(tail), "no line '%s'", head);
	else
		p += len + (p[len] == '\n');
	/* Its block: the indented lines under it. */
	for (; !tail[0] && !strncmp(p, "  ", 2); p += len + (p[len] == '\n')) {
		len = strcspn(p, "\n");
		if (!strncmp(p, "  firewall: ", 12))
			continue;
		if (!hooks[i]) {
			snprintf(tail, sizeof(tail), "a line '%.*s' after its %d hooks",
				 (int)(len < 120 ? len : 120), p, i);
			break;
		}
		n = (size_t)snprintf(want, sizeof(want), "  %-13s prog id ", hooks[i]);
		if (len <= n || strncmp(p, want, n) || p[n] == '0' ||
		    strspn(p + n, "0123456789") != len - n)
			snprintf(tail, sizeof(tail), "hook %d: got '%.*s', want '%sN' (N > 0)",
				 i + 1, (int)(len < 120 ? len : 120), p, want);
		i++;
	}
	if (!tail[0] && hooks[i])
		snprintf(tail, sizeof(tail), "its block ends before hook %d, '%s'", i + 1,
			 hooks[i]);
	ok = !tail[0];
	if (ok)
		snprintf(tail, sizeof(tail), "'%s' and its %d hooks, each with a prog id", head,
			 i);
	va_start(ap, fmt);
	ok = tap_ok_tail(ok, tail, fmt, ap);
	va_end(ap);
	if (!ok)
		dump_out();
	return ok;
}

/* ---- the expected_attach_type check, on the bare syscalls ---- */

/*
 * The bind4-only program FD against cgroup A (CG).  Whatever it manages to
 * attach is detached again, checked, before the next check: a program left
 * on A's connect4 would run in every later check of A's routing.
 */
static void wrong_hook_checks(int fd, int cg)
{
	int err;

	/*
	 * libbpf returns -errno where the bare syscall returns -1: "failed"
	 * becomes the -1 tap_errno() wants; errno is read before anything
	 * else runs.
	 */
	err = bpf_prog_attach(fd, cg, BPF_CGROUP_INET4_CONNECT, BPF_F_ALLOW_MULTI);
	tap_errno(err ? -1 : 0, EINVAL,
		  "expected_attach_type: the bind4 program cannot be attached at connect4");
	if (!err) {
		err = bpf_prog_detach2(fd, cg, BPF_CGROUP_INET4_CONNECT);
		check_err(err ? errno : 0, 0, "expected_attach_type: the bind4 program, "
			  "wrongly attached at connect4, detaches from A's connect4 again");
	}
	/* A link goes with its last fd: closing it detaches. */
	err = bpf_link_create(fd, cg, BPF_CGROUP_INET4_CONNECT, NULL);
	tap_errno(err < 0 ? -1 : err, EINVAL,
		  "expected_attach_type: nor linked at connect4 with BPF_LINK_CREATE");
	if (err >= 0)
		close(err);
	err = bpf_prog_attach(fd, cg, BPF_CGROUP_INET4_BIND, BPF_F_ALLOW_MULTI);
	tap_ok(!err, "expected_attach_type: it attaches at bind4, its own hook (%s)",
	       err ? strerror(errno) : "ok");
	if (!err) {
		err = bpf_prog_detach2(fd, cg, BPF_CGROUP_INET4_BIND);
		check_err(err ? errno : 0, 0,
			  "expected_attach_type: it detaches from A's bind4 again");
	}
}

static void attach_type_checks(void)
{
	/* r0 = 1; exit: "allow" in any sock_addr hook. */
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = BPF_CGROUP_INET4_BIND);
	int fd, cg, cg_err, load_err;
	bool cg_ok, load_ok;

	cg = open(CG "/A", O_RDONLY | O_DIRECTORY);
	cg_err = cg < 0 ? errno : 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "sa_bind4_only", "GPL",
			   prog, 2, &opts);
	load_err = fd < 0 ? errno : 0;
	cg_ok = check_err(cg_err, 0, "expected_attach_type: set-up: cgroup A opens");
	load_ok = check_err(load_err, 0,
			    "expected_attach_type: a sock_addr program loads for bind4");
	if (cg_ok && load_ok)
		wrong_hook_checks(fd, cg);
	if (fd >= 0)
		close(fd);
	if (cg >= 0)
		close(cg);

	/*
	 * A sock_addr program must name one of its own hooks, checked at load.
	 * 0 does not mean "none": it is BPF_CGROUP_INET_INGRESS, a cgroup skb
	 * hook, which bpf_prog_load_check_attach() refuses for this type.
	 */
	opts.expected_attach_type = BPF_CGROUP_INET_INGRESS;
	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "sa_ingress", "GPL",
			   prog, 2, &opts);
	tap_errno(fd < 0 ? -1 : fd, EINVAL, "expected_attach_type: a sock_addr program "
		  "for BPF_CGROUP_INET_INGRESS (0, a cgroup skb hook) is refused at load");
	if (fd >= 0)
		close(fd);
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
	check_exit(err, 1, "uid 0 without capabilities: attach E --route fails");
	check_out_has("Operation not permitted",
		      "uid 0 without capabilities: attach gets the kernel's EPERM");
	check_out_has("lacks CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN",
		      "uid 0 without capabilities: attach names the missing capabilities");
	tap_eq_long(n, 0, "uid 0 without capabilities: attach leaves no program on E");
	err = tool_as(NOBODY_NO_CAPS, "status");
	check_exit(err, 1, "uid 65534 without capabilities: status fails");
	check_out_has("Permission denied", "uid 65534 without capabilities: "
		      "status gets bpffs's EACCES on root's state");
	check_out_has("lacks CAP_BPF",
		      "uid 65534 without capabilities: status names the missing capabilities");

	/* A user with the three capabilities needs no root: its own state. */
	tool_as(NOBODY_WITH_CAPS, "-d " CAPS_DIR " detach --all");
	err = tool_as(NOBODY_WITH_CAPS, "-d " CAPS_DIR " attach sa-test/E --route");
	check_exit(err, 0, "uid 65534 with CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN (ambient): "
		   "attach E --route with -d " CAPS_DIR);
	tap_eq_long(progs_at("E", BPF_CGROUP_INET4_CONNECT), 1,
		    "uid 65534 with the capabilities: its attach puts a program on E's connect4");
	err = tool_as(NOBODY_WITH_CAPS,
		      "-d " CAPS_DIR " route add 127.0.0.1:7300 --to 127.0.0.1:%d",
		      backend_port);
	r = client("E", AF_INET, TCP, "127.0.0.1", 7300);
	/* The client runs no tool: out is still route add's. */
	check_exit(err, 0, "uid 65534 with the capabilities: route add 127.0.0.1:7300 --to B");
	check_reply(&r, "B1", NULL, -1,
		    "... its route works: E's connect to 127.0.0.1:7300 reaches B");
	err = tool_as(NOBODY_WITH_CAPS, "-d " CAPS_DIR " detach --all");
	r = client("E", AF_INET, TCP, "127.0.0.1", 7300);
	check_exit(err, 0, "uid 65534 with the capabilities: detach --all");
	check_err(r.err, ECONNREFUSED,
		  "... after its detach --all, E's connect to 127.0.0.1:7300 is not routed");
	tap_eq_long(progs_at_all("E"), 0, "... and its detach --all leaves no program on E");
}

/* ---- state safety: all-or-nothing attach, pins status and detach see ---- */

/*
 * A real part-way failure: another program holds E's connect6 without
 * BPF_F_ALLOW_MULTI, which admits no link; connect6 is the last hook an
 * attach of all features makes, after six others.
 */
static void rollback_checks(void)
{
	int fd, cg, err, n, pins, load_err, cg_err;
	bool ok;

	fd = allow_prog(BPF_CGROUP_INET6_CONNECT);
	load_err = fd < 0 ? errno : 0;
	cg = open(CG "/E", O_RDONLY | O_DIRECTORY);
	cg_err = cg < 0 ? errno : 0;
	ok = check_err(load_err, 0, "set-up: an allow-all connect6 program loads");
	ok &= check_err(cg_err, 0, "set-up: cgroup E opens, to hold its connect6");
	if (!ok)
		goto out;
	err = bpf_prog_attach(fd, cg, BPF_CGROUP_INET6_CONNECT, 0);
	if (!check_err(err ? errno : 0, 0, "set-up: another program holds E's connect6 "
		       "exclusively (no BPF_F_ALLOW_MULTI)"))
		goto out;
	err = tool("attach sa-test/E");
	check_exit(err, 1, "attach E (all features) fails at its last hook, connect6");
	check_out_has("connect6", "attach E (all features): names the hook, connect6");
	check_out_has("BPF_F_ALLOW_MULTI",
		      "attach E (all features): names the exclusive program (BPF_F_ALLOW_MULTI)");
	n = progs_at_all("E");
	pins = count_pins(cgroup_id("E"));
	tool("status");
	tap_eq_long(n, 1, "... all or nothing: programs on E, only the exclusive one "
		    "(the six attached before it detached again)");
	tap_eq_long(pins, 0, "... all or nothing: no pins of E left");
	check_out_lacks("/sa-test/E", "... all or nothing: status does not list E");
	/* Still there, it would fail the attach below for a reason of its own. */
	err = bpf_prog_detach2(fd, cg, BPF_CGROUP_INET6_CONNECT);
	if (!check_err(err ? errno : 0, 0, "set-up: the exclusive program detaches from "
		       "E's connect6 again"))
		goto out;
	err = tool("attach sa-test/E");
	n = progs_at_all("E");
	check_exit(err, 0, "without the exclusive program, attach E works at once");
	tap_eq_long(n, 7, "without the exclusive program: programs on E after attach");
	err = tool("detach sa-test/E");
	check_exit(err, 0, "detach E (after the rollback checks)");
	tap_eq_long(progs_at_all("E"), 0, "detach E: no program left on it");
out:
	if (fd >= 0)
		close(fd);
	if (cg >= 0)
		close(cg);
}

/*
 * What an interrupted attach leaves: a link pinned as E's, no record.  A
 * step that fails says which and why on a "#" line, before the set-up
 * check that reports it.
 */
static bool plant_unrecorded_pin(void)
{
	char pin[256], step[320] = "";
	__u64 id = cgroup_id("E");
	int fd = -1, cg = -1, link = -1, err = errno;

	snprintf(pin, sizeof(pin), "/sys/fs/bpf/sockaddr/links/%llu-bind4",
		 (unsigned long long)id);
	/* Each errno is read right after its call, before anything else runs. */
	if (!id) {
		snprintf(step, sizeof(step), "stat " CG "/E for its cgroup id");
	} else if ((fd = allow_prog(BPF_CGROUP_INET4_BIND)) < 0) {
		err = errno;
		snprintf(step, sizeof(step), "load an allow-all bind4 program");
	} else if ((cg = open(CG "/E", O_RDONLY | O_DIRECTORY)) < 0) {
		err = errno;
		snprintf(step, sizeof(step), "open " CG "/E");
	} else if ((link = bpf_link_create(fd, cg, BPF_CGROUP_INET4_BIND, NULL)) < 0) {
		err = errno;
		snprintf(step, sizeof(step), "link the program to E's bind4");
	} else if (bpf_obj_pin(link, pin)) {
		err = errno;
		snprintf(step, sizeof(step), "pin the link at %s", pin);
	}
	if (step[0])
		tap_diag("unrecorded pin set-up: cannot %s: %s", step, strerror(err));
	if (link >= 0)
		close(link);
	if (fd >= 0)
		close(fd);
	if (cg >= 0)
		close(cg);
	return !step[0];
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
	check_out_has(want, "status shows the unrecorded pin");
	err = tool("attach sa-test/E");
	check_exit(err, 1, "attach E is refused while the unrecorded pin is there");
	check_out_has("without a record", "attach E refused: says the pin has no record");
	check_out_has("detach /sa-test/E", "attach E refused: says how to remove it");
	err = tool("detach sa-test/E");
	n = progs_at_all("E");
	pins = count_pins(cgroup_id("E"));
	check_exit(err, 0, "detach E removes the unrecorded pin");
	check_out_has("removed 1 pinned link", "detach E: says it removed the pinned link");
	tap_eq_long(n, 0, "detach E: programs left on E");
	tap_eq_long(pins, 0, "detach E: pins of E left");
	err = tool("attach sa-test/E --route");
	check_exit(err, 0, "attach E works afterwards");
	tool("detach sa-test/E");
}

/* ---- the root cgroup and PID 1 ---- */

/* Move PID 1 into CGDIR; a failure says which step and why on a "#" line. */
static bool move_pid1(const char *cgdir)
{
	char p[256];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/cgroup.procs", cgdir);
	fd = open(p, O_WRONLY);
	if (fd < 0) {
		tap_diag("moving PID 1: cannot open %s: %s", p, strerror(errno));
		return false;
	}
	n = write(fd, "1", 1);
	if (n != 1)
		tap_diag("moving PID 1: writing \"1\" to %s: %s", p,
			 n < 0 ? strerror(errno) : "short write");
	close(fd);
	return n == 1;
}

static void root_cgroup_checks(void)
{
	int err;
	bool attached;

	err = tool("attach / --firewall");
	check_exit(err, 1, "attach / --firewall: refused without --force");
	check_out_has("root cgroup", "attach / --firewall refused: says it is the root cgroup");
	check_out_has("--force", "attach / --firewall refused: names --force");
	if (!err)
		tool("detach /");
	err = tool("firewall / default deny");
	check_exit(err, 1, "firewall / default deny: refused without --force");
	check_out_has("root cgroup",
		      "firewall / default deny refused: says it is the root cgroup");
	check_out_has("--force", "firewall / default deny refused: names --force");
	if (!err)
		tool("firewall / default allow");
	err = tool("attach / --firewall --force");
	/* Before status runs: what it said is the attach's own message. */
	check_exit(err, 0, "attach / --firewall --force: succeeds");
	tool("status");
	/* A status line that starts with "/ (cgroup id": the first or a later one. */
	attached = out_has("\n/ (cgroup id") || !strncmp(out, "/ (cgroup id", 12);
	if (!tap_ok(attached, "attach / --firewall --force: status lists / (cgroup id ...) (%s)",
		    attached ? "listed" : "not listed"))
		dump_out();
	tool("detach /");
}

static void pid1_cgroup_checks(void)
{
	int err;

	mkdir(CG "/P1", 0755);
	if (!tap_ok(move_pid1(CG "/P1"), "set-up: PID 1 moved into sa-test/P1"))
		return;
	err = tool("firewall sa-test/P1 default deny");
	check_exit(err, 1, "firewall P1 default deny with PID 1 in P1: refused");
	check_out_has("holds PID 1", "firewall P1 default deny refused: says P1 holds PID 1");
	check_out_has("--force", "firewall P1 default deny refused: names --force");
	if (!err)
		tool("firewall sa-test/P1 default allow");
	err = tool("attach sa-test --firewall");
	check_exit(err, 1, "attach sa-test --firewall, P1's parent: refused");
	check_out_has("holds PID 1",
		      "attach sa-test --firewall refused: says PID 1 is below it (holds PID 1)");
	if (!err)
		tool("detach sa-test");
	err = tool("firewall sa-test/P1 default deny --force");
	check_exit(err, 0, "with --force, firewall P1 default deny succeeds");
	err = tool("firewall sa-test/P1 show");
	check_exit(err, 0, "firewall P1 show (after default deny --force)");
	check_out_has("default deny", "with --force, default deny is set on P1 (firewall show)");
	tool("firewall sa-test/P1 default allow");
	tap_ok(move_pid1("/sys/fs/cgroup"), "PID 1 moved back to the root cgroup");
	rmdir(CG "/P1");
}

/* ---- foreground attach: its end leaves nothing behind ---- */

/*
 * Start `attach CGN --foreground` and wait, 10 s at most, for status to
 * show its record: the line "/CGN (cgroup id ...): ..., foreground pid
 * FG", written once every hook is attached.  A check says whether it came
 * (WHAT names the run), so that a tool that never attached is not taken
 * for one whose later checks fail.  -1 when fork fails: the caller reports
 * that, with errno, and nothing is waited for.
 */
static pid_t start_foreground(const char *cgn, const char *what)
{
	char want[128], pid_end[48];
	bool up = false, ended = false;
	siginfo_t si;
	pid_t fg;
	int i;

	fflush(stdout);
	fg = fork();
	if (fg < 0)
		return fg;
	if (fg == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 1);
		execl(tool_path, "sockaddr", "attach", cgn, "--foreground", (char *)NULL);
		_exit(127);
	}
	snprintf(want, sizeof(want), "/%s (cgroup id ", cgn);
	snprintf(pid_end, sizeof(pid_end), ", foreground pid %d", (int)fg);
	for (i = 0; i < 200 && !up && !ended; i++) {
		if (i)
			usleep(50000);
		tool("status");
		up = out_has_line(want, pid_end);
		/*
		 * A tool that has ended will never attach: stop waiting.
		 * WNOWAIT leaves it to the caller's waitpid(), which reports
		 * its exit status.
		 */
		si.si_pid = 0;
		ended = !up && !waitid(P_PID, fg, &si, WEXITED | WNOHANG | WNOWAIT) &&
			si.si_pid == fg;
	}
	if (!tap_ok(up, "%s: status shows a line '%s...%s' within 10 s (%s)", what, want,
		    pid_end, up ? "shown" : ended ? "the tool ended first" : "not shown"))
		dump_out();
	return fg;
}

static void foreground_checks(int sig)
{
	const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";
	struct server s;
	struct reply r;
	char bound[64], rule_said[512], what[64];
	bool pub;
	int st = 0, left, rule;
	pid_t fg;

	snprintf(what, sizeof(what), "--foreground attach of D (to end by %s)", name);
	fg = start_foreground("sa-test/D", what);
	/* Never kill(-1, ...): that would signal every process in the guest. */
	if (fg < 0) {
		tap_ok(0, "%s: fork: %s", what, strerror(errno));
		return;
	}
	rule = tool("firewall sa-test/D deny 82");
	/* listed() below runs the tool again: keep what this one said. */
	snprintf(rule_said, sizeof(rule_said), "%s", said());
	s = server("D", AF_INET, TCP, "127.0.0.1", 0, "D1");
	snprintf(bound, sizeof(bound), "127.0.0.1:%d", s.port);
	pub = !s.err && listed("D", "tcp", bound);
	r = client("D", AF_INET, TCP, "127.0.0.1", 7000);
	check_reply(&r, "B1", NULL, -1, "--foreground attach of D (to end by %s): "
		    "D's connect to 127.0.0.1:7000 reaches B", name);
	tap_eq_long(rule, 0, "--foreground attach of D (to end by %s): "
		    "firewall D deny 82 (said: %s)", name, rule_said);
	check_err(s.err, 0, "--foreground attach of D (to end by %s): a TCP server in D binds",
		  name);
	/* out is still list's (the client runs no tool) unless the bind failed. */
	if (!tap_ok(pub, "--foreground attach of D (to end by %s): list shows D's server at %s",
		    name, bound) && !s.err)
		dump_out();
	kill(fg, sig);
	if (waitpid(fg, &st, 0) != fg)
		st = 255 << 8;		/* no status: reported as exit 255 below */
	r = client("D", AF_INET, TCP, "127.0.0.1", 7000);
	tool("status");
	/* 128 + N for a tool killed by signal N, as the shell says it. */
	tap_eq_long(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), 0,
		    "after %s: the --foreground tool's exit status", name);
	check_err(r.err, ECONNREFUSED, "after %s: D's connect to 127.0.0.1:7000 is not routed",
		  name);
	check_out_lacks("/sa-test/D", "after %s: status forgot D", name);
	tool("firewall sa-test/D show");
	check_out_lacks("port 82", "after %s: D's firewall rule (deny 82) is gone", name);
	left = listed_at(bound);
	tap_ok(left == 0,
	       "after %s: the published record of D's %s is gone while its server "
	       "still runs (list: %s)",
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
	check_exit(err, 0, "--help exits 0");
	/* One claim, one line: the line names the commands missing. */
	check_out_all((const char *const[]){ "attach CGROUP", "detach CGROUP", "status",
					     "route add", "route del", "route list",
					     "firewall CGROUP rewrite", "ephemeral",
					     "--foreground", NULL },
		      "--help names every command");
	err = tool("attach sa-test/nope");
	check_exit(err, 1, "attach to a missing cgroup: exit 1");
	check_out_has("not found", "attach to a missing cgroup: 'not found'");
	err = tool("route add 127.0.0.1 --to 127.0.0.1:1");
	check_exit(err, 1, "route add without a port: exit 1");
	check_out_has("bad address", "route add without a port: 'bad address'");
	err = tool("route add 127.0.0.1:7000 --to [::1]:7001");
	check_exit(err, 1, "route add mixing IPv4 and IPv6: exit 1");
	check_out_has("address family",
		      "route add mixing IPv4 and IPv6: names the address family");
	err = tool("frobnicate");
	check_exit(err, 1, "unknown command: exit 1");
	check_out_has("unknown command", "unknown command: 'unknown command'");
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd),
			 "unshare -m sh -c 'umount /sys/fs/cgroup && %s attach sa-test/A' 2>&1 "
			 "| grep -q 'cgroup v2 is not mounted'",
			 tool_path);
		tap_ok(system(cmd) == 0, "cgroup v2 not mounted: a clear error");
	}

	/* ---- attach ---- */
	err = tool("attach sa-test/A --route");
	check_exit(err, 0, "attach A --route");
	err = tool("attach sa-test/B --publish --firewall");
	check_exit(err, 0, "attach B --publish --firewall");
	err = tool("attach /sys/fs/cgroup/sa-test/C --publish");
	check_exit(err, 0, "attach C --publish (absolute path)");
	err = tool("attach sa-test/B");
	check_exit(err, 1, "a second attach of B: exit 1");
	check_out_has("already attached", "a second attach of B: 'already attached'");
	err = tool("attach sa-test --publish");
	check_exit(err, 1, "publishing in the parent of a publishing cgroup: refused");
	check_out_has("already publishes",
		      "publishing in the parent of a publishing cgroup: 'already publishes'");
	/* Each cgroup has the hooks of its features, and nothing else. */
	tool("status");
	check_status_cgroup("A", "route", (const char *const[]){ "connect4", "connect6", NULL },
			    "status shows A (route) with its hooks and their program ids");
	check_status_cgroup("B", "publish firewall",
			    (const char *const[]){ "bind4", "bind6", "post_bind4", "post_bind6",
						   "sock_release", NULL },
			    "status shows B (publish firewall) with its hooks and their "
			    "program ids");
	check_status_cgroup("C", "publish",
			    (const char *const[]){ "post_bind4", "post_bind6", "sock_release",
						   NULL },
			    "status shows C (publish) with its hooks and their program ids");
	check_out_lacks("MISSING", "status: no hook of an attached cgroup is MISSING");
	status_ids(ids_before, sizeof(ids_before));

	attach_type_checks();

	/* ---- publish ---- */
	b1 = server("B", AF_INET, TCP, "127.0.0.1", 0, "B1");
	check_err(b1.err, 0, "a TCP server in B binds 127.0.0.1:0 (port %d)", b1.port);
	{
		char bound[64];

		snprintf(bound, sizeof(bound), "127.0.0.1:%d", b1.port);
		check_listed("B", "tcp", bound, "list: B's TCP server at %s", bound);
	}
	c1 = server("C", AF_INET, TCP, "127.0.0.1", 0, "C1");
	b6 = server("B", AF_INET6, TCP, "::1", 0, "B6");
	bu = server("B", AF_INET, UDP, "127.0.0.1", 0, "BU");
	bu6 = server("B", AF_INET6, UDP, "::1", 0, "BU6");
	check_err(c1.err, 0, "servers: a TCP server in C binds 127.0.0.1:0");
	check_err(b6.err, 0, "servers: a TCP6 server in B binds [::1]:0");
	check_err(bu.err, 0, "servers: a UDP server in B binds 127.0.0.1:0");
	check_err(bu6.err, 0, "servers: a UDP6 server in B binds [::1]:0");
	{
		char b[64], b2s[64], b3[64];

		snprintf(b, sizeof(b), "[::1]:%d", b6.port);
		snprintf(b2s, sizeof(b2s), "127.0.0.1:%d", bu.port);
		snprintf(b3, sizeof(b3), "[::1]:%d", bu6.port);
		check_listed("B", "tcp", b, "list: B's TCP6 server at %s", b);
		check_listed("B", "udp", b2s, "list: B's UDP server at %s", b2s);
		check_listed("B", "udp", b3, "list: B's UDP6 server at %s", b3);
	}

	/* ---- route to the published backend ---- */
	err = tool("route add 127.0.0.1:7000 --to-cgroup sa-test/B");
	check_exit(err, 0, "route add 127.0.0.1:7000 --to-cgroup B");
	r = client("A", AF_INET, TCP, "127.0.0.1", 7000);
	check_reply(&r, "B1", "127.0.0.1", b1.port,
		    "TCP: A's connect to 127.0.0.1:7000 reaches B");
	r = client(NULL, AF_INET, TCP, "127.0.0.1", 7000);
	check_err(r.err, ECONNREFUSED,
		  "TCP: the same connect from outside the cgroups is not routed");
	r = client("C", AF_INET, TCP, "127.0.0.1", 7000);
	check_err(r.err, ECONNREFUSED, "TCP: nor from C, which has no route program");

	err = tool("route add [::1]:7000 --to-cgroup sa-test/B");
	check_exit(err, 0, "route add [::1]:7000");
	r = client("A", AF_INET6, TCP, "::1", 7000);
	check_reply(&r, "B6", "::1", b6.port, "TCP6: A reaches B's IPv6 server");

	err = tool("route add 127.0.0.1:7000 --udp --to-cgroup sa-test/B");
	check_exit(err, 0, "route add 127.0.0.1:7000 --udp");
	r = client("A", AF_INET, UDP, "127.0.0.1", 7000);
	check_reply(&r, "BU", NULL, bu.port,
		    "UDP: A's connected socket talks to B's UDP server");
	err = tool("route add [::1]:7000 --udp --to-cgroup sa-test/B");
	check_exit(err, 0, "route add [::1]:7000 --udp");
	r = client("A", AF_INET6, UDP, "::1", 7000);
	check_reply(&r, "BU6", NULL, bu6.port, "UDP6: A reaches B's UDP6 server");
	/* Loopback answers a datagram to a closed port with ICMP: refused. */
	r = client(NULL, AF_INET, UDP, "127.0.0.1", 7000);
	check_err(r.err, ECONNREFUSED, "UDP: from outside, nothing answers on 127.0.0.1:7000");

	/* A virtual IP that exists nowhere, to a configured backend. */
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "route add 10.99.0.1:80 --to 127.0.0.1:%d", c1.port);
		err = tool("%s", cmd);
		check_exit(err, 0, "route add 10.99.0.1:80 --to C's server");
	}
	r = client("A", AF_INET, TCP, "10.99.0.1", 80);
	check_reply(&r, "C1", NULL, c1.port,
		    "virtual IP: A's connect to 10.99.0.1:80 reaches C");
	/* The guest has no route but loopback's: no route to 10/8. */
	r = client(NULL, AF_INET, TCP, "10.99.0.1", 80);
	check_err(r.err, ENETUNREACH, "virtual IP: from outside it is unreachable");

	err = tool("route add 127.0.0.1:7000 --to 127.0.0.1:1");
	check_exit(err, 1, "a second route for the same service: refused");
	check_out_has("exists already", "a second route for the same service: 'exists already'");

	/* ---- load balancing ---- */
	{
		char cmd[160];

		snprintf(cmd, sizeof(cmd),
			 "route add 127.0.0.1:7100 --to 127.0.0.1:%d --to 127.0.0.1:%d",
			 b1.port, c1.port);
		err = tool("%s", cmd);
		check_exit(err, 0, "route add 127.0.0.1:7100 with two backends (B and C)");
	}
	spread("A", AF_INET, TCP, "127.0.0.1", 7100, 10, "B1", "C1", &n1, &n2, &other);
	check_split(n1, n2, other, 5, 5,
		    "two configured backends: 10 connections split between B and C");

	b2 = server("B", AF_INET, TCP, "127.0.0.1", 0, "B2");
	check_err(b2.err, 0, "a second TCP server in B binds 127.0.0.1:0");
	spread("A", AF_INET, TCP, "127.0.0.1", 7000, 10, "B1", "B2", &n1, &n2, &other);
	check_split(n1, n2, other, 5, 5,
		    "two published backends in B: 10 connections split between them");

	/* Records go with their sockets. */
	{
		char bound[64];
		int left;

		snprintf(bound, sizeof(bound), "127.0.0.1:%d", b2.port);
		check_listed("B", "tcp", bound, "list: the second server %s is published", bound);
		server_stop(&b2);
		left = listed_at(bound);
		if (!tap_ok(left == 0, "list: ... and gone once its process exited (list: %s)",
			    left < 0 ? "failed" : left ? "still listed" : "not listed"))
			dump_out();
	}
	spread("A", AF_INET, TCP, "127.0.0.1", 7000, 6, "B1", "B2", &n1, &n2, &other);
	check_split(n1, n2, other, 6, 0,
		    "after it left, all connections go to the remaining backend");

	tool("route list");
	check_out_all((const char *const[]){ "tcp 127.0.0.1:7000 -> published-by:/sa-test/B",
					     "hits", NULL },
		      "route list shows routes, backends and hit counts");

	/* ---- firewall ---- */
	err = tool("firewall sa-test/B deny 81");
	check_exit(err, 0, "firewall B deny 81");
	check_err(try_bind("B", AF_INET, TCP, "127.0.0.1", 81, NULL), EPERM,
		  "bind to :81 in B: EPERM");
	check_err(try_bind("B", AF_INET6, UDP, "::1", 81, NULL), EPERM,
		  "bind to [::1]:81 (UDP) in B: EPERM");
	check_err(try_bind(NULL, AF_INET, TCP, "127.0.0.1", 81, NULL), 0,
		  "bind to :81 outside the cgroups: allowed");
	check_err(try_bind("C", AF_INET, TCP, "127.0.0.1", 81, NULL), 0,
		  "bind to :81 in C (no firewall): allowed");
	err = tool("firewall sa-test/B allow 81");
	check_exit(err, 1, "allow 81 on top of deny 81: refused");
	check_out_has("conflicting", "allow 81 on top of deny 81: 'conflicting rules'");

	err = tool("firewall sa-test/B rewrite 80 8080");
	check_exit(err, 0, "firewall B rewrite 80 8080");
	s = server("B", AF_INET, TCP, "127.0.0.1", 80, "B80");
	check_err(s.err, 0, "bind to :80 in B succeeds");
	tap_eq_long(s.port, 8080, "bind to :80 in B lands on 8080 (getsockname)");
	r = client(NULL, AF_INET, TCP, "127.0.0.1", 8080);
	check_reply(&r, "B80", NULL, -1, "a client reaches it on 8080");
	check_listed("B", "tcp", "127.0.0.1:8080", "list: published at the rewritten port 8080");
	server_stop(&s);
	try_bind("B", AF_INET6, TCP, "::1", 80, &landed);
	tap_eq_long(landed, 8080, "IPv6: bind to [::1]:80 in B lands on 8080 (-1: bind failed)");
	err = tool("firewall sa-test/B deny 8080");
	check_exit(err, 1, "deny of a rewrite target: refused");
	check_out_has("conflicting", "deny of a rewrite target: 'conflicting rules'");
	err = tool("firewall sa-test/B ephemeral 8000-9000");
	check_exit(err, 1, "a refused range over a rewrite target: refused");
	check_out_has("conflicting", "a refused range over a rewrite target: 'conflicting rules'");

	err = tool("firewall sa-test/B ephemeral 32768-60999");
	check_exit(err, 0, "firewall B ephemeral 32768-60999");
	check_err(try_bind("B", AF_INET, UDP, "127.0.0.1", 0, &landed), EPERM,
		  "bind to port 0 in B: the kernel's pick is refused at post-bind (EPERM)");
	err = try_bind("B", AF_INET, TCP, "127.0.0.1", 5000, &landed);
	check_err(err, 0, "bind to 5000 in B (outside the range): allowed");
	tap_eq_long(landed, 5000, "bind to 5000 in B: lands on 5000 (-1: bind failed)");
	check_err(try_bind(NULL, AF_INET, UDP, "127.0.0.1", 0, NULL), 0,
		  "bind to port 0 outside the cgroups: allowed");
	err = tool("firewall sa-test/B ephemeral off");
	check_exit(err, 0, "firewall B ephemeral off");

	err = tool("firewall sa-test/B default deny");
	check_exit(err, 0, "firewall B default deny");
	err = tool("firewall sa-test/B allow 5001 --tcp");
	check_exit(err, 0, "firewall B allow 5001 --tcp");
	check_err(try_bind("B", AF_INET, TCP, "127.0.0.1", 5001, NULL), 0,
		  "default deny: 5001/tcp allowed");
	check_err(try_bind("B", AF_INET, TCP, "127.0.0.1", 5002, NULL), EPERM,
		  "default deny: 5002/tcp EPERM");
	check_err(try_bind("B", AF_INET, UDP, "127.0.0.1", 5001, NULL), EPERM,
		  "default deny: 5001/udp EPERM");
	err = tool("firewall sa-test/B default allow");
	check_exit(err, 0, "firewall B default allow");

	err = tool("firewall sa-test/B addr 127.0.0.1");
	check_exit(err, 0, "firewall B addr 127.0.0.1");
	err = tool("firewall sa-test/B addr ::1");
	check_exit(err, 0, "firewall B addr ::1");
	check_err(try_bind("B", AF_INET, TCP, "127.0.0.1", 5003, NULL), 0,
		  "address list: 127.0.0.1 allowed");
	check_err(try_bind("B", AF_INET, TCP, "127.0.0.2", 5003, NULL), EPERM,
		  "address list: 127.0.0.2 EPERM");
	check_err(try_bind("B", AF_INET, TCP, "0.0.0.0", 5003, NULL), EPERM,
		  "address list: 0.0.0.0 EPERM");
	check_err(try_bind("B", AF_INET6, TCP, "::1", 5003, NULL), 0,
		  "address list: ::1 allowed");
	err = tool("firewall sa-test/B addr-any");
	check_exit(err, 0, "firewall B addr-any");
	check_err(try_bind("B", AF_INET, TCP, "127.0.0.2", 5003, NULL), 0,
		  "addr-any: 127.0.0.2 allowed again");

	tool("firewall sa-test/B show");
	check_out_all((const char *const[]){ "deny    tcp+udp port 81",
					     "rewrite tcp+udp port 80 -> 8080", "denied", NULL },
		      "firewall show lists the rules and counters");

	/* Changes went through maps: the same programs are attached. */
	status_ids(ids_after, sizeof(ids_after));
	tap_ok(ids_before[0], "status listed program ids before the changes (%s)",
	       ids_before[0] ? "it did" : "none: status failed or showed no prog id");
	if (!tap_ok(!strcmp(ids_before, ids_after),
		    "every change above went through maps: program ids unchanged")) {
		dump_text("before", ids_before);
		dump_text("after", ids_after);
	}

	privilege_checks(b1.port);
	rollback_checks();
	unrecorded_pin_checks();
	root_cgroup_checks();
	pid1_cgroup_checks();
	foreground_checks(SIGTERM);
	foreground_checks(SIGINT);

	/* ---- detach ---- */
	err = tool("detach sa-test/A");
	check_exit(err, 0, "detach A");
	r = client("A", AF_INET, TCP, "127.0.0.1", 7000);
	check_err(r.err, ECONNREFUSED,
		  "after detach, A's connect to 127.0.0.1:7000 is not routed");
	r = client("A", AF_INET, TCP, "127.0.0.1", b1.port);
	check_reply(&r, "B1", NULL, -1, "... and A still reaches B's real address");
	err = tool("detach --all");
	check_exit(err, 0, "detach --all");
	check_err(try_bind("B", AF_INET, TCP, "127.0.0.1", 81, NULL), 0,
		  "after detach, bind to :81 in B is allowed");
	try_bind("B", AF_INET, TCP, "127.0.0.1", 80, &landed);
	tap_eq_long(landed, 80, "after detach, bind to :80 in B lands on 80 (-1: bind failed)");
	tool("status");
	check_out_has("nothing attached", "status after detach --all: nothing attached");
	err = access("/sys/fs/bpf/sockaddr", F_OK);
	/* errno right after access(): ENOENT is the directory gone. */
	tap_ok(err != 0, "detach --all removed the state directory /sys/fs/bpf/sockaddr (%s)",
	       err ? errname(errno) : "it still exists");

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
