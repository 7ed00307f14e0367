/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The adi-hostile harness: every hostile action runs in a forked child
 * that the parent bounds in time, so a kernel that hangs in a system call
 * is one failed test, not a hung suite.
 *
 *   run_bounded(fn, arg, timeout_ms, &r)   fork, run fn(arg) in the child,
 *       wait up to timeout_ms (counted from the child's last hb_beat(),
 *       so a long fuzzer only has to keep making progress, and not
 *       while the child holds it with hb_hold(1): set-up whose time is
 *       not the test's, up to HOLD_LIMIT_MS); then SIGKILL it and
 *       measure how long it takes to die (up to 3 s).  A child
 *       that cannot be reaped is left behind: a task spinning in the
 *       kernel cannot be killed, and waiting for it would hang the suite.
 *   check_finished(...)       the operation ended on its own in time
 *   check_kill_latency(...)   SIGKILL ends a child looping in the
 *                             operation within 1 s
 *
 * Results a child wants its parent to see go through shared memory
 * (hostile_shared()).  tap_ok() works from any process of the group: its
 * counters are shared too.
 */
#ifndef ADI_HOSTILE_H
#define ADI_HOSTILE_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libadi.h"
#include "tap.h"
#include "splitmix64.h"

/*
 * How many times slower than the default kernel this one runs: 4 on the
 * debug kernel (KASAN, lockdep, DEBUG_VM; scripts/test.sh gives its suites
 * four times the time too), or ADI_HOSTILE_SLOW.  It scales the bounds
 * that say "this call returned", never the one-second SIGKILL promise.
 */
static inline int hostile_slow(void)
{
	static int slow;
	struct utsname u;
	const char *env = getenv("ADI_HOSTILE_SLOW");

	if (!slow) {
		slow = 1;
		if (env && atoi(env) > 0)
			slow = atoi(env);
		else if (!uname(&u) && strstr(u.release, "-debug"))
			slow = 4;
	}
	return slow;
}

#define BLK		64
#define KILL_AFTER_MS	300	/* a looping child runs this long first */
#define KILL_WANT_MS	1000	/* and must be dead this soon after SIGKILL */
#define REAP_LIMIT_MS	3000	/* then we stop waiting for it */

static inline long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Shared, zeroed memory that survives fork() in both directions. */
static inline void *hostile_shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		tap_diag("mmap shared %zu: %s", len, strerror(errno));
		exit(1);
	}
	return p;
}

/*
 * The heartbeat a long-running child updates before each operation: the
 * time (the parent's deadline counts from it) and what it is doing, so a
 * hang names the call that hung.
 */
struct heartbeat {
	volatile long long beat_ms;
	volatile long count;
	volatile int hold;	/* set-up under way: no deadline (hb_hold()) */
	char what[240];
};

/* The longest set-up hb_hold() may keep the deadline off for. */
#define HOLD_LIMIT_MS	600000

static struct heartbeat *hb;

static inline void hb_init(void)
{
	if (!hb)
		hb = hostile_shared(sizeof(*hb));
}

__attribute__((format(printf, 1, 2)))
static inline void hb_beat(const char *fmt, ...)
{
	va_list ap;

	if (!hb)
		return;
	va_start(ap, fmt);
	vsnprintf(hb->what, sizeof(hb->what), fmt, ap);
	va_end(ap);
	hb->count++;
	hb->beat_ms = now_ms();
}

/*
 * @on: the child starts set-up that must not count toward its deadline
 * (preparing memory that takes longer than the bound on a slow kernel);
 * off again: the deadline counts from now.
 */
static inline void hb_hold(int on)
{
	if (!hb)
		return;
	hb->hold = on;
	hb->beat_ms = now_ms();
}

struct bounded {
	pid_t pid;
	int reaped;		/* waitpid() returned it */
	int status;		/* its wait status, when reaped */
	int timed_out;		/* we sent SIGKILL */
	long elapsed_ms;	/* fork to end, or to our SIGKILL */
	long kill_ms;		/* SIGKILL to reaped; -1 when never reaped */
	char what[240];		/* the heartbeat's last words */
};

typedef void (*hostile_fn)(void *arg);

/* Wait for @pid up to @limit_ms (WNOHANG every 10 ms); 1 when reaped. */
static inline int reap_within(pid_t pid, long limit_ms, int *status)
{
	long long end = now_ms() + limit_ms;

	for (;;) {
		pid_t got = waitpid(pid, status, WNOHANG);

		if (got == pid)
			return 1;
		if (got < 0 && errno != EINTR)
			return 0;
		if (now_ms() >= end)
			return 0;
		sleep_ms(10);
	}
}

static inline int run_bounded(hostile_fn fn, void *arg, long timeout_ms,
			      struct bounded *r)
{
	long long start, deadline, last;
	pid_t got;

	memset(r, 0, sizeof(*r));
	r->kill_ms = -1;
	hb_init();
	hb->beat_ms = 0;
	hb->count = 0;
	hb->hold = 0;
	hb->what[0] = 0;
	fflush(stdout);
	start = now_ms();
	r->pid = fork();
	if (r->pid < 0) {
		tap_diag("fork: %s", strerror(errno));
		return -1;
	}
	if (r->pid == 0) {
		fn(arg);
		fflush(stdout);
		_exit(0);
	}
	/* Poll quickly at first: most operations take milliseconds. */
	for (long nap = 1;; nap = nap < 10 ? nap + 1 : 10) {
		got = waitpid(r->pid, &r->status, WNOHANG);
		if (got == r->pid) {
			r->reaped = 1;
			r->elapsed_ms = now_ms() - start;
			snprintf(r->what, sizeof(r->what), "%s", hb->what);
			return 0;
		}
		last = hb->beat_ms > start ? hb->beat_ms : start;
		deadline = last + timeout_ms;
		if (hb->hold && now_ms() - start < HOLD_LIMIT_MS)
			deadline = now_ms() + timeout_ms;
		if (now_ms() >= deadline)
			break;
		sleep_ms(nap);
	}
	/* Still there: kill it and see whether it can die. */
	r->timed_out = 1;
	r->elapsed_ms = now_ms() - start;
	snprintf(r->what, sizeof(r->what), "%s", hb->what);
	start = now_ms();
	kill(r->pid, SIGKILL);
	if (reap_within(r->pid, REAP_LIMIT_MS, &r->status)) {
		r->reaped = 1;
		r->kill_ms = now_ms() - start;
	} else {
		tap_diag("pid %d did not die within %d ms of SIGKILL (last: %s); left behind",
			 r->pid, REAP_LIMIT_MS, r->what[0] ? r->what : "-");
	}
	return 0;
}

/* "exit 0", "signal 11 (Segmentation fault)", "hung: SIGKILL after ..." */
static inline const char *describe(const struct bounded *r)
{
	static char text[400];

	if (r->timed_out && !r->reaped)
		snprintf(text, sizeof(text),
			 "hung: still there %d ms after SIGKILL (sent after %ld ms)",
			 REAP_LIMIT_MS, r->elapsed_ms);
	else if (r->timed_out)
		snprintf(text, sizeof(text),
			 "running at %ld ms, dead %ld ms after SIGKILL", r->elapsed_ms,
			 r->kill_ms);
	else if (WIFSIGNALED(r->status))
		snprintf(text, sizeof(text), "signal %d (%s) after %ld ms",
			 WTERMSIG(r->status), strsignal(WTERMSIG(r->status)),
			 r->elapsed_ms);
	else
		snprintf(text, sizeof(text), "exit %d after %ld ms",
			 WEXITSTATUS(r->status), r->elapsed_ms);
	if (r->what[0] && (r->timed_out || WIFSIGNALED(r->status))) {
		size_t n = strlen(text);

		snprintf(text + n, sizeof(text) - n, ", last op: %s", r->what);
	}
	return text;
}

static inline int ended_normally(const struct bounded *r)
{
	return r->reaped && !r->timed_out && WIFEXITED(r->status);
}

static inline int exited_zero(const struct bounded *r)
{
	return ended_normally(r) && WEXITSTATUS(r->status) == 0;
}

/* The first check of every "no hang" pair: it ended, by itself, in time. */
static inline int check_finished(const char *what, const struct bounded *r,
				 long limit_ms)
{
	return tap_ok(exited_zero(r) && r->elapsed_ms <= limit_ms,
		      "%s: the child ends within %ld ms (got %s, want exit 0 within %ld ms)",
		      what, limit_ms, describe(r), limit_ms);
}

/*
 * In place of a check of what a child left in shared memory, when that
 * child did not exit 0 (its results are missing or partial): one failed
 * check that says what the child did instead, so that the count of checks
 * stays the same and the failure is not read as the kernel's answer.
 */
__attribute__((format(printf, 2, 3)))
static inline int no_result(const struct bounded *r, const char *fmt, ...)
{
	char tail[480];
	va_list ap;

	snprintf(tail, sizeof(tail), "not run: got no result (the child: %s), want exit 0 first",
		 describe(r));
	va_start(ap, fmt);
	tap_ok_tail(0, tail, fmt, ap);
	va_end(ap);
	return 0;
}

/*
 * 1 when a child of this group is stuck for good: running the next
 * reproducer would only put another task in the kernel's loop (and the
 * guest has two vCPUs).
 */
static int group_wedged;

static inline void note_wedged(const struct bounded *r)
{
	if (r->timed_out && !r->reaped)
		group_wedged = 1;
}

/*
 * The second check: a child that runs @loop_fn (which repeats the
 * operation forever) is SIGKILLed after 300 ms and must be gone within
 * 1000 ms.
 */
static inline void check_kill_latency(const char *what, hostile_fn loop_fn, void *arg)
{
	struct bounded r;

	if (group_wedged) {
		tap_ok(0, "%s: SIGKILL ends a child looping in it within %d ms (not run: "
		       "an earlier child of this group could not be killed; want a killable child)",
		       what, KILL_WANT_MS);
		return;
	}
	run_bounded(loop_fn, arg, KILL_AFTER_MS, &r);
	note_wedged(&r);
	tap_ok(r.timed_out && r.reaped && r.kill_ms <= KILL_WANT_MS &&
	       WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL,
	       "%s: SIGKILL ends a child looping in it within %d ms (got %s, want "
	       "still running at %d ms, then killed by SIGKILL within %d ms)",
	       what, KILL_WANT_MS, describe(&r), KILL_AFTER_MS, KILL_WANT_MS);
}

/* Progress on the kernel console, so a guest that hangs shows where. */
__attribute__((format(printf, 1, 2)))
static inline void console_note(const char *fmt, ...)
{
	char text[256];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(text) - 2)
		n = sizeof(text) - 2;
	text[n++] = '\n';
	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, text, n) < 0) {
			/* nothing to do: the note is only a help */
		}
		close(fd);
	}
}

/* tap_group() with a console note before and after. */
static inline void hostile_group(const char *name, void (*fn)(void))
{
	if (!tap_group_selected(name)) {
		tap_group(name, fn);	/* its "# SKIP not in TAP_GROUPS" result */
		return;
	}
	console_note("adi-hostile: group %s: start", name);
	tap_group(name, fn);
	console_note("adi-hostile: group %s: end", name);
}

/* Anonymous ADI memory: mmap read/write, then mprotect(PROT_ADI). */
static inline void *adi_region(size_t len, int version)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || adi_enable(p, len, PROT_READ | PROT_WRITE)) {
		tap_diag("ADI region of %zu bytes: %s", len, strerror(errno));
		exit(1);
	}
	if (version >= 0 && adi_set_version(p, len, version)) {
		tap_diag("adi_set_version(%p, %zu, %d): %s", p, len, version,
			 strerror(errno));
		exit(1);
	}
	return p;
}

/* The seed of a fuzz group: $ADI_HOSTILE_SEED, or a new one; printed. */
static inline uint64_t hostile_seed(const char *group)
{
	const char *env = getenv("ADI_HOSTILE_SEED");
	uint64_t seed;

	if (env && *env) {
		seed = strtoull(env, NULL, 0);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((uint64_t)ts.tv_sec * 1000000007ULL) ^ (uint64_t)ts.tv_nsec ^
		       ((uint64_t)getpid() << 32);
	}
	tap_diag("%s: seed %" PRIu64 " (replay: ADI_HOSTILE_SEED=%" PRIu64 ")",
		 group, seed, seed);
	return seed;
}

/*
 * How long a fuzz group runs: $ADI_HOSTILE_SECONDS, else @stress_s when
 * LK417_STRESS=1 (make stress), else @normal_s.
 */
static inline long hostile_seconds(long normal_s, long stress_s)
{
	const char *env = getenv("ADI_HOSTILE_SECONDS");
	const char *stress = getenv("LK417_STRESS");

	if (env && *env && atol(env) > 0)
		return atol(env);
	if (stress && !strcmp(stress, "1"))
		return stress_s;
	return normal_s;
}

static inline uint64_t rnd_next(uint64_t *s)
{
	return splitmix64(s);
}

static inline uint64_t rnd_below(uint64_t *s, uint64_t n)
{
	return n ? rnd_next(s) % n : 0;
}

/* The seed of batch @i of a fuzzer: replayable from the group's seed. */
static inline uint64_t batch_seed(uint64_t seed, uint64_t i)
{
	uint64_t s = seed ^ (i * 0x2545f4914f6cdd1dULL);

	return rnd_next(&s);
}

/* An errno's name for the distributions the fuzzers print. */
static inline const char *errno_name(int e)
{
	static char other[16];

	switch (e) {
	case 0: return "ok";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	case EINTR: return "EINTR";
	case EIO: return "EIO";
	case ENXIO: return "ENXIO";
	case E2BIG: return "E2BIG";
	case EBADF: return "EBADF";
	case ECHILD: return "ECHILD";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case ENFILE: return "ENFILE";
	case EMFILE: return "EMFILE";
	case ENOTTY: return "ENOTTY";
	case EFBIG: return "EFBIG";
	case ENOSPC: return "ENOSPC";
	case ESPIPE: return "ESPIPE";
	case EPIPE: return "EPIPE";
	case ERANGE: return "ERANGE";
	case EDEADLK: return "EDEADLK";
	case ENOSYS: return "ENOSYS";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EOVERFLOW: return "EOVERFLOW";
	case ENOTSOCK: return "ENOTSOCK";
	case EMSGSIZE: return "EMSGSIZE";
	case ENOTCONN: return "ENOTCONN";
	case EOWNERDEAD: return "EOWNERDEAD";
	default:
		snprintf(other, sizeof(other), "errno%d", e);
		return other;
	}
}

#endif
