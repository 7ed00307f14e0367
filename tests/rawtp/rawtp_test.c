// SPDX-License-Identifier: GPL-2.0
/*
 * The raw tracepoint contract of BPF_RAW_TRACEPOINT_OPEN, checked with the
 * rawtp tool's own BPF object (its skeleton): exact event counts, raw
 * argument values, several programs on one tracepoint, detach on close,
 * attach-time errors, kernel stacks, and perf_event_open alongside.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tap.h"
#include "ksyms.h"
#include "raw_tp_open.h"
#include "rawtp.h"
#include "rawtp.skel.h"

#define TP "task_rename"
/* task_rename(struct task_struct *task, const char *comm) */
#define TP_NARGS 2
/* Kernel pointers on x86-64 live in the upper half. */
#define KERNEL_HALF 0xffff800000000000ULL

static int ncpus;

struct cfg {
	unsigned int pid;
	unsigned int nargs;
	int str_arg;
	bool stacks;
};

/* Load the tool's program configured like rawtp's options would. */
static struct rawtp *load(const struct cfg *c)
{
	struct rawtp *s = rawtp__open();
	int err;

	if (!s)
		return NULL;
	s->rodata->target_pid = c->pid;
	s->rodata->nargs = c->nargs;
	s->rodata->str_arg = c->str_arg;
	s->rodata->nread = c->str_arg + 1 > (int)c->nargs ? c->str_arg + 1
							    : (int)c->nargs;
	s->rodata->want_stacks = c->stacks;
	err = rawtp__load(s);
	if (err) {
		tap_diag("load: %s", strerror(-err));
		rawtp__destroy(s);
		errno = -err;
		return NULL;
	}
	return s;
}

static struct rawtp *load_self(void)
{
	struct cfg c = { .pid = getpid(), .str_arg = -1 };

	return load(&c);
}

static unsigned long long total(struct rawtp *s, __u32 slot)
{
	unsigned long long sum = 0;
	__u64 v[ncpus];
	int i;

	if (bpf_map_lookup_elem(bpf_map__fd(s->maps.totals), &slot, v))
		return ~0ULL;
	for (i = 0; i < ncpus; i++)
		sum += v[i];
	return sum;
}

/* Sum of the per-process rows of one pid (comm changes with each rename). */
static unsigned long long pid_count(struct rawtp *s, unsigned int pid)
{
	int fd = bpf_map__fd(s->maps.tasks);
	struct rawtp_task_key k, next;
	unsigned long long sum = 0;
	void *prev = NULL;
	__u64 v;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (k.pid == pid && !bpf_map_lookup_elem(fd, &k, &v))
			sum += v;
	}
	return sum;
}

static void rename_n(int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		prctl(PR_SET_NAME, name);
}

static __u32 prog_id(int prog_fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return 0;
	return info.id;
}

/* How many BPF links in the whole system run program id @pid. */
static int links_of_prog(__u32 pid)
{
	__u32 id = 0;
	int n = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info;
		__u32 len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.prog_id == pid)
			n++;
		close(fd);
	}
	return n;
}

static const char *errname(int err)
{
	const char *name = err ? strerrorname_np(err) : "0";

	return name ? name : "?";
}

/*
 * Local checks in the style of tap.h's tap_eq_long(): each prints one TAP
 * line that ends in what was seen and what was wanted, so that a failure
 * in the guest says which condition failed without a rerun.
 *
 * A call's outcome: @ret < 0 is a failure (the raw bpf() syscall returns
 * -1, libbpf returns -errno, and a loader's NULL is passed as -1), and
 * @err is errno saved right after the call.  tap_errno() would not do:
 * it wants exactly -1.
 */
__attribute__((format(printf, 3, 4)))
static int expect_success(long ret, int err, const char *fmt, ...)
{
	char tail[96];
	va_list ap;
	int ok;

	snprintf(tail, sizeof(tail), "got %s, want success", ret < 0 ? errname(err) : "success");
	va_start(ap, fmt);
	ok = tap_ok_tail(ret >= 0, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/* The call failed with @want: one claim, as tap_errno()'s. */
__attribute__((format(printf, 4, 5)))
static int expect_failure(long ret, int err, int want, const char *fmt, ...)
{
	char tail[96];
	va_list ap;
	int ok;

	snprintf(tail, sizeof(tail), "got %s, want %s", ret < 0 ? errname(err) : "success",
		 errname(want));
	va_start(ap, fmt);
	ok = tap_ok_tail(ret < 0 && err == want, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/* ---- groups ------------------------------------------------------------ */

static void exact_counts(void)
{
	const int n = 1000;
	struct rawtp *s = load_self();
	int fd;

	if (!tap_ok(s != NULL, "the rawtp program loads (no kernel BTF needed)"))
		return;
	fd = raw_tp_open(bpf_program__fd(s->progs.rawtp_event), TP, 0);
	if (!tap_ok(fd >= 0, "BPF_RAW_TRACEPOINT_OPEN(%s) returns an fd", TP))
		return;
	rename_n(n, "rtp-exact");
	tap_ok(total(s, 0) == (unsigned long long)n,
	       "%d prctl(PR_SET_NAME) calls: exactly %d events counted (got %llu)",
	       n, n, total(s, 0));
	tap_ok(pid_count(s, getpid()) == (unsigned long long)n,
	       "the per-process map holds exactly %d events for our pid (got %llu)",
	       n, pid_count(s, getpid()));
	tap_eq_long(total(s, RAWTP_DROPPED_SLOT), 0, "events dropped from the task map");
	close(fd);
	rawtp__destroy(s);
}

static int got_events;
static struct rawtp_event events[64];

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	(void)ctx;
	(void)cpu;
	if (size >= sizeof(struct rawtp_event) && got_events < 64)
		memcpy(&events[got_events], data, sizeof(struct rawtp_event));
	got_events++;
}

/* Index of an event to print: the first bad one, or 0 when none was. */
static int shown(int bad)
{
	return bad < 0 ? 0 : bad;
}

/*
 * One claim about every event of the first @checked streamed: @bad is
 * the first that broke it (-1: none), and @seen, "got X, want Y" about
 * it.  No event at all is a failure: the claim would hold vacuously.
 */
__attribute__((format(printf, 4, 5)))
static int expect_events(int checked, int bad, const char *what, const char *seen, ...)
{
	char tail[256];
	va_list ap;

	if (!checked)
		return tap_ok(0, "%s: got no events, want some", what);
	if (bad < 0)
		return tap_ok(1, "%s: all %d events", what, checked);
	va_start(ap, seen);
	vsnprintf(tail, sizeof(tail), seen, ap);
	va_end(ap);
	return tap_ok(0, "%s: event %d of %d: %s", what, bad, checked, tail);
}

static void raw_args(void)
{
	struct cfg c = { .pid = getpid(), .nargs = TP_NARGS, .str_arg = 1 };
	const int n = 20;
	char names[20][16], old[16];
	struct perf_buffer *pb;
	/* For each claim, the first event that broke it, or -1. */
	int bad_name = -1, bad_comm = -1, bad_task = -1, bad_same = -1;
	int bad_ptr = -1, bad_nargs = -1, bad_pid = -1;
	struct rawtp *s = load(&c);
	int fd, fd_err, pb_err, checked, i;
	struct rawtp_event *e;

	if (!tap_ok(s != NULL, "a program reading both raw arguments loads"))
		return;
	fd = raw_tp_open(bpf_program__fd(s->progs.rawtp_event), TP, 0);
	fd_err = errno;
	pb = perf_buffer__new(bpf_map__fd(s->maps.events), 16, on_sample, NULL,
			      NULL, NULL);
	pb_err = errno;
	expect_success(fd, fd_err, "the program reading both raw arguments attaches");
	expect_success(pb ? 0 : -1, pb_err, "a perf buffer opens on its events map");
	if (fd < 0 || !pb)
		return;
	prctl(PR_GET_NAME, old);
	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "rtp-arg-%02d", i);
		prctl(PR_SET_NAME, names[i]);
	}
	while (perf_buffer__poll(pb, 200) > 0)
		;
	tap_ok(got_events == n, "%d events streamed by bpf_perf_event_output (got %d)",
	       n, got_events);
	checked = got_events < n ? got_events : n;
	for (i = 0; i < checked; i++) {
		e = &events[i];
		/* args[1] is the new name: read raw through the pointer */
		if (strcmp(e->str, names[i]) && bad_name < 0)
			bad_name = i;
		/* the tracepoint fires before the copy: comm is the old name */
		if (strcmp(e->comm, i ? names[i - 1] : old) && bad_comm < 0)
			bad_comm = i;
		/* args[0] is our task_struct: one kernel pointer throughout */
		if (e->args[0] < KERNEL_HALF && bad_task < 0)
			bad_task = i;
		if (e->args[0] != events[0].args[0] && bad_same < 0)
			bad_same = i;
		if (e->args[1] < KERNEL_HALF && bad_ptr < 0)
			bad_ptr = i;
		if (e->nargs != TP_NARGS && bad_nargs < 0)
			bad_nargs = i;
		if (e->pid != (unsigned int)getpid() && bad_pid < 0)
			bad_pid = i;
	}
	e = &events[shown(bad_name)];
	expect_events(checked, bad_name,
		      "args[1] read with bpf_probe_read_kernel_str is each new name, in order",
		      "got '%.*s', want '%s'", RAWTP_STR_LEN, e->str, names[shown(bad_name)]);
	e = &events[shown(bad_comm)];
	expect_events(checked, bad_comm,
		      "the current comm at each event is the name before the rename",
		      "got '%.*s', want '%s'", RAWTP_COMM_LEN, e->comm,
		      bad_comm > 0 ? names[bad_comm - 1] : old);
	expect_events(checked, bad_task, "args[0] is a kernel pointer (our task_struct)",
		      "got %#llx, want at least %#llx",
		      (unsigned long long)events[shown(bad_task)].args[0], KERNEL_HALF);
	expect_events(checked, bad_same, "args[0] is the same pointer in every event",
		      "got %#llx, want %#llx (event 0's)",
		      (unsigned long long)events[shown(bad_same)].args[0],
		      (unsigned long long)events[0].args[0]);
	expect_events(checked, bad_ptr, "args[1] is a kernel pointer",
		      "got %#llx, want at least %#llx",
		      (unsigned long long)events[shown(bad_ptr)].args[1], KERNEL_HALF);
	expect_events(checked, bad_nargs, "the event's nargs is the tracepoint's",
		      "got %u, want %d", events[shown(bad_nargs)].nargs, TP_NARGS);
	expect_events(checked, bad_pid, "the event's pid is ours", "got %u, want %d",
		      events[shown(bad_pid)].pid, getpid());
	perf_buffer__free(pb);
	close(fd);
	rawtp__destroy(s);
}

static void two_programs(void)
{
	const int n = 300;
	struct rawtp *a, *b;
	int fa, fb, fb2, ea, eb, efa, efb, efb2;

	/* errno saved after each call, for its check's message */
	a = load_self();
	ea = errno;
	b = load_self();
	eb = errno;
	expect_success(a ? 0 : -1, ea, "two copies of the program load: the first");
	expect_success(b ? 0 : -1, eb, "two copies of the program load: the second");
	if (!a || !b)
		return;
	fa = raw_tp_open(bpf_program__fd(a->progs.rawtp_event), TP, 0);
	efa = errno;
	fb = raw_tp_open(bpf_program__fd(b->progs.rawtp_event), TP, 0);
	efb = errno;
	/* the same program a second time, told apart by its cookie */
	fb2 = raw_tp_open(bpf_program__fd(b->progs.rawtp_event), TP, 1);
	efb2 = errno;
	expect_success(fa, efa, "three attachments to %s: the first program", TP);
	expect_success(fb, efb, "three attachments to %s: the second program", TP);
	expect_success(fb2, efb2, "three attachments to %s: the second program again (cookie 1)",
		       TP);
	if (fa < 0 || fb < 0 || fb2 < 0)
		return;
	rename_n(n, "rtp-two");
	/* total() is ~0ULL when the lookup fails: -1 in the messages */
	tap_eq_long(total(a, 0), n, "the first program ran on every event");
	tap_eq_long(total(b, 0), n, "the second program ran on every event");
	tap_eq_long(total(b, 1), n,
		    "the second attachment of one program ran too, its cookie seen");
	close(fa);
	close(fb);
	close(fb2);
	rawtp__destroy(a);
	rawtp__destroy(b);
}

static void detach_on_close(void)
{
	const int n = 100;
	struct rawtp *s = load_self();
	int pfd, fd, err, i;
	__u32 id;

	if (!tap_ok(s != NULL, "program loads"))
		return;
	pfd = bpf_program__fd(s->progs.rawtp_event);
	id = prog_id(pfd);
	fd = raw_tp_open(pfd, TP, 0);
	err = errno;
	tap_ok(id != 0, "the loaded program has an id: got %u, want non-zero", id);
	expect_success(fd, err, "attached (program id %u)", id);
	if (fd < 0 || !id)
		return;
	tap_eq_long(links_of_prog(id), 1, "links the kernel lists running the program");
	rename_n(n, "rtp-close");
	tap_ok(total(s, 0) == (unsigned long long)n, "%d events while attached (got %llu)",
	       n, total(s, 0));
	close(fd);
	rename_n(n, "rtp-closed");
	tap_ok(total(s, 0) == (unsigned long long)n,
	       "after close(fd) the count stops growing: still %llu after %d more renames",
	       total(s, 0), n);
	tap_eq_long(links_of_prog(id), 0, "links running the program after close(fd)");
	rawtp__destroy(s);
	/*
	 * A closed raw_tp link is unregistered at once but freed after an
	 * RCU grace period, and only then drops its program reference: poll.
	 */
	for (i = 0; i < 500; i++) {
		fd = bpf_prog_get_fd_by_id(id);
		err = errno;
		if (fd < 0)
			break;
		close(fd);
		usleep(10000);
	}
	expect_failure(fd, err, ENOENT,
		       "once its fds are closed the program is freed (lookup by id, %d ms)",
		       i * 10);
}

static void attach_case(const char *tp, unsigned int nargs, int str_arg,
			int want_errno, const char *why)
{
	struct cfg c = { .pid = getpid(), .nargs = nargs, .str_arg = str_arg };
	struct rawtp *s = load(&c);
	int fd, err;

	if (!s) {
		tap_ok(0, "%s: program failed to load", why);
		return;
	}
	fd = raw_tp_open(bpf_program__fd(s->progs.rawtp_event), tp, 0);
	err = fd < 0 ? errno : 0;
	if (want_errno)
		expect_failure(fd, err, want_errno, "%s: refused", why);
	else
		expect_success(fd, err, "%s: attaches", why);
	if (fd >= 0)
		close(fd);
	rawtp__destroy(s);
}

static void attach_errors(void)
{
	attach_case("rawtp_no_such_tracepoint", 0, -1, ENOENT,
		    "an unknown tracepoint name");
	attach_case(TP, 2, -1, 0, "task_rename with a program reading args[0..1]");
	attach_case(TP, 3, -1, EINVAL,
		    "task_rename (2 arguments) with a program reading args[2]");
	attach_case(TP, 0, 2, EINVAL,
		    "task_rename with a program reading args[2] as a string");
	attach_case(TP, 12, -1, EINVAL,
		    "task_rename with a program reading all 12 argument slots");
	attach_case("sys_enter", 2, -1, 0, "sys_enter with a program reading args[0..1]");
	attach_case("sys_enter", 3, -1, EINVAL,
		    "sys_enter (regs, id) with a program reading args[2]");
}

static void unprivileged(void)
{
	struct rawtp *s;
	int err;

	/* setuid from root drops every capability, CAP_BPF included */
	if (setgid(65534) || setuid(65534)) {
		tap_ok(0, "drop to uid 65534: %s", strerror(errno));
		return;
	}
	s = load_self();
	err = errno;
	expect_failure(s ? 0 : -1, err, EPERM,
		       "as uid 65534 without capabilities: the program load fails");
	if (s)
		rawtp__destroy(s);
}

/* The name of the kernel text symbol at or below addr (tools/rawtp/ksyms.c). */
static const char *sym_of(const struct ksyms *ks, unsigned long long addr)
{
	const struct ksym *sym = ksyms_find(ks, addr);

	return sym ? sym->name : "?";
}

static void stacks(void)
{
	struct cfg c = { .pid = getpid(), .str_arg = -1, .stacks = true };
	const int n = 50;
	struct rawtp *s = load(&c);
	struct rawtp_stack_key k, next, best = { 0, -1 };
	unsigned long long best_count = 0;
	__u64 ips[RAWTP_STACK_DEPTH], v;
	bool has_comm = false, has_prctl = false, has_entry = false;
	void *prev = NULL;
	char path[1024] = "";
	struct ksyms ks;
	int fd, i, cfd, kerr;

	if (!tap_ok(s != NULL, "a program calling bpf_get_stackid loads"))
		return;
	fd = raw_tp_open(bpf_program__fd(s->progs.rawtp_event), TP, 0);
	if (!tap_ok(fd >= 0, "it attaches"))
		return;
	rename_n(n, "rtp-stack");
	close(fd);
	cfd = bpf_map__fd(s->maps.stack_counts);
	while (!bpf_map_get_next_key(cfd, prev, &next)) {
		k = next;
		prev = &k;
		if (!bpf_map_lookup_elem(cfd, &k, &v) && v > best_count) {
			best = k;
			best_count = v;
		}
	}
	/* best: the stack key with the most events; a stack id < 0 is an error */
	tap_ok(best.stackid >= 0, "the events' stack was recorded: got stack id %d, want >= 0",
	       best.stackid);
	tap_eq_long(best_count, n, "all %d prctl() events share one stack id (%d): events on it",
		    n, best.stackid);
	memset(ips, 0, sizeof(ips));
	if (best.stackid < 0 ||
	    bpf_map_lookup_elem(bpf_map__fd(s->maps.stack_traces), &best.stackid, ips)) {
		tap_ok(0, "the stack id resolves in the stack map");
		rawtp__destroy(s);
		return;
	}
	kerr = ksyms_load(&ks);	/* none loaded: every frame is "?" and fails below */
	for (i = 0; i < RAWTP_STACK_DEPTH && ips[i]; i++) {
		const char *name = sym_of(&ks, ips[i]);

		has_comm |= !strcmp(name, "__set_task_comm");
		has_prctl |= strstr(name, "sys_prctl") != NULL;
		has_entry |= !strcmp(name, "do_syscall_64");
		if (strlen(path) + strlen(name) + 4 < sizeof(path)) {
			strcat(path, i ? " <- " : "");
			strcat(path, name);
		}
	}
	tap_diag("stack: %s", path);
	tap_ok(ks.n > 0, "kernel symbols for its frames load: got %zu (load: %s%s), want some",
	       ks.n, kerr ? errname(-kerr) : "ok", ks.hidden ? ", hidden by kptr_restrict" : "");
	/* Each frame wanted: "got none" refers to the stack printed above. */
	tap_ok(has_comm, "a frame symbolizes to __set_task_comm: got %s, want one",
	       has_comm ? "one" : "none");
	tap_ok(has_prctl, "a frame symbolizes to *sys_prctl: got %s, want one",
	       has_prctl ? "one" : "none");
	tap_ok(has_entry, "a frame symbolizes to do_syscall_64: got %s, want one",
	       has_entry ? "one" : "none");
	ksyms_free(&ks);
	rawtp__destroy(s);
}

static void perf_alongside(void)
{
	const int n = 200;
	struct perf_event_attr pa;
	unsigned long long pcount = 0;
	struct rawtp *s = load_self();
	int err = errno;	/* the load's, for its check */
	char buf[32] = "";
	int id = -1, pfd, fd, perr, ferr;
	FILE *f = fopen("/sys/kernel/tracing/events/task/task_rename/id", "r");

	if (f && fgets(buf, sizeof(buf), f))
		id = atoi(buf);
	if (f)
		fclose(f);
	tap_ok(id > 0, "task_rename has a trace event id: got %d, want > 0", id);
	expect_success(s ? 0 : -1, err, "the program to run alongside perf loads");
	if (id <= 0 || !s)
		return;
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = id;
	pa.disabled = 1;
	pfd = syscall(__NR_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	perr = errno;
	fd = raw_tp_open(bpf_program__fd(s->progs.rawtp_event), TP, 0);
	ferr = errno;
	expect_success(pfd, perr, "perf_event_open on the %s tracepoint", TP);
	expect_success(fd, ferr, "the raw attach to %s alongside perf", TP);
	if (pfd < 0 || fd < 0)
		return;
	ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0);
	rename_n(n, "rtp-perf");
	ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(pfd, &pcount, sizeof(pcount)) != sizeof(pcount))
		pcount = ~0ULL;
	/* ~0ULL (a failed read or lookup) shows as -1 */
	tap_eq_long(pcount, n, "perf alongside the raw program counted every event");
	tap_eq_long(total(s, 0), n, "the raw program alongside perf counted every event");
	close(fd);
	close(pfd);
	rawtp__destroy(s);
}

/* libbpf's messages as TAP comments, so the stream stays clean TAP */
static int print_diag(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	printf("# ");
	return vprintf(fmt, ap);
}

int main(void)
{
	tap_init();
	libbpf_set_print(print_diag);
	ncpus = libbpf_num_possible_cpus();
	tap_group("exact counts", exact_counts);
	tap_group("raw arguments", raw_args);
	tap_group("two programs", two_programs);
	tap_group("detach on close", detach_on_close);
	tap_group("attach errors", attach_errors);
	tap_group("no privilege", unprivileged);
	tap_group("stacks", stacks);
	tap_group("perf alongside", perf_alongside);
	return tap_done();
}
