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
#include <json-c/json.h>
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
} opt = { .size = 1024, .iov = 1, .count = 1, .wait_ms = 300,
	  .plant = -1, .unmap_after = -1, .detach_after = -1 };

/* Receivers: 0 is A's peer, 1 is B's peer. */
enum { RX_PEER, RX_OTHER, N_RX };

struct rxbuf {
	unsigned char *data;
	size_t len, cap;
	uint64_t total;
};

/* Filled by the receiver thread, read by main() under rx_lock. */
static struct rxbuf rx[N_RX];
static int rx_fd[N_RX];
static volatile int rx_stop;
static double last_rx;
static pthread_mutex_t rx_lock = PTHREAD_MUTEX_INITIALIZER;

/* The sockets, map and program of one run. */
struct setup {
	struct sockmsg_bpf *skel;
	int map_fd, prog_fd;
	int fds[SM_NKEYS];
	int memfd;		/* --sendfile: the file each message is sent from */
	bool mapped, attached;	/* until --unmap-after / --detach-after */
	pthread_t receiver;
};

/* What a run measured; print_text() or print_json() shows it. */
struct results {
	unsigned long sent_msgs, send_errors;
	uint64_t sent_bytes;
	int last_errno;
	struct rxbuf expect[N_RX];	/* what each receiver should get */
	uint64_t received[N_RX];
	double seconds;
	struct sm_counters cnt;
	bool verify_ok;
};

static void fail(int status, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0), noreturn));
static void fail(int status, const char *fmt, va_list ap)
{
	fputs("sockmsg: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	exit(status);
}

/* A run that cannot go on: exit 1. */
static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail(1, fmt, ap);
}

/* Options that make no sense: exit 2. */
static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail(2, fmt, ap);
}

static const char *map_name(void)
{
	return opt.hash ? "sockhash" : "sockmap";
}

/* Count N bytes; keep them too when --verify will compare them. */
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

/* ---- options ---- */

static unsigned long parse_num(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || end == s || *s == '-')
		usage_error("%s: not a number: '%s'", what, s);
	return v;
}

static void parse_pull(char *arg)
{
	char *colon = strchr(arg, ':');

	if (!colon)
		usage_error("--pull wants START:END");
	*colon = 0;
	opt.pull_start = parse_num(arg, "--pull START");
	opt.pull_end = parse_num(colon + 1, "--pull END");
	if (opt.pull_end <= opt.pull_start)
		usage_error("--pull: END must be above START");
}

static void parse_pattern(const char *arg)
{
	if (!*arg || strlen(arg) > SM_PATTERN_MAX)
		usage_error("--deny-pattern: 1 to %d bytes", SM_PATTERN_MAX);
	strcpy(opt.pattern, arg);
}

/* Options that are fine alone but not together. */
static void check_options(void)
{
	if (opt.size == 0 || opt.size > (64u << 20))
		usage_error("--size: 1 to 64 MiB");
	if (opt.iov == 0 || opt.iov > opt.size || opt.iov > 1024)
		usage_error("--iov: 1 to min(--size, 1024)");
	if (opt.sendfile && opt.iov > 1)
		usage_error("--iov and --sendfile exclude each other");
	if (opt.ingress && opt.mode != SM_MODE_REDIRECT)
		usage_error("--ingress needs --redirect");
	if (opt.plant >= 0 && (!opt.pattern[0] ||
			       opt.plant + strlen(opt.pattern) > opt.size))
		usage_error("--plant needs --deny-pattern and must fit in --size");
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
		{ "json", 0, 0, 'j' }, { "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'P': opt.mode = SM_MODE_PASS; break;
		case 'D': opt.mode = SM_MODE_DROP; break;
		case 'R': opt.mode = SM_MODE_REDIRECT; break;
		case 'I': opt.ingress = 1; break;
		case 'a': opt.apply = parse_num(optarg, "--apply"); break;
		case 'c': opt.cork = parse_num(optarg, "--cork"); break;
		case 'p': parse_pull(optarg); break;
		case 'd': parse_pattern(optarg); break;
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
		case 'h': fputs(usage_text, stdout); exit(0);
		default: fputs(usage_text, stderr); exit(2);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	check_options();
}

/* ---- setup: programs, map, connections ---- */

static void load_programs(struct setup *st)
{
	struct sockmsg_bpf *skel;
	int err;

	skel = sockmsg_bpf__open();
	if (!skel)
		die("cannot open the BPF object: %s", strerror(errno));
	/* Load only what this run uses: verification is slow under TCG. */
	bpf_program__set_autoload(opt.hash ? skel->progs.msg_verdict_map :
				  skel->progs.msg_verdict_hash, false);
	bpf_program__set_autoload(skel->progs.not_sk_msg, false);
	err = sockmsg_bpf__load(skel);
	if (err) {
		if (err == -EPERM || errno == EPERM)
			die("loading BPF programs needs root (CAP_BPF and CAP_NET_ADMIN): %s",
			    strerror(EPERM));
		die("cannot load the BPF programs: %s", strerror(-err));
	}
	st->skel = skel;
}

/* The verdict program reads its configuration from .bss at every run. */
static void configure_program(struct sm_config *cfg)
{
	cfg->mode = opt.mode;
	cfg->redir_key = opt.ingress ? SM_KEY_OTHER_PEER : SM_KEY_OTHER_CLIENT;
	cfg->redir_flags = opt.ingress ? BPF_F_INGRESS : 0;
	cfg->apply = opt.apply;
	cfg->cork = opt.cork;
	cfg->pull_start = opt.pull_start;
	cfg->pull_end = opt.pull_end;
	cfg->pattern_len = strlen(opt.pattern);
	memcpy(cfg->pattern, opt.pattern, strlen(opt.pattern));
}

static void attach_verdict(struct setup *st)
{
	struct sockmsg_bpf *skel = st->skel;
	struct bpf_program *prog;

	st->map_fd = bpf_map__fd(opt.hash ? skel->maps.sock_hash : skel->maps.sock_map);
	prog = opt.hash ? skel->progs.msg_verdict_hash : skel->progs.msg_verdict_map;
	st->prog_fd = bpf_program__fd(prog);
	if (bpf_prog_attach(st->prog_fd, st->map_fd, BPF_SK_MSG_VERDICT, 0))
		die("cannot attach %s to the %s: %s", bpf_program__name(prog),
		    map_name(), strerror(errno));
	st->attached = true;
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

/* A listener on loopback, any port; *ss is where it listens. */
static int listen_loopback(struct sockaddr_storage *ss, socklen_t *sl)
{
	int lfd = socket(opt.ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);

	if (lfd < 0)
		die("socket: %s", strerror(errno));
	memset(ss, 0, sizeof(*ss));
	if (opt.ipv6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		*sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*sl = sizeof(*s4);
	}
	if (bind(lfd, (struct sockaddr *)ss, *sl) || listen(lfd, 8) ||
	    getsockname(lfd, (struct sockaddr *)ss, sl))
		die("listen on loopback: %s", strerror(errno));
	return lfd;
}

static void connect_pairs(struct setup *st)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int lfd = listen_loopback(&ss, &sl);

	tcp_pair(lfd, &ss, sl, &st->fds[SM_KEY_SENDER], &st->fds[SM_KEY_PEER]);
	tcp_pair(lfd, &ss, sl, &st->fds[SM_KEY_OTHER_CLIENT],
		 &st->fds[SM_KEY_OTHER_PEER]);
}

static void insert_sockets(struct setup *st)
{
	for (__u32 k = 0; k < SM_NKEYS; k++)
		if (bpf_map_update_elem(st->map_fd, &k, &st->fds[k], BPF_ANY))
			die("the %s refused the socket of slot %u: %s",
			    map_name(), k, strerror(errno));
	st->mapped = true;
}

/* ---- receive ---- */

static void *receiver(void *arg)
{
	static unsigned char buf[65536];
	struct pollfd pfd[N_RX];

	(void)arg;
	for (int i = 0; i < N_RX; i++)
		pfd[i] = (struct pollfd){ .fd = rx_fd[i], .events = POLLIN };
	while (!rx_stop) {
		if (poll(pfd, N_RX, 20) <= 0)
			continue;
		for (int i = 0; i < N_RX; i++) {
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

static void start_receiver(struct setup *st)
{
	rx_fd[RX_PEER] = st->fds[SM_KEY_PEER];
	rx_fd[RX_OTHER] = st->fds[SM_KEY_OTHER_PEER];
	last_rx = now_s();
	if (pthread_create(&st->receiver, NULL, receiver, NULL))
		die("pthread_create failed");
}

/* ---- send ---- */

static void fill_msg(unsigned char *buf, unsigned long i)
{
	for (unsigned j = 0; j < opt.size; j++)
		buf[j] = 'a' + (i * 7 + j) % 26;
	if (opt.plant >= 0)
		memcpy(buf + opt.plant, opt.pattern, strlen(opt.pattern));
}

/* --unmap-after and --detach-after: change the setup before message i. */
static void change_setup(struct setup *st, unsigned long i)
{
	if (opt.unmap_after >= 0 && (long)i == opt.unmap_after && st->mapped) {
		for (__u32 k = 0; k < SM_NKEYS; k++)
			if (bpf_map_delete_elem(st->map_fd, &k))
				die("cannot remove slot %u: %s", k, strerror(errno));
		st->mapped = false;
	}
	if (opt.detach_after >= 0 && (long)i == opt.detach_after && st->attached) {
		if (bpf_prog_detach2(st->prog_fd, st->map_fd, BPF_SK_MSG_VERDICT))
			die("cannot detach: %s", strerror(errno));
		st->attached = false;
	}
}

/* --sendfile: each message is written to this file, then sent from it. */
static int sendfile_source(void)
{
	int fd = memfd_create("sockmsg", 0);

	if (fd < 0)
		die("memfd_create: %s", strerror(errno));
	return fd;
}

static ssize_t send_sendfile(struct setup *st, const unsigned char *buf)
{
	off_t off = 0;

	if (pwrite(st->memfd, buf, opt.size, 0) != (ssize_t)opt.size)
		die("memfd write: %s", strerror(errno));
	return sendfile(st->fds[SM_KEY_SENDER], st->memfd, &off, opt.size);
}

/* One sendmsg() of --iov pieces, the last one taking the remainder. */
static ssize_t send_iovecs(struct setup *st, unsigned char *buf)
{
	struct iovec iov[1024];
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = opt.iov };
	unsigned per = opt.size / opt.iov;

	for (unsigned k = 0; k < opt.iov; k++) {
		iov[k].iov_base = buf + k * per;
		iov[k].iov_len = k == opt.iov - 1 ? opt.size - k * per : per;
	}
	return sendmsg(st->fds[SM_KEY_SENDER], &mh, MSG_NOSIGNAL);
}

/* Which receiver the verdict sends accepted bytes to; -1: none. */
static int destination(const struct setup *st)
{
	if (!st->mapped)
		return RX_PEER;		/* plain TCP again */
	if (opt.mode == SM_MODE_DROP)
		return -1;
	return opt.mode == SM_MODE_REDIRECT ? RX_OTHER : RX_PEER;
}

static void send_messages(struct setup *st, struct results *res)
{
	unsigned char *buf = malloc(opt.size);

	if (!buf)
		die("out of memory");
	for (unsigned long i = 0; i < opt.count; i++) {
		ssize_t n;
		int dest;

		change_setup(st, i);
		fill_msg(buf, i);
		n = opt.sendfile ? send_sendfile(st, buf) : send_iovecs(st, buf);
		if (n < 0) {
			res->send_errors++;
			res->last_errno = errno;
		} else {
			res->sent_msgs++;
			res->sent_bytes += n;
			dest = destination(st);
			if (dest >= 0)
				buf_add(&res->expect[dest], buf, n, opt.verify);
		}
		if (opt.rate)
			usleep(1000000 / opt.rate);
	}
	free(buf);
}

/* ---- wait, verify ---- */

/*
 * Wait until the expected bytes are in (when there are some and no drop
 * can change that), else until wait_ms of silence: stray bytes that
 * should not arrive get that long to show up.
 */
static void wait_for_data(struct setup *st, const struct results *res)
{
	const struct rxbuf *want = res->expect;
	bool early = opt.mode != SM_MODE_DROP && !opt.pattern[0] && !opt.cork &&
		     want[RX_PEER].total + want[RX_OTHER].total > 0;

	for (;;) {
		bool done, idle;

		pthread_mutex_lock(&rx_lock);
		done = rx[RX_PEER].total >= want[RX_PEER].total &&
		       rx[RX_OTHER].total >= want[RX_OTHER].total;
		idle = now_s() - last_rx > opt.wait_ms / 1000.0;
		pthread_mutex_unlock(&rx_lock);
		if ((done && early) || idle)
			break;
		usleep(5000);
	}
	rx_stop = 1;
	pthread_join(st->receiver, NULL);
}

/* Exactly the bytes sent to each receiver, in order; true without --verify. */
static bool verify(const struct results *res)
{
	if (!opt.verify)
		return true;
	for (int d = 0; d < N_RX; d++)
		if (rx[d].len != res->expect[d].len ||
		    memcmp(rx[d].data, res->expect[d].data, rx[d].len))
			return false;
	return true;
}

/* ---- print ---- */

static double mb_per_s(const struct results *r)
{
	return (r->received[RX_PEER] + r->received[RX_OTHER]) / r->seconds / 1e6;
}

static const char *mode_name(void)
{
	return opt.mode == SM_MODE_PASS ? "pass" :
	       opt.mode == SM_MODE_DROP ? "drop" : "redirect";
}

/* @o's @key: a number printed with @fmt (json-c keeps the text as given). */
static void json_add_double(struct json_object *o, const char *key, const char *fmt,
			    double v)
{
	char text[64];

	snprintf(text, sizeof(text), fmt, v);
	json_object_object_add(o, key, json_object_new_double_s(v, text));
}

static void json_add_u64(struct json_object *o, const char *key, unsigned long long v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void json_add_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static void json_run(struct json_object *o)
{
	char mode[32];

	snprintf(mode, sizeof(mode), "%s%s", mode_name(), opt.ingress ? "-ingress" : "");
	json_add_str(o, "family", opt.ipv6 ? "ipv6" : "ipv4");
	json_add_str(o, "map", map_name());
	json_add_str(o, "mode", mode);
	json_add_u64(o, "size", opt.size);
	json_add_u64(o, "iov", opt.iov);
	json_object_object_add(o, "sendfile", json_object_new_boolean(opt.sendfile));
	json_add_u64(o, "count", opt.count);
}

static void json_send(struct json_object *o, const struct results *r)
{
	json_add_u64(o, "sent_msgs", r->sent_msgs);
	json_add_u64(o, "sent_bytes", r->sent_bytes);
	json_add_u64(o, "send_errors", r->send_errors);
	json_add_str(o, "send_errno", r->last_errno ? strerrorname_np(r->last_errno) : "");
}

static void json_receive(struct json_object *o, const struct results *r)
{
	json_add_u64(o, "recv_peer", r->received[RX_PEER]);
	json_add_u64(o, "recv_other", r->received[RX_OTHER]);
	json_add_u64(o, "expect_peer", r->expect[RX_PEER].total);
	json_add_u64(o, "expect_other", r->expect[RX_OTHER].total);
}

static void json_time(struct json_object *o, const struct results *r)
{
	json_add_double(o, "seconds", "%.6f", r->seconds);
	json_add_double(o, "mb_per_s", "%.3f", mb_per_s(r));
	json_add_double(o, "msgs_per_s", "%.1f", r->sent_msgs / r->seconds);
}

static void json_verdicts(struct json_object *o, const struct sm_counters *c)
{
	json_add_u64(o, "runs", c->runs);
	json_add_u64(o, "pass", c->pass);
	json_add_u64(o, "drop", c->drop);
	json_add_u64(o, "redirect", c->redirect);
	json_add_u64(o, "policy_drop", c->policy_drop);
	json_add_u64(o, "pull_errors", c->pull_errors);
	json_add_u64(o, "bytes_seen", c->bytes_seen);
}

/* One JSON object, on one line, through json-c. */
static void print_json(const struct results *r)
{
	struct json_object *o = json_object_new_object();

	if (!o) {
		fprintf(stderr, "sockmsg: out of memory for the JSON output\n");
		exit(1);
	}
	json_run(o);
	json_send(o, r);
	json_receive(o, r);
	json_time(o, r);
	json_verdicts(o, &r->cnt);
	json_add_str(o, "verify", opt.verify ? (r->verify_ok ? "ok" : "failed") : "off");
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void print_text(const struct results *r)
{
	const struct sm_counters *c = &r->cnt;

	printf("sent       %lu messages, %llu bytes, %lu send errors%s%s\n",
	       r->sent_msgs, (unsigned long long)r->sent_bytes, r->send_errors,
	       r->last_errno ? ", last: " : "",
	       r->last_errno ? strerror(r->last_errno) : "");
	printf("received   %llu bytes on A's peer, %llu on B's peer\n",
	       (unsigned long long)r->received[RX_PEER],
	       (unsigned long long)r->received[RX_OTHER]);
	printf("time       %.6f s, %.3f MB/s, %.1f messages/s\n", r->seconds,
	       mb_per_s(r), r->sent_msgs / r->seconds);
	printf("verdicts   runs %llu pass %llu drop %llu (policy %llu) redirect %llu, pull errors %llu, bytes seen %llu\n",
	       (unsigned long long)c->runs, (unsigned long long)c->pass,
	       (unsigned long long)c->drop, (unsigned long long)c->policy_drop,
	       (unsigned long long)c->redirect, (unsigned long long)c->pull_errors,
	       (unsigned long long)c->bytes_seen);
	if (opt.verify)
		printf("verify     %s\n", r->verify_ok ? "ok" : "FAILED");
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	struct setup st = { .memfd = -1 };
	struct results res = { 0 };
	double t0, t1;

	parse_args(argc, argv);
	libbpf_set_print(NULL);

	load_programs(&st);
	configure_program(&st.skel->bss->cfg);
	attach_verdict(&st);
	connect_pairs(&st);
	insert_sockets(&st);
	start_receiver(&st);
	if (opt.sendfile)
		st.memfd = sendfile_source();

	t0 = now_s();
	send_messages(&st, &res);
	t1 = now_s();
	wait_for_data(&st, &res);
	/* The run lasts until its last byte arrived. */
	t1 = t1 > last_rx ? t1 : last_rx;

	res.seconds = t1 - t0 > 0 ? t1 - t0 : 1e-9;
	res.received[RX_PEER] = rx[RX_PEER].total;
	res.received[RX_OTHER] = rx[RX_OTHER].total;
	res.cnt = st.skel->bss->cnt;
	res.verify_ok = verify(&res);
	if (opt.json)
		print_json(&res);
	else
		print_text(&res);
	sockmsg_bpf__destroy(st.skel);
	return res.verify_ok ? 0 : 1;
}
