// SPDX-License-Identifier: GPL-2.0
/*
 * race: a versioned region used through matching pointers while other
 * threads re-version it, unmap and map it again, and fork children that
 * touch it.  The accesses may fault (the version changed under them, or
 * the memory went away): that is the program's race, and a SIGSEGV it
 * catches.  The kernel must come out of every interleaving: the process
 * ends by itself within its duration + 10 s, forked children end, and the
 * console shows no splat (the harness checks it).  A second variant does
 * the accesses in read() and write() on a pipe, so that the kernel's own
 * checked copies race with the re-versioning and the unmapping.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>

#include "hostile.h"

#define LEN		(64 * 1024)
#define ACCESSORS	3
#define CHILD_MS	5000

struct race_stats {
	long ok, segv, accadi, sys_ok, sys_err, reversions, remaps, forks;
	long child_signaled, child_stuck;
};

static struct race_stats *st;
static char *region;
static atomic_uint cur_version;
static atomic_int stop;
static int use_syscalls;

static __thread sigjmp_buf env;
static __thread volatile int armed;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (si->si_code == SEGV_ACCADI) {	/* a prctl on unmapped memory: EACCES */
		__atomic_add_fetch(&st->accadi, 1, __ATOMIC_RELAXED);
		return;
	}
	if (armed)
		siglongjmp(env, 1);
	signal(sig, SIG_DFL);			/* not ours to catch: die */
}

static void *accessor(void *arg)
{
	uint64_t rs = (uint64_t)(uintptr_t)arg;
	int p[2];

	if (pipe2(p, O_NONBLOCK))
		return NULL;
	while (!atomic_load(&stop)) {
		size_t off = rnd_below(&rs, LEN - 512) & ~7UL;
		volatile uint64_t *q = adi_make_ptr(region + off, atomic_load(&cur_version));

		if (use_syscalls) {
			/* The kernel's checked copies: EFAULT is the expected failure. */
			long w = write(p[1], (void *)q, 256);
			long r = read(p[0], (void *)q, 256);

			__atomic_add_fetch(w == 256 && r == 256 ? &st->sys_ok : &st->sys_err, 1,
					   __ATOMIC_RELAXED);
			continue;
		}
		armed = 1;
		if (sigsetjmp(env, 1) == 0) {
			*q = *q + 1;
			__atomic_add_fetch(&st->ok, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_add_fetch(&st->segv, 1, __ATOMIC_RELAXED);
		}
		armed = 0;
	}
	return NULL;
}

static void *reversioner(void *arg)
{
	uint64_t rs = (uint64_t)(uintptr_t)arg;

	while (!atomic_load(&stop)) {
		unsigned int v = 1 + rnd_below(&rs, 14);

		adi_set_version(region, LEN, v);
		atomic_store(&cur_version, v);
		__atomic_add_fetch(&st->reversions, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *remapper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		munmap(region, LEN);
		sleep_ms(1);
		if (mmap(region, LEN, PROT_READ | PROT_WRITE | PROT_ADI,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			break;
		__atomic_add_fetch(&st->remaps, 1, __ATOMIC_RELAXED);
		sleep_ms(5);
	}
	return NULL;
}

static void *forker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			/* Touch it once through the current version; dying of it is fine. */
			volatile char *q = adi_make_ptr(region, atomic_load(&cur_version));

			q[0]++;
			_exit(0);
		}
		if (pid < 0)
			continue;
		__atomic_add_fetch(&st->forks, 1, __ATOMIC_RELAXED);
		if (!reap_within(pid, CHILD_MS, &status)) {
			kill(pid, SIGKILL);
			if (!reap_within(pid, REAP_LIMIT_MS, &status))
				__atomic_add_fetch(&st->child_stuck, 1, __ATOMIC_RELAXED);
		} else if (WIFSIGNALED(status)) {
			__atomic_add_fetch(&st->child_signaled, 1, __ATOMIC_RELAXED);
		}
		sleep_ms(10);
	}
	return NULL;
}

static long race_seconds;
static uint64_t race_seed;

static void race_child(void *arg)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	pthread_t t[ACCESSORS + 3];
	int n = 0;

	use_syscalls = arg != NULL;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	region = adi_region(LEN, 5);
	atomic_store(&cur_version, 5);
	for (int i = 0; i < ACCESSORS; i++)
		pthread_create(&t[n++], NULL, accessor, (void *)(uintptr_t)(race_seed + i));
	pthread_create(&t[n++], NULL, reversioner, (void *)(uintptr_t)(race_seed + 100));
	pthread_create(&t[n++], NULL, remapper, NULL);
	pthread_create(&t[n++], NULL, forker, NULL);
	sleep_ms(race_seconds * 1000);
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

static void run_race(const char *name, void *variant)
{
	struct bounded r;
	long limit = (race_seconds + 10) * 1000;

	memset(st, 0, sizeof(*st));
	run_bounded(race_child, variant, limit, &r);
	note_wedged(&r);
	if (variant)
		tap_diag("%s: read/write %ld ok, %ld failed; %ld re-versions, %ld re-mappings, "
			 "%ld forks (%ld children died of a signal); %ld SEGV_ACCADI", name,
			 st->sys_ok, st->sys_err, st->reversions, st->remaps, st->forks,
			 st->child_signaled, st->accadi);
	else
		tap_diag("%s: %ld accesses ok, %ld caught SIGSEGV; %ld re-versions, %ld re-mappings, "
			 "%ld forks (%ld children died of a signal); %ld SEGV_ACCADI", name, st->ok,
			 st->segv, st->reversions, st->remaps, st->forks, st->child_signaled,
			 st->accadi);
	check_finished(name, &r, limit);
	tap_ok(st->child_stuck == 0,
	       "%s: every forked child ended (got %ld that SIGKILL could not end; want 0)", name,
	       st->child_stuck);
	{
		const struct { const char *what; long got; } progress[] = {
			{ "re-versions", st->reversions },
			{ "re-mappings", st->remaps },
			{ "forks", st->forks },
			{ "accesses", variant ? st->sys_ok + st->sys_err : st->ok + st->segv },
		};

		for (size_t i = 0; i < sizeof(progress) / sizeof(progress[0]); i++)
			if (!exited_zero(&r))
				no_result(&r, "%s: every thread made progress: %s", name,
					  progress[i].what);
			else
				tap_ok(progress[i].got > 0, "%s: every thread made progress: %s "
				       "(got %ld, want > 0)", name, progress[i].what,
				       progress[i].got);
	}
}

static void test_race(void)
{
	race_seed = hostile_seed("race");
	race_seconds = hostile_seconds(20, 120);
	st = hostile_shared(sizeof(*st));
	run_race("race: loads and stores", NULL);
	if (!group_wedged)
		run_race("race: read() and write() on a pipe", (void *)1);
}

int main(void)
{
	tap_init();
	hostile_group("race", test_race);
	return tap_done();
}
