// SPDX-License-Identifier: GPL-2.0
/*
 * rseq-abort: the kernel moves the program while a checked access is
 * being stepped (defect 7 of issue 19).
 *
 * A matching versioned load that the #GP handler does not do itself (an
 * imul here: a mov or an add would be done in the #GP, with no step for
 * rseq to interrupt) is single-stepped: the #GP handler takes the
 * version out of the address register, sets TF and returns; the #DB after
 * the step puts the version back.  When the task is preempted on that
 * return and the load sits in an rseq critical section, rseq moves the IP
 * to the abort handler before the load runs.  The step must end there and
 * the register get its version back; otherwise the abort handler's first
 * instruction runs with the stripped register and the #DB that follows it
 * adds the version to a register of an instruction it never checked.
 *
 * Four threads pinned to one CPU loop over a critical section whose only
 * real work is the checked load, so the ticks that preempt them land in
 * the checker most of the time.  The abort handler's first instruction
 * copies the address register; every abort must find the versioned
 * pointer there.  Aborts that came before the load completed (its
 * destination still 0) show that the window was hit.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/rseq.h>

#include "hostile.h"

#define THREADS	4

/* What the critical section saw; filled by hostile_rseq_load(). */
struct rseq_seen {
	uint64_t rbx_at_abort;	/* the address register on entry to the abort handler */
	uint64_t loaded;	/* the load's destination (0: it had not run) */
};

/*
 * int hostile_rseq_load(uint64_t vptr, void *rseq_cs, struct rseq_seen *out)
 * 0 when the section committed, 1 when rseq aborted it.
 */
__asm__(
	"	.text\n"
	"	.globl hostile_rseq_load\n"
	"	.type hostile_rseq_load, @function\n"
	"hostile_rseq_load:\n"
	"	push %rbx\n"
	"	mov %rdi, %rbx\n"
	"	xor %ecx, %ecx\n"
	"	lea hostile_rseq_cs(%rip), %rax\n"
	"	mov %rax, (%rsi)\n"		/* arm the section: the load alone */
	"hostile_rseq_start:\n"
	"	imul $3, (%rbx), %rcx\n"	/* the checked, stepped access */
	"hostile_rseq_commit:\n"
	"	movq $0, (%rsi)\n"
	"	mov %rcx, 8(%rdx)\n"
	"	xor %eax, %eax\n"
	"	pop %rbx\n"
	"	ret\n"
	"	.byte 0x0f, 0xb9, 0x3d\n"	/* RSEQ_SIG, as glibc registers it */
	"	.long 0x53053053\n"
	"hostile_rseq_abort:\n"
	"	mov %rbx, %r8\n"		/* the instruction a stale step would check */
	"	mov %r8, 0(%rdx)\n"
	"	mov %rcx, 8(%rdx)\n"
	"	movq $0, (%rsi)\n"
	"	mov $1, %eax\n"
	"	pop %rbx\n"
	"	ret\n"
	"	.size hostile_rseq_load, . - hostile_rseq_load\n"
	"	.data\n"
	"	.balign 32\n"
	"hostile_rseq_cs:\n"
	"	.long 0, 0\n"			/* version, flags */
	"	.quad hostile_rseq_start\n"
	"	.quad hostile_rseq_commit - hostile_rseq_start\n"
	"	.quad hostile_rseq_abort\n"
	"	.text\n");

int hostile_rseq_load(uint64_t vptr, void *rseq_cs, struct rseq_seen *out);

#define VALUE	UINT64_C(0x1122334455667788)
/* What the stepped imul leaves in rcx for a committed load. */
#define LOADED	(VALUE * 3)

struct tally {
	long commits;
	long aborts_before_load;	/* the window: the load had not completed */
	long aborts_after_load;		/* impossible: the load ends the section */
	long wrong_register;		/* an abort found the register stripped */
	uint64_t first_wrong;
	long wrong_value;		/* a committed load read something else */
	uint64_t vptr;
};

static struct tally *tally;	/* one per thread, shared with the parent */
static long run_ms;

static void *this_thread_rseq_cs(void)
{
	char *tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return &((struct rseq *)(tp + __rseq_offset))->rseq_cs;
}

static void *loop(void *arg)
{
	struct tally *t = arg;
	void *cs = this_thread_rseq_cs();
	long long end = now_ms() + run_ms;
	struct rseq_seen seen;
	long i;

	for (i = 0; (i & 255) || now_ms() < end; i++) {
		memset(&seen, 0, sizeof(seen));
		if (!hostile_rseq_load(t->vptr, cs, &seen)) {
			t->commits++;
			if (seen.loaded != LOADED)
				t->wrong_value++;
			continue;
		}
		if (seen.loaded)
			t->aborts_after_load++;
		else
			t->aborts_before_load++;
		if (seen.rbx_at_abort != t->vptr && !t->wrong_register++)
			t->first_wrong = seen.rbx_at_abort;
	}
	return NULL;
}

static void rseq_child(void *arg)
{
	pthread_t th[THREADS];
	cpu_set_t one;
	uint64_t *mem;
	int i;

	(void)arg;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		_exit(3);
	mem = adi_region(4096, 5);
	*mem = VALUE;
	for (i = 0; i < THREADS; i++) {
		tally[i].vptr = (uint64_t)adi_make_ptr(mem, 5);
		if (pthread_create(&th[i], NULL, loop, &tally[i]))
			_exit(4);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
}

static void rseq_abort(void)
{
	const char *what = "rseq abort during a stepped load";
	long commits = 0, before = 0, after = 0, wrong = 0, wrong_value = 0;
	uint64_t first_wrong = 0;
	struct bounded r;
	int i;

	if (__rseq_size == 0) {
		tap_skip("glibc did not register rseq (glibc.pthread.rseq=0?)", "%s", what);
		return;
	}
	run_ms = hostile_seconds(3, 60) * 1000;
	tally = hostile_shared(THREADS * sizeof(*tally));
	run_bounded(rseq_child, NULL, run_ms + 20000L * hostile_slow(), &r);
	note_wedged(&r);
	check_finished(what, &r, run_ms + 20000L * hostile_slow());
	for (i = 0; i < THREADS; i++) {
		commits += tally[i].commits;
		before += tally[i].aborts_before_load;
		after += tally[i].aborts_after_load;
		wrong_value += tally[i].wrong_value;
		if (tally[i].wrong_register && !wrong)
			first_wrong = tally[i].first_wrong;
		wrong += tally[i].wrong_register;
	}
	tap_diag("%s: %ld commits, %ld aborts before the load completed, %ld after",
		 what, commits, before, after);
	tap_ok(before > 0,
	       "%s: rseq aborted sections whose load was being checked (got %ld, want > 0)",
	       what, before);
	tap_ok(wrong == 0,
	       "%s: the abort handler found the address register with its version "
	       "(got %ld wrong, first 0x%016" PRIx64 "; want 0 wrong, 0x%016" PRIx64 ")",
	       what, wrong, first_wrong, tally[0].vptr);
	tap_ok(commits > 0, "%s: sections committed (got %ld, want > 0)", what, commits);
	tap_eq_long(wrong_value, 0, "%s: committed loads read the block: wrong values "
		    "(of %ld loads)", what, commits);
}

int main(void)
{
	tap_init();
	hostile_group("rseq-abort", rseq_abort);
	return tap_done();
}
