// SPDX-License-Identifier: GPL-2.0
/*
 * Futex operations that modify the word atomically, through a pointer
 * whose version does not match the memory.  The kernel's atomic access
 * faults; a futex operation then faults the page in and retries.  If the
 * fault-in succeeds while the atomic access keeps failing (the page is
 * there, only the version is wrong), the retry never ends and the task
 * spins in the kernel where SIGKILL cannot reach it.  Wanted: EFAULT,
 * promptly, and a task that stays killable.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "hostile.h"

#define MEM	5	/* the futex words' version */
#define BAD	9	/* a version they do not have */
#define LIMIT_MS 2000

struct futex_result {
	long ret;
	int err;
	int word_after;
	int word2_after;
	int tid;
};

static struct futex_result *res;
static int *words;		/* a version-MEM block: words[0], words[1] */

static long futex(void *uaddr, int op, int val, unsigned long val2,
		  void *uaddr2, int val3)
{
	return syscall(SYS_futex, uaddr, op, val, val2, uaddr2, val3);
}

static void record(long ret)
{
	res->ret = ret;
	res->err = ret < 0 ? errno : 0;
	res->word_after = words[0];
	res->word2_after = words[1];
}

/* The futex words, in the child: its own ADI page. */
static void setup_words(void)
{
	words = adi_region(4096, MEM);
	memset(words, 0, 4096);
	res->tid = gettid();
}

static int want_efault(const char *what, const struct bounded *r)
{
	if (!exited_zero(r))
		return no_result(r, "%s: fails with EFAULT", what);
	errno = res->err;	/* the child's, for tap_errno() */
	return tap_errno(res->ret, EFAULT, "%s: fails with EFAULT", what);
}

/* FUTEX_WAKE_OP: *uaddr2 = 1 if it was 0; uaddr2 has the wrong version. */
static long wake_op(int private)
{
	return futex(adi_make_ptr(&words[0], MEM),
		     FUTEX_WAKE_OP | (private ? FUTEX_PRIVATE_FLAG : 0), 1, 1,
		     adi_make_ptr(&words[1], BAD),
		     FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0));
}

static void op_wake_op(void *arg)
{
	setup_words();
	record(wake_op(arg != NULL));
}

static void loop_wake_op(void *arg)
{
	setup_words();
	for (;;)
		wake_op(arg != NULL);
}

static void test_futex_wake_op(void)
{
	static const char *const names[] = { "shared", "private" };

	res = hostile_shared(sizeof(*res));
	for (int private = 1; private >= 0; private--) {
		char what[96];
		struct bounded r;

		snprintf(what, sizeof(what), "FUTEX_WAKE_OP (%s), version-%d uaddr2 in version-%d memory",
			 names[private], BAD, MEM);
		memset(res, 0, sizeof(*res));
		run_bounded(op_wake_op, private ? (void *)1 : NULL, LIMIT_MS, &r);
		note_wedged(&r);
		check_finished(what, &r, LIMIT_MS);
		want_efault(what, &r);
		if (!exited_zero(&r))
			no_result(&r, "%s: the word at uaddr2 is unchanged", what);
		else
			tap_eq_long(res->word2_after, 0, "%s: the word at uaddr2 is unchanged",
				    what);
		check_kill_latency(what, loop_wake_op, private ? (void *)1 : NULL);
	}
}

/* FUTEX_LOCK_PI of a free word, through a mismatching pointer. */
static void op_lock_pi_bad(void *arg)
{
	(void)arg;
	setup_words();
	record(futex(adi_make_ptr(&words[0], BAD), FUTEX_LOCK_PI_PRIVATE, 0, 0, NULL, 0));
}

static void loop_lock_pi_bad(void *arg)
{
	(void)arg;
	setup_words();
	for (;;)
		futex(adi_make_ptr(&words[0], BAD), FUTEX_LOCK_PI_PRIVATE, 0, 0, NULL, 0);
}

/* FUTEX_UNLOCK_PI of a word we hold (it has our TID): mismatching pointer. */
static void op_unlock_pi_bad(void *arg)
{
	(void)arg;
	setup_words();
	words[0] = gettid();
	record(futex(adi_make_ptr(&words[0], BAD), FUTEX_UNLOCK_PI_PRIVATE, 0, 0, NULL, 0));
}

static void loop_unlock_pi_bad(void *arg)
{
	(void)arg;
	setup_words();
	words[0] = gettid();
	for (;;)
		futex(adi_make_ptr(&words[0], BAD), FUTEX_UNLOCK_PI_PRIVATE, 0, 0, NULL, 0);
}

/*
 * FUTEX_CMP_REQUEUE_PI touches uaddr2 (the PI futex) only when there is a
 * waiter to requeue: a thread waits with FUTEX_WAIT_REQUEUE_PI on
 * words[0], naming the same mismatching uaddr2, then the requeue tries to
 * take the PI lock at uaddr2 for it.
 */
static void *requeue_waiter(void *arg)
{
	struct timespec t;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += 3;
	futex(adi_make_ptr(&words[0], MEM), FUTEX_WAIT_REQUEUE_PI_PRIVATE, 0,
	      (unsigned long)&t, adi_make_ptr(&words[1], BAD), 0);
	return NULL;
}

static long cmp_requeue_pi_bad(void)
{
	return futex(adi_make_ptr(&words[0], MEM), FUTEX_CMP_REQUEUE_PI_PRIVATE, 1, 1,
		     adi_make_ptr(&words[1], BAD), 0);
}

static void op_cmp_requeue_pi_bad(void *arg)
{
	pthread_t t;

	(void)arg;
	setup_words();
	pthread_create(&t, NULL, requeue_waiter, NULL);
	sleep_ms(100);		/* let it block */
	record(cmp_requeue_pi_bad());
	fflush(stdout);
	_exit(0);		/* the waiter may still be waiting */
}

static void loop_cmp_requeue_pi_bad(void *arg)
{
	pthread_t t;

	(void)arg;
	setup_words();
	pthread_create(&t, NULL, requeue_waiter, NULL);
	sleep_ms(100);
	for (;;)
		cmp_requeue_pi_bad();
}

/* The matching pointer still works: lock a free word, then unlock it. */
static void op_pi_match(void *arg)
{
	long ret;

	(void)arg;
	setup_words();
	ret = futex(adi_make_ptr(&words[0], MEM), FUTEX_LOCK_PI_PRIVATE, 0, 0, NULL, 0);
	record(ret);
	res->word2_after = words[0];	/* the word after LOCK_PI */
	if (ret)
		return;
	ret = futex(adi_make_ptr(&words[0], MEM), FUTEX_UNLOCK_PI_PRIVATE, 0, 0, NULL, 0);
	res->ret = ret;
	res->err = ret < 0 ? errno : 0;
	res->word_after = words[0];
}

struct pi_case {
	const char *what;
	hostile_fn op, loop;
};

static void test_futex_pi(void)
{
	static const struct pi_case cases[] = {
		{ "FUTEX_LOCK_PI of a free word, version-9 pointer into version-5 memory",
		  op_lock_pi_bad, loop_lock_pi_bad },
		{ "FUTEX_UNLOCK_PI of a word holding our TID, version-9 pointer",
		  op_unlock_pi_bad, loop_unlock_pi_bad },
		{ "FUTEX_CMP_REQUEUE_PI with a waiter, version-9 uaddr2",
		  op_cmp_requeue_pi_bad, loop_cmp_requeue_pi_bad },
	};
	struct bounded r;

	res = hostile_shared(sizeof(*res));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pi_case *c = &cases[i];

		memset(res, 0, sizeof(*res));
		run_bounded(c->op, NULL, LIMIT_MS, &r);
		note_wedged(&r);
		check_finished(c->what, &r, LIMIT_MS);
		want_efault(c->what, &r);
		check_kill_latency(c->what, c->loop, NULL);
	}

	/* The lock itself must not have been taken or released by the above. */
	memset(res, 0, sizeof(*res));
	run_bounded(op_pi_match, NULL, LIMIT_MS, &r);
	check_finished("FUTEX_LOCK_PI/UNLOCK_PI with the matching version", &r, LIMIT_MS);
	if (!exited_zero(&r)) {
		no_result(&r, "FUTEX_LOCK_PI with the matching version takes the lock");
		no_result(&r, "FUTEX_UNLOCK_PI with the matching version releases it: the call");
		no_result(&r, "FUTEX_UNLOCK_PI with the matching version releases it: the word");
		return;
	}
	tap_eq_hex((uint32_t)res->word2_after, (uint32_t)res->tid,
		   "FUTEX_LOCK_PI with the matching version takes the lock: the word (want our TID)");
	/* The lock's result when it failed (op_pi_match stops there), else the unlock's. */
	tap_eq_long(res->ret, 0, "FUTEX_UNLOCK_PI with the matching version releases it: "
		    "the call (errno %s)", res->err ? errno_name(res->err) : "none");
	tap_eq_hex((uint32_t)res->word_after, 0,
		   "FUTEX_UNLOCK_PI with the matching version releases it: the word");
}

int main(void)
{
	tap_init();
	hostile_group("futex-wake-op", test_futex_wake_op);
	hostile_group("futex-pi", test_futex_pi);
	return tap_done();
}
