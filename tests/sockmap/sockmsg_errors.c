// SPDX-License-Identifier: GPL-2.0
/*
 * sockmsg_errors: the two refusals the sockmap suite wants to see, on the
 * sockmsg tool's own skeleton, so that the tool carries no test-only
 * options.  Each mode ends as the tool would when the kernel refuses:
 * "sockmsg_errors: <what was refused>: <errno text>" on stderr, exit 1.
 *
 *   sockmsg_errors wrong-prog          attach the object's socket-filter
 *                                      program as an SK_MSG verdict
 *   sockmsg_errors unconnected [hash]  put an unconnected TCP socket in the
 *                                      sockmap (or sockhash)
 *
 * Exit 1 also when the kernel accepts what it should refuse (the message
 * then says so), 2 on bad usage.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sockmsg.h"
#include "sockmsg.skel.h"

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("sockmsg_errors: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Load only PROG: verification is slow under TCG. */
static struct sockmsg_bpf *load_only(struct bpf_program *(*pick)(struct sockmsg_bpf *))
{
	struct sockmsg_bpf *skel = sockmsg_bpf__open();
	struct bpf_program *prog, *want;

	if (!skel)
		die("cannot open the BPF object: %s", strerror(errno));
	want = pick(skel);
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == want);
	if (sockmsg_bpf__load(skel))
		die("cannot load the BPF programs: %s", strerror(errno));
	return skel;
}

static struct bpf_program *not_sk_msg(struct sockmsg_bpf *s)
{
	return s->progs.not_sk_msg;
}

static struct bpf_program *verdict_map(struct sockmsg_bpf *s)
{
	return s->progs.msg_verdict_map;
}

static struct bpf_program *verdict_hash(struct sockmsg_bpf *s)
{
	return s->progs.msg_verdict_hash;
}

static int wrong_prog(void)
{
	struct sockmsg_bpf *skel = load_only(not_sk_msg);
	struct bpf_program *prog = skel->progs.not_sk_msg;
	int map_fd = bpf_map__fd(skel->maps.sock_map);

	if (bpf_prog_attach(bpf_program__fd(prog), map_fd, BPF_SK_MSG_VERDICT, 0))
		die("program %s is not an SK_MSG program (type %s): the kernel refused it as a message verdict: %s",
		    bpf_program__name(prog),
		    libbpf_bpf_prog_type_str(bpf_program__type(prog)),
		    strerror(errno));
	die("the kernel accepted a non-SK_MSG program as a message verdict");
}

/* As the tool sets up its map: the verdict attached, then a socket added. */
static int unconnected(bool hash)
{
	struct sockmsg_bpf *skel = load_only(hash ? verdict_hash : verdict_map);
	struct bpf_program *prog = hash ? skel->progs.msg_verdict_hash :
					  skel->progs.msg_verdict_map;
	int map_fd = bpf_map__fd(hash ? skel->maps.sock_hash : skel->maps.sock_map);
	const char *map = hash ? "sockhash" : "sockmap";
	int sock = socket(AF_INET, SOCK_STREAM, 0);
	__u32 key = 0;

	if (sock < 0)
		die("socket: %s", strerror(errno));
	if (bpf_prog_attach(bpf_program__fd(prog), map_fd, BPF_SK_MSG_VERDICT, 0))
		die("cannot attach %s to the %s: %s", bpf_program__name(prog), map,
		    strerror(errno));
	if (bpf_map_update_elem(map_fd, &key, &sock, BPF_ANY))
		die("the %s refused an unconnected TCP socket: %s", map, strerror(errno));
	die("the %s accepted an unconnected TCP socket", map);
}

int main(int argc, char **argv)
{
	libbpf_set_print(NULL);
	if (argc == 2 && !strcmp(argv[1], "wrong-prog"))
		return wrong_prog();
	if (argc == 2 && !strcmp(argv[1], "unconnected"))
		return unconnected(false);
	if (argc == 3 && !strcmp(argv[1], "unconnected") && !strcmp(argv[2], "hash"))
		return unconnected(true);
	fputs("usage: sockmsg_errors wrong-prog | unconnected [hash]\n", stderr);
	return 2;
}
