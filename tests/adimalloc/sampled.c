// SPDX-License-Identifier: GPL-2.0
/*
 * Sampled mode.
 *   sampled rate TRIALS   fork TRIALS children; each allocates 48 bytes,
 *                         writes one byte past the end and frees.  Prints how many
 *                         children were stopped by a report (exit status 86).
 *   sampled busy ROUNDS   heap buffers through write()/read() and plain
 *                         loads and stores, for the suite to count the
 *                         kernel's ADI checks around it.
 *   sampled bound N SIZE  N blocks of SIZE bytes live at once: how many are
 *                         ours (versioned); then all freed, and N again
 *   sampled cap N SIZE[@ALIGN]...
 *                         for each request, N times allocated and freed at
 *                         once: how many were ours; then a block of ours
 *                         realloc()ed to each SIZE: still ours or not
 *   sampled threads T M idle|busy
 *                         T threads and the main thread; the main thread
 *                         makes M allocations (busy: while each thread
 *                         makes M too) and prints which of them were ours,
 *                         as a signature, and how many each thread had
 *   sampled nolock        one thread holds the heap lock (stopped inside
 *                         the allocator's mprotect(), which this program
 *                         defines); another frees, reallocs and sizes
 *                         glibc's blocks and allocates above the size cap:
 *                         PASS if it gets through meanwhile
 * A block is ours when its pointer carries a version (bits 63:60).
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int versioned(const void *p)
{
	return ((uintptr_t)p >> 60) != 0;
}

static int rate(long n)
{
	long caught = 0, other = 0;

	for (long i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid == 0) {
			volatile char *p = malloc(48);

			/* Caught at the access when the block ends its
			 * slot, else by free() in the slack. */
			p[48] = 1;
			free((void *)p);
			_exit(0);
		}
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 86)
			caught++;
		else if (!WIFEXITED(status) || WEXITSTATUS(status))
			other++;
	}
	printf("caught %ld of %ld (other failures %ld)\n", caught, n, other);
	return other ? 1 : 0;
}

static int busy(long n)
{
	int fd = open("/dev/null", O_WRONLY), fds[2];
	unsigned long sum = 0;

	if (fd < 0 || pipe(fds))
		return 1;
	for (long i = 0; i < n; i++) {
		char *p = malloc(256);

		memset(p, (int)i, 256);
		for (int k = 0; k < 256; k += 8)
			sum += (unsigned char)p[k];
		if (write(fd, p, 256) != 256 || write(fds[1], p, 64) != 64 ||
		    read(fds[0], p, 64) != 64)
			return 1;
		free(p);
	}
	printf("busy %lu\n", sum);
	return 0;
}

/* N blocks live at once, all touched: how many are ours. */
static long live_round(char **p, long n, size_t size)
{
	long v = 0;

	for (long i = 0; i < n; i++) {
		p[i] = malloc(size);
		if (!p[i])
			return -1;
		memset(p[i], 1, size);
		v += versioned(p[i]);
	}
	return v;
}

static void free_all(char **p, long n)
{
	for (long i = 0; i < n; i++)
		free(p[i]);
}

static int bound(long n, size_t size)
{
	/* The array itself is above the size cap: glibc's. */
	char **p = calloc((size_t)n + 4096, sizeof(*p));
	long v1, v2;

	if (!p)
		return 1;
	v1 = live_round(p, n, size);
	free_all(p, n);
	v2 = live_round(p, n, size);
	free_all(p, n);
	printf("bound: %ld of %ld live blocks ours; after freeing them all, %ld of %ld\n",
	       v1, n, v2, n);
	free(p);
	return v1 < 0 || v2 < 0;
}

/* "SIZE" or "SIZE@ALIGN": how many of N such blocks were ours. */
static long cap_one(long n, const char *spec, size_t *size)
{
	char *at;
	size_t align = 0;
	long v = 0;

	*size = strtoul(spec, &at, 0);
	if (*at == '@')
		align = strtoul(at + 1, NULL, 0);
	for (long i = 0; i < n; i++) {
		void *q = NULL;

		if (align) {
			if (posix_memalign(&q, align, *size))
				return -1;
		} else if (!(q = malloc(*size))) {
			return -1;
		}
		v += versioned(q);
		free(q);
	}
	return v;
}

/* A block of ours (one in a few thousand tries at most) of @size bytes. */
static char *one_of_ours(size_t size)
{
	for (int i = 0; i < 100000; i++) {
		char *q = malloc(size);

		if (versioned(q))
			return q;
		free(q);
	}
	return NULL;
}

static int cap(long n, int count, char **specs)
{
	size_t size;

	for (int i = 0; i < count; i++) {
		long v = cap_one(n, specs[i], &size);

		if (v < 0)
			return 1;
		printf("cap %s: %ld of %ld ours\n", specs[i], v, n);
	}
	for (int i = 0; i < count; i++) {
		char *q = one_of_ours(100);

		size = strtoul(specs[i], NULL, 0);
		if (!q || strchr(specs[i], '@'))
			continue;
		memset(q, 'r', 100);
		q = realloc(q, size);
		printf("realloc of ours to %zu: %s, contents %s\n", size,
		       versioned(q) ? "ours" : "glibc's",
		       q && q[0] == 'r' && q[99] == 'r' ? "kept" : "lost");
		free(q);
	}
	return 0;
}

/* ---- threads: each thread samples on its own ---- */
struct worker {
	pthread_t t;
	long m, ours;
	int busy;
};

static pthread_barrier_t go;

static long count_ours(long m, unsigned long *sig)
{
	long ours = 0;

	for (long i = 0; i < m; i++) {
		char *q = malloc(32);

		if (versioned(q)) {
			ours++;
			if (sig)
				*sig = *sig * 1000003 + (unsigned long)i;
		}
		free(q);
	}
	return ours;
}

static void *worker(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(&go);
	if (w->busy)
		w->ours = count_ours(w->m, NULL);
	return NULL;
}

static int threads(int t, long m, int busy_threads)
{
	struct worker w[64];
	unsigned long sig = 0;
	long ours;

	if (t < 1 || t > 64)
		return 2;
	pthread_barrier_init(&go, NULL, (unsigned int)t + 1);
	for (int i = 0; i < t; i++) {
		w[i] = (struct worker){ .m = m, .busy = busy_threads };
		pthread_create(&w[i].t, NULL, worker, &w[i]);
	}
	pthread_barrier_wait(&go);
	ours = count_ours(m, &sig);
	for (int i = 0; i < t; i++)
		pthread_join(w[i].t, NULL);
	printf("main: %ld of %ld ours, signature %lx\n", ours, m, sig);
	for (int i = 0; busy_threads && i < t; i++)
		printf("thread %d: %ld of %ld ours\n", i, w[i].ours, m);
	return 0;
}

/* ---- nolock: glibc's blocks never wait for the heap lock ---- */
#define NOLOCK_GLIBC	32
static sem_t held, release_lock, start_a, start_b, done_b;
static volatile int armed;
static char *glibc_blocks[NOLOCK_GLIBC];
static volatile int b_bad;

/* Wait for @s at most @sec seconds; 0 if it came. */
static int wait_for(sem_t *s, int sec)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += sec;
	while (sem_timedwait(s, &ts))
		if (errno != EINTR)
			return -1;
	return 0;
}

/* The allocator calls this with its heap lock held (a new slab). */
int mprotect(void *addr, size_t len, int prot)
{
	if (armed) {
		armed = 0;
		sem_post(&held);
		wait_for(&release_lock, 120);
	}
	return (int)syscall(SYS_mprotect, addr, len, prot);
}

/* Allocates until a block of ours needs a new slab: stops in mprotect(). */
static void *holder(void *arg)
{
	(void)arg;
	wait_for(&start_a, 120);
	for (int i = 0; i < 100000 && armed; i++)
		free(malloc(3000));
	return NULL;
}

/* Only what must never take the heap lock. */
static void *glibc_user(void *arg)
{
	(void)arg;
	wait_for(&start_b, 120);
	for (int i = 0; i < NOLOCK_GLIBC; i++) {
		char *q = glibc_blocks[i];

		if (malloc_usable_size(q) < 200)
			b_bad = 1;
		q = realloc(q, 400);
		if (!q || versioned(q))
			b_bad = 1;
		free(q);
	}
	for (int i = 0; i < 100; i++) {
		char *q = malloc(20000), *r = calloc(1, 20000);

		if (!q || !r || versioned(q) || versioned(r))
			b_bad = 1;
		free(q);
		free(r);
	}
	sem_post(&done_b);
	return NULL;
}

static int nolock(void)
{
	pthread_t a, b;
	int n = 0, failed = 0, got;

	/* glibc's blocks (unversioned), made before the lock is held. */
	while (n < NOLOCK_GLIBC) {
		char *q = malloc(200);

		if (versioned(q))
			free(q);
		else
			glibc_blocks[n++] = q;
	}
	sem_init(&held, 0, 0);
	sem_init(&release_lock, 0, 0);
	sem_init(&start_a, 0, 0);
	sem_init(&start_b, 0, 0);
	sem_init(&done_b, 0, 0);
	pthread_create(&a, NULL, holder, NULL);
	pthread_create(&b, NULL, glibc_user, NULL);
	armed = 1;
	sem_post(&start_a);
	got = !wait_for(&held, 60);
	printf("%s a thread stopped inside the allocator with the heap lock held: got %s, want yes\n",
	       got ? "PASS" : "FAIL", got ? "yes" : "no (no sampled 3000-byte block)");
	failed += !got;
	if (got) {
		sem_post(&start_b);
		got = !wait_for(&done_b, 10);
		printf("%s free/realloc/malloc_usable_size of glibc's blocks, malloc/calloc above "
		       "the size cap, while another thread holds the heap lock: got %s, want done\n",
		       got && !b_bad ? "PASS" : "FAIL",
		       !got ? "waited 10 s (for the heap lock)" : b_bad ? "wrong results" : "done");
		failed += !got || b_bad;
	}
	armed = 0;
	sem_post(&release_lock);
	sem_post(&start_b);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%d failed\n", failed);
	return failed != 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 2 && !strcmp(argv[1], "rate"))
		return rate(n);
	if (argc > 2 && !strcmp(argv[1], "busy"))
		return busy(n);
	if (argc > 3 && !strcmp(argv[1], "bound"))
		return bound(n, strtoul(argv[3], NULL, 0));
	if (argc > 3 && !strcmp(argv[1], "cap"))
		return cap(n, argc - 3, argv + 3);
	if (argc > 4 && !strcmp(argv[1], "threads"))
		return threads((int)n, atol(argv[3]), !strcmp(argv[4], "busy"));
	if (argc > 1 && !strcmp(argv[1], "nolock"))
		return nolock();
	fprintf(stderr, "usage: sampled rate TRIALS | busy ROUNDS | bound N SIZE | "
		"cap N SIZE[@ALIGN]... | threads T M idle|busy | nolock\n");
	return 2;
}
