// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of the sockaddr route program on connect(): loopback TCP
 * connect()+accept()+close() round trips, in one process, in four setups:
 *
 *   none     nothing attached anywhere
 *   other    route program (and a route) attached to another cgroup
 *            than ours
 *   nomatch  route program attached to our cgroup, a route that does not
 *            match our connects (the map lookup misses)
 *   match    our connects go to a routed service address and are rewritten
 *
 * Setups alternate within each round, so that drift of the (TCG) machine
 * hits all of them alike; medians over the rounds are reported.
 *
 * Usage: sockaddr_bench TOOL [ROUNDS [ITERATIONS]]   (in the guest, as root)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CG	"/sys/fs/cgroup/sa-bench"
#define CG_OTHER "/sys/fs/cgroup/sa-bench-other"
#define VIP_PORT 7000
#define MAX_ROUNDS 32

enum { NONE, OTHER, NOMATCH, MATCH, N_MODES };
static const char *const mode_name[N_MODES] = { "none", "other", "nomatch", "match" };
static const char *const mode_text[N_MODES] = {
	"no programs",
	"attached to another cgroup",
	"attached, route not matching",
	"attached, matching rewrite",
};

static const char *tool;

static void die(const char *what)
{
	fprintf(stderr, "sockaddr_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void run_tool(const char *args)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s %s >/dev/null", tool, args);
	if (system(cmd)) {
		fprintf(stderr, "sockaddr_bench: '%s' failed\n", cmd);
		exit(1);
	}
}

static void join(const char *cg)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/cgroup.procs", cg);
	fd = open(p, O_WRONLY);
	if (fd < 0 || write(fd, "0", 1) != 1)
		die(p);
	close(fd);
}

/*
 * Tool runs are slow under TCG (an exec over 9p, a program load): attach
 * once per round and move this process between the attached cgroup and
 * the bare one.  Sockets take the cgroup of the task creating them, and
 * the client socket is created anew for every connect.
 */
static void setup(int mode, int port)
{
	char args[128];

	switch (mode) {
	case NONE:
		run_tool("detach --all");
		join(CG_OTHER);
		break;
	case OTHER:
		run_tool("attach sa-bench --route");
		snprintf(args, sizeof(args), "route add 127.0.0.1:%d --to 127.0.0.1:%d",
			 VIP_PORT, port);
		run_tool(args);
		break;
	default:
		join(CG);
		break;
	}
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per connect()+accept()+close() to 127.0.0.1:PORT. */
static double measure(int lfd, int port, int iters)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };
	double t0;
	int i;

	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0), a;

		if (c < 0)
			die("socket");
		if (connect(c, (struct sockaddr *)&to, sizeof(to)))
			die("connect");
		a = accept(lfd, NULL, NULL);
		if (a < 0)
			die("accept");
		/* An RST close: no TIME_WAIT to exhaust the ephemeral ports. */
		setsockopt(c, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
		close(c);
		close(a);
	}
	return (now_ns() - t0) / iters;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static double ns[N_MODES][MAX_ROUNDS];
	struct sockaddr_in addr = { .sin_family = AF_INET };
	int rounds = argc > 2 ? atoi(argv[2]) : 9;
	int iters = argc > 3 ? atoi(argv[3]) : 3000;
	double med[N_MODES];
	socklen_t len = sizeof(addr);
	int lfd, port, r, m;

	if (argc < 2 || rounds < 1 || rounds > MAX_ROUNDS || iters < 1) {
		fprintf(stderr, "usage: sockaddr_bench TOOL [ROUNDS (1-%d) [ITERATIONS]]\n",
			MAX_ROUNDS);
		return 2;
	}
	tool = argv[1];

	mkdir(CG, 0755);
	mkdir(CG_OTHER, 0755);
	join(CG_OTHER);

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(lfd, 128) || getsockname(lfd, (struct sockaddr *)&addr, &len))
		die("listener");
	port = ntohs(addr.sin_port);

	for (r = 0; r < rounds; r++) {
		for (m = 0; m < N_MODES; m++) {
			setup(m, port);
			measure(lfd, m == MATCH ? VIP_PORT : port, iters / 10 + 1);
			ns[m][r] = measure(lfd, m == MATCH ? VIP_PORT : port, iters);
			printf("# round %d %-8s %.0f ns\n", r + 1, mode_name[m], ns[m][r]);
			fflush(stdout);
		}
	}
	run_tool("detach --all");

	for (m = 0; m < N_MODES; m++) {
		qsort(ns[m], rounds, sizeof(double), cmp_double);
		med[m] = rounds % 2 ? ns[m][rounds / 2] :
			 (ns[m][rounds / 2 - 1] + ns[m][rounds / 2]) / 2;
	}
	printf("connect+accept+close on loopback TCP, median of %d rounds x %d\n",
	       rounds, iters);
	printf("| setup | us per round trip | round trips/s | vs none |\n");
	printf("|---|---|---|---|\n");
	for (m = 0; m < N_MODES; m++)
		printf("| %s | %.1f | %.0f | %.3f |\n", mode_text[m], med[m] / 1e3,
		       1e9 / med[m], med[m] / med[NONE]);
	printf("match/nomatch %.3f, match/none %.3f (goal <= 1.10)\n",
	       med[MATCH] / med[NOMATCH], med[MATCH] / med[NONE]);
	close(lfd);
	return 0;
}
