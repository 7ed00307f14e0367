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

static int arena_unchanged(void)
{
	return arena_changed_outside(0, 0) == 0;
}

/* The fence after the buffer is as the snapshot has it. */
static int fence_unchanged(void)
{
	return arena_changed_outside(0, BUF_OFF + BUF_LEN) == 0;
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

/* A system call refused: -1 with EFAULT. */
static int efault(long ret)
{
	return ret == -1 && errno == EFAULT;
}

/*
 * A transfer that ran into a mismatching block: it stops before the
 * block, so it returns a short count (bytes before it), or EFAULT when
 * nothing was done.
 */
static int stopped_short(long ret, long full, long before)
{
	return efault(ret) || (ret >= 0 && ret < full && ret <= before);
}

static void test_read_write_pipe(void)
{
	char data[200], out[200];
	long m0, c0, ret;
	int p[2];

	if (pipe(p))
		exit(1);
	fill_pattern(data, sizeof(data), 1);

	c0 = checks();
	tap_ok(write(p[1], data, sizeof(data)) == sizeof(data) &&
	       read(p[0], good(0), sizeof(data)) == sizeof(data) &&
	       !memcmp(buf_raw(), data, sizeof(data)),
	       "read: into a matching versioned buffer");
	tap_ok(checks() > c0, "read: the kernel checked the versions (uaccess_checks %ld -> %ld)",
	       c0, checks());
	tap_ok(write(p[1], good(0), sizeof(data)) == sizeof(data) &&
	       read(p[0], out, sizeof(out)) == sizeof(out) &&
	       !memcmp(out, data, sizeof(data)),
	       "write: from a matching versioned buffer");

	arena_snapshot();
	m0 = mismatches();
	ret = write(p[1], data, sizeof(data));
	ret = read(p[0], wrong(0), sizeof(data));
	tap_ok(efault(ret), "read: mismatching version fails with EFAULT (ret %ld)", ret);
	tap_ok(arena_unchanged(), "read: mismatch leaves memory unchanged");
	tap_ok(mismatches() > m0, "read: counted as an ADI mismatch");
	tap_ok(read(p[0], out, sizeof(out)) == sizeof(out) && !memcmp(out, data, sizeof(out)),
	       "read: the data stays in the pipe after EFAULT");

	ret = write(p[1], wrong(0), sizeof(data));
	{
		int avail = -1;

		ioctl(p[0], FIONREAD, &avail);
		tap_ok(efault(ret) && avail == 0,
		       "write: mismatching version fails with EFAULT, nothing written (ret %ld, %d queued)",
		       ret, avail);
	}

	arena_snapshot();
	ret = write(p[1], data, 128);
	ret = read(p[0], straddling(64), 128);
	tap_ok(stopped_short(ret, 128, 64) && fence_unchanged(),
	       "read: buffer straddling into another version stops before it (ret %ld)", ret);
	tap_ok(ret <= 0 || !memcmp(buf_raw() + BUF_LEN - 64, data, ret),
	       "read: the bytes before the other version are right");
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

	tap_ok(pwrite(fd, good(0), BUF_LEN, 4096) == BUF_LEN &&
	       pread(fd, out, BUF_LEN, 4096) == BUF_LEN &&
	       !memcmp(out, buf_raw(), BUF_LEN),
	       "pwrite: a file from a matching versioned buffer");
	fill_pattern(out, BUF_LEN, 2);
	tap_ok(pwrite(fd, out, BUF_LEN, 0) == BUF_LEN &&
	       pread(fd, good(0), BUF_LEN, 0) == BUF_LEN &&
	       !memcmp(out, buf_raw(), BUF_LEN),
	       "pread: a file into a matching versioned buffer");

	arena_snapshot();
	m0 = mismatches();
	ret = pread(fd, wrong(0), BUF_LEN, 0);
	tap_ok(efault(ret) && arena_unchanged() && mismatches() > m0,
	       "pread: mismatching version fails with EFAULT, memory unchanged (ret %ld)", ret);
	ret = pwrite(fd, wrong(0), BUF_LEN, 8192);
	tap_ok(efault(ret) && pread(fd, out, 16, 8192) == 16 &&
	       !memcmp(out, (char[16]){ 0 }, 16),
	       "pwrite: mismatching version fails with EFAULT, file unchanged (ret %ld)", ret);

	/* generic_perform_write() faults in and retries: it must end. */
	ret = pwrite(fd, straddling(64), 256, 12288);
	tap_ok(stopped_short(ret, 256, 64),
	       "pwrite: buffer straddling into another version stops before it (ret %ld)", ret);
	arena_snapshot();
	ret = pread(fd, straddling(128), 256, 0);
	tap_ok(stopped_short(ret, 256, 128) && fence_unchanged(),
	       "pread: buffer straddling into another version stops before it (ret %ld)", ret);
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

	tap_ok(write(p[1], data, 200) == 200 && readv(p[0], iov, 2) == 200 &&
	       !memcmp(buf_raw(), data, 100) && !memcmp(buf_raw() + 128, data + 100, 100),
	       "readv: versioned iovecs in a versioned array");
	tap_ok(writev(p[1], iov, 2) == 200 && read(p[0], out, 200) == 200 &&
	       !memcmp(out, data, 200), "writev: versioned iovecs in a versioned array");

	arena_snapshot();
	ret = readv(p[0], adi_make_ptr(iov, WRONG), 2);
	tap_ok(efault(ret) && arena_unchanged(),
	       "readv: iovec array through a mismatching pointer: EFAULT (ret %ld)", ret);
	iov[1].iov_base = wrong(128);
	arena_snapshot();
	ret = write(p[1], data, 200);
	ret = readv(p[0], iov, 2);
	tap_ok(stopped_short(ret, 200, 100) &&
	       arena_changed_outside(BUF_OFF, BUF_OFF + 100) == 0,
	       "readv: second iovec mismatching: stops before it (ret %ld)", ret);
	ret = writev(p[1], iov, 2);
	tap_ok(stopped_short(ret, 200, 100), "writev: second iovec mismatching: stops before it (ret %ld)",
	       ret);
}

static void test_send_recv(void)
{
	char data[300], out[300];
	long ret;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		exit(1);
	fill_pattern(data, sizeof(data), 4);
	tap_ok(send(sv[0], data, 300, 0) == 300 && recv(sv[1], good(0), 300, 0) == 300 &&
	       !memcmp(buf_raw(), data, 300), "recv: into a matching versioned buffer");
	tap_ok(send(sv[0], good(0), 300, 0) == 300 && recv(sv[1], out, 300, 0) == 300 &&
	       !memcmp(out, data, 300), "send: from a matching versioned buffer");

	arena_snapshot();
	ret = send(sv[0], wrong(0), 300, MSG_DONTWAIT);
	tap_ok(efault(ret) && recv(sv[1], out, 300, MSG_DONTWAIT) == -1 && errno == EAGAIN,
	       "send: mismatching version fails with EFAULT, nothing sent (ret %ld)", ret);
	ret = send(sv[0], data, 300, 0);
	ret = recv(sv[1], wrong(0), 300, 0);
	tap_ok(efault(ret) && arena_unchanged(),
	       "recv: mismatching version fails with EFAULT, memory unchanged (ret %ld)", ret);
	ret = recv(sv[1], out, 300, MSG_DONTWAIT);
	tap_ok(ret == 300 && !memcmp(out, data, 300), "recv: the data is still queued after EFAULT");
	ret = send(sv[0], data, 200, 0);
	ret = recv(sv[1], straddling(64), 200, 0);
	tap_ok(stopped_short(ret, 200, 64) && fence_unchanged(),
	       "recv: buffer straddling into another version stops before it (ret %ld)", ret);
}

static void test_getcwd_uname_strings(void)
{
	struct utsname local, *uts = good(0);
	char cwd[256], path[] = "/tmp/adi-syscall-path";
	long ret;
	int fd;

	if (chdir("/tmp") || !getcwd(cwd, sizeof(cwd)))
		exit(1);
	ret = syscall(SYS_getcwd, good(0), 128);
	tap_ok(ret == (long)strlen(cwd) + 1 && !strcmp(buf_raw(), cwd),
	       "getcwd: into a matching versioned buffer (%s)", cwd);
	arena_snapshot();
	ret = syscall(SYS_getcwd, wrong(0), 128);
	tap_ok(efault(ret) && arena_unchanged(), "getcwd: mismatching version: EFAULT (ret %ld)", ret);
	ret = syscall(SYS_getcwd, straddling(2), 128);
	tap_ok(efault(ret) && fence_unchanged(),
	       "getcwd: result straddling into another version: EFAULT (ret %ld)", ret);

	uname(&local);
	_Static_assert(sizeof(struct utsname) <= BUF_LEN, "utsname fits the buffer");
	tap_ok(uname(uts) == 0 && !strcmp(((struct utsname *)buf_raw())->release, local.release),
	       "uname: into a matching versioned struct (%s)", local.release);
	arena_snapshot();
	ret = uname(adi_make_ptr(uts, WRONG));
	tap_ok(efault(ret) && arena_unchanged(), "uname: mismatching version: EFAULT");
	ret = uname(straddling(64));
	tap_ok(efault(ret) && fence_unchanged(), "uname: struct straddling into another version: EFAULT");

	/* Strings: strncpy_from_user() reads word by word past the NUL. */
	strcpy(buf_raw(), path);
	fd = open(good(0), O_CREAT | O_RDWR, 0600);
	tap_ok(fd >= 0 && access(path, F_OK) == 0, "open: path in a matching versioned string");
	if (fd >= 0)
		close(fd);
	ret = open(wrong(0), O_RDONLY);
	tap_ok(efault(ret), "open: path through a mismatching version: EFAULT");
	strcpy(buf_raw() + BUF_LEN - 8, "/tmp/ad");	/* 7 chars and the NUL */
	ret = open(straddling(8), O_RDONLY);
	tap_ok(ret == -1 && errno == ENOENT, "open: string ending at the block's end: read, ENOENT");
	memcpy(buf_raw() + BUF_LEN - 8, "/tmp/adi", 8);	/* no NUL: runs on */
	ret = open(straddling(8), O_RDONLY);
	tap_ok(efault(ret), "open: string running into another version: EFAULT");
	unlink(path);
}

static void test_zero_fill(void)
{
	long ret;
	size_t i;
	int fd = open("/dev/zero", O_RDONLY);
	int zero = 1;

	arena_snapshot();
	ret = read(fd, good(0), BUF_LEN);
	for (i = 0; i < BUF_LEN; i++)
		zero &= !buf_raw()[i];
	tap_ok(ret == BUF_LEN && zero && fence_unchanged(),
	       "read /dev/zero: clears a matching versioned buffer (ret %ld)", ret);
	arena_snapshot();
	ret = read(fd, wrong(0), BUF_LEN);
	tap_ok(efault(ret) && arena_unchanged(), "read /dev/zero: mismatching version: EFAULT");
	memset(buf_raw(), 0x55, BUF_LEN);
	arena_snapshot();
	ret = read(fd, straddling(192), 256);
	tap_ok(stopped_short(ret, 256, 192) && fence_unchanged(),
	       "read /dev/zero: straddling buffer stops before the other version (ret %ld)", ret);
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
	tap_ok(prctl(PR_SET_PDEATHSIG, SIGUSR1) == 0 && prctl(PR_GET_PDEATHSIG, sig) == 0 &&
	       *sig == SIGUSR1, "put_user: PR_GET_PDEATHSIG into a versioned int");
	arena_snapshot();
	ret = prctl(PR_GET_PDEATHSIG, adi_make_ptr(sig, WRONG));
	tap_ok(efault(ret) && arena_unchanged(), "put_user: mismatching version: EFAULT (ret %ld)", ret);
	ret = prctl(PR_GET_PDEATHSIG, straddling(2));
	tap_ok(efault(ret) && fence_unchanged(),
	       "put_user: int straddling into another version: EFAULT (ret %ld)", ret);

	/* getsockopt() reads and writes optlen with get_user()/put_user(). */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		exit(1);
	*len = sizeof(int);
	*type = 0;
	emulated = adi_counter("uaccess_emulated");
	tap_ok(getsockopt(sv[0], SOL_SOCKET, SO_TYPE, type, len) == 0 && *type == SOCK_STREAM &&
	       *len == sizeof(int), "get_user/put_user: getsockopt with versioned optval and optlen");
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
	tap_ok(efault(ret), "get_user: getsockopt with a mismatching optlen: EFAULT (ret %ld)", ret);
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
	tap_ok(write(p[1], good(0), 256) == 256 && read(p[0], out, 256) == 256 &&
	       !memcmp(out, data, 256), "swapped out: write() from a versioned buffer");
	madvise(arena, 4096, MADV_PAGEOUT);
	m0 = mismatches();
	ret = write(p[1], wrong(0), 256);
	tap_ok(efault(ret) && mismatches() > m0,
	       "swapped out: mismatching version still found: EFAULT (ret %ld)", ret);
	*(int *)good(0) = 0;
	for (i = 0; i < 100 && page_present(buf_raw()); i++) {
		madvise(arena, 4096, MADV_PAGEOUT);
		usleep(10000);
	}
	ret = futex(good(0), FUTEX_WAIT_PRIVATE, 1, &ts);
	tap_ok(ret == -1 && errno == EAGAIN,
	       "swapped out: futex WAIT reads the word (atomic read, fault-in, retry)");
	tap_ok(adi_get_version(buf_raw()) == GOOD && adi_get_version(arena) == FENCE,
	       "swapped out: versions came back with the page");
}

/* Opt-in SIGSEGV after a system call met a mismatch. */
static void test_syscall_signal(void)
{
	volatile long ret = 0;
	unsigned char *ip;
	int p[2], status;
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

	ret = write(p[1], "0123456789", 10);
	tap_ok(TRY(ret = read(p[0], wrong(0), 10)) == SIGSEGV && caught.code == SEGV_ADIPERR &&
	       caught.addr == wrong(0),
	       "syscall signal: read() into a mismatching buffer: SIGSEGV, SEGV_ADIPERR, the versioned address");
	ip = (unsigned char *)caught.rip;
	tap_ok(caught.signo && ip[-2] == 0x0f && ip[-1] == 0x05,
	       "syscall signal: delivered after the syscall instruction");
	tap_ok(TRY(ret = write(p[1], straddling(64), 128)) == SIGSEGV &&
	       caught.addr == adi_make_ptr(arena + BUF_OFF + BUF_LEN, GOOD),
	       "syscall signal: write() straddling: the first mismatching block");
	/* The pipe holds the 10 bytes (a short pipe write is an error). */
	tap_ok(TRY(ret = read(p[0], good(0), 64)) == 0 && ret > 0,
	       "syscall signal: a matching call raises nothing (ret %ld)", (long)ret);

	pid = fork();
	if (pid == 0)
		_exit(prctl(PR_ADI_GET_SYSCALL_SIGNAL, 0, 0, 0, 0) != 1);
	waitpid(pid, &status, 0);
	tap_eq_long(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
		    "syscall signal: fork() inherits it (the child's exit status)");
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "adi_syscall", "--print-syscall-signal", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "syscall signal: execve() resets it (the new program's PR_ADI_GET_SYSCALL_SIGNAL, status %d)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	ret = write(p[1], "0123456789", 10);
	tap_eq_long(adi_set_syscall_signal(false), 0, "syscall signal: switch off");
	tap_eq_long(TRY(ret = read(p[0], wrong(0), 10)), 0,
		    "syscall signal: switched off, no signal (signal number)");
	tap_eq_long(ret, -1, "syscall signal: switched off, the read fails (EFAULT)");
}

/* The counters of the program's own checks. */
static void test_counters(void)
{
	long c0 = adi_counter("checks");
	long m0 = adi_counter("mismatches");
	volatile char *g = good(0), *w = wrong(0);
	char c;

	c = g[1];
	tap_ok(adi_counter("checks") > c0 &&
	       adi_counter("mismatches") == m0,
	       "counters: a matching load is counted in checks, not in mismatches");
	tap_ok(TRY(c = w[1]) == SIGSEGV && adi_counter("mismatches") > m0,
	       "counters: a mismatching load is counted in mismatches");
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
	int i;

	*word = 0;
	ret = futex(word, FUTEX_WAIT_PRIVATE, 1, &ts);
	tap_ok(ret == -1 && errno == EAGAIN,
	       "futex: WAIT reads the word through the versioned pointer (EAGAIN on 0 != 1)");
	ret = futex(adi_make_ptr(word, WRONG), FUTEX_WAIT_PRIVATE, 0, &ts);
	tap_ok(efault(ret), "futex: WAIT through a mismatching version: EFAULT (ret %ld)", ret);

	pthread_create(&thread, NULL, futex_waiter, word);
	for (i = 0; i < 1000 && woken != 1; i++) {
		usleep(10000);
		woken = futex(word, FUTEX_WAKE_PRIVATE, 1, NULL);
	}
	pthread_join(thread, &result);
	tap_ok(woken == 1 && result == 0, "futex: WAKE wakes a waiter on the same versioned word");
}

/* ---- pages pinned or reached through another mm: versions stripped -------- */

static void test_odirect(void)
{
	char img[] = "/tmp/adi-odirect-XXXXXX", loopdev[32];
	char *page = adi_make_ptr(arena + 8192, GOOD), pattern[4096];
	struct loop_config cfg = { .block_size = 512 };
	int ctl, nr, fd, lfd, dfd;
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
	ret = pread(dfd, page, 4096, 0);
	tap_ok(ret == 4096 && !memcmp(arena + 8192, pattern, 4096),
	       "O_DIRECT: read into a versioned page (ret %ld)", ret);
	tap_ok(adi_get_version(arena + 8192) == GOOD && adi_get_version(arena + 12288 - 64) == GOOD,
	       "O_DIRECT: the page keeps its versions");
	memset(arena + 8192, 0x33, 4096);
	arena_snapshot();
	ret = pread(dfd, adi_make_ptr(arena + 8192, WRONG), 4096, 0);
	tap_ok(efault(ret) && arena_unchanged(),
	       "O_DIRECT: mismatching version: EFAULT before any I/O (ret %ld)", ret);
	must_set_version(arena + 12288 - 64, 64, FENCE);
	ret = pread(dfd, page, 4096, 0);
	tap_ok(efault(ret) && arena_unchanged(),
	       "O_DIRECT: page whose last block has another version: EFAULT (ret %ld)", ret);
	close(dfd);
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

	tap_ok(vmsplice(p[1], &iov, 1, 0) == 256 && read(p[0], out, 256) == 256 &&
	       !memcmp(out, buf_raw(), 256), "vmsplice: versioned user pages into a pipe");
	iov.iov_base = wrong(0);
	ret = vmsplice(p[1], &iov, 1, 0);
	tap_ok(efault(ret) && mismatches() > m0,
	       "vmsplice: mismatching version: EFAULT, counted (ret %ld)", ret);
	iov = (struct iovec){ straddling(64), 128 };
	ret = vmsplice(p[1], &iov, 1, 0);
	tap_ok(efault(ret), "vmsplice: buffer straddling into another version: EFAULT (ret %ld)", ret);
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
	tap_ok(ret == 256 && !memcmp(out, buf_raw(), 256),
	       "process_vm_readv: versioned remote address (ret %ld)", ret);
	memset(out, 0, sizeof(out));
	local.iov_base = good(256);
	arena_snapshot();
	ret = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	tap_ok(ret == 256 && !memcmp(buf_raw() + 256, buf_raw(), 256),
	       "process_vm_readv: into a versioned local buffer (ret %ld)", ret);
	local.iov_base = wrong(256);
	memcpy(arena, snapshot, ARENA);
	ret = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	tap_ok(efault(ret) && arena_unchanged(),
	       "process_vm_readv: mismatching local buffer: EFAULT (ret %ld)", ret);
	fill_pattern(data, sizeof(data), 6);
	local = (struct iovec){ data, 256 };
	ret = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	remote.iov_base = buf_raw();	/* read it back untagged */
	local.iov_base = out;
	tap_ok(ret == 256 && process_vm_readv(pid, &local, 1, &remote, 1, 0) == 256 &&
	       !memcmp(out, data, 256), "process_vm_writev: versioned remote address");
	remote.iov_base = wrong(0);
	ret = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	tap_ok(ret == 256, "process_vm_readv: the remote version is stripped, not checked (ret %ld)",
	       ret);
	reap(pid);
}

static void test_ptrace_and_proc_mem(void)
{
	unsigned long word, *target = good(64);
	char path[64], out[128];
	pid_t pid;
	long ret;
	int fd;

	pid = spawn_holder(1);
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, pid, target, NULL);
	tap_ok(errno == 0 && word == *(unsigned long *)(buf_raw() + 64),
	       "ptrace: PEEKDATA at a versioned address");
	ret = ptrace(PTRACE_POKEDATA, pid, target, (void *)0x1122334455667788UL);
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, pid, buf_raw() + 64, NULL);
	tap_ok(ret == 0 && word == 0x1122334455667788UL, "ptrace: POKEDATA at a versioned address");

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDWR);
	ret = pread(fd, out, sizeof(out), (off_t)(uintptr_t)good(128));
	tap_ok(ret == sizeof(out) && !memcmp(out, buf_raw() + 128, sizeof(out)),
	       "/proc/PID/mem: read at a versioned offset (ret %ld)", ret);
	ret = pwrite(fd, "versioned", 9, (off_t)(uintptr_t)good(128));
	ret = ret == 9 ? pread(fd, out, 9, (off_t)(uintptr_t)(buf_raw() + 128)) : -1;
	tap_ok(ret == 9 && !memcmp(out, "versioned", 9), "/proc/PID/mem: write at a versioned offset");
	close(fd);
	reap(pid);
}

/* ---- memory-management calls: addresses, not accesses ----------------------- */

static void test_mm_calls(void)
{
	char *page_raw = arena + 8192, *page;
	char *moved;

	page = adi_make_ptr(page_raw, FENCE);
	tap_ok(mlock(page, 4096) == 0 && munlock(page, 4096) == 0, "mlock/munlock: versioned address");
	tap_ok(madvise(page, 4096, MADV_DONTNEED) == 0 && page_raw[0] == 0 &&
	       adi_get_version(page_raw) == 0,
	       "madvise(MADV_DONTNEED): versioned address drops the page and its versions");
	tap_ok(mprotect(page, 4096, PROT_READ | PROT_ADI) == 0 &&
	       TRY(page_raw[1] = 1) == SIGSEGV && caught.code == SEGV_ACCERR,
	       "mprotect: versioned address, the page becomes read-only");
	tap_ok(mprotect(page, 4096, PROT_READ | PROT_WRITE | PROT_ADI) == 0 &&
	       TRY(page_raw[1] = 1) == 0, "mprotect: and writable again");
	moved = mremap(adi_make_ptr(arena + 12288, GOOD), 4096, 8192, MREMAP_MAYMOVE);
	tap_ok(moved != MAP_FAILED, "mremap: versioned address");
	tap_ok(munmap(page, 4096) == 0 && TRY(page_raw[0] = 1) == SIGSEGV &&
	       caught.code == SEGV_MAPERR, "munmap: versioned address unmaps the page");
	tap_ok(munmap(adi_make_ptr(page_raw, GOOD), 4096) == 0,
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
