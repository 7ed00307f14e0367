// SPDX-License-Identifier: GPL-2.0
/*
 * Issue 43: holes a reviewer found in the ADI series, each shown against
 * the contract (Documentation/arch/x86/adi.rst, the kernel's side of the
 * checks).  Every check asserts what the kernel should do.  A check that
 * today's kernel fails is printed as "not ok N - ... # TODO issue 43 hole
 * (FLAG)" while FLAG below is 1: TAP's TODO, which scripts/tap-summary.sh
 * counts as skipped, so the suite stays green until the fix lands.  The
 * fix's author sets the flag to 0 (and updates README.md's row); a TODO
 * check that passes prints "ok N - ... # TODO ..." to say its flag can go.
 *
 *   holes-syscall-fresh      a system call through a versioned pointer into
 *                            never-versioned ADI memory, in a fresh process,
 *                            while the version paths are off (first group:
 *                            it waits up to 5 s for paths_on to be 0)
 *   holes-iouring-pin        io_uring pins mismatching memory for good:
 *                            fixed buffers, NO_MMAP rings, buffer rings
 *   holes-iouring-reversion  a fixed buffer re-versioned after it was
 *                            registered (behaviour undecided: reported)
 *   holes-stack-rsp          push, pop, call, ret, enter, leave with a
 *                            matching versioned rsp
 *   holes-step-rewrite       the instruction a step runs is not the one the
 *                            kernel checked
 *   holes-set-version-signal PR_ADI_SET_VERSION on plain memory with
 *                            SIGSEGV ignored or caught
 *   holes-kill-latency       SIGKILL during a huge checked rep movsb / rep
 *                            stosb / read() of versioned memory
 */
#include <pthread.h>
#include <setjmp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>

#include <linux/io_uring.h>

#include "adi_test.h"
#include "hostile.h"

/*
 * The TODO flags: 1 while the kernel fails the check (issue 43), 0 once
 * the fix for it landed (series v2; each failed on the v1 series, see
 * README.md).
 */
/* holes-iouring-pin */
#define HOLE_URING_REG_EFAULT	0 /* IORING_REGISTER_BUFFERS of a mismatching buffer: EFAULT */
#define HOLE_URING_REG_NO_WRITE	0 /* READ_FIXED through it leaves the memory alone */
#define HOLE_URING_NO_MMAP	0 /* IORING_SETUP_NO_MMAP rings on mismatching memory: EFAULT */
#define HOLE_URING_NO_MMAP_MEM	0 /* ... and the memory is left alone */
#define HOLE_URING_PBUF_RING	0 /* IORING_REGISTER_PBUF_RING on mismatching memory: EFAULT */
/*
 * holes-stack-rsp: one flag per instruction, for its three checks (enter
 * without nesting, as adi.rst promises; a nesting enter is refused).
 */
#define HOLE_RSP_PUSH		0
#define HOLE_RSP_POP		0
#define HOLE_RSP_CALL		0
#define HOLE_RSP_RET		0
#define HOLE_RSP_ENTER		0
#define HOLE_RSP_LEAVE		0
/* push m, pop m, call m, and push 8(%rsp) */
#define HOLE_RSP_MEM		0
/* holes-step-rewrite */
#define HOLE_STEP_REWRITE	0 /* a rewritten instruction never runs with the stripped register */
/* holes-set-version-signal */
#define HOLE_SETVER_IGN_ALIVE	0 /* SIG_IGN: the process is not killed */
#define HOLE_SETVER_IGN_EACCES	0 /* SIG_IGN: the call returns EACCES */
#define HOLE_GETVER_IGN_ALIVE	0 /* PR_ADI_GET_VERSION, SIG_IGN: not killed */
#define HOLE_GETVER_IGN_EACCES	0 /* PR_ADI_GET_VERSION, SIG_IGN: EACCES */
/* holes-syscall-fresh */
#define HOLE_FRESH_READ		0 /* read() into the buffer succeeds */
#define HOLE_FRESH_READ_DATA	0 /* ... and the data lands */
#define HOLE_FRESH_WRITE	0 /* write() from the buffer succeeds */
/* holes-kill-latency: one flag per operation */
#define HOLE_KILL_MOVSB		0
#define HOLE_KILL_STOSB		0
#define HOLE_KILL_READ_ZERO	0

#define PAGE		4096UL
#define MIB		(1024UL * 1024)
#define ISSUE		"issue 43 hole"

/* ---- TAP: checks that may be a known hole ------------------------------- */

static void tap_result(int cond, const char *directive, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void tap_result(int cond, const char *directive, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vresult(cond ? "ok" : "not ok", directive, fmt, ap);
	va_end(ap);
}

/*
 * One check of the contract.  With @todo set a failure is "not ok ... #
 * TODO issue 43 hole (FLAG)" and is not counted as failed; a pass says
 * that the flag can go.
 */
__attribute__((format(printf, 4, 5)))
static int hole_check(int todo, const char *flag, int cond, const char *fmt, ...)
{
	char msg[1024], directive[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!todo)
		return tap_ok(cond, "%s", msg);
	if (cond)
		snprintf(directive, sizeof(directive),
			 " # TODO " ISSUE " (%s: passes now, set it to 0)", flag);
	else
		snprintf(directive, sizeof(directive), " # TODO " ISSUE " (%s)", flag);
	tap_result(cond, directive, "%s", msg);
	return cond;
}

#define HOLE(flag, cond, ...) hole_check(flag, #flag, cond, __VA_ARGS__)

/* ---- small helpers ------------------------------------------------------- */

static void drain_lru_batches(void)
{
	FILE *f = fopen("/proc/sys/vm/drop_caches", "w");

	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
}

static const char *signame(int sig)
{
	switch (sig) {
	case 0: return "none";
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGTRAP: return "SIGTRAP";
	case SIGILL: return "SIGILL";
	case SIGKILL: return "SIGKILL";
	default: return strsignal(sig);
	}
}

static const char *segv_code(int code)
{
	static char other[24];

	switch (code) {
	case SI_KERNEL: return "SI_KERNEL";
	case SEGV_MAPERR: return "SEGV_MAPERR";
	case SEGV_ACCERR: return "SEGV_ACCERR";
	case SEGV_ACCADI: return "SEGV_ACCADI";
	case SEGV_ADIDERR: return "SEGV_ADIDERR";
	case SEGV_ADIPERR: return "SEGV_ADIPERR";
	default:
		snprintf(other, sizeof(other), "si_code %d", code);
		return other;
	}
}

/* Bytes of MemAvailable, or 0. */
static unsigned long mem_available(void)
{
	char line[128];
	unsigned long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

static int all_bytes(const void *p, int c, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i] != (unsigned char)c)
			return 0;
	return 1;
}

/* ==== 5. holes-syscall-fresh ============================================= */

/*
 * The paths that take a versioned pointer in system calls sit behind a
 * static key, switched on (in the series' v1) by the first valid
 * set-version or the first checked access.  A fresh process that maps
 * PROT_ADI memory and passes a versioned pointer to a system call before
 * either fails with EFAULT: access_ok() without the key refuses the
 * non-canonical pointer.  The memory has version 0, which matches every
 * pointer: the contract says the call succeeds.
 */
struct fresh_res {
	long paths_fresh, paths_mapped, paths_after;
	long rd_ret, wr_ret, rd2_ret;
	int rd_err, wr_err, rd2_err;
	int rd_landed, wr_right, rd2_landed;
	unsigned int load_got, load_want;
};

static struct fresh_res *fresh;

static void fresh_child(void *arg)
{
	unsigned char pattern[64], pattern2[64], back[64];
	int p[2], q[2];
	char *buf, *vbuf;

	(void)arg;
	memset(pattern, 0xa5, sizeof(pattern));
	memset(pattern2, 0x5a, sizeof(pattern2));
	if (pipe2(p, O_NONBLOCK) || pipe2(q, O_NONBLOCK))
		_exit(2);
	fresh->paths_fresh = adi_counter("paths_on");
	/* The first ADI action of this process: map, never version. */
	buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_ADI,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(3);
	memset(buf, 0x11, PAGE);	/* a plain pointer: not checked */
	vbuf = adi_make_ptr(buf, 3);
	if (write(p[1], pattern, sizeof(pattern)) != sizeof(pattern))
		_exit(4);
	fresh->paths_mapped = adi_counter("paths_on");

	errno = 0;
	fresh->rd_ret = read(p[0], vbuf, sizeof(pattern));
	fresh->rd_err = errno;
	fresh->rd_landed = !memcmp(buf, pattern, sizeof(pattern));

	errno = 0;
	fresh->wr_ret = write(q[1], vbuf, sizeof(pattern));
	fresh->wr_err = errno;
	fresh->wr_right = fresh->wr_ret == sizeof(pattern) &&
			  read(q[0], back, sizeof(back)) == sizeof(back) &&
			  !memcmp(back, buf, sizeof(back));

	/* A checked load through the pointer switches the paths on. */
	fresh->load_got = *(volatile unsigned char *)(vbuf + 1);
	fresh->load_want = *(volatile unsigned char *)(buf + 1);
	fresh->paths_after = adi_counter("paths_on");
	/* Drain what the first read() left behind, then try again. */
	while (read(p[0], back, sizeof(back)) > 0)
		;
	if (write(p[1], pattern2, sizeof(pattern2)) != sizeof(pattern2))
		_exit(5);
	errno = 0;
	fresh->rd2_ret = read(p[0], vbuf + 64, sizeof(pattern2));
	fresh->rd2_err = errno;
	fresh->rd2_landed = !memcmp(buf + 64, pattern2, sizeof(pattern2));
}

static void test_syscall_fresh(void)
{
	const char *what = "fresh process, versioned pointer into never-versioned ADI memory";
	long v, waited = 0;
	struct bounded r;

	if (access("/sys/kernel/debug/adi", F_OK) &&
	    mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) &&
	    access("/sys/kernel/debug/adi", F_OK)) {
		tap_skip("no /sys/kernel/debug/adi", "%s", what);
		return;
	}
	/* The key goes off about 1 s after its last reference. */
	for (v = adi_counter("paths_on"); v != 0 && waited < 5000; waited += 100) {
		if (waited % 1000 == 0)
			drain_lru_batches();
		sleep_ms(100);
		v = adi_counter("paths_on");
	}
	tap_diag("%s: paths_on %ld after waiting %ld ms (in_use %ld)", what, v, waited,
		 adi_counter("in_use"));
	if (v != 0) {
		tap_skip("the version paths did not go off within 5 s: an earlier test holds them",
			 "%s: read(), write() (needs paths_on 0)", what);
		return;
	}
	fresh = hostile_shared(sizeof(*fresh));
	run_bounded(fresh_child, NULL, 2000 * hostile_slow(), &r);
	note_wedged(&r);
	check_finished(what, &r, 2000 * hostile_slow());
	if (!exited_zero(&r)) {
		no_result(&r, "%s: read() and write() results", what);
		return;
	}
	tap_eq_long(fresh->paths_fresh, 0,
		    "%s: paths_on in the child before it maps PROT_ADI memory", what);
	tap_diag("%s: paths_on after the mapping, before the system calls: %ld", what,
		 fresh->paths_mapped);
	HOLE(HOLE_FRESH_READ, fresh->rd_ret == 64,
	     "%s: read() of 64 bytes into it through version 3 (got %ld, %s; want 64)",
	     what, fresh->rd_ret, fresh->rd_ret < 0 ? errno_name(fresh->rd_err) : "no error");
	HOLE(HOLE_FRESH_READ_DATA, fresh->rd_landed,
	     "%s: the bytes read land in the buffer (got %s, want the pipe's 0xa5 bytes)",
	     what, fresh->rd_landed ? "them" : "the old 0x11 bytes");
	HOLE(HOLE_FRESH_WRITE, fresh->wr_ret == 64 && fresh->wr_right,
	     "%s: write() of 64 bytes from it through version 3 (got %ld, %s%s; want 64, the buffer's bytes)",
	     what, fresh->wr_ret, fresh->wr_ret < 0 ? errno_name(fresh->wr_err) : "no error",
	     fresh->wr_ret == 64 && !fresh->wr_right ? ", wrong bytes" : "");
	tap_eq_hex(fresh->load_got, fresh->load_want,
		   "%s: a byte load through the pointer reads the buffer's byte (control)", what);
	tap_eq_long(fresh->paths_after, 1,
		    "%s: after that checked load the paths are on: paths_on (control)", what);
	tap_ok(fresh->rd2_ret == 64 && fresh->rd2_landed,
	       "%s: with the paths on, read() succeeds (control; got %ld, %s, data %s; want 64, landed)",
	       what, fresh->rd2_ret, fresh->rd2_ret < 0 ? errno_name(fresh->rd2_err) : "no error",
	       fresh->rd2_landed ? "landed" : "not landed");
}

/* ==== 1. io_uring ======================================================== */

struct ring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int ring_open(struct ring *rg, unsigned int entries)
{
	struct io_uring_params p;
	size_t sq_len, cq_len;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	rg->fd = syscall(__NR_io_uring_setup, entries, &p);
	if (rg->fd < 0)
		return -1;
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sq_len = cq_len = sq_len > cq_len ? sq_len : cq_len;
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, rg->fd,
		  IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		return -1;
	cq = sq;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
		cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			  rg->fd, IORING_OFF_CQ_RING);
		if (cq == MAP_FAILED)
			return -1;
	}
	rg->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
			PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, rg->fd,
			IORING_OFF_SQES);
	if (rg->sqes == MAP_FAILED)
		return -1;
	rg->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	rg->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	rg->sq_array = (unsigned int *)(sq + p.sq_off.array);
	rg->cq_head = (unsigned int *)(cq + p.cq_off.head);
	rg->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	rg->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	rg->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* Submit one SQE and wait for its CQE: its res, or -1000 - errno. */
static int ring_do(struct ring *rg, const struct io_uring_sqe *sqe)
{
	unsigned int tail = *rg->sq_tail, idx = tail & *rg->sq_mask, head;
	struct io_uring_cqe cqe;

	rg->sqes[idx] = *sqe;
	rg->sq_array[idx] = idx;
	__atomic_store_n(rg->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, rg->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -1000 - errno;
	head = __atomic_load_n(rg->cq_head, __ATOMIC_ACQUIRE);
	if (head == __atomic_load_n(rg->cq_tail, __ATOMIC_ACQUIRE))
		return -1000 - EAGAIN;
	cqe = rg->cqes[head & *rg->cq_mask];
	__atomic_store_n(rg->cq_head, head + 1, __ATOMIC_RELEASE);
	return cqe.res;
}

static int read_fixed(struct ring *rg, int fd, void *addr, unsigned int len)
{
	struct io_uring_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_READ_FIXED;
	sqe.fd = fd;
	sqe.off = 0;
	sqe.addr = (uintptr_t)addr;
	sqe.len = len;
	sqe.buf_index = 0;
	sqe.user_data = 1;
	return ring_do(rg, &sqe);
}

static long uring_register(int fd, unsigned int op, void *arg, unsigned int nr)
{
	return syscall(__NR_io_uring_register, fd, op, arg, nr);
}

/* IORING_REGISTER_BUFFERS of one buffer: what it returned, errno in @err. */
static long register_buffer(struct ring *rg, void *ptr, size_t len, int *err)
{
	struct iovec iov = { .iov_base = ptr, .iov_len = len };
	long ret;

	errno = 0;
	ret = uring_register(rg->fd, IORING_REGISTER_BUFFERS, &iov, 1);
	*err = errno;
	return ret;
}

/* "64", "-14 (EFAULT)", "enter failed: EINVAL" */
static const char *cqe_text(int res)
{
	static char text[64];

	if (res <= -1000)
		snprintf(text, sizeof(text), "io_uring_enter failed: %s", errno_name(-1000 - res));
	else if (res < 0)
		snprintf(text, sizeof(text), "%d (%s)", res, errno_name(-res));
	else
		snprintf(text, sizeof(text), "%d", res);
	return text;
}

/* A memfd of one page of 0xa5, the file READ_FIXED reads. */
static int pattern_file(void)
{
	unsigned char page[PAGE];
	int fd = memfd_create("adi-holes-src", 0);

	memset(page, 0xa5, sizeof(page));
	if (fd < 0 || pwrite(fd, page, sizeof(page), 0) != (ssize_t)sizeof(page))
		return -1;
	return fd;
}

struct uring_res {
	int setup_err;			/* io_uring_setup failed: errno */
	long reg_ret; int reg_err;	/* mismatching IORING_REGISTER_BUFFERS */
	int read_res;			/* READ_FIXED after it */
	int untouched;			/* the version-5 memory kept its bytes */
	long ctl_reg_ret; int ctl_reg_err;
	int ctl_read_res, ctl_landed;
	long nommap_ret; int nommap_err; int nommap_untouched;
	long nommap_ctl_ret; int nommap_ctl_err;
	long pbuf_ret; int pbuf_err;
	long pbuf_ctl_ret; int pbuf_ctl_err;
	/* holes-iouring-reversion */
	long rv_reg_ret; int rv_reg_err;
	long rv_setver_ret;
	long rv_version_after;
	int rv_read_res, rv_landed;
};

static struct uring_res *ures;

static void uring_pin_child(void *arg)
{
	struct io_uring_buf_reg breg;
	struct io_uring_params p;
	char *buf, *rings, *plain, *pbuf;
	struct ring rg;
	int fd, rfd;

	(void)arg;
	fd = pattern_file();
	if (fd < 0)
		_exit(2);
	buf = adi_region(PAGE, 5);
	memset(buf, 0x11, PAGE);
	if (ring_open(&rg, 4)) {
		ures->setup_err = errno ? errno : EINVAL;
		return;
	}

	/* A version-9 pointer over version-5 memory. */
	hb_beat("IORING_REGISTER_BUFFERS, version 9 over version 5");
	ures->reg_ret = register_buffer(&rg, adi_make_ptr(buf, 9), PAGE, &ures->reg_err);
	hb_beat("READ_FIXED through it");
	ures->read_res = read_fixed(&rg, fd, adi_make_ptr(buf, 9), 64);
	ures->untouched = all_bytes(buf, 0x11, 64);
	if (ures->reg_ret == 0)
		uring_register(rg.fd, IORING_UNREGISTER_BUFFERS, NULL, 0);

	/* Control: the matching version. */
	hb_beat("IORING_REGISTER_BUFFERS, version 5");
	memset(buf, 0x11, PAGE);
	ures->ctl_reg_ret = register_buffer(&rg, adi_make_ptr(buf, 5), PAGE,
					    &ures->ctl_reg_err);
	ures->ctl_read_res = read_fixed(&rg, fd, adi_make_ptr(buf, 5), 64);
	ures->ctl_landed = all_bytes(buf, 0xa5, 64);
	if (ures->ctl_reg_ret == 0)
		uring_register(rg.fd, IORING_UNREGISTER_BUFFERS, NULL, 0);

	/* IORING_SETUP_NO_MMAP: the rings in the caller's memory, pinned. */
	hb_beat("io_uring_setup(IORING_SETUP_NO_MMAP), version 9 over version 5");
	rings = adi_region(PAGE, 5);
	memset(rings, 0x11, PAGE);
	plain = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (plain == MAP_FAILED)
		_exit(3);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_NO_MMAP;
	p.cq_off.user_addr = (uintptr_t)adi_make_ptr(rings, 9);
	p.sq_off.user_addr = (uintptr_t)plain;
	errno = 0;
	rfd = syscall(__NR_io_uring_setup, 4, &p);
	ures->nommap_ret = rfd;
	ures->nommap_err = errno;
	ures->nommap_untouched = all_bytes(rings, 0x11, PAGE);
	if (rfd >= 0)
		close(rfd);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_NO_MMAP;
	p.cq_off.user_addr = (uintptr_t)adi_make_ptr(rings, 5);
	p.sq_off.user_addr = (uintptr_t)(plain + PAGE);
	errno = 0;
	rfd = syscall(__NR_io_uring_setup, 4, &p);
	ures->nommap_ctl_ret = rfd;
	ures->nommap_ctl_err = errno;
	if (rfd >= 0)
		close(rfd);

	/* A provided-buffer ring in the caller's memory, pinned. */
	hb_beat("IORING_REGISTER_PBUF_RING, version 9 over version 5");
	pbuf = adi_region(PAGE, 5);
	memset(&breg, 0, sizeof(breg));
	breg.ring_addr = (uintptr_t)adi_make_ptr(pbuf, 9);
	breg.ring_entries = 8;
	breg.bgid = 1;
	errno = 0;
	ures->pbuf_ret = uring_register(rg.fd, IORING_REGISTER_PBUF_RING, &breg, 1);
	ures->pbuf_err = errno;
	breg.ring_addr = (uintptr_t)adi_make_ptr(pbuf, 5);
	breg.bgid = 2;
	errno = 0;
	ures->pbuf_ctl_ret = uring_register(rg.fd, IORING_REGISTER_PBUF_RING, &breg, 1);
	ures->pbuf_ctl_err = errno;
}

static const char *ret_text(long ret, int err)
{
	static char text[2][48];
	static int i;

	i ^= 1;
	if (ret < 0)
		snprintf(text[i], sizeof(text[i]), "-1 (%s)", errno_name(err));
	else
		snprintf(text[i], sizeof(text[i]), "%ld (success)", ret);
	return text[i];
}

static void test_uring_pin(void)
{
	const char *what = "io_uring";
	struct bounded r;

	ures = hostile_shared(sizeof(*ures));
	run_bounded(uring_pin_child, NULL, 5000 * hostile_slow(), &r);
	note_wedged(&r);
	check_finished("io_uring pins", &r, 10000 * hostile_slow());
	if (!exited_zero(&r)) {
		no_result(&r, "%s: the pins' results", what);
		return;
	}
	if (ures->setup_err) {
		tap_skip("io_uring_setup failed", "%s: %s", what, errno_name(ures->setup_err));
		return;
	}
	HOLE(HOLE_URING_REG_EFAULT, ures->reg_ret == -1 && ures->reg_err == EFAULT,
	     "%s: IORING_REGISTER_BUFFERS of a version-9 pointer over version-5 memory "
	     "(got %s, want -1 (EFAULT), as O_DIRECT and vmsplice pins)",
	     what, ret_text(ures->reg_ret, ures->reg_err));
	HOLE(HOLE_URING_REG_NO_WRITE, ures->untouched,
	     "%s: IORING_OP_READ_FIXED through that buffer leaves the version-5 memory alone "
	     "(got CQE res %s, memory %s; want it unchanged)",
	     what, cqe_text(ures->read_res),
	     ures->untouched ? "unchanged" : "overwritten with the file's bytes");
	tap_ok(ures->ctl_reg_ret == 0 && ures->ctl_read_res == 64 && ures->ctl_landed,
	       "%s: control: the same buffer through a version-5 pointer registers and "
	       "READ_FIXED fills it (got register %s, CQE res %s, data %s; want 0, 64, landed)",
	       what, ret_text(ures->ctl_reg_ret, ures->ctl_reg_err), cqe_text(ures->ctl_read_res),
	       ures->ctl_landed ? "landed" : "not landed");
	HOLE(HOLE_URING_NO_MMAP, ures->nommap_ret == -1 && ures->nommap_err == EFAULT,
	     "%s: io_uring_setup(IORING_SETUP_NO_MMAP) with the CQ ring at a version-9 pointer "
	     "over version-5 memory (got %s, want -1 (EFAULT))",
	     what, ret_text(ures->nommap_ret, ures->nommap_err));
	HOLE(HOLE_URING_NO_MMAP_MEM, ures->nommap_untouched,
	     "%s: ... and the version-5 memory is left alone (got %s, want unchanged)",
	     what, ures->nommap_untouched ? "unchanged" : "the kernel wrote its ring header there");
	tap_ok(ures->nommap_ctl_ret >= 0,
	       "%s: control: the same rings through a version-5 pointer (got %s, want a ring fd)",
	       what, ret_text(ures->nommap_ctl_ret, ures->nommap_ctl_err));
	HOLE(HOLE_URING_PBUF_RING, ures->pbuf_ret == -1 && ures->pbuf_err == EFAULT,
	     "%s: IORING_REGISTER_PBUF_RING at a version-9 pointer over version-5 memory "
	     "(got %s, want -1 (EFAULT))", what, ret_text(ures->pbuf_ret, ures->pbuf_err));
	tap_ok(ures->pbuf_ctl_ret == 0,
	       "%s: control: the same buffer ring through a version-5 pointer (got %s, want 0)",
	       what, ret_text(ures->pbuf_ctl_ret, ures->pbuf_ctl_err));
}

static void uring_reversion_child(void *arg)
{
	struct ring rg;
	char *buf;
	int fd;

	(void)arg;
	fd = pattern_file();
	if (fd < 0)
		_exit(2);
	buf = adi_region(PAGE, 5);
	memset(buf, 0x11, PAGE);
	if (ring_open(&rg, 4)) {
		ures->setup_err = errno ? errno : EINVAL;
		return;
	}
	hb_beat("IORING_REGISTER_BUFFERS, version 5");
	ures->rv_reg_ret = register_buffer(&rg, adi_make_ptr(buf, 5), PAGE, &ures->rv_reg_err);
	/* What free() does: the memory gets another version. */
	hb_beat("re-version to 6");
	ures->rv_setver_ret = adi_set_version(buf, PAGE, 6);
	ures->rv_version_after = adi_get_version(buf);
	hb_beat("READ_FIXED through the old pointer");
	ures->rv_read_res = read_fixed(&rg, fd, adi_make_ptr(buf, 5), 64);
	ures->rv_landed = all_bytes(buf, 0xa5, 64);
	hb_beat("unregister and close");
	uring_register(rg.fd, IORING_UNREGISTER_BUFFERS, NULL, 0);
	close(rg.fd);
}

static void test_uring_reversion(void)
{
	const char *what = "io_uring fixed buffer re-versioned after registration";
	struct bounded r;

	ures = hostile_shared(sizeof(*ures));
	run_bounded(uring_reversion_child, NULL, 5000 * hostile_slow(), &r);
	note_wedged(&r);
	check_finished(what, &r, 10000 * hostile_slow());
	if (!exited_zero(&r)) {
		no_result(&r, "%s: results", what);
		return;
	}
	if (ures->setup_err) {
		tap_skip("io_uring_setup failed", "%s: %s", what, errno_name(ures->setup_err));
		return;
	}
	tap_ok(ures->rv_reg_ret == 0 && ures->rv_setver_ret == 0 && ures->rv_version_after == 6,
	       "%s: set-up: register through version 5 (got %s), re-version to 6 (got %ld, "
	       "version now %ld; want 0, 0, 6)", what, ret_text(ures->rv_reg_ret, ures->rv_reg_err),
	       ures->rv_setver_ret, ures->rv_version_after);
	/*
	 * Undecided when written: say what happened, assert nothing but the
	 * bound above.  (The series' v2 adi.rst decides "read and written as
	 * registered", as arm64 MTE does: then this can become a check.)
	 */
	tap_diag("%s: READ_FIXED through the version-5 pointer into now version-6 memory: "
		 "CQE res %s, memory %s (contract undecided; issue 43)", what,
		 cqe_text(ures->rv_read_res),
		 ures->rv_landed ? "WRITTEN with the file's bytes" : "unchanged");
}

/* ==== 2. holes-stack-rsp ================================================= */

/*
 * Each function takes a struct stk in rdi, saves rsp (and rbp), points
 * rsp (or rbp) into ADI memory through a versioned pointer, runs one
 * instruction that uses the stack, records rsp, rbp, rax, then restores
 * its own stack.  A signal is caught on the alternate stack and
 * siglongjmp()s back.
 */
struct stk {
	uint64_t vsp;		/*  0: versioned stack pointer */
	uint64_t saved_sp;	/*  8 */
	uint64_t saved_bp;	/* 16 */
	uint64_t out_sp;	/* 24 */
	uint64_t out_bp;	/* 32 */
	uint64_t out_ax;	/* 40 */
	uint64_t in_val;	/* 48: what push pushes, or rbp for enter */
	uint64_t vbp;		/* 56: rbp for leave */
	uint64_t target;	/* 64: call m's target */
};

void stk_push(struct stk *s);
void stk_pop(struct stk *s);
void stk_call(struct stk *s);
void stk_ret(struct stk *s);
void stk_enter(struct stk *s);
void stk_leave(struct stk *s);
void stk_pushm(struct stk *s);
void stk_pushm_sp(struct stk *s);
void stk_popm(struct stk *s);
void stk_callm(struct stk *s);
void stk_pushm_rip(struct stk *s);
void stk_callm_rip(struct stk *s);
extern char stk_call_ret[], stk_ret_target[], stk_callm_ret[], stk_callm_rip_ret[];

__asm__(".pushsection .text\n"
	".globl stk_push\n"
	"stk_push:\n"
	"	mov %rsp, 8(%rdi)\n"
	"	mov 48(%rdi), %rax\n"
	"	mov 0(%rdi), %rsp\n"
	"	push %rax\n"
	"	mov %rsp, 24(%rdi)\n"
	"	mov 8(%rdi), %rsp\n"
	"	ret\n"
	".globl stk_pop\n"
	"stk_pop:\n"
	"	mov %rsp, 8(%rdi)\n"
	"	xor %eax, %eax\n"
	"	mov 0(%rdi), %rsp\n"
	"	pop %rax\n"
	"	mov %rsp, 24(%rdi)\n"
	"	mov %rax, 40(%rdi)\n"
	"	mov 8(%rdi), %rsp\n"
	"	ret\n"
	".globl stk_call\n"
	"stk_call:\n"
	"	mov %rsp, 8(%rdi)\n"
	"	mov 0(%rdi), %rsp\n"
	"	call stk_call_ret\n"
	".globl stk_call_ret\n"
	"stk_call_ret:\n"
	"	mov %rsp, 24(%rdi)\n"
	"	mov 8(%rdi), %rsp\n"
	"	ret\n"
	".globl stk_ret\n"
	"stk_ret:\n"
	"	mov %rsp, 8(%rdi)\n"
	"	mov 0(%rdi), %rsp\n"
	"	ret\n"
	".globl stk_ret_target\n"
	"stk_ret_target:\n"
	"	mov %rsp, 24(%rdi)\n"
	"	mov 8(%rdi), %rsp\n"
	"	ret\n"
	".globl stk_enter\n"
	"stk_enter:\n"
	"	mov %rsp, 8(%rdi)\n"
	"	mov %rbp, 16(%rdi)\n"
	"	mov 48(%rdi), %rbp\n"
	"	mov 0(%rdi), %rsp\n"
	"	enter $16, $0\n"
	"	mov %rsp, 24(%rdi)\n"
	"	mov %rbp, 32(%rdi)\n"
	"	mov 16(%rdi), %rbp\n"
	"	mov 8(%rdi), %rsp\n"
	"	ret\n"
	".globl stk_leave\n"
	"stk_leave:\n"
	"	mov %rsp, 8(%rdi)\n"
	"	mov %rbp, 16(%rdi)\n"
	"	mov 56(%rdi), %rbp\n"
	"	leave\n"
	"	mov %rsp, 24(%rdi)\n"
	"	mov %rbp, 32(%rdi)\n"
	"	mov 16(%rdi), %rbp\n"
	"	mov 8(%rdi), %rsp\n"
	"	ret\n"
	/* The memory forms: a plain operand through rdi, or rsp itself. */
	".globl stk_pushm\n"
	"stk_pushm:\n"
	"	mov %rsp, 8(%rdi)\n"
	"	mov 0(%rdi), %rsp\n"
	"	pushq 48(%rdi)\n"
	"	mov %rsp, 24(%rdi)\n"
	"	mov 8(%rdi), %rsp\n"
	"	ret\n"
	".globl stk_pushm_sp\n"
	"stk_pushm_sp:\n"
	"	mov %rsp, 8(%rdi)\n"
	"	mov 0(%rdi), %rsp\n"
	"	pushq 8(%rsp)\n"
	"	mov %rsp, 24(%rdi)\n"
	"	mov 8(%rdi), %rsp\n"
	"	ret\n"
	".globl stk_popm\n"
	"stk_popm:\n"
	"	mov %rsp, 8(%rdi)\n"
	"	mov 0(%rdi), %rsp\n"
	"	popq 40(%rdi)\n"
	"	mov %rsp, 24(%rdi)\n"
	"	mov 8(%rdi), %rsp\n"
	"	ret\n"
	".globl stk_callm\n"
	"stk_callm:\n"
	"	mov %rsp, 8(%rdi)\n"
	"	mov 0(%rdi), %rsp\n"
	"	call *64(%rdi)\n"
	".globl stk_callm_ret\n"
	"stk_callm_ret:\n"
	"	mov %rsp, 24(%rdi)\n"
	"	mov 8(%rdi), %rsp\n"
	"	ret\n"
	/*
	 * RIP-relative operands: a step out of line runs the instruction
	 * elsewhere, where the same displacement reaches other memory.
	 */
	".globl stk_pushm_rip\n"
	"stk_pushm_rip:\n"
	"	mov %rsp, 8(%rdi)\n"
	"	mov 0(%rdi), %rsp\n"
	"	pushq stk_rip_value(%rip)\n"
	"	mov %rsp, 24(%rdi)\n"
	"	mov 8(%rdi), %rsp\n"
	"	ret\n"
	".globl stk_callm_rip\n"
	"stk_callm_rip:\n"
	"	mov %rsp, 8(%rdi)\n"
	"	mov 0(%rdi), %rsp\n"
	"	call *stk_rip_target(%rip)\n"
	".globl stk_callm_rip_ret\n"
	"stk_callm_rip_ret:\n"
	"	mov %rsp, 24(%rdi)\n"
	"	mov 8(%rdi), %rsp\n"
	"	ret\n"
	".popsection\n"
	".pushsection .data\n"
	".balign 8\n"
	"stk_rip_value:\n"
	"	.quad 0x1122334455667788\n"
	"stk_rip_target:\n"
	"	.quad stk_callm_rip_ret\n"
	".popsection\n");

enum stk_op {
	OP_PUSH, OP_POP, OP_CALL, OP_RET, OP_ENTER, OP_LEAVE,
	OP_PUSHM, OP_PUSHM_SP, OP_POPM, OP_CALLM, OP_PUSHM_RIP, OP_CALLM_RIP, NR_OPS
};

static const char *const stk_names[NR_OPS] = {
	"push %rax", "pop %rax", "call rel32", "ret", "enter $16,$0", "leave",
	"push 48(%rdi)", "push 8(%rsp)", "pop 40(%rdi)", "call *64(%rdi)",
	"push x(%rip)", "call *x(%rip)",
};

struct stk_res {
	int completed;
	int sig, code;
	uint64_t addr;
	struct stk s;
	uint64_t mem_below, mem_at;	/* the words at top - 8 and top */
};

static struct stk_res *sres;
static sigjmp_buf stk_jump;

static void stk_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	sres->sig = sig;
	sres->code = si->si_code;
	sres->addr = (uintptr_t)si->si_addr;
	siglongjmp(stk_jump, 1);
}

#define STK_VER		5
#define STK_TOP		2048	/* the stack's top, in its ADI page */
#define STK_VALUE	0x1122334455667788ULL

static void stk_child(void *arg)
{
	enum stk_op op = *(enum stk_op *)arg;
	struct sigaction sa = { .sa_sigaction = stk_signal,
				.sa_flags = SA_SIGINFO | SA_ONSTACK };
	static void (*const fn[NR_OPS])(struct stk *) = {
		stk_push, stk_pop, stk_call, stk_ret, stk_enter, stk_leave,
		stk_pushm, stk_pushm_sp, stk_popm, stk_callm, stk_pushm_rip, stk_callm_rip,
	};
	stack_t ss;
	char *page;
	uint64_t *top;
	struct stk *s = &sres->s;

	ss.ss_sp = malloc(64 * 1024);
	ss.ss_size = 64 * 1024;
	ss.ss_flags = 0;
	if (!ss.ss_sp || sigaltstack(&ss, NULL))
		_exit(2);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	page = adi_region(PAGE, STK_VER);
	memset(page, 0, PAGE);
	top = (uint64_t *)(page + STK_TOP);	/* plain pointer: unchecked */
	memset(s, 0, sizeof(*s));
	s->vsp = (uintptr_t)adi_make_ptr(top, STK_VER);
	s->in_val = STK_VALUE;
	switch (op) {
	case OP_POP:
		top[0] = STK_VALUE;
		break;
	case OP_RET:
		top[0] = (uintptr_t)stk_ret_target;
		break;
	case OP_LEAVE:
		top[0] = STK_VALUE;
		s->vbp = s->vsp;
		break;
	case OP_POPM:
		top[0] = STK_VALUE;
		break;
	case OP_PUSHM_SP:
		top[1] = STK_VALUE;	/* 8(%rsp) */
		break;
	case OP_CALLM:
		s->target = (uintptr_t)stk_callm_ret;
		break;
	default:
		break;
	}
	hb_beat("%s with rsp %#llx", stk_names[op], (unsigned long long)s->vsp);
	if (!sigsetjmp(stk_jump, 1)) {
		fn[op](s);
		sres->completed = 1;
	}
	sres->mem_below = top[-1];
	sres->mem_at = top[0];
}

static void test_stack_rsp(void)
{
	static const int flags[NR_OPS] = {
		HOLE_RSP_PUSH, HOLE_RSP_POP, HOLE_RSP_CALL, HOLE_RSP_RET, HOLE_RSP_ENTER,
		HOLE_RSP_LEAVE, HOLE_RSP_MEM, HOLE_RSP_MEM, HOLE_RSP_MEM, HOLE_RSP_MEM,
		HOLE_RSP_MEM, HOLE_RSP_MEM,
	};
	static const char *const flag_names[NR_OPS] = {
		"HOLE_RSP_PUSH", "HOLE_RSP_POP", "HOLE_RSP_CALL", "HOLE_RSP_RET",
		"HOLE_RSP_ENTER", "HOLE_RSP_LEAVE", "HOLE_RSP_MEM", "HOLE_RSP_MEM",
		"HOLE_RSP_MEM", "HOLE_RSP_MEM", "HOLE_RSP_MEM", "HOLE_RSP_MEM",
	};

	/* Per instruction: rsp's move, what it leaves where, and its value. */
	enum stk_from { FROM_BELOW, FROM_AX, FROM_BP, FROM_COMPLETED };
	const struct {
		long sp;
		const char *what;
		uint64_t value;
		enum stk_from from;
	} want[NR_OPS] = {
		[OP_PUSH] = { -8, "the word below the old top", STK_VALUE, FROM_BELOW },
		[OP_POP] = { 8, "rax", STK_VALUE, FROM_AX },
		[OP_CALL] = { -8, "the return address pushed", (uintptr_t)stk_call_ret,
			      FROM_BELOW },
		[OP_RET] = { 8, "the return target reached (rsp recorded there)", 1,
			     FROM_COMPLETED },
		[OP_ENTER] = { -8 - 16, "the old rbp pushed", STK_VALUE, FROM_BELOW },
		[OP_LEAVE] = { 8, "rbp popped", STK_VALUE, FROM_BP },
		[OP_PUSHM] = { -8, "the word pushed from memory", STK_VALUE, FROM_BELOW },
		[OP_PUSHM_SP] = { -8, "the word pushed from memory", STK_VALUE, FROM_BELOW },
		[OP_POPM] = { 8, "the word popped into memory", STK_VALUE, FROM_AX },
		[OP_CALLM] = { -8, "the return address pushed", (uintptr_t)stk_callm_ret,
			       FROM_BELOW },
		[OP_PUSHM_RIP] = { -8, "the word pushed from memory", STK_VALUE, FROM_BELOW },
		[OP_CALLM_RIP] = { -8, "the return address pushed",
				   (uintptr_t)stk_callm_rip_ret, FROM_BELOW },
	};

	sres = hostile_shared(sizeof(*sres));
	for (enum stk_op op = 0; op < NR_OPS; op++) {
		const char *name = stk_names[op];
		uint64_t vsp, want_sp, want_bp, want_mem, got_mem;
		const char *mem_what;
		char what[96], sigtext[128];
		struct bounded r;
		int todo = flags[op];
		const char *flag = flag_names[op];

		snprintf(what, sizeof(what), "%s with a matching versioned rsp", name);
		memset(sres, 0, sizeof(*sres));
		run_bounded(stk_child, &op, 2000 * hostile_slow(), &r);
		note_wedged(&r);
		check_finished(what, &r, 2000 * hostile_slow());
		if (!exited_zero(&r)) {
			hole_check(todo, flag, 0, "%s: completes, not run: the child %s", what,
				   describe(&r));
			continue;
		}
		if (sres->sig == SIGSEGV)
			snprintf(sigtext, sizeof(sigtext), "SIGSEGV %s at %#llx",
				 segv_code(sres->code), (unsigned long long)sres->addr);
		else
			snprintf(sigtext, sizeof(sigtext), "%s si_code %d at %#llx",
				 signame(sres->sig), sres->code, (unsigned long long)sres->addr);
		hole_check(todo, flag, sres->completed && !sres->sig,
			   "%s: completes without a signal (got %s, want completed)", what,
			   sres->completed ? "completed" : sigtext);
		vsp = sres->s.vsp;
		want_sp = vsp + want[op].sp;
		want_bp = op == OP_ENTER ? vsp - 8 : op == OP_LEAVE ? STK_VALUE : 0;
		mem_what = want[op].what;
		want_mem = want[op].value;
		got_mem = want[op].from == FROM_BELOW ? sres->mem_below :
			  want[op].from == FROM_AX ? sres->s.out_ax :
			  want[op].from == FROM_BP ? sres->s.out_bp : (uint64_t)sres->completed;
		hole_check(todo, flag, sres->completed && got_mem == want_mem,
			   "%s: %s (got %#llx%s, want %#llx)", what, mem_what,
			   (unsigned long long)got_mem, sres->completed ? "" : ", not completed",
			   (unsigned long long)want_mem);
		if (op == OP_ENTER || op == OP_LEAVE)
			hole_check(todo, flag,
				   sres->completed && sres->s.out_sp == want_sp &&
				   sres->s.out_bp == want_bp,
				   "%s: rsp and rbp afterwards, versions kept (got %#llx, %#llx%s; "
				   "want %#llx, %#llx)", what, (unsigned long long)sres->s.out_sp,
				   (unsigned long long)sres->s.out_bp,
				   sres->completed ? "" : ", not completed",
				   (unsigned long long)want_sp, (unsigned long long)want_bp);
		else
			hole_check(todo, flag, sres->completed && sres->s.out_sp == want_sp,
				   "%s: rsp afterwards, version kept (got %#llx%s, want %#llx)",
				   what, (unsigned long long)sres->s.out_sp,
				   sres->completed ? "" : ", not completed",
				   (unsigned long long)want_sp);
	}
}

/* ==== 3. holes-step-rewrite ============================================== */

/*
 * Thread A calls a one-instruction function with rax a version-5 pointer
 * to block 0 (version 5): lock xadd %rbx,(%rax), which the kernel checks
 * and then single-steps with rax stripped (lock: not emulated).  Thread B
 * swaps the function's page (mmap(MAP_FIXED) of one of two memfd pages,
 * as evex-rewrite does: whole pages, never torn bytes) for
 * ds: mov %rbx,0x40(%rax), a store to block 1, which has version 7.  Run
 * with the version in rax, that store is a mismatch (SEGV_ADIDERR);
 * run with rax stripped, it is an unchecked store into block 1.  If the
 * swap lands between the kernel's decode of the xadd and the CPU's
 * fetch after the #GP, the CPU runs the store with the stripped rax.
 * Block 1 must never change.
 */
static const uint8_t form_xadd[8] = { 0xf0, 0x48, 0x0f, 0xc1, 0x18, 0xc3, 0xcc, 0xcc };
/*
 * The store gets a ds: prefix (no effect in 64-bit mode) to be as long
 * as the xadd: both end at the same ret, so that a swap between the
 * instruction and the next one never runs the middle of the other form.
 */
static const uint8_t form_store[8] = { 0x3e, 0x48, 0x89, 0x58, 0x40, 0xc3, 0xcc, 0xcc };

struct rw_res {
	long calls, xadds, holes, wrong_rax;
	long segv_adi, segv_other, sigtrap, other;
	int last_code, other_signo;
	long swaps;
	uint64_t hole_value;
	/* The first SIGTRAP: where and with what. */
	int trap_code;
	uint64_t trap_rip, trap_rax, trap_flags;
};

static struct rw_res *rwres;
static uint8_t *rw_code;
static int rw_fd;
static uint64_t *rw_data;
static volatile int rw_stop;
static sigjmp_buf rw_jump;

static void rw_signal(int sig, siginfo_t *si, void *ctx)
{
	if (sig == SIGSEGV && (si->si_code == SEGV_ADIDERR || si->si_code == SEGV_ADIPERR)) {
		rwres->segv_adi++;
	} else if (sig == SIGSEGV) {
		rwres->segv_other++;
		rwres->last_code = si->si_code;
	} else if (sig == SIGTRAP) {
		ucontext_t *uc = ctx;

		if (!rwres->sigtrap++) {
			rwres->trap_code = si->si_code;
			rwres->trap_rip = uc->uc_mcontext.gregs[REG_RIP];
			rwres->trap_rax = uc->uc_mcontext.gregs[REG_RAX];
			rwres->trap_flags = uc->uc_mcontext.gregs[REG_EFL];
		}
	} else {
		rwres->other++;
		rwres->other_signo = sig;
	}
	siglongjmp(rw_jump, 1);
}

static int rw_map(unsigned int i)
{
	void *p = mmap(rw_code, PAGE, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED, rw_fd,
		       i * PAGE);

	return p == MAP_FAILED ? -1 : 0;
}

static void *rw_swapper(void *arg)
{
	unsigned int i = 0;

	(void)arg;
	while (!rw_stop) {
		if (rw_map(++i & 1))
			break;
		rwres->swaps++;
	}
	rw_map(0);
	return NULL;
}

static void rw_child(void *arg)
{
	struct sigaction sa = { .sa_sigaction = rw_signal, .sa_flags = SA_SIGINFO | SA_NODEFER };
	void *vptr = adi_make_ptr(rw_data, 5);
	long long end = now_ms() + *(long *)arg * 1000;
	pthread_t t;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	if (pthread_create(&t, NULL, rw_swapper, NULL))
		_exit(5);
	while (now_ms() < end) {
		uint64_t rax = (uintptr_t)vptr, rbx = 1;

		hb_beat("call the slot");
		if (sigsetjmp(rw_jump, 1))
			goto look;
		__asm__ volatile("sub $128, %%rsp\n\tcall *%[fn]\n\tadd $128, %%rsp"
				 : "+b"(rbx), "+a"(rax) : [fn] "r"(rw_code)
				 : "memory", "cc");
		rwres->calls++;
		if (rax != (uintptr_t)vptr)
			rwres->wrong_rax++;
look:
		/* Block 1 through a plain pointer: unchecked. */
		if (__atomic_load_n(&rw_data[8], __ATOMIC_RELAXED)) {
			rwres->holes++;
			rwres->hole_value = rw_data[8];
			rw_data[8] = 0;
		}
	}
	rw_stop = 1;
	pthread_join(t, NULL);
	rwres->xadds = (long)rw_data[0];
}

static void test_step_rewrite(void)
{
	const char *what = "step-rewrite";
	long seconds = hostile_seconds(5, 60);
	struct bounded r;

	rwres = hostile_shared(sizeof(*rwres));
	rw_fd = memfd_create("adi-holes-forms", 0);
	rw_data = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_ADI,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rw_fd < 0 || ftruncate(rw_fd, 2 * PAGE) || rw_data == MAP_FAILED ||
	    adi_set_version(rw_data, PAGE, 5) || adi_set_version(rw_data + 8, 64, 7)) {
		tap_ok(0, "%s: set-up (forms memfd, ADI page): %s", what, strerror(errno));
		return;
	}
	if (pwrite(rw_fd, form_xadd, 8, 0) != 8 || pwrite(rw_fd, form_store, 8, PAGE) != 8) {
		tap_ok(0, "%s: set-up: pwrite: %s", what, strerror(errno));
		return;
	}
	rw_code = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_SHARED, rw_fd, 0);
	if (rw_code == MAP_FAILED) {
		tap_ok(0, "%s: set-up: mmap of the forms: %s", what, strerror(errno));
		return;
	}
	memset(rw_data, 0, PAGE);
	run_bounded(rw_child, &seconds, seconds * 1000 + 20000 * hostile_slow(), &r);
	note_wedged(&r);
	check_finished(what, &r, seconds * 1000 + 20000 * hostile_slow());
	tap_diag("%s: %ld s, %ld page swaps, %ld calls returned, %ld xadds done, "
		 "%ld mismatches reported (the store form, run whole), %ld stores with rax stripped",
		 what, seconds, rwres->swaps, rwres->calls, rwres->xadds, rwres->segv_adi,
		 rwres->holes);
	tap_ok(rwres->segv_adi > 0 && rwres->xadds > 0,
	       "%s: both forms ran: the store was refused as a mismatch and the xadd stepped "
	       "(got %ld mismatches, %ld xadds; want > 0 each)", what, rwres->segv_adi,
	       rwres->xadds);
	HOLE(HOLE_STEP_REWRITE, rwres->holes == 0,
	     "%s: the store that replaced the stepped xadd never ran with rax stripped: "
	     "stores into the version-7 block through a version-5 pointer without a signal "
	     "(got %ld, last value %#llx; want 0)", what, rwres->holes,
	     (unsigned long long)rwres->hole_value);
	tap_eq_long(rwres->wrong_rax, 0, "%s: rax came back with its version", what);
	tap_eq_long(rwres->segv_other, 0, "%s: no other SIGSEGV (last %s)", what,
		    segv_code(rwres->last_code));
	if (rwres->sigtrap)
		tap_diag("%s: first SIGTRAP: si_code %d, rip %#llx (slot%+lld), rax %#llx, eflags %#llx",
			 what, rwres->trap_code, (unsigned long long)rwres->trap_rip,
			 (long long)(rwres->trap_rip - (uintptr_t)rw_code),
			 (unsigned long long)rwres->trap_rax, (unsigned long long)rwres->trap_flags);
	tap_eq_long(rwres->sigtrap, 0, "%s: no SIGTRAP (a step left behind)", what);
	tap_eq_long(rwres->other, 0, "%s: no other signal (last %d)", what, rwres->other_signo);
}

/* ==== 4. holes-set-version-signal ======================================== */

enum sv_mode { SV_IGNORE, SV_HANDLER, SV_HANDLER_SPLIT, SV_GET_IGNORE, SV_BLOCKED };

struct sv_res {
	long ret;
	int err;
	int handled, code;
	uint64_t addr, want_addr;
	long adi_version_after;
};

static struct sv_res *svres;

static void sv_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	svres->handled++;
	svres->code = si->si_code;
	svres->addr = (uintptr_t)si->si_addr;
}

static void sv_child(void *arg)
{
	enum sv_mode mode = *(enum sv_mode *)arg;
	struct sigaction sa = { .sa_sigaction = sv_signal, .sa_flags = SA_SIGINFO };
	char *two, *start;
	sigset_t set;

	/* Page 0 ADI (version 4), page 1 plain. */
	two = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (two == MAP_FAILED || mprotect(two, PAGE, PROT_READ | PROT_WRITE | PROT_ADI) ||
	    adi_set_version(two, PAGE, 4))
		_exit(2);
	start = mode == SV_HANDLER_SPLIT ? two : two + PAGE;
	svres->want_addr = (uintptr_t)(two + PAGE);
	sigemptyset(&sa.sa_mask);
	if (mode == SV_IGNORE || mode == SV_GET_IGNORE) {
		signal(SIGSEGV, SIG_IGN);
	} else if (mode == SV_BLOCKED) {
		sigemptyset(&set);
		sigaddset(&set, SIGSEGV);
		sigprocmask(SIG_BLOCK, &set, NULL);
	} else {
		sigaction(SIGSEGV, &sa, NULL);
	}
	hb_beat("prctl on plain memory, mode %d", mode);
	errno = 0;
	if (mode == SV_GET_IGNORE)
		svres->ret = prctl(PR_ADI_GET_VERSION, (unsigned long)start, 0, 0, 0);
	else
		svres->ret = prctl(PR_ADI_SET_VERSION, (unsigned long)start,
				   mode == SV_HANDLER_SPLIT ? 2 * PAGE : PAGE, 5, 0);
	svres->err = errno;
	svres->adi_version_after = adi_get_version(two);
}

static void test_set_version_signal(void)
{
	static const char *const names[] = {
		[SV_IGNORE] = "PR_ADI_SET_VERSION on plain memory, SIGSEGV ignored",
		[SV_HANDLER] = "PR_ADI_SET_VERSION on plain memory, SIGSEGV caught",
		[SV_HANDLER_SPLIT] = "PR_ADI_SET_VERSION over an ADI page and a plain one, SIGSEGV caught",
		[SV_GET_IGNORE] = "PR_ADI_GET_VERSION on plain memory, SIGSEGV ignored",
		[SV_BLOCKED] = "PR_ADI_SET_VERSION on plain memory, SIGSEGV blocked",
	};

	svres = hostile_shared(sizeof(*svres));
	for (enum sv_mode mode = SV_IGNORE; mode <= SV_BLOCKED; mode++) {
		const char *what = names[mode];
		int ign = mode == SV_IGNORE || mode == SV_GET_IGNORE;
		int alive_flag = mode == SV_GET_IGNORE ? HOLE_GETVER_IGN_ALIVE :
				 HOLE_SETVER_IGN_ALIVE;
		int eacces_flag = mode == SV_GET_IGNORE ? HOLE_GETVER_IGN_EACCES :
				  HOLE_SETVER_IGN_EACCES;
		const char *alive_name = mode == SV_GET_IGNORE ? "HOLE_GETVER_IGN_ALIVE" :
					 "HOLE_SETVER_IGN_ALIVE";
		const char *eacces_name = mode == SV_GET_IGNORE ? "HOLE_GETVER_IGN_EACCES" :
					  "HOLE_SETVER_IGN_EACCES";
		struct bounded r;
		int ok;

		memset(svres, 0, sizeof(*svres));
		svres->ret = -2;
		run_bounded(sv_child, &mode, 2000 * hostile_slow(), &r);
		note_wedged(&r);
		if (mode == SV_BLOCKED) {
			/* adi.rst says nothing of a blocked SIGSEGV: report it. */
			tap_diag("%s: the child %s; prctl returned %s", what, describe(&r),
				 exited_zero(&r) ? ret_text(svres->ret, svres->err) : "nothing");
			continue;
		}
		ok = exited_zero(&r);
		hole_check(ign ? alive_flag : 0, alive_name, ok,
			   "%s: the process lives on and ends in time (got %s, want exit 0)",
			   what, describe(&r));
		hole_check(ign ? eacces_flag : 0, eacces_name,
			   ok && svres->ret == -1 && svres->err == EACCES,
			   "%s: the call fails with EACCES (got %s, want -1 (EACCES))", what,
			   ok ? ret_text(svres->ret, svres->err) : "no result, the process died");
		if (ign) {
			tap_ok(!ok || !svres->handled, "%s: no handler ran (got %d)", what,
			       svres->handled);
			continue;
		}
		tap_ok(ok && svres->handled == 1 && svres->code == SEGV_ACCADI &&
		       svres->addr == svres->want_addr,
		       "%s: the handler ran once with SEGV_ACCADI at the first plain address "
		       "(got %d, %s at %#llx; want 1, SEGV_ACCADI at %#llx)", what,
		       svres->handled, segv_code(svres->code), (unsigned long long)svres->addr,
		       (unsigned long long)svres->want_addr);
		if (mode == SV_HANDLER_SPLIT)
			tap_eq_long(ok ? svres->adi_version_after : -1, 4,
				    "%s: the ADI page's version is unchanged", what);
	}
}

/* ==== 6. holes-kill-latency ============================================== */

/*
 * A checked rep movsb or rep stosb is done whole in the #GP that checks
 * it (adi_fixup_string()): first the whole range is checked, then the
 * kernel copies.  A child loops in such an instruction of up to 1 GiB
 * (or in read() from /dev/zero into versioned memory) and is SIGKILLed
 * 300 ms after it starts; it must be dead within 1 s.  Dying with that
 * much memory costs time of its own under TCG (freeing a GiB of shmem
 * takes longer than a second there, and each versioned page's record
 * goes too), so the same child, with the same memory and versions but
 * spinning in user space instead, is killed first: the bound is 1 s
 * beyond its time to die, which leaves only the work the kernel does
 * in the exception after the SIGKILL.
 */
enum kill_kind { KILL_MOVSB, KILL_STOSB, KILL_READ_ZERO };

struct kill_arg {
	enum kill_kind kind;
	int spin;		/* the control: spin in user space instead */
	int once;		/* one instruction (or read()), timed, then exit */
	size_t size;
};

/* Where the looping child is: shared with the parent. */
struct kill_prog {
	volatile long long start_ms, first_done_ms;
	volatile long iters;
};

static struct kill_prog *kprog;

/*
 * Fault in and version [p, p + len) to 5, a chunk at a time, with a
 * heartbeat per chunk, holding the deadline off (hb_hold()): the parent's
 * 300 ms count from the end of it, for the child and for its control
 * alike.  (Counted from each chunk, a slow kernel killed the control in
 * its first chunk, with nothing versioned yet, and its time to die was
 * then no measure of the other's: 43 ms against 2843 ms on the debug
 * kernel, whose exit with 344 MiB versioned takes about 3 s.)
 * @also, when not NULL, is a second mapping of the same memory: fault it
 * in too (reading), so that every page of both is present and the check
 * takes its lockless path, as in a program that uses its memory.
 */
static void prepare(char *p, char *also, size_t len)
{
	const size_t chunk = 2 * MIB;

	hb_hold(1);
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		hb_beat("prepare %zu MiB of %zu", off / MIB, len / MIB);
		if (adi_set_version(p + off, n, 5))
			_exit(7);
		if (also)
			for (size_t i = 0; i < n; i += PAGE)
				(void)*(volatile char *)(also + off + i);
	}
	hb_hold(0);
}

static void kill_done_one(const struct kill_arg *a)
{
	if (!kprog->iters)
		kprog->first_done_ms = now_ms();
	kprog->iters++;
	if (a->once)
		_exit(0);
}

static void kill_child(void *v)
{
	const struct kill_arg *a = v;
	int prot = PROT_READ | PROT_WRITE | PROT_ADI;
	char *dst, *src = NULL, *vdst, *vsrc = NULL;

	if (a->kind == KILL_MOVSB) {
		/* One memfd mapped twice: a copy of a->size bytes in a->size of memory. */
		int fd = memfd_create("adi-holes-movsb", 0);

		if (fd < 0 || ftruncate(fd, a->size))
			_exit(2);
		dst = mmap(NULL, a->size, prot, MAP_SHARED, fd, 0);
		src = mmap(NULL, a->size, prot, MAP_SHARED, fd, 0);
		if (dst == MAP_FAILED || src == MAP_FAILED)
			_exit(3);
	} else {
		dst = mmap(NULL, a->size, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (dst == MAP_FAILED)
			_exit(3);
	}
	prepare(dst, src, a->size);
	vdst = adi_make_ptr(dst, 5);
	if (src)
		vsrc = adi_make_ptr(src, 5);
	if (a->spin) {
		hb_beat("spin in user space over %zu MiB of versioned memory", a->size / MIB);
		kprog->start_ms = now_ms();
		for (;;)
			__asm__ volatile("pause" : : : "memory");
	}
	switch (a->kind) {
	case KILL_MOVSB:
		hb_beat("rep movsb of %zu MiB", a->size / MIB);
		kprog->start_ms = now_ms();
		for (;;) {
			void *d = vdst, *s = vsrc;
			size_t n = a->size;

			__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
			kill_done_one(a);
		}
	case KILL_STOSB:
		hb_beat("rep stosb of %zu MiB", a->size / MIB);
		kprog->start_ms = now_ms();
		for (;;) {
			void *d = vdst;
			size_t n = a->size;

			__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(0x5a) : "memory");
			kill_done_one(a);
		}
	default: {
		int fd = open("/dev/zero", O_RDONLY);

		if (fd < 0)
			_exit(4);
		hb_beat("read() of %zu MiB from /dev/zero", a->size / MIB);
		kprog->start_ms = now_ms();
		for (;;) {
			if (read(fd, vdst, a->size) < 0)
				_exit(5);
			kill_done_one(a);
		}
	}
	}
}

/*
 * run_bounded() with the looping child, SIGKILL after 300 ms.  When the
 * child is still there after run_bounded()'s 3 s, print its kernel stack
 * and keep waiting (up to 120 s): the time it takes is the finding, and
 * a child that dies late leaves the group usable.
 */
static void kill_run(struct kill_arg *a, struct bounded *r, const char *what)
{
	memset((void *)kprog, 0, sizeof(*kprog));
	run_bounded(kill_child, a, KILL_AFTER_MS, r);
	if (r->timed_out && !r->reaped) {
		char path[64], line[512] = "";
		long long t = now_ms();
		FILE *f;

		/* "R": still running in the kernel; "D": waiting; "Z": tearing down. */
		snprintf(path, sizeof(path), "/proc/%d/stat", r->pid);
		f = fopen(path, "r");
		if (!f || !fgets(line, sizeof(line), f))
			snprintf(line, sizeof(line), "(unreadable)");
		if (f)
			fclose(f);
		line[strcspn(line, "\n")] = 0;
		tap_diag("%s: still there %d ms after SIGKILL: /proc/PID/stat %.120s", what,
			 REAP_LIMIT_MS, line);
		if (reap_within(r->pid, 120000, &r->status)) {
			r->reaped = 1;
			r->kill_ms = REAP_LIMIT_MS + (now_ms() - t);
		}
	}
	note_wedged(r);
	if (a->spin)
		return;
	if (kprog->start_ms && kprog->iters)
		tap_diag("%s: %ld done before the SIGKILL, the first in %lld ms", what,
			 kprog->iters, kprog->first_done_ms - kprog->start_ms);
	else if (kprog->start_ms)
		tap_diag("%s: the SIGKILL came during the first one", what);
}

static void kill_one(enum kill_kind kind, size_t size, int flag, const char *flag_name)
{
	static const char *const names[] = {
		[KILL_MOVSB] = "rep movsb", [KILL_STOSB] = "rep stosb",
		[KILL_READ_ZERO] = "read() from /dev/zero",
	};
	struct kill_arg adi = { kind, 0, 0, size }, spin = { kind, 1, 0, size };
	struct bounded r, c;
	char what[128], ctl[64];
	long want;

	snprintf(what, sizeof(what), "%s of %zu MiB through version-5 pointers on version-5 memory",
		 names[kind], size / MIB);
	snprintf(ctl, sizeof(ctl), "%s's memory, spinning in user space", names[kind]);
	/* What dying with that much versioned memory costs anyway. */
	kill_run(&spin, &c, ctl);
	tap_diag("%s (control): %s", ctl, describe(&c));
	want = KILL_WANT_MS + (c.reaped && c.kill_ms > 0 ? c.kill_ms : 0);
	if (group_wedged) {
		hole_check(flag, flag_name, 0, "%s: SIGKILL after %d ms ends it within %ld ms "
			   "(not run: an earlier child could not be killed)", what,
			   KILL_AFTER_MS, want);
		return;
	}
	kill_run(&adi, &r, what);
	tap_diag("%s: time to die after SIGKILL: %ld ms (control, spinning in user space: %ld ms)",
		 what, r.kill_ms, c.kill_ms);
	hole_check(flag, flag_name,
		   r.timed_out && r.reaped && r.kill_ms <= want &&
		   WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL,
		   "%s: SIGKILL %d ms in ends it within %d ms of the time the same child "
		   "spinning in user space takes to die "
		   "(got dead %ld ms after SIGKILL (%s), want still running at %d ms, then dead "
		   "of SIGKILL within %ld ms)", what, KILL_AFTER_MS, KILL_WANT_MS, r.kill_ms,
		   describe(&r), KILL_AFTER_MS, want);
	if (r.reaped && r.kill_ms > want && !group_wedged && getenv("ADI_HOLES_TIME_ONE")) {
		/*
		 * What one such instruction costs, start to end, for the fix's
		 * author (ADI_HOLES_TIME_ONE=1: a minute or more under TCG).
		 */
		struct bounded once;

		adi.once = 1;
		memset((void *)kprog, 0, sizeof(*kprog));
		run_bounded(kill_child, &adi, 300000, &once);
		note_wedged(&once);
		if (exited_zero(&once) && kprog->iters)
			tap_diag("%s: one of them, not killed, takes %lld ms", what,
				 kprog->first_done_ms - kprog->start_ms);
		else
			tap_diag("%s: one of them, not killed: %s", what, describe(&once));
	}
}

static void test_kill_latency(void)
{
	unsigned long avail = mem_available(), cap = avail / 2;
	size_t big = 1024 * MIB, read_size = 768 * MIB;

	kprog = hostile_shared(sizeof(*kprog));
	/* As much as the guest allows, up to the sizes the issue names. */
	if (big > cap)
		big = cap & ~(2 * MIB - 1);
	if (read_size > cap)
		read_size = cap & ~(2 * MIB - 1);
	tap_diag("kill-latency: MemAvailable %lu MiB: rep movsb and rep stosb of %zu MiB, "
		 "read() of %zu MiB (the full 1024 and 768 MiB need about 2.2 GiB)",
		 avail / MIB, big / MIB, read_size / MIB);
	if (big < 64 * MIB) {
		tap_skip("less than 128 MiB available", "kill-latency");
		return;
	}
	kill_one(KILL_MOVSB, big, HOLE_KILL_MOVSB, "HOLE_KILL_MOVSB");
	kill_one(KILL_STOSB, big, HOLE_KILL_STOSB, "HOLE_KILL_STOSB");
	kill_one(KILL_READ_ZERO, read_size, HOLE_KILL_READ_ZERO, "HOLE_KILL_READ_ZERO");
}

int main(void)
{
	tap_init();
	/* First: it needs the version paths off (it waits up to 5 s). */
	hostile_group("holes-syscall-fresh", test_syscall_fresh);
	hostile_group("holes-iouring-pin", test_uring_pin);
	hostile_group("holes-iouring-reversion", test_uring_reversion);
	hostile_group("holes-stack-rsp", test_stack_rsp);
	hostile_group("holes-step-rewrite", test_step_rewrite);
	hostile_group("holes-set-version-signal", test_set_version_signal);
	hostile_group("holes-kill-latency", test_kill_latency);
	return tap_done();
}
