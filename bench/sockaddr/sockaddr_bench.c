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
 * The order of the setups changes from round to round ("none" first in odd
 * rounds, last in even ones; the three attached setups rotate), so that
 * neither drift of the (TCG) machine nor a setup's place in the round
 * favours one of them.  Each setup is compared with "none" of the same
 * round; the median and min-max of those paired ratios are reported.
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

#include "../lib/stats.h"

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
static double prog_ns[MAX_ROUNDS];

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
static void attach(int port)
{
	char args[128];

	run_tool("attach sa-bench --route");
	snprintf(args, sizeof(args), "route add 127.0.0.1:%d --to 127.0.0.1:%d",
		 VIP_PORT, port);
	run_tool(args);
}

/*
 * The connect4 program's own cost, from the kernel's statistics
 * (kernel.bpf_stats_enabled=1): run count and total run time of the
 * program attached to our cgroup, through bpftool and jq.  The counters
 * live as long as the program, so they cover this round's three attached
 * setups: exactly the connects of "nomatch" and "match" (warm-up included),
 * none for "other", whose process sits in another cgroup.
 */
static void print_prog_cost(int round, unsigned long long want)
{
	static const char cmd[] =
		"id=$(bpftool -j cgroup show " CG " 2>/dev/null | "
		"jq '.[] | select(.attach_type == \"cgroup_inet4_connect\") | .id') && "
		"bpftool -j prog show id $id 2>/dev/null | jq -r '\"\\(.run_cnt) \\(.run_time_ns)\"'";
	unsigned long long cnt = 0, ns = 0;
	FILE *f = popen(cmd, "r");

	if (!f || fscanf(f, "%llu %llu", &cnt, &ns) != 2 || !cnt) {
		fprintf(stderr, "sockaddr_bench: no run statistics of the connect4 program\n");
		exit(1);
	}
	pclose(f);
	if (cnt != want) {
		fprintf(stderr, "sockaddr_bench: round %d: the connect4 program ran %llu times, want %llu (the nomatch and match connects; none for other)\n",
			round, cnt, want);
		exit(1);
	}
	printf("# round %d connect4 program: %llu runs, %.0f ns per run\n",
	       round, cnt, (double)ns / cnt);
	prog_ns[round - 1] = (double)ns / cnt;
}

/* The setups of round @r in the order they run. */
static void round_order(int r, int order[N_MODES])
{
	int n = 0, k;

	if (r % 2 == 0)
		order[n++] = NONE;
	for (k = 0; k < 3; k++)
		order[n++] = OTHER + (k + r) % 3;
	if (r % 2)
		order[n++] = NONE;
}

static void enter(int mode)
{
	if (mode == NONE) {
		run_tool("detach --all");
		join(CG_OTHER);
	} else if (mode == OTHER) {
		join(CG_OTHER);
	} else {
		join(CG);
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

static double lowest(const double *v, int n)
{
	double lo = v[0];

	while (--n > 0)
		lo = v[n] < lo ? v[n] : lo;
	return lo;
}

static double highest(const double *v, int n)
{
	double hi = v[0];

	while (--n > 0)
		hi = v[n] > hi ? v[n] : hi;
	return hi;
}

int main(int argc, char **argv)
{
	static double ns[N_MODES][MAX_ROUNDS], ratio[N_MODES][MAX_ROUNDS];
	double mvn[MAX_ROUNDS], rmed[N_MODES];
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

	if (system("echo 1 > /proc/sys/kernel/bpf_stats_enabled")) {
		fprintf(stderr, "sockaddr_bench: cannot enable kernel.bpf_stats_enabled\n");
		return 1;
	}
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
		int order[N_MODES], attached = 0, k;

		round_order(r, order);
		for (k = 0; k < N_MODES; k++) {
			m = order[k];
			if (m != NONE && !attached) {
				attach(port);
				attached = 1;
			}
			if (m == NONE && attached)
				print_prog_cost(r + 1, 2ULL * (iters + iters / 10 + 1));
			enter(m);
			measure(lfd, m == MATCH ? VIP_PORT : port, iters / 10 + 1);
			ns[m][r] = measure(lfd, m == MATCH ? VIP_PORT : port, iters);
			printf("# round %d %-8s %.0f ns\n", r + 1, mode_name[m], ns[m][r]);
			fflush(stdout);
		}
		if (order[N_MODES - 1] != NONE) {
			print_prog_cost(r + 1, 2ULL * (iters + iters / 10 + 1));
			run_tool("detach --all");
		}
	}

	for (m = 0; m < N_MODES; m++) {
		for (r = 0; r < rounds; r++)
			ratio[m][r] = ns[m][r] / ns[NONE][r];
		med[m] = bench_median(ns[m], rounds, NULL, NULL);
		rmed[m] = bench_median(ratio[m], rounds, NULL, NULL);
	}
	for (r = 0; r < rounds; r++)
		mvn[r] = ns[MATCH][r] / ns[NOMATCH][r];
	printf("connect+accept+close on loopback TCP, %d rounds x %d, order rotated\n",
	       rounds, iters);
	printf("| setup | us per round trip: median (min-max) | round trips/s | vs none, per round: median (min-max) |\n");
	printf("|---|---|---|---|\n");
	for (m = 0; m < N_MODES; m++)
		printf("| %s | %.1f (%.1f-%.1f) | %.0f | %.3f (%.3f-%.3f) |\n",
		       mode_text[m], med[m] / 1e3, lowest(ns[m], rounds) / 1e3,
		       highest(ns[m], rounds) / 1e3, 1e9 / med[m], rmed[m],
		       lowest(ratio[m], rounds), highest(ratio[m], rounds));
	printf("connect4 program's own cost (bpf_stats): %.0f ns per run, median (%.0f-%.0f)\n",
	       bench_median(prog_ns, rounds, NULL, NULL), lowest(prog_ns, rounds), highest(prog_ns, rounds));
	printf("match/nomatch per round %.3f (%.3f-%.3f); match/none %.3f (%.3f-%.3f); goal <= 1.10\n",
	       bench_median(mvn, rounds, NULL, NULL), lowest(mvn, rounds), highest(mvn, rounds),
	       rmed[MATCH], lowest(ratio[MATCH], rounds), highest(ratio[MATCH], rounds));
	close(lfd);
	return 0;
}
