// SPDX-License-Identifier: GPL-2.0
/*
 * sockmsg: SK_MSG message verdicts on loopback TCP.
 *
 * Sets up two TCP connections on loopback (IPv4 or IPv6), places their four
 * ends in a sockmap (or sockhash), attaches an SK_MSG verdict program to the
 * map, sends messages on the first connection and reports what arrived
 * where, with the program's verdict counters.  See usage().
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sockmsg.h"
#include "sockmsg.skel.h"

static const char usage_text[] =
"usage: sockmsg [OPTIONS]\n"
"\n"
"Connects two TCP connections over loopback (A: sender -> peer, B: client\n"
"-> peer), puts all four sockets in a BPF sockmap (slots 0-3: A sender,\n"
"A peer, B client, B peer), attaches an SK_MSG verdict program to the map\n"
"and sends COUNT messages on A's sender.  Reports bytes received on A's\n"
"peer and on B's peer, send errors, time, and the program's counters.\n"
"Needs root (CAP_BPF and CAP_NET_ADMIN).\n"
"\n"
"Verdict:\n"
"  --pass              pass every message (default)\n"
"  --drop              drop every message (sendmsg fails with EACCES)\n"
"  --redirect          redirect to connection B: egress through B's client\n"
"                      (arrives on B's peer)\n"
"  --ingress           with --redirect: BPF_F_INGRESS into B's peer's\n"
"                      receive queue\n"
"  --apply N           bpf_msg_apply_bytes(N): each verdict covers N bytes\n"
"  --cork N            bpf_msg_cork_bytes(N): hold data until N bytes\n"
"  --pull START:END    bpf_msg_pull_data(START, END) before the verdict\n"
"  --deny-pattern STR  drop any message whose scanned window (the first 512\n"
"                      bytes of the data the program sees; --pull moves the\n"
"                      window) contains STR (1-8 bytes)\n"
"Map:\n"
"  --hash              use a sockhash instead of a sockmap\n"
"  --ipv6              connect over ::1 instead of 127.0.0.1\n"
"  --unmap-after N     remove the sockets from the map after N messages\n"
"  --detach-after N    detach the program from the map after N messages\n"
"Traffic:\n"
"  --size N            bytes per message (default 1024; 1 for a 1-byte send)\n"
"  --iov K             split each message into K iovecs (default 1)\n"
"  --sendfile          send each message with sendfile() from a memfd\n"
"  --count N           messages to send (default 1)\n"
"  --rate R            at most R messages per second (default: no limit)\n"
"  --plant OFF         write the --deny-pattern at offset OFF of every message\n"
"  --wait-ms MS        wait up to MS ms of silence for data (default 300)\n"
"Output:\n"
"  --verify            check that each receiver got exactly the bytes of the\n"
"                      messages sent to it, in order; exit 1 if not\n"
"  --json              one JSON object instead of text\n"
"Error demonstrations:\n"
"  --attach-wrong-prog attach a socket-filter program as SK_MSG verdict\n"
"  --insert-unconnected put an unconnected TCP socket in the map\n"
"  -h, --help          this text\n"
"\n"
"Exit status: 0 success, 1 error or verification failure, 2 bad usage.\n";

static struct {
	int mode, ingress, hash, ipv6, sendfile, verify, json;
	unsigned apply, cork, pull_start, pull_end;
	char pattern[SM_PATTERN_MAX + 1];
	long plant;
	unsigned size, iov, rate, wait_ms;
	unsigned long count;
	long unmap_after, detach_after;
	int wrong_prog, unconnected;
} opt = { .size = 1024, .iov = 1, .count = 1, .wait_ms = 300,
	  .plant = -1, .unmap_after = -1, .detach_after = -1 };

struct rxbuf {
	unsigned char *data;
	size_t len, cap;
	uint64_t total;
};

static struct rxbuf rx[2], expect[2];
static int rx_fd[2];
static volatile int rx_stop;
static pthread_mutex_t rx_lock = PTHREAD_MUTEX_INITIALIZER;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("sockmsg: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void buf_add(struct rxbuf *b, const void *p, size_t n, bool keep)
{
	b->total += n;
	if (!keep)
		return;
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->data = realloc(b->data, b->cap);
		if (!b->data)
			die("out of memory");
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double last_rx;

static void *receiver(void *arg)
{
	static unsigned char buf[65536];
	struct pollfd pfd[2];

	(void)arg;
	for (int i = 0; i < 2; i++)
		pfd[i] = (struct pollfd){ .fd = rx_fd[i], .events = POLLIN };
	while (!rx_stop) {
		if (poll(pfd, 2, 20) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (!(pfd[i].revents & POLLIN))
				continue;
			n = recv(rx_fd[i], buf, sizeof(buf), MSG_DONTWAIT);
			if (n <= 0)
				continue;
			pthread_mutex_lock(&rx_lock);
			buf_add(&rx[i], buf, n, opt.verify);
			last_rx = now_s();
			pthread_mutex_unlock(&rx_lock);
		}
	}
	return NULL;
}

static unsigned long parse_num(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || end == s || *s == '-') {
		fprintf(stderr, "sockmsg: %s: not a number: '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "pass", 0, 0, 'P' }, { "drop", 0, 0, 'D' },
		{ "redirect", 0, 0, 'R' }, { "ingress", 0, 0, 'I' },
		{ "apply", 1, 0, 'a' }, { "cork", 1, 0, 'c' },
		{ "pull", 1, 0, 'p' }, { "deny-pattern", 1, 0, 'd' },
		{ "hash", 0, 0, 'H' }, { "ipv6", 0, 0, '6' },
		{ "unmap-after", 1, 0, 'u' }, { "detach-after", 1, 0, 'x' },
		{ "size", 1, 0, 's' }, { "iov", 1, 0, 'i' },
		{ "sendfile", 0, 0, 'f' }, { "count", 1, 0, 'n' },
		{ "rate", 1, 0, 'r' }, { "plant", 1, 0, 'l' },
		{ "wait-ms", 1, 0, 'w' }, { "verify", 0, 0, 'V' },
		{ "json", 0, 0, 'j' }, { "attach-wrong-prog", 0, 0, 'W' },
		{ "insert-unconnected", 0, 0, 'U' }, { "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 }
	};
	int c;
	char *colon;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'P': opt.mode = SM_MODE_PASS; break;
		case 'D': opt.mode = SM_MODE_DROP; break;
		case 'R': opt.mode = SM_MODE_REDIRECT; break;
		case 'I': opt.ingress = 1; break;
		case 'a': opt.apply = parse_num(optarg, "--apply"); break;
		case 'c': opt.cork = parse_num(optarg, "--cork"); break;
		case 'p':
			colon = strchr(optarg, ':');
			if (!colon) {
				fprintf(stderr, "sockmsg: --pull wants START:END\n");
				exit(2);
			}
			*colon = 0;
			opt.pull_start = parse_num(optarg, "--pull START");
			opt.pull_end = parse_num(colon + 1, "--pull END");
			if (opt.pull_end <= opt.pull_start) {
				fprintf(stderr, "sockmsg: --pull: END must be above START\n");
				exit(2);
			}
			break;
		case 'd':
			if (!*optarg || strlen(optarg) > SM_PATTERN_MAX) {
				fprintf(stderr, "sockmsg: --deny-pattern: 1 to %d bytes\n",
					SM_PATTERN_MAX);
				exit(2);
			}
			strcpy(opt.pattern, optarg);
			break;
		case 'H': opt.hash = 1; break;
		case '6': opt.ipv6 = 1; break;
		case 'u': opt.unmap_after = parse_num(optarg, "--unmap-after"); break;
		case 'x': opt.detach_after = parse_num(optarg, "--detach-after"); break;
		case 's': opt.size = parse_num(optarg, "--size"); break;
		case 'i': opt.iov = parse_num(optarg, "--iov"); break;
		case 'f': opt.sendfile = 1; break;
		case 'n': opt.count = parse_num(optarg, "--count"); break;
		case 'r': opt.rate = parse_num(optarg, "--rate"); break;
		case 'l': opt.plant = parse_num(optarg, "--plant"); break;
		case 'w': opt.wait_ms = parse_num(optarg, "--wait-ms"); break;
		case 'V': opt.verify = 1; break;
		case 'j': opt.json = 1; break;
		case 'W': opt.wrong_prog = 1; break;
		case 'U': opt.unconnected = 1; break;
		case 'h': fputs(usage_text, stdout); exit(0);
		default: fputs(usage_text, stderr); exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sockmsg: unexpected argument '%s'\n", argv[optind]);
		exit(2);
	}
	if (opt.size == 0 || opt.size > (64u << 20)) {
		fprintf(stderr, "sockmsg: --size: 1 to 64 MiB\n");
		exit(2);
	}
	if (opt.iov == 0 || opt.iov > opt.size || opt.iov > 1024) {
		fprintf(stderr, "sockmsg: --iov: 1 to min(--size, 1024)\n");
		exit(2);
	}
	if (opt.sendfile && opt.iov > 1) {
		fprintf(stderr, "sockmsg: --iov and --sendfile exclude each other\n");
		exit(2);
	}
	if (opt.ingress && opt.mode != SM_MODE_REDIRECT) {
		fprintf(stderr, "sockmsg: --ingress needs --redirect\n");
		exit(2);
	}
	if (opt.plant >= 0 && (!opt.pattern[0] ||
			       opt.plant + strlen(opt.pattern) > opt.size)) {
		fprintf(stderr, "sockmsg: --plant needs --deny-pattern and must fit in --size\n");
		exit(2);
	}
}

static void tcp_pair(int lfd, const struct sockaddr_storage *ss, socklen_t sl,
		     int *cli, int *srv)
{
	*cli = socket(ss->ss_family, SOCK_STREAM, 0);
	if (*cli < 0)
		die("socket: %s", strerror(errno));
	if (connect(*cli, (const struct sockaddr *)ss, sl))
		die("connect: %s", strerror(errno));
	*srv = accept(lfd, NULL, NULL);
	if (*srv < 0)
		die("accept: %s", strerror(errno));
}

static void fill_msg(unsigned char *buf, unsigned long i)
{
	for (unsigned j = 0; j < opt.size; j++)
		buf[j] = 'a' + (i * 7 + j) % 26;
	if (opt.plant >= 0)
		memcpy(buf + opt.plant, opt.pattern, strlen(opt.pattern));
}

int main(int argc, char **argv)
{
	struct sockmsg_bpf *skel;
	struct bpf_program *prog;
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	int lfd, fds[SM_NKEYS], map_fd, prog_fd, err, mfd = -1;
	unsigned char *buf;
	unsigned long sent_msgs = 0, send_errors = 0;
	uint64_t sent_bytes = 0;
	int last_errno = 0, ok = 1, mapped = 1, attached = 1;
	pthread_t th;
	double t0, t1;

	parse_args(argc, argv);
	libbpf_set_print(NULL);

	skel = sockmsg_bpf__open();
	if (!skel)
		die("cannot open the BPF object: %s", strerror(errno));
	/* Load only what this run uses: verification is slow under TCG. */
	bpf_program__set_autoload(opt.hash ? skel->progs.msg_verdict_map :
				  skel->progs.msg_verdict_hash, false);
	if (!opt.wrong_prog)
		bpf_program__set_autoload(skel->progs.not_sk_msg, false);
	err = sockmsg_bpf__load(skel);
	if (err) {
		if (err == -EPERM || errno == EPERM)
			die("loading BPF programs needs root (CAP_BPF and CAP_NET_ADMIN): %s",
			    strerror(EPERM));
		die("cannot load the BPF programs: %s", strerror(-err));
	}
	skel->bss->cfg.mode = opt.mode;
	skel->bss->cfg.redir_key = opt.ingress ? SM_KEY_OTHER_PEER : SM_KEY_OTHER_CLIENT;
	skel->bss->cfg.redir_flags = opt.ingress ? BPF_F_INGRESS : 0;
	skel->bss->cfg.apply = opt.apply;
	skel->bss->cfg.cork = opt.cork;
	skel->bss->cfg.pull_start = opt.pull_start;
	skel->bss->cfg.pull_end = opt.pull_end;
	skel->bss->cfg.pattern_len = strlen(opt.pattern);
	memcpy(skel->bss->cfg.pattern, opt.pattern, strlen(opt.pattern));

	map_fd = bpf_map__fd(opt.hash ? skel->maps.sock_hash : skel->maps.sock_map);
	prog = opt.hash ? skel->progs.msg_verdict_hash : skel->progs.msg_verdict_map;
	if (opt.wrong_prog) {
		prog = skel->progs.not_sk_msg;
		prog_fd = bpf_program__fd(prog);
		if (bpf_prog_attach(prog_fd, map_fd, BPF_SK_MSG_VERDICT, 0))
			die("program %s is not an SK_MSG program (type %s): the kernel refused it as a message verdict: %s",
			    bpf_program__name(prog),
			    libbpf_bpf_prog_type_str(bpf_program__type(prog)),
			    strerror(errno));
		die("the kernel accepted a non-SK_MSG program as a message verdict");
	}
	prog_fd = bpf_program__fd(prog);
	if (bpf_prog_attach(prog_fd, map_fd, BPF_SK_MSG_VERDICT, 0))
		die("cannot attach %s to the %s: %s", bpf_program__name(prog),
		    opt.hash ? "sockhash" : "sockmap", strerror(errno));

	/* Two connections on loopback. */
	lfd = socket(opt.ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket: %s", strerror(errno));
	if (opt.ipv6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(*s4);
	}
	if (bind(lfd, (struct sockaddr *)&ss, sl) || listen(lfd, 8) ||
	    getsockname(lfd, (struct sockaddr *)&ss, &sl))
		die("listen on loopback: %s", strerror(errno));
	tcp_pair(lfd, &ss, sl, &fds[SM_KEY_SENDER], &fds[SM_KEY_PEER]);
	tcp_pair(lfd, &ss, sl, &fds[SM_KEY_OTHER_CLIENT], &fds[SM_KEY_OTHER_PEER]);

	if (opt.unconnected) {
		__u32 k = 0;
		int u = socket(opt.ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);

		if (bpf_map_update_elem(map_fd, &k, &u, BPF_ANY))
			die("the %s refused an unconnected TCP socket: %s",
			    opt.hash ? "sockhash" : "sockmap", strerror(errno));
		die("the %s accepted an unconnected TCP socket",
		    opt.hash ? "sockhash" : "sockmap");
	}
	for (__u32 k = 0; k < SM_NKEYS; k++)
		if (bpf_map_update_elem(map_fd, &k, &fds[k], BPF_ANY))
			die("the %s refused the socket of slot %u: %s",
			    opt.hash ? "sockhash" : "sockmap", k, strerror(errno));

	rx_fd[0] = fds[SM_KEY_PEER];
	rx_fd[1] = fds[SM_KEY_OTHER_PEER];
	last_rx = now_s();
	if (pthread_create(&th, NULL, receiver, NULL))
		die("pthread_create failed");

	buf = malloc(opt.size);
	if (!buf)
		die("out of memory");
	if (opt.sendfile) {
		mfd = memfd_create("sockmsg", 0);
		if (mfd < 0)
			die("memfd_create: %s", strerror(errno));
	}

	t0 = now_s();
	for (unsigned long i = 0; i < opt.count; i++) {
		ssize_t n;
		int dest;

		if (opt.unmap_after >= 0 && (long)i == opt.unmap_after && mapped) {
			for (__u32 k = 0; k < SM_NKEYS; k++)
				if (bpf_map_delete_elem(map_fd, &k))
					die("cannot remove slot %u: %s", k, strerror(errno));
			mapped = 0;
		}
		if (opt.detach_after >= 0 && (long)i == opt.detach_after && attached) {
			if (bpf_prog_detach2(prog_fd, map_fd, BPF_SK_MSG_VERDICT))
				die("cannot detach: %s", strerror(errno));
			attached = 0;
		}
		fill_msg(buf, i);
		if (opt.sendfile) {
			off_t off = 0;

			if (pwrite(mfd, buf, opt.size, 0) != (ssize_t)opt.size)
				die("memfd write: %s", strerror(errno));
			n = sendfile(fds[SM_KEY_SENDER], mfd, &off, opt.size);
		} else {
			struct iovec iov[1024];
			struct msghdr mh = { .msg_iov = iov, .msg_iovlen = opt.iov };
			unsigned per = opt.size / opt.iov;

			for (unsigned k = 0; k < opt.iov; k++) {
				iov[k].iov_base = buf + k * per;
				iov[k].iov_len = k == opt.iov - 1 ? opt.size - k * per : per;
			}
			n = sendmsg(fds[SM_KEY_SENDER], &mh, MSG_NOSIGNAL);
		}
		if (n < 0) {
			send_errors++;
			last_errno = errno;
		} else {
			sent_msgs++;
			sent_bytes += n;
			/* Where these bytes should go. */
			dest = (mapped && opt.mode == SM_MODE_REDIRECT) ? 1 : 0;
			if (mapped && opt.mode == SM_MODE_DROP)
				dest = -1;
			if (dest >= 0)
				buf_add(&expect[dest], buf, n, opt.verify);
		}
		if (opt.rate)
			usleep(1000000 / opt.rate);
	}
	t1 = now_s();

	/*
	 * Wait until the expected bytes are in (when there are some and no
	 * drop can change that), else until wait_ms of silence: stray bytes
	 * that should not arrive get that long to show up.
	 */
	for (;;) {
		bool done, idle, early;

		pthread_mutex_lock(&rx_lock);
		done = rx[0].total >= expect[0].total && rx[1].total >= expect[1].total;
		idle = now_s() - last_rx > opt.wait_ms / 1000.0;
		pthread_mutex_unlock(&rx_lock);
		early = opt.mode != SM_MODE_DROP && !opt.pattern[0] && !opt.cork &&
			expect[0].total + expect[1].total > 0;
		if ((done && early) || idle)
			break;
		usleep(5000);
	}
	rx_stop = 1;
	pthread_join(th, NULL);
	t1 = t1 > last_rx ? t1 : last_rx;

	if (opt.verify) {
		for (int d = 0; d < 2; d++)
			if (rx[d].len != expect[d].len ||
			    memcmp(rx[d].data, expect[d].data, rx[d].len))
				ok = 0;
	}

	struct sm_counters *c = &skel->bss->cnt;
	double secs = t1 - t0 > 0 ? t1 - t0 : 1e-9;

	if (opt.json) {
		printf("{\"family\":\"%s\",\"map\":\"%s\",\"mode\":\"%s%s\","
		       "\"size\":%u,\"iov\":%u,\"sendfile\":%s,\"count\":%lu,"
		       "\"sent_msgs\":%lu,\"sent_bytes\":%llu,\"send_errors\":%lu,"
		       "\"send_errno\":\"%s\",\"recv_peer\":%llu,\"recv_other\":%llu,"
		       "\"expect_peer\":%llu,\"expect_other\":%llu,"
		       "\"seconds\":%.6f,\"mb_per_s\":%.3f,\"msgs_per_s\":%.1f,"
		       "\"runs\":%llu,\"pass\":%llu,\"drop\":%llu,\"redirect\":%llu,"
		       "\"policy_drop\":%llu,\"pull_errors\":%llu,\"bytes_seen\":%llu,"
		       "\"verify\":\"%s\"}\n",
		       opt.ipv6 ? "ipv6" : "ipv4", opt.hash ? "sockhash" : "sockmap",
		       opt.mode == SM_MODE_PASS ? "pass" : opt.mode == SM_MODE_DROP ? "drop" : "redirect",
		       opt.ingress ? "-ingress" : "",
		       opt.size, opt.iov, opt.sendfile ? "true" : "false", opt.count,
		       sent_msgs, (unsigned long long)sent_bytes, send_errors,
		       last_errno ? strerrorname_np(last_errno) : "",
		       (unsigned long long)rx[0].total, (unsigned long long)rx[1].total,
		       (unsigned long long)expect[0].total, (unsigned long long)expect[1].total,
		       secs, (rx[0].total + rx[1].total) / secs / 1e6,
		       sent_msgs / secs,
		       (unsigned long long)c->runs, (unsigned long long)c->pass,
		       (unsigned long long)c->drop, (unsigned long long)c->redirect,
		       (unsigned long long)c->policy_drop, (unsigned long long)c->pull_errors,
		       (unsigned long long)c->bytes_seen,
		       opt.verify ? (ok ? "ok" : "failed") : "off");
	} else {
		printf("sent       %lu messages, %llu bytes, %lu send errors%s%s\n",
		       sent_msgs, (unsigned long long)sent_bytes, send_errors,
		       last_errno ? ", last: " : "", last_errno ? strerror(last_errno) : "");
		printf("received   %llu bytes on A's peer, %llu on B's peer\n",
		       (unsigned long long)rx[0].total, (unsigned long long)rx[1].total);
		printf("time       %.6f s, %.3f MB/s, %.1f messages/s\n", secs,
		       (rx[0].total + rx[1].total) / secs / 1e6, sent_msgs / secs);
		printf("verdicts   runs %llu pass %llu drop %llu (policy %llu) redirect %llu, pull errors %llu, bytes seen %llu\n",
		       (unsigned long long)c->runs, (unsigned long long)c->pass,
		       (unsigned long long)c->drop, (unsigned long long)c->policy_drop,
		       (unsigned long long)c->redirect, (unsigned long long)c->pull_errors,
		       (unsigned long long)c->bytes_seen);
		if (opt.verify)
			printf("verify     %s\n", ok ? "ok" : "FAILED");
	}
	sockmsg_bpf__destroy(skel);
	return ok ? 0 : 1;
}
