// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-syscalls: versioned pointers of every kind passed as the buffer
 * arguments of system calls that read or write user memory in different
 * ways (copy_*_user, get/put_user, iov_iter, futex atomics, pinned pages,
 * the signal and rseq areas the kernel writes on the way back to user
 * space).  Kinds: a matching version on ADI memory, a mismatching one, a
 * version on memory without PROT_ADI, a plain pointer, and versions on
 * addresses that are not user addresses once stripped.
 *
 * Every call must return (2 s bound, from a child that names each call
 * before making it), with success or an errno (the distribution is
 * printed), and no child may be killed; except that an alternate signal
 * stack or an rseq area the kernel cannot write may kill with SIGSEGV,
 * as a bad one always could: those two run in children of their own.
 * Seeded: ADI_HOSTILE_SEED replays a run.
 */
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <sched.h>
#include <sys/rseq.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>

#include "hostile.h"

#define BATCH		40	/* calls per child */
#define CALL_MS_BASE	2000
#define CALL_MS		(CALL_MS_BASE * hostile_slow())
#define MEM		5	/* the ADI memory's version */
#define BAD		9
#define SLOT		4096
#define NSLOTS		16
#define MAX_ERRNO	140

enum ptr_kind { P_MATCH, P_MISMATCH, P_NONADI, P_PLAIN, P_KERNEL, P_ABOVE, NKINDS };

static const char *const kind_name[NKINDS] = {
	"match", "mismatch", "non-ADI", "plain", "kernel", "above-user",
};

static char *adi, *plain;	/* NSLOTS slots each; adi is version MEM */
static int pipefd[2], sock[2], filefd;
static uint64_t *rs;
static int kinds_used[8], nkinds_used;

/*
 * A pointer of a random kind to slot @slot, whose contents (in both the
 * ADI and the plain copy) are @init (zeros when NULL).
 */
static void *P(int slot, const void *init, size_t len)
{
	int kind = rnd_below(rs, NKINDS);
	char *a = adi + slot * SLOT, *p = plain + slot * SLOT;

	if (init) {
		memcpy(a, init, len);
		memcpy(p, init, len);
	} else {
		memset(a, 0, len);
		memset(p, 0, len);
	}
	if (nkinds_used < 8)
		kinds_used[nkinds_used++] = kind;
	switch (kind) {
	case P_MATCH: return adi_make_ptr(a, MEM);
	case P_MISMATCH: return adi_make_ptr(a, BAD);
	case P_NONADI: return adi_make_ptr(p, BAD);
	case P_PLAIN: return p;
	case P_KERNEL: return (void *)(0xffff800000000000UL + slot * SLOT);
	default: return (void *)(0xf000800000000000UL + slot * SLOT);
	}
}

/* Empty the pipe (non-blocking) so the next write has room. */
static void drain(void)
{
	char sink[4096];

	while (read(pipefd[0], sink, sizeof(sink)) > 0)
		;
}

static void fill_pipe(size_t n)
{
	char data[512] = { 1 };

	if (write(pipefd[1], data, n < sizeof(data) ? n : sizeof(data)) < 0) {
		/* a full pipe is fine: the read has data */
	}
}

static long c_read(void) { fill_pipe(256); return read(pipefd[0], P(0, NULL, 256), 256); }
static long c_write(void) { drain(); return write(pipefd[1], P(0, NULL, 256), 256); }
static long c_pread(void) { return pread(filefd, P(0, NULL, 512), 512, 0); }
static long c_pwrite(void) { return pwrite(filefd, P(0, NULL, 512), 512, 0); }

static struct iovec *iov2(void)
{
	struct iovec v[2] = { { P(1, NULL, 100), 100 }, { P(2, NULL, 200), 200 } };

	return P(3, v, sizeof(v));
}

static long c_readv(void) { lseek(filefd, 0, SEEK_SET); return readv(filefd, iov2(), 2); }
static long c_writev(void) { drain(); return writev(pipefd[1], iov2(), 2); }

static struct msghdr *msg(void)
{
	struct msghdr m = { .msg_iov = iov2(), .msg_iovlen = 2 };

	return P(4, &m, sizeof(m));
}

static long c_sendmsg(void) { return sendmsg(sock[0], msg(), MSG_DONTWAIT); }

static long c_recvmsg(void)
{
	char data[300] = { 2 };

	if (send(sock[0], data, sizeof(data), MSG_DONTWAIT) < 0) {
		/* a full socket is fine: recvmsg has data */
	}
	return recvmsg(sock[1], msg(), MSG_DONTWAIT);
}

static long c_getcwd(void) { return syscall(SYS_getcwd, P(0, NULL, 256), 256); }
static long c_uname(void) { return syscall(SYS_uname, P(0, NULL, sizeof(struct utsname))); }
static long c_clock_gettime(void) { return syscall(SYS_clock_gettime, CLOCK_MONOTONIC, P(0, NULL, 16)); }
static long c_gettimeofday(void) { return syscall(SYS_gettimeofday, P(0, NULL, 16), P(1, NULL, 8)); }

static struct timespec *rel_timeout(void)
{
	struct timespec t = { 0, 1000000 };

	return P(5, &t, sizeof(t));
}

static long futex(void *u, int op, int val, void *t, void *u2, int val3)
{
	return syscall(SYS_futex, u, op, val, t, u2, val3);
}

static long c_futex_wait(void) { return futex(P(6, NULL, 4), FUTEX_WAIT_PRIVATE, 0, rel_timeout(), NULL, 0); }
static long c_futex_wake(void) { return futex(P(6, NULL, 4), FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

static long c_futex_wake_op(void)
{
	return futex(P(6, NULL, 4), FUTEX_WAKE_OP_PRIVATE, 1, (void *)1, P(7, NULL, 4),
		     FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0));
}

static long c_futex_lock_pi(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return futex(P(6, NULL, 4), FUTEX_LOCK_PI_PRIVATE, 0, P(5, &t, sizeof(t)), NULL, 0);
}

static long c_futex_cmp_requeue(void)
{
	return futex(P(6, NULL, 4), FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1, P(7, NULL, 4), 0);
}

static long c_rt_sigaction(void)
{
	struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } act = {
		.handler = SIG_IGN,
	};

	return syscall(SYS_rt_sigaction, SIGUSR2, P(0, &act, sizeof(act)), P(1, NULL, sizeof(act)), 8);
}

static long c_rt_sigprocmask(void)
{
	uint64_t set = 1ULL << (SIGUSR2 - 1);

	return syscall(SYS_rt_sigprocmask, SIG_BLOCK, P(0, &set, 8), P(1, NULL, 8), 8);
}

/* Local and remote iovecs, remote being this process: its side is stripped. */
static long c_process_vm(int write)
{
	struct iovec l = { P(0, NULL, 128), 128 }, r = { P(1, NULL, 128), 128 };

	return syscall(write ? SYS_process_vm_writev : SYS_process_vm_readv, getpid(),
		       P(2, &l, sizeof(l)), 1, P(3, &r, sizeof(r)), 1, 0);
}

static long c_process_vm_readv(void) { return c_process_vm(0); }
static long c_process_vm_writev(void) { return c_process_vm(1); }

static long c_splice(void)
{
	loff_t off = 0;

	drain();
	return splice(filefd, P(0, &off, sizeof(off)), pipefd[1], NULL, 64, SPLICE_F_NONBLOCK);
}

static long c_vmsplice(void)
{
	struct iovec v = { P(0, NULL, 256), 256 };

	drain();
	return vmsplice(pipefd[1], P(1, &v, sizeof(v)), 1, SPLICE_F_NONBLOCK);
}

static long c_poll(void)
{
	struct pollfd p = { .fd = pipefd[0], .events = POLLIN };

	return poll(P(0, &p, sizeof(p)), 1, 0);
}

static long c_select(void)
{
	fd_set r;
	struct timeval t = { 0, 0 };

	FD_ZERO(&r);
	FD_SET(pipefd[0], &r);
	return syscall(SYS_select, pipefd[0] + 1, P(0, &r, sizeof(r)), P(1, &r, sizeof(r)), NULL,
		       P(2, &t, sizeof(t)));
}

static long c_getrusage(void) { return syscall(SYS_getrusage, RUSAGE_SELF, P(0, NULL, sizeof(struct rusage))); }

static long c_prlimit(void)
{
	struct rlimit cur;

	getrlimit(RLIMIT_NOFILE, &cur);
	return syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, P(0, &cur, sizeof(cur)),
		       P(1, NULL, sizeof(cur)));
}

/* An empty robust list (head->next == head): the kernel walks it at exit. */
static long c_set_robust_list(void)
{
	uint64_t head[3] = { 0, 0, 0 };
	void *h = P(0, NULL, sizeof(head));

	/* head->next: the pointer as given (empty), or stripped (one bogus entry). */
	head[0] = (uint64_t)(uintptr_t)(rnd_below(rs, 2) ? h : adi_strip_ptr(h));
	memcpy(adi, head, sizeof(head));
	memcpy(plain, head, sizeof(head));
	return syscall(SYS_set_robust_list, h, sizeof(head));
}

static long c_get_robust_list(void) { return syscall(SYS_get_robust_list, 0, P(0, NULL, 8), P(1, NULL, 8)); }

static long c_io_uring_setup(void)
{
	struct io_uring_params p;
	long fd;

	memset(&p, 0, sizeof(p));
	fd = syscall(SYS_io_uring_setup, 1, P(0, &p, sizeof(p)));
	if (fd >= 0)
		close(fd);
	return fd;
}

struct call {
	const char *name;
	long (*fn)(void);
};

static const struct call calls[] = {
	{ "read", c_read }, { "write", c_write }, { "pread64", c_pread }, { "pwrite64", c_pwrite },
	{ "readv", c_readv }, { "writev", c_writev }, { "sendmsg", c_sendmsg },
	{ "recvmsg", c_recvmsg }, { "getcwd", c_getcwd }, { "uname", c_uname },
	{ "clock_gettime", c_clock_gettime }, { "gettimeofday", c_gettimeofday },
	{ "futex WAIT", c_futex_wait }, { "futex WAKE", c_futex_wake },
	{ "futex WAKE_OP", c_futex_wake_op }, { "futex LOCK_PI", c_futex_lock_pi },
	{ "futex CMP_REQUEUE", c_futex_cmp_requeue }, { "rt_sigaction", c_rt_sigaction },
	{ "rt_sigprocmask", c_rt_sigprocmask }, { "process_vm_readv", c_process_vm_readv },
	{ "process_vm_writev", c_process_vm_writev }, { "splice", c_splice },
	{ "vmsplice", c_vmsplice }, { "poll", c_poll }, { "select", c_select },
	{ "getrusage", c_getrusage }, { "prlimit64", c_prlimit },
	{ "set_robust_list", c_set_robust_list }, { "get_robust_list", c_get_robust_list },
	{ "io_uring_setup", c_io_uring_setup },
};
#define NCALLS (sizeof(calls) / sizeof(calls[0]))
/* The two that may kill with SIGSEGV: run alone, after the table's. */
#define C_SIGALTSTACK	NCALLS
#define C_RSEQ		(NCALLS + 1)
#define NALL		(NCALLS + 2)

struct sys_stats {
	long calls[NALL];
	long errs[NALL][MAX_ERRNO + 1];
	long segv[NALL];		/* sigaltstack/rseq children killed by SIGSEGV */
	long children, timeouts, unkillable, bad;
	char first_bad[300];
};

static struct sys_stats *st;

static void record(int c, long ret)
{
	int e = ret < 0 ? errno : 0;

	st->calls[c]++;
	st->errs[c][e < MAX_ERRNO ? e : MAX_ERRNO]++;
}

static const char *kinds_text(void)
{
	static char text[96];
	int n = 0;

	text[0] = 0;
	for (int i = 0; i < nkinds_used; i++)
		n += snprintf(text + n, sizeof(text) - n, "%s%s", i ? "," : "",
			      kind_name[kinds_used[i]]);
	return text;
}

static void child_setup(uint64_t *state)
{
	char path[] = "/tmp/adi-hostile-XXXXXX", zero[8192] = { 0 };

	rs = state;
	adi = adi_region(NSLOTS * SLOT, MEM);
	plain = mmap(NULL, NSLOTS * SLOT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	filefd = mkstemp(path);
	if (plain == MAP_FAILED || filefd < 0 || pipe2(pipefd, O_NONBLOCK) ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sock) ||
	    write(filefd, zero, sizeof(zero)) != sizeof(zero)) {
		tap_diag("fuzz-syscalls: child setup: %s", strerror(errno));
		_exit(2);
	}
	unlink(path);
}

static void syscall_batch(void *arg)
{
	uint64_t state = (uint64_t)(uintptr_t)arg;

	child_setup(&state);
	for (int n = 0; n < BATCH; n++) {
		int c = rnd_below(rs, NCALLS);
		uint64_t peek = *rs;
		long ret;

		/* Name the call and its pointer kinds before making it. */
		nkinds_used = 0;
		hb_beat("batch seed %#" PRIx64 " call %d: %s (kinds drawn from state %#" PRIx64 ")",
			(uint64_t)(uintptr_t)arg, n, calls[c].name, peek);
		errno = 0;
		ret = calls[c].fn();
		record(c, ret);
		hb_beat("batch seed %#" PRIx64 " call %d: %s [%s] returned %ld %s",
			(uint64_t)(uintptr_t)arg, n, calls[c].name, kinds_text(), ret,
			ret < 0 ? errno_name(errno) : "");
	}
	_exit(0);
}

/* ---- the two that may end in SIGSEGV ---------------------------------------- */

static volatile int handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static void altstack_child(void *arg)
{
	uint64_t state = (uint64_t)(uintptr_t)arg;
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK };
	stack_t ss = { .ss_size = 8 * SLOT };
	long ret;

	child_setup(&state);
	ss.ss_sp = P(8, NULL, 8 * SLOT);
	hb_beat("sigaltstack [%s] ss_sp %p, then SIGUSR1 on it", kinds_text(), ss.ss_sp);
	ret = syscall(SYS_sigaltstack, P(0, &ss, sizeof(ss)), NULL);
	record(C_SIGALTSTACK, ret);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
}

#ifndef RSEQ_SIG
#define RSEQ_SIG 0x53053053
#endif

static void rseq_child(void *arg)
{
	uint64_t state = (uint64_t)(uintptr_t)arg;
	struct rseq r;
	long ret;

	child_setup(&state);
	memset(&r, 0, sizeof(r));
	r.cpu_id = RSEQ_CPU_ID_UNINITIALIZED;
	/* glibc registered its own area: take it back first. */
	if (__rseq_size)
		syscall(SYS_rseq, (char *)__builtin_thread_pointer() + __rseq_offset, __rseq_size,
			RSEQ_FLAG_UNREGISTER, RSEQ_SIG);
	nkinds_used = 0;
	{
		void *area = P(9, &r, 32);

		hb_beat("rseq [%s] area %p", kinds_text(), area);
		ret = syscall(SYS_rseq, area, 32, 0, RSEQ_SIG);
	}
	record(C_RSEQ, ret);
	sched_yield();		/* the kernel updates the area on the way back */
}

static void account(const struct bounded *r, uint64_t b, int special)
{
	st->children++;
	if (r->timed_out) {
		st->timeouts++;
		st->unkillable += !r->reaped;
	}
	if (exited_zero(r))
		return;
	if (special >= 0 && r->reaped && !r->timed_out && WIFSIGNALED(r->status) &&
	    WTERMSIG(r->status) == SIGSEGV) {
		st->segv[special]++;
		return;
	}
	st->bad++;
	tap_diag("fuzz-syscalls: batch %" PRIu64 ": %s", b, describe(r));
	if (!st->first_bad[0])
		snprintf(st->first_bad, sizeof(st->first_bad), "batch %" PRIu64 ": %s", b,
			 describe(r));
}

static void test_fuzz_syscalls(void)
{
	uint64_t seed = hostile_seed("fuzz-syscalls");
	long seconds = hostile_seconds(45, 600);
	long long end = now_ms() + seconds * 1000;
	struct bounded r;
	long total = 0;

	st = hostile_shared(sizeof(*st));
	tap_diag("fuzz-syscalls: %ld s, %d calls per child", seconds, BATCH);
	for (uint64_t b = 0; now_ms() < end; b++) {
		uint64_t s = batch_seed(seed, b);

		/* One child in 8 registers a sigaltstack or an rseq area, alone. */
		if (b % 8 == 7) {
			int special = (b / 8) % 2 ? C_RSEQ : C_SIGALTSTACK;

			run_bounded(special == C_RSEQ ? rseq_child : altstack_child,
				    (void *)(uintptr_t)s, CALL_MS, &r);
			account(&r, b, special);
		} else {
			run_bounded(syscall_batch, (void *)(uintptr_t)s, CALL_MS, &r);
			account(&r, b, -1);
		}
		if (r.timed_out && !r.reaped)
			break;
	}
	for (size_t c = 0; c < NALL; c++) {
		const char *name = c == C_SIGALTSTACK ? "sigaltstack" : c == C_RSEQ ? "rseq" :
				   calls[c].name;
		char line[600];
		int n = snprintf(line, sizeof(line), "%s: %ld calls:", name, st->calls[c]);

		total += st->calls[c];
		for (int e = 0; e <= MAX_ERRNO && n < (int)sizeof(line) - 40; e++)
			if (st->errs[c][e])
				n += snprintf(line + n, sizeof(line) - n, " %s %ld",
					      e == MAX_ERRNO ? "errno>=140" : errno_name(e),
					      st->errs[c][e]);
		if (st->segv[c])
			n += snprintf(line + n, sizeof(line) - n, "; killed by SIGSEGV %ld",
				      st->segv[c]);
		tap_diag("fuzz-syscalls: %s", line);
	}
	tap_diag("fuzz-syscalls: %ld calls in %ld children", total, st->children);
	tap_ok(total > 0, "fuzz-syscalls: the children made calls (got %ld, want > 0)", total);
	tap_eq_long(st->timeouts, 0, "fuzz-syscalls: every call returned within %d ms: children "
		    "timed out (%ld of them not killable)", CALL_MS, st->unkillable);
	tap_ok(st->bad == 0,
	       "fuzz-syscalls: no child was killed, but for SIGSEGV after a sigaltstack or rseq "
	       "registration (got %ld others; want 0%s%s)", st->bad,
	       st->first_bad[0] ? "; first: " : "", st->first_bad);
}

int main(void)
{
	tap_init();
	hostile_group("fuzz-syscalls", test_fuzz_syscalls);
	return tap_done();
}
