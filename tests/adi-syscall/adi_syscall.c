// SPDX-License-Identifier: GPL-2.0
/*
 * The adi-syscall suite: versioned pointers passed to system calls.
 *
 * Every test works in an arena of ADI memory: a buffer of version GOOD
 * between blocks of version FENCE.  For each system call a pointer with
 * the buffer's version must work and move the right bytes; a pointer with
 * another version must fail with EFAULT and leave every byte of the arena
 * as it was; a buffer that runs from the buffer into the fence must not
 * complete, and the fence must stay untouched.  The kernel's own counters
 * (/sys/kernel/debug/adi/uaccess_*) show that ADI, not some other check,
 * refused the access.
 */
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/loop.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "adi_test.h"

#define GOOD		5	/* the buffer's version */
#define WRONG		7	/* a version the buffer does not have */
#define FENCE		9	/* the blocks around it */
#define ARENA		(4 * 4096)
#define BUF_OFF		1024
#define BUF_LEN		512

static char *arena;		/* untagged: reads and writes are not checked */

static char *buf_raw(void)
{
	return arena + BUF_OFF;
}

static void *good(size_t off)
{
	return adi_make_ptr(buf_raw() + off, GOOD);
}

static void *wrong(size_t off)
{
	return adi_make_ptr(buf_raw() + off, WRONG);
}

/* A pointer @before bytes before the end of the buffer: runs into the fence. */
static void *straddling(size_t before)
{
	return good(BUF_LEN - before);
}

/* The arena, in the parent: every group gets a copy through fork. */
static void arena_setup(void)
{
	size_t i;

	arena = adi_map(ARENA);
	must_set_version(arena, ARENA, FENCE);
	must_set_version(buf_raw(), BUF_LEN, GOOD);
	for (i = 0; i < ARENA; i++)
		arena[i] = (char)(i * 7 + 3);
}

static char snapshot[ARENA];

static void arena_snapshot(void)
{
	memcpy(snapshot, arena, ARENA);
}

/* Bytes of the arena that differ from the snapshot, outside [from, to). */
static size_t arena_changed_outside(size_t from, size_t to)
{
	size_t i, n = 0;

	for (i = 0; i < ARENA; i++)
		if ((i < from || i >= to) && arena[i] != snapshot[i])
			n++;
	return n;
}

/* Bytes of the whole arena that changed since the snapshot: want 0. */
static long arena_changed(void)
{
	return (long)arena_changed_outside(0, 0);
}

/* Bytes of the fence after the buffer that changed since the snapshot: want 0. */
static long fence_changed(void)
{
	return (long)arena_changed_outside(0, BUF_OFF + BUF_LEN);
}

static long mismatches(void)
{
	return adi_counter("uaccess_mismatches");
}

static long checks(void)
{
	return adi_counter("uaccess_checks");
}

static void fill_pattern(char *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (char)(seed + i * 13);
}

/*
 * A step that only sets a check up (data into a pipe, a file or a socket,
 * a process attribute): when it fails, what follows would test nothing or
 * block on an empty pipe, so the group stops here, and tap_group() reports
 * the exit as a failed test after this diagnostic.
 */
static void setup_eq(long got, long want, const char *what)
{
	int err = errno;	/* first: the diagnostic says why the call failed */

	if (got == want)
		return;
	tap_diag("%s: got %ld (errno %s), want %ld: the group stops here", what, got,
		 tap_errname(err), want);
	exit(1);
}

/*
 * O_NONBLOCK on or off for the read end of a pipe, around one call that
 * would otherwise block on an empty pipe: when a bug earlier on has
 * emptied it, that call must fail (EAGAIN) and say so, not hang the suite
 * until its timeout.  errno is kept: the caller's check reads the errno
 * of the call in between.
 */
static void set_nonblock(int fd, int on)
{
	int err = errno, flags = fcntl(fd, F_GETFL);

	if (flags >= 0)
		flags = fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK);
	setup_eq(flags < 0 ? -1 : 0, 0, on ? "setup: set O_NONBLOCK" : "setup: clear O_NONBLOCK");
	errno = err;
}

/*
 * An open() that the checks after it need: when it failed, one failed
 * test that says why, and 1, so that the caller skips what depends on
 * the descriptor.  Call it right after the open(): it reads errno first.
 */
static int open_failed(int fd, const char *what)
{
	int err = errno;	/* first: the message says why open() failed */

	if (fd >= 0)
		return 0;
	tap_ok(0, "%s: got %d (errno %s), want a descriptor", what, fd, tap_errname(err));
	return 1;
}

/*
 * Local checks in the style of tap.h's tap_eq_long(): each prints one TAP
 * line that ends in what was seen and what was wanted.
 */

/*
 * One transfer, one claim: the call returned @len (its return value @ret,
 * passed once) and the @len bytes at @got are those at @want.  As in
 * "ret == len && !memcmp()", the bytes are compared only after a full
 * count; the message says which of the two failed, and how (tap.h's
 * tap_mem_diff(), as tap_eq_mem()).
 */
__attribute__((format(printf, 5, 6)))
static int expect_xfer(long ret, const void *got, const void *want, size_t len,
		       const char *fmt, ...)
{
	int err = errno;	/* first: for the message when @ret is -1 */
	char tail[192], bytes[128];
	va_list ap;
	int ok;

	if (ret != (long)len) {
		snprintf(tail, sizeof(tail), "got %ld%s%s%s bytes, want %zu", ret,
			 ret == -1 ? " (" : "", ret == -1 ? tap_errname(err) : "",
			 ret == -1 ? ")" : "", len);
		ok = 0;
	} else {
		ok = tap_mem_diff(bytes, sizeof(bytes), got, want, len) < 0;
		snprintf(tail, sizeof(tail), "got %ld bytes, %s", ret, bytes);
	}
	va_start(ap, fmt);
	ok = tap_ok_tail(ok, tail, fmt, ap);
	va_end(ap);
	return ok;
}

/*
 * A transfer that ran into a mismatching block: it stops before the
 * block, so it returns a short count (bytes before it), or EFAULT when
 * nothing was done.  One claim with two allowed outcomes: the message
 * says which came back.  Call it right after the transfer, with its
 * return value: it reads errno first.
 */
__attribute__((format(printf, 4, 5)))
static int expect_stopped_short(long ret, long full, long before, const char *fmt, ...)
{
	int err = errno;	/* first: nothing below may change it first */
	char tail[160];
	va_list ap;
	int ok;

	ok = (ret == -1 && err == EFAULT) || (ret >= 0 && ret < full && ret <= before);
	snprintf(tail, sizeof(tail), "got %ld%s%s%s, want -1 (EFAULT) or a count 0..%ld of %ld",
		 ret, ret == -1 ? " (" : "", ret == -1 ? tap_errname(err) : "",
		 ret == -1 ? ")" : "", before, full);
	va_start(ap, fmt);
	ok = tap_ok_tail(ok, tail, fmt, ap);
	va_end(ap);
	return ok;
}

static void test_read_write_pipe(void)
{
	char data[200], out[200];
	long m0, c0, c1, ret;
	int p[2], avail = -1;

	if (pipe(p))
		exit(1);
	fill_pattern(data, sizeof(data), 1);

	c0 = checks();
	setup_eq(write(p[1], data, sizeof(data)), sizeof(data), "read: setup write into the pipe");
	expect_xfer(read(p[0], good(0), sizeof(data)), buf_raw(), data, sizeof(data),
		    "read: into a matching versioned buffer");
	c1 = checks();	/* read once: the value checked is the value printed */
	tap_grew(c0, c1, "read: the kernel checked the versions (uaccess_checks)");
	ret = write(p[1], good(0), sizeof(data));
	/* Only after a full write: a read of the empty pipe would block. */
	if (tap_eq_long(ret, sizeof(data),
			"write: from a matching versioned buffer: bytes written"))
		expect_xfer(read(p[0], out, sizeof(out)), out, data, sizeof(data),
			    "write: from a matching versioned buffer: read back from the pipe");

	arena_snapshot();
	m0 = mismatches();
	/* The reads below block on an empty pipe: the data must be there. */
	setup_eq(write(p[1], data, sizeof(data)), sizeof(data),
		 "read: setup write into the pipe, for the mismatching read");
	ret = read(p[0], wrong(0), sizeof(data));
	tap_errno(ret, EFAULT, "read: mismatching version fails with EFAULT");
	tap_eq_long(arena_changed(), 0, "read: mismatching version: arena bytes changed");
	tap_grew(m0, mismatches(), "read: counted as an ADI mismatch (uaccess_mismatches)");
	/* Not blocking: if the read above wrongly took the data, this fails (EAGAIN). */
	set_nonblock(p[0], 1);
	ret = read(p[0], out, sizeof(out));
	set_nonblock(p[0], 0);
	expect_xfer(ret, out, data, sizeof(out), "read: the data stays in the pipe after EFAULT");

	ret = write(p[1], wrong(0), sizeof(data));
	tap_errno(ret, EFAULT, "write: mismatching version fails with EFAULT");
	/* A failed FIONREAD leaves avail at -1: say so rather than "got -1". */
	if (ioctl(p[0], FIONREAD, &avail))
		tap_ok(0, "write: mismatching version writes nothing: FIONREAD failed (errno %s)",
		       tap_errname(errno));
	else
		tap_eq_long(avail, 0,
			    "write: mismatching version writes nothing (bytes queued, FIONREAD)");

	arena_snapshot();
	setup_eq(write(p[1], data, 128), 128,
		 "read: setup write into the pipe, for the straddling read");
	ret = read(p[0], straddling(64), 128);
	expect_stopped_short(ret, 128, 64,
			     "read: buffer straddling into another version stops before it");
	tap_eq_long(fence_changed(), 0,
		    "read: buffer straddling into another version: fence bytes changed");
	tap_eq_mem(buf_raw() + BUF_LEN - 64, data, ret > 0 ? (size_t)ret : 0,
		   "read: the %ld bytes before the other version are right", ret > 0 ? ret : 0);
}

static void test_pread_pwrite_file(void)
{
	char path[] = "/tmp/adi-syscall-XXXXXX", out[BUF_LEN];
	long ret, m0;
	int fd;

	alarm(60);	/* a fault-in/retry loop that never ends fails the test */
	fd = mkstemp(path);
	if (fd < 0)
		exit(1);
	unlink(path);
	if (ftruncate(fd, 16384))
		exit(1);

	ret = pwrite(fd, good(0), BUF_LEN, 4096);
	if (tap_eq_long(ret, BUF_LEN, "pwrite: from a matching versioned buffer: bytes written"))
		expect_xfer(pread(fd, out, BUF_LEN, 4096), out, buf_raw(), BUF_LEN,
			    "pwrite: from a matching versioned buffer: read back from the file");
	fill_pattern(out, BUF_LEN, 2);
	setup_eq(pwrite(fd, out, BUF_LEN, 0), BUF_LEN, "pread: setup pwrite into the file");
	expect_xfer(pread(fd, good(0), BUF_LEN, 0), buf_raw(), out, BUF_LEN,
		    "pread: a file into a matching versioned buffer");

	arena_snapshot();
	m0 = mismatches();
	ret = pread(fd, wrong(0), BUF_LEN, 0);
	tap_errno(ret, EFAULT, "pread: mismatching version fails with EFAULT");
	tap_eq_long(arena_changed(), 0, "pread: mismatching version: arena bytes changed");
	tap_grew(m0, mismatches(), "pread: counted as an ADI mismatch (uaccess_mismatches)");
	ret = pwrite(fd, wrong(0), BUF_LEN, 8192);
	tap_errno(ret, EFAULT, "pwrite: mismatching version fails with EFAULT");
	expect_xfer(pread(fd, out, 16, 8192), out, (char[16]){ 0 }, 16,
		    "pwrite: mismatch leaves the file unchanged (read back, zeros)");

	/* generic_perform_write() faults in and retries: it must end. */
	ret = pwrite(fd, straddling(64), 256, 12288);
	expect_stopped_short(ret, 256, 64,
			     "pwrite: buffer straddling into another version stops before it");
	arena_snapshot();
	ret = pread(fd, straddling(128), 256, 0);
	expect_stopped_short(ret, 256, 128,
			     "pread: buffer straddling into another version stops before it");
	tap_eq_long(fence_changed(), 0,
		    "pread: buffer straddling into another version: fence bytes changed");
	close(fd);
}

static void test_readv_writev(void)
{
	struct iovec *iov = good(256);	/* the iovec array is versioned too */
	char data[200], out[200];
	long ret;
	int p[2];

	if (pipe(p))
		exit(1);
	fill_pattern(data, sizeof(data), 3);
	iov[0] = (struct iovec){ good(0), 100 };
	iov[1] = (struct iovec){ good(128), 100 };

	setup_eq(write(p[1], data, 200), 200, "readv: setup write into the pipe");
	ret = readv(p[0], iov, 2);
	tap_eq_long(ret, 200, "readv: versioned iovecs in a versioned array: bytes read");
	tap_eq_mem(buf_raw(), data, 100,
		   "readv: versioned iovecs in a versioned array: the first iovec's bytes");
	tap_eq_mem(buf_raw() + 128, data + 100, 100,
		   "readv: versioned iovecs in a versioned array: the second iovec's bytes");
	ret = writev(p[1], iov, 2);
	/* Only after a full write: a read of the empty pipe would block. */
	if (tap_eq_long(ret, 200, "writev: versioned iovecs in a versioned array: bytes written"))
		expect_xfer(read(p[0], out, 200), out, data, 200,
			    "writev: versioned iovecs in a versioned array: read back");

	arena_snapshot();
	/*
	 * The pipe is empty: the iovec array is read before the pipe, so
	 * O_NONBLOCK changes nothing when it is refused; when it is wrongly
	 * accepted, readv() fails with EAGAIN instead of blocking for ever.
	 */
	set_nonblock(p[0], 1);
	ret = readv(p[0], adi_make_ptr(iov, WRONG), 2);
	set_nonblock(p[0], 0);
	tap_errno(ret, EFAULT, "readv: iovec array through a mismatching pointer: EFAULT");
	tap_eq_long(arena_changed(), 0,
		    "readv: iovec array through a mismatching pointer: arena bytes changed");
	iov[1].iov_base = wrong(128);
	arena_snapshot();
	setup_eq(write(p[1], data, 200), 200, "readv: setup write into the pipe, second iovec");
	ret = readv(p[0], iov, 2);
	expect_stopped_short(ret, 200, 100, "readv: second iovec mismatching: stops before it");
	tap_eq_long(arena_changed_outside(BUF_OFF, BUF_OFF + 100), 0,
		    "readv: second iovec mismatching: bytes changed outside the first iovec");
	ret = writev(p[1], iov, 2);
	expect_stopped_short(ret, 200, 100, "writev: second iovec mismatching: stops before it");
}

static void test_send_recv(void)
{
	char data[300], out[300];
	long ret;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		exit(1);
	fill_pattern(data, sizeof(data), 4);
	setup_eq(send(sv[0], data, 300, 0), 300, "recv: setup send into the socket");
	expect_xfer(recv(sv[1], good(0), 300, 0), buf_raw(), data, 300,
		    "recv: into a matching versioned buffer");
	ret = send(sv[0], good(0), 300, 0);
	/* Only after a full send: a blocking recv of nothing would hang. */
	if (tap_eq_long(ret, 300, "send: from a matching versioned buffer: bytes sent"))
		expect_xfer(recv(sv[1], out, 300, 0), out, data, 300,
			    "send: from a matching versioned buffer: received on the other end");

	arena_snapshot();
	ret = send(sv[0], wrong(0), 300, MSG_DONTWAIT);
	tap_errno(ret, EFAULT, "send: mismatching version fails with EFAULT");
	ret = recv(sv[1], out, 300, MSG_DONTWAIT);
	tap_errno(ret, EAGAIN, "send: mismatching version sends nothing (the other end: EAGAIN)");
	/* The recv() calls below block when nothing is queued. */
	setup_eq(send(sv[0], data, 300, 0), 300, "recv: setup send, for the mismatching recv");
	ret = recv(sv[1], wrong(0), 300, 0);
	tap_errno(ret, EFAULT, "recv: mismatching version fails with EFAULT");
	tap_eq_long(arena_changed(), 0, "recv: mismatching version: arena bytes changed");
	ret = recv(sv[1], out, 300, MSG_DONTWAIT);
	expect_xfer(ret, out, data, 300, "recv: the data is still queued after EFAULT");
	setup_eq(send(sv[0], data, 200, 0), 200, "recv: setup send, for the straddling recv");
	ret = recv(sv[1], straddling(64), 200, 0);
	expect_stopped_short(ret, 200, 64,
			     "recv: buffer straddling into another version stops before it");
	tap_eq_long(fence_changed(), 0,
		    "recv: buffer straddling into another version: fence bytes changed");
}

static void test_getcwd_uname_strings(void)
{
	struct utsname local, *uts = good(0);
	char cwd[256], path[] = "/tmp/adi-syscall-path";
	long ret;
	int fd, err;

	if (chdir("/tmp") || !getcwd(cwd, sizeof(cwd)))
		exit(1);
	ret = syscall(SYS_getcwd, good(0), 128);
	tap_eq_long(ret, (long)strlen(cwd) + 1,
		    "getcwd: into a matching versioned buffer: return value (strlen + 1)");
	tap_eq_str(buf_raw(), cwd, "getcwd: into a matching versioned buffer: the path");
	arena_snapshot();
	ret = syscall(SYS_getcwd, wrong(0), 128);
	tap_errno(ret, EFAULT, "getcwd: mismatching version: EFAULT");
	tap_eq_long(arena_changed(), 0, "getcwd: mismatching version: arena bytes changed");
	ret = syscall(SYS_getcwd, straddling(2), 128);
	tap_errno(ret, EFAULT, "getcwd: result straddling into another version: EFAULT");
	tap_eq_long(fence_changed(), 0,
		    "getcwd: result straddling into another version: fence bytes changed");

	uname(&local);
	_Static_assert(sizeof(struct utsname) <= BUF_LEN, "utsname fits the buffer");
	ret = uname(uts);
	tap_eq_long(ret, 0, "uname: into a matching versioned struct: return value");
	tap_eq_str(((struct utsname *)buf_raw())->release, local.release,
		   "uname: into a matching versioned struct: the release");
	arena_snapshot();
	ret = uname(adi_make_ptr(uts, WRONG));
	tap_errno(ret, EFAULT, "uname: mismatching version: EFAULT");
	tap_eq_long(arena_changed(), 0, "uname: mismatching version: arena bytes changed");
	ret = uname(straddling(64));
	tap_errno(ret, EFAULT, "uname: struct straddling into another version: EFAULT");
	tap_eq_long(fence_changed(), 0,
		    "uname: struct straddling into another version: fence bytes changed");

	/* Strings: strncpy_from_user() reads word by word past the NUL. */
	strcpy(buf_raw(), path);
	fd = open(good(0), O_CREAT | O_RDWR, 0600);
	err = errno;	/* before anything else can change it */
	tap_ok(fd >= 0,
	       "open: path in a matching versioned string: got fd %d (errno %s), want >= 0",
	       fd, fd < 0 ? tap_errname(err) : "0");
	tap_eq_long(access(path, F_OK), 0,
		    "open: path in a matching versioned string: the file exists (access)");
	if (fd >= 0)
		close(fd);
	ret = open(wrong(0), O_RDONLY);
	tap_errno(ret, EFAULT, "open: path through a mismatching version: EFAULT");
	strcpy(buf_raw() + BUF_LEN - 8, "/tmp/ad");	/* 7 chars and the NUL */
	ret = open(straddling(8), O_RDONLY);
	tap_errno(ret, ENOENT, "open: string ending at the block's end: read, ENOENT");
	memcpy(buf_raw() + BUF_LEN - 8, "/tmp/adi", 8);	/* no NUL: runs on */
	ret = open(straddling(8), O_RDONLY);
	tap_errno(ret, EFAULT, "open: string running into another version: EFAULT");
	unlink(path);
}

static void test_zero_fill(void)
{
	long ret, nonzero = 0;
	size_t i;
	int fd = open("/dev/zero", O_RDONLY);

	if (open_failed(fd, "read /dev/zero: open /dev/zero"))
		return;
	arena_snapshot();
	ret = read(fd, good(0), BUF_LEN);
	for (i = 0; i < BUF_LEN; i++)
		nonzero += !!buf_raw()[i];
	tap_eq_long(ret, BUF_LEN, "read /dev/zero: into a matching versioned buffer: bytes read");
	tap_eq_long(nonzero, 0,
		    "read /dev/zero: clears a matching versioned buffer (bytes not zero)");
	tap_eq_long(fence_changed(), 0,
		    "read /dev/zero: matching versioned buffer: fence bytes changed");
	arena_snapshot();
	ret = read(fd, wrong(0), BUF_LEN);
	tap_errno(ret, EFAULT, "read /dev/zero: mismatching version: EFAULT");
	tap_eq_long(arena_changed(), 0,
		    "read /dev/zero: mismatching version: arena bytes changed");
	memset(buf_raw(), 0x55, BUF_LEN);
	arena_snapshot();
	ret = read(fd, straddling(192), 256);
	expect_stopped_short(ret, 256, 192,
			     "read /dev/zero: straddling buffer stops before the other version");
	tap_eq_long(fence_changed(), 0, "read /dev/zero: straddling buffer: fence bytes changed");
	close(fd);
}

static long futex(void *uaddr, int op, int val, const struct timespec *ts);

static void test_get_put_user(void)
{
	int *sig = good(0), *type = good(64);
	socklen_t *len = good(128);
	long ret, emulated;
	int sv[2];

	/* prctl(PR_GET_PDEATHSIG) stores with put_user(). */
	*sig = -1;
	setup_eq(prctl(PR_SET_PDEATHSIG, SIGUSR1), 0, "put_user: setup PR_SET_PDEATHSIG");
	ret = prctl(PR_GET_PDEATHSIG, sig);
	tap_eq_long(ret, 0, "put_user: PR_GET_PDEATHSIG into a versioned int: return value");
	tap_eq_long(*sig, SIGUSR1, "put_user: PR_GET_PDEATHSIG into a versioned int: the signal");
	arena_snapshot();
	ret = prctl(PR_GET_PDEATHSIG, adi_make_ptr(sig, WRONG));
	tap_errno(ret, EFAULT, "put_user: mismatching version: EFAULT");
	tap_eq_long(arena_changed(), 0, "put_user: mismatching version: arena bytes changed");
	ret = prctl(PR_GET_PDEATHSIG, straddling(2));
	tap_errno(ret, EFAULT, "put_user: int straddling into another version: EFAULT");
	tap_eq_long(fence_changed(), 0,
		    "put_user: int straddling into another version: fence bytes changed");

	/* getsockopt() reads and writes optlen with get_user()/put_user(). */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		exit(1);
	*len = sizeof(int);
	*type = 0;
	emulated = adi_counter("uaccess_emulated");
	ret = getsockopt(sv[0], SOL_SOCKET, SO_TYPE, type, len);
	tap_eq_long(ret, 0,
		    "get_user/put_user: getsockopt, versioned optval and optlen: return value");
	tap_eq_long(*type, SOCK_STREAM,
		    "get_user/put_user: getsockopt, versioned optval and optlen: optval");
	tap_eq_long(*len, sizeof(int),
		    "get_user/put_user: getsockopt, versioned optval and optlen: optlen");
	/*
	 * The kernel never single-steps itself (issue 19, defect 3): its
	 * get_user() and put_user() of optlen are checked and emulated in the
	 * #GP handler.  Kernels that stepped them have no such counter.
	 */
	emulated = emulated < 0 ? -1 : adi_counter("uaccess_emulated") - emulated;
	tap_ok(emulated >= 2,
	       "get_user/put_user: the kernel emulates its accesses to optlen, no kernel step "
	       "(uaccess_emulated grew by got %ld, want >= 2; -1: no counter)", emulated);
	ret = getsockopt(sv[0], SOL_SOCKET, SO_TYPE, type, adi_make_ptr(len, WRONG));
	tap_errno(ret, EFAULT, "get_user: getsockopt with a mismatching optlen: EFAULT");
}

/* Is the page at @p mapped by a present PTE?  (pagemap bit 63) */
static int page_present(const void *p)
{
	uint64_t entry = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0 || pread(fd, &entry, sizeof(entry),
			    (off_t)((uintptr_t)p / 4096 * sizeof(entry))) != sizeof(entry))
		entry = 1ULL << 63;
	if (fd >= 0)
		close(fd);
	return !!(entry >> 63);
}

/*
 * A buffer whose page is swapped out: the kernel's check faults it in
 * (and its versions back) when it may sleep, and in atomic context (the
 * futex word read with page faults disabled) it fails like a page fault
 * so that the caller faults the page in and retries.
 */
static void test_swapped_out(void)
{
	struct timespec ts = { .tv_sec = 1 };
	char data[256], out[256];
	long ret, m0;
	int p[2], i;

	if (pipe(p))
		exit(1);
	fill_pattern(data, sizeof(data), 8);
	/* Writing makes the page this process's own: shared ones stay in. */
	memcpy(buf_raw(), data, sizeof(data));
	for (i = 0; i < 100 && page_present(buf_raw()); i++) {
		madvise(arena, 4096, MADV_PAGEOUT);
		usleep(10000);
	}
	if (page_present(buf_raw())) {
		tap_skip("the page did not leave memory (no swap?)", "swapped-out buffer");
		return;
	}
	ret = write(p[1], good(0), 256);
	/* Only after a full write: a read of the empty pipe would block. */
	if (tap_eq_long(ret, 256, "swapped out: write() from a versioned buffer: bytes written"))
		expect_xfer(read(p[0], out, 256), out, data, 256,
			    "swapped out: write() from a versioned buffer: read back");
	madvise(arena, 4096, MADV_PAGEOUT);
	m0 = mismatches();
	ret = write(p[1], wrong(0), 256);
	tap_errno(ret, EFAULT, "swapped out: mismatching version still found: EFAULT");
	tap_grew(m0, mismatches(),
		 "swapped out: mismatching version: counted (uaccess_mismatches)");
	*(int *)good(0) = 0;
	for (i = 0; i < 100 && page_present(buf_raw()); i++) {
		madvise(arena, 4096, MADV_PAGEOUT);
		usleep(10000);
	}
	ret = futex(good(0), FUTEX_WAIT_PRIVATE, 1, &ts);
	tap_errno(ret, EAGAIN,
		  "swapped out: futex WAIT reads the word (atomic read, fault-in, retry)");
	tap_eq_long(adi_get_version(buf_raw()), GOOD,
		    "swapped out: versions came back with the page: the buffer's version");
	tap_eq_long(adi_get_version(arena), FENCE,
		    "swapped out: versions came back with the page: the fence's version");
}

/* Opt-in SIGSEGV after a system call met a mismatch. */
static void test_syscall_signal(void)
{
	volatile long ret = 0;
	volatile int err = 0;
	unsigned char *ip;
	int p[2], sig;
	pid_t pid;

	if (pipe(p))
		exit(1);
	tap_eq_long(adi_get_syscall_signal(), 0, "syscall signal: off by default");
	tap_errno(prctl(PR_ADI_SET_SYSCALL_SIGNAL, 2, 0, 0, 0), EINVAL,
		  "syscall signal: set to 2");
	tap_errno(prctl(PR_ADI_SET_SYSCALL_SIGNAL, 1, 1, 0, 0), EINVAL,
		  "syscall signal: set with a non-zero arg3");
	tap_errno(prctl(PR_ADI_GET_SYSCALL_SIGNAL, 1, 0, 0, 0), EINVAL,
		  "syscall signal: get with a non-zero arg2");
	tap_eq_long(adi_set_syscall_signal(true), 0, "syscall signal: switch on");
	tap_eq_long(adi_get_syscall_signal(), 1, "syscall signal: reads back on");

	/* The read below blocks on an empty pipe: the data must be there. */
	setup_eq(write(p[1], "0123456789", 10), 10, "syscall signal: setup write into the pipe");
	sig = TRY(ret = read(p[0], wrong(0), 10));
	tap_eq_long(sig, SIGSEGV, "syscall signal: read() into a mismatching buffer: the signal");
	tap_eq_long(caught.code, SEGV_ADIPERR,
		    "syscall signal: read() into a mismatching buffer: si_code SEGV_ADIPERR");
	tap_eq_hex((uintptr_t)caught.addr, (uintptr_t)wrong(0),
		   "syscall signal: read() into a mismatching buffer: si_addr (versioned)");
	/*
	 * One claim, kept whole: without a signal there is no RIP to look
	 * behind (caught.rip is 0), so the bytes are read only after one.
	 */
	ip = (unsigned char *)caught.rip;
	if (!caught.signo)
		tap_ok(0, "syscall signal: delivered after the syscall (0f 05): got no signal");
	else
		tap_ok(ip[-2] == 0x0f && ip[-1] == 0x05,
		       "syscall signal: delivered after the syscall (0f 05): got %02x %02x",
		       ip[-2], ip[-1]);
	sig = TRY(ret = write(p[1], straddling(64), 128));
	tap_eq_long(sig, SIGSEGV, "syscall signal: write() straddling: the signal");
	tap_eq_hex((uintptr_t)caught.addr,
		   (uintptr_t)adi_make_ptr(arena + BUF_OFF + BUF_LEN, GOOD),
		   "syscall signal: write() straddling: si_addr, the first mismatching block");
	/*
	 * The pipe holds the 10 bytes (a short pipe write is an error); not
	 * blocking: if the mismatching read above wrongly took them, this
	 * fails (EAGAIN) instead of hanging.
	 */
	set_nonblock(p[0], 1);
	sig = TRY(ret = read(p[0], good(0), 64));
	set_nonblock(p[0], 0);
	tap_eq_long(sig, 0, "syscall signal: a matching call raises nothing (signal number)");
	tap_ok(ret > 0,
	       "syscall signal: a matching call reads the queued bytes: got %ld, want > 0",
	       (long)ret);

	pid = fork();
	if (pid == 0)
		_exit(prctl(PR_ADI_GET_SYSCALL_SIGNAL, 0, 0, 0, 0) != 1);
	tap_wait_exit0(pid, "syscall signal: fork() inherits it (the child's exit status)");
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "adi_syscall", "--print-syscall-signal", (char *)NULL);
		_exit(127);
	}
	tap_wait_exit0(pid, "syscall signal: execve() resets it (the new program's exit status)");
	/* The read below blocks on an empty pipe: the data must be there. */
	setup_eq(write(p[1], "0123456789", 10), 10,
		 "syscall signal: setup write into the pipe, switched off");
	tap_eq_long(adi_set_syscall_signal(false), 0, "syscall signal: switch off");
	/* Known values if a signal cuts the statement short (the check says so). */
	ret = 0;
	err = 0;
	sig = TRY({ ret = read(p[0], wrong(0), 10); err = errno; });
	tap_eq_long(sig, 0, "syscall signal: switched off, no signal (signal number)");
	errno = err;	/* the read's: the check above printed since */
	tap_errno(ret, EFAULT, "syscall signal: switched off, the read fails (EFAULT)");
}

/* The counters of the program's own checks. */
static void test_counters(void)
{
	long c0 = adi_counter("checks");
	long m0 = adi_counter("mismatches");
	volatile char *g = good(0), *w = wrong(0);
	long c1, m1;
	int sig;
	char c;

	c = g[1];
	c1 = adi_counter("checks");
	m1 = adi_counter("mismatches");
	tap_grew(c0, c1, "counters: a matching load is counted in checks");
	tap_eq_long(m1, m0, "counters: a matching load is not counted in mismatches");
	sig = TRY(c = w[1]);
	m1 = adi_counter("mismatches");
	tap_eq_long(sig, SIGSEGV, "counters: a mismatching load raises SIGSEGV");
	tap_grew(m0, m1, "counters: a mismatching load is counted in mismatches");
	(void)c;
}

/* ---- futex ---------------------------------------------------------------- */

static long futex(void *uaddr, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

static void *futex_waiter(void *word)
{
	struct timespec ts = { .tv_sec = 20 };

	return (void *)futex(word, FUTEX_WAIT_PRIVATE, 0, &ts);
}

static void test_futex(void)
{
	int *word = good(0);
	struct timespec ts = { .tv_sec = 1 };
	pthread_t thread;
	void *result = (void *)-2L;
	long woken = 0, ret;
	int i, err;

	*word = 0;
	ret = futex(word, FUTEX_WAIT_PRIVATE, 1, &ts);
	tap_errno(ret, EAGAIN,
		  "futex: WAIT reads the word through the versioned pointer (EAGAIN on 0 != 1)");
	ret = futex(adi_make_ptr(word, WRONG), FUTEX_WAIT_PRIVATE, 0, &ts);
	tap_errno(ret, EFAULT, "futex: WAIT through a mismatching version: EFAULT");

	err = pthread_create(&thread, NULL, futex_waiter, word);
	if (err) {
		/* No waiter to wake, and no thread to join. */
		tap_ok(0, "futex: start a waiter thread: got %s, want 0", tap_errname(err));
		return;
	}
	for (i = 0; i < 1000 && woken != 1; i++) {
		usleep(10000);
		woken = futex(word, FUTEX_WAKE_PRIVATE, 1, NULL);
	}
	pthread_join(thread, &result);
	tap_eq_long(woken, 1, "futex: WAKE wakes a waiter on the same versioned word (woken)");
	tap_eq_long((long)result, 0,
		    "futex: WAKE wakes a waiter on the same versioned word (the waiter's return)");
}

/* ---- pages pinned or reached through another mm: versions stripped -------- */

static void test_odirect(void)
{
	char img[] = "/tmp/adi-odirect-XXXXXX", loopdev[32];
	char *page = adi_make_ptr(arena + 8192, GOOD), pattern[4096];
	struct loop_config cfg = { .block_size = 512 };
	int ctl, nr, fd, lfd, dfd, err;
	long ret;

	must_set_version(arena + 8192, 4096, GOOD);
	fill_pattern(pattern, sizeof(pattern), 5);
	fd = mkstemp(img);
	if (fd < 0 || write(fd, pattern, sizeof(pattern)) != sizeof(pattern) ||
	    ftruncate(fd, 65536))
		exit(1);
	unlink(img);
	ctl = open("/dev/loop-control", O_RDWR);
	nr = ctl < 0 ? -1 : ioctl(ctl, LOOP_CTL_GET_FREE);
	if (nr < 0) {
		tap_skip("no loop device", "O_DIRECT read into versioned memory");
		return;
	}
	snprintf(loopdev, sizeof(loopdev), "/dev/loop%d", nr);
	lfd = open(loopdev, O_RDWR);
	cfg.fd = fd;
	if (lfd < 0 || ioctl(lfd, LOOP_CONFIGURE, &cfg)) {
		tap_skip("loop setup failed", "O_DIRECT read into versioned memory");
		return;
	}
	dfd = open(loopdev, O_RDONLY | O_DIRECT);
	err = errno;	/* before anything can change it */
	if (dfd < 0 && err == EINVAL) {
		/* open(2): EINVAL, the filesystem does not support O_DIRECT. */
		tap_skip("O_DIRECT not supported (open: EINVAL)",
			 "O_DIRECT read into versioned memory");
		goto detach;
	}
	errno = err;
	if (open_failed(dfd, "O_DIRECT: open the loop device"))
		goto detach;
	ret = pread(dfd, page, 4096, 0);
	expect_xfer(ret, arena + 8192, pattern, 4096, "O_DIRECT: read into a versioned page");
	tap_eq_long(adi_get_version(arena + 8192), GOOD,
		    "O_DIRECT: the page keeps its versions: the first block");
	tap_eq_long(adi_get_version(arena + 12288 - 64), GOOD,
		    "O_DIRECT: the page keeps its versions: the last block");
	memset(arena + 8192, 0x33, 4096);
	arena_snapshot();
	ret = pread(dfd, adi_make_ptr(arena + 8192, WRONG), 4096, 0);
	tap_errno(ret, EFAULT, "O_DIRECT: mismatching version: EFAULT");
	tap_eq_long(arena_changed(), 0,
		    "O_DIRECT: mismatching version: no I/O: arena bytes changed");
	must_set_version(arena + 12288 - 64, 64, FENCE);
	ret = pread(dfd, page, 4096, 0);
	tap_errno(ret, EFAULT, "O_DIRECT: page whose last block has another version: EFAULT");
	tap_eq_long(arena_changed(), 0,
		    "O_DIRECT: page whose last block has another version: arena bytes changed");
	close(dfd);
	/* With or without dfd (skip, failed open): the loop device is bound, free it. */
detach:
	ioctl(lfd, LOOP_CLR_FD, 0);
	close(lfd);
	close(fd);
}

static void test_vmsplice(void)
{
	struct iovec iov = { good(0), 256 };
	long ret, m0 = mismatches();
	char out[256];
	int p[2];

	if (pipe(p))
		exit(1);

	ret = vmsplice(p[1], &iov, 1, 0);
	/* Only after a full splice: a read of the empty pipe would block. */
	if (tap_eq_long(ret, 256, "vmsplice: versioned user pages into a pipe: bytes spliced"))
		expect_xfer(read(p[0], out, 256), out, buf_raw(), 256,
			    "vmsplice: versioned user pages into a pipe: read back from the pipe");
	iov.iov_base = wrong(0);
	ret = vmsplice(p[1], &iov, 1, 0);
	tap_errno(ret, EFAULT, "vmsplice: mismatching version: EFAULT");
	tap_grew(m0, mismatches(),
		 "vmsplice: mismatching version: counted (uaccess_mismatches)");
	iov = (struct iovec){ straddling(64), 128 };
	ret = vmsplice(p[1], &iov, 1, 0);
	tap_errno(ret, EFAULT, "vmsplice: buffer straddling into another version: EFAULT");
}

/* A child that keeps the arena and waits to be looked at. */
static pid_t spawn_holder(int traceme)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (traceme)
			ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		pause();
		_exit(0);
	}
	waitpid(pid, NULL, WUNTRACED);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_process_vm(void)
{
	char out[256], data[256];
	struct iovec local = { out, 256 }, remote = { good(0), 256 };
	pid_t pid;
	long ret;

	pid = spawn_holder(0);
	ret = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	expect_xfer(ret, out, buf_raw(), 256, "process_vm_readv: versioned remote address");
	memset(out, 0, sizeof(out));
	local.iov_base = good(256);
	arena_snapshot();
	ret = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	expect_xfer(ret, buf_raw() + 256, buf_raw(), 256,
		    "process_vm_readv: into a versioned local buffer");
	local.iov_base = wrong(256);
	memcpy(arena, snapshot, ARENA);
	ret = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	tap_errno(ret, EFAULT, "process_vm_readv: mismatching local buffer: EFAULT");
	tap_eq_long(arena_changed(), 0,
		    "process_vm_readv: mismatching local buffer: arena bytes changed");
	fill_pattern(data, sizeof(data), 6);
	local = (struct iovec){ data, 256 };
	ret = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	remote.iov_base = buf_raw();	/* read it back untagged */
	local.iov_base = out;
	if (tap_eq_long(ret, 256, "process_vm_writev: versioned remote address: bytes written"))
		expect_xfer(process_vm_readv(pid, &local, 1, &remote, 1, 0), out, data, 256,
			    "process_vm_writev: versioned remote address: read back untagged");
	remote.iov_base = wrong(0);
	ret = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	tap_eq_long(ret, 256, "process_vm_readv: the remote version is stripped, not checked");
	reap(pid);
}

static void test_ptrace_and_proc_mem(void)
{
	unsigned long word, *target = good(64);
	char path[64], out[128];
	pid_t pid;
	long ret;
	int fd, err;

	pid = spawn_holder(1);
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, pid, target, NULL);
	err = errno;	/* PEEKDATA's only error report: before anything can change it */
	tap_ok(err == 0, "ptrace: PEEKDATA at a versioned address: got errno %s, want 0",
	       tap_errname(err));
	tap_eq_hex(word, *(unsigned long *)(buf_raw() + 64),
		   "ptrace: PEEKDATA at a versioned address: the word");
	ret = ptrace(PTRACE_POKEDATA, pid, target, (void *)0x1122334455667788UL);
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, pid, buf_raw() + 64, NULL);
	err = errno;	/* as above: the word may be -1, errno says whether it failed */
	tap_eq_long(ret, 0, "ptrace: POKEDATA at a versioned address: return value");
	tap_ok(err == 0, "ptrace: POKEDATA at a versioned address: PEEKDATA untagged to read "
	       "it back: got errno %s, want 0", tap_errname(err));
	tap_eq_hex(word, 0x1122334455667788UL,
		   "ptrace: POKEDATA at a versioned address: the word read back untagged");

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDWR);
	if (open_failed(fd, "/proc/PID/mem: open")) {
		reap(pid);
		return;
	}
	ret = pread(fd, out, sizeof(out), (off_t)(uintptr_t)good(128));
	expect_xfer(ret, out, buf_raw() + 128, sizeof(out),
		    "/proc/PID/mem: read at a versioned offset");
	ret = pwrite(fd, "versioned", 9, (off_t)(uintptr_t)good(128));
	if (tap_eq_long(ret, 9, "/proc/PID/mem: write at a versioned offset: bytes written"))
		expect_xfer(pread(fd, out, 9, (off_t)(uintptr_t)(buf_raw() + 128)), out,
			    "versioned", 9,
			    "/proc/PID/mem: write at a versioned offset: read back untagged");
	close(fd);
	reap(pid);
}

/* ---- memory-management calls: addresses, not accesses ----------------------- */

static void test_mm_calls(void)
{
	char *page_raw = arena + 8192, *page;
	char *moved;
	int sig;

	page = adi_make_ptr(page_raw, FENCE);
	/* Each call is made once, as before; only a lock that worked is undone. */
	if (tap_eq_long(mlock(page, 4096), 0, "mlock: versioned address"))
		tap_eq_long(munlock(page, 4096), 0, "munlock: versioned address");
	tap_eq_long(madvise(page, 4096, MADV_DONTNEED), 0,
		    "madvise(MADV_DONTNEED): versioned address: return value");
	tap_eq_long(page_raw[0], 0,
		    "madvise(MADV_DONTNEED): versioned address drops the page (its first byte)");
	tap_eq_long(adi_get_version(page_raw), 0,
		    "madvise(MADV_DONTNEED): versioned address drops the page's versions");
	tap_eq_long(mprotect(page, 4096, PROT_READ | PROT_ADI), 0,
		    "mprotect: versioned address, read-only: return value");
	sig = TRY(page_raw[1] = 1);
	tap_eq_long(sig, SIGSEGV, "mprotect: versioned address, the page is read-only (signal)");
	tap_eq_long(caught.code, SEGV_ACCERR,
		    "mprotect: versioned address, the page is read-only (si_code SEGV_ACCERR)");
	tap_eq_long(mprotect(page, 4096, PROT_READ | PROT_WRITE | PROT_ADI), 0,
		    "mprotect: and writable again: return value");
	tap_eq_long(TRY(page_raw[1] = 1), 0, "mprotect: and writable again: a store (signal)");
	moved = mremap(adi_make_ptr(arena + 12288, GOOD), 4096, 8192, MREMAP_MAYMOVE);
	tap_ok(moved != MAP_FAILED, "mremap: versioned address");
	tap_eq_long(munmap(page, 4096), 0, "munmap: versioned address: return value");
	sig = TRY(page_raw[0] = 1);
	tap_eq_long(sig, SIGSEGV, "munmap: versioned address unmaps the page (signal)");
	tap_eq_long(caught.code, SEGV_MAPERR,
		    "munmap: versioned address unmaps the page (si_code SEGV_MAPERR)");
	tap_eq_long(munmap(adi_make_ptr(page_raw, GOOD), 4096), 0,
		    "munmap: versioned address of an unmapped page: 0, as for any address");
}

int main(int argc, char **argv)
{
	/* Run by the syscall-signal group after execve(): report the flag. */
	if (argc == 2 && !strcmp(argv[1], "--print-syscall-signal"))
		return prctl(PR_ADI_GET_SYSCALL_SIGNAL, 0, 0, 0, 0);
	tap_init();
	if (!adi_is_available()) {
		tap_skip("no ADI in this kernel", "adi-syscall");
		return tap_done();
	}
	if (mismatches() < 0)
		tap_diag("no /sys/kernel/debug/adi: counter checks will fail");
	arena_setup();	/* each group works on its own copy-on-write copy */
	tap_group("read/write", test_read_write_pipe);
	tap_group("pread/pwrite", test_pread_pwrite_file);
	tap_group("readv/writev", test_readv_writev);
	tap_group("send/recv", test_send_recv);
	tap_group("getcwd/uname/strings", test_getcwd_uname_strings);
	tap_group("zero fill", test_zero_fill);
	tap_group("futex", test_futex);
	tap_group("get_user/put_user", test_get_put_user);
	tap_group("swapped-out buffer", test_swapped_out);
	tap_group("syscall signal", test_syscall_signal);
	tap_group("counters", test_counters);
	tap_group("O_DIRECT", test_odirect);
	tap_group("vmsplice", test_vmsplice);
	tap_group("process_vm", test_process_vm);
	tap_group("ptrace and /proc/PID/mem", test_ptrace_and_proc_mem);
	tap_group("mm calls", test_mm_calls);
	return tap_done();
}
