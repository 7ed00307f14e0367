// SPDX-License-Identifier: GPL-2.0
/*
 * A threaded allocation workload, for sampled mode's cost (issue 22):
 *
 *     threads [NTHREADS [OPS]]     (default 16 threads, 20000 operations)
 *
 * Each thread keeps 64 blocks and, OPS times, replaces one at random:
 * free (or realloc) the old one, allocate a new one of a mixed size
 * (mostly small, some of a few KiB, a few above the sampled size cap;
 * malloc, calloc or realloc), write its first bytes and its last one, and
 * read a byte of another of its blocks.  What it measures is the
 * allocator's path, unsampled nearly always, with the accesses a program
 * makes; every thread draws the same sizes in every run (seeded by its
 * index), so two runs do the same work.
 *
 * Prints "elapsed SECONDS s" (from all threads released at once to the
 * last one done: start-up and the library's initialisation are not in it;
 * threads.sh times the whole process too) and a checksum of the bytes
 * read, which keeps the reads from being optimised away.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOTS		64
#define MAX_THREADS	256

struct worker {
	pthread_t t;
	unsigned int index;
	long ops;
	uint64_t rng;
	unsigned long sum;
	char *slot[SLOTS];
	size_t size[SLOTS];
};

static pthread_barrier_t go;

static uint64_t next(struct worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

/* Mostly small blocks, as programs make them; 1% above 16 KiB. */
static size_t pick_size(struct worker *w)
{
	unsigned int r = (unsigned int)(next(w) % 100);
	uint64_t x = next(w);

	if (r < 60)
		return 16 + x % 113;		/* 16..128 */
	if (r < 85)
		return 129 + x % 896;		/* ..1 KiB */
	if (r < 95)
		return 1025 + x % 7168;		/* ..8 KiB */
	if (r < 99)
		return 8193 + x % 8192;		/* ..16 KiB */
	return 16385 + x % 49152;		/* ..64 KiB */
}

/* The accesses a program makes: its first bytes, its last one. */
static void touch(char *p, size_t size, unsigned int v)
{
	memset(p, (int)v, size < 64 ? size : 64);
	p[size - 1] = (char)v;
}

/* Replace slot @k: realloc it (1 in 10), or free it and malloc or calloc. */
static void replace(struct worker *w, unsigned int k)
{
	size_t size = pick_size(w);
	unsigned int how = (unsigned int)(next(w) % 20);
	char *p;

	if (how < 2 && w->slot[k]) {
		p = realloc(w->slot[k], size);
	} else {
		free(w->slot[k]);
		p = how == 2 ? calloc(1, size) : malloc(size);
	}
	if (!p) {
		fprintf(stderr, "threads: out of memory\n");
		exit(1);
	}
	touch(p, size, k);
	w->slot[k] = p;
	w->size[k] = size;
}

static void *work(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(&go);
	for (long i = 0; i < w->ops; i++) {
		unsigned int k = (unsigned int)(next(w) % SLOTS);
		unsigned int j = (unsigned int)(next(w) % SLOTS);

		replace(w, k);
		if (w->slot[j])
			w->sum += (unsigned char)w->slot[j][w->size[j] / 2];
	}
	for (unsigned int k = 0; k < SLOTS; k++)
		free(w->slot[k]);
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	int n = argc > 1 ? atoi(argv[1]) : 16;
	long ops = argc > 2 ? atol(argv[2]) : 20000;
	unsigned long sum = 0;
	double t0;

	if (n < 1 || n > MAX_THREADS || ops < 1) {
		fprintf(stderr, "usage: threads [NTHREADS (1..%d) [OPS]]\n", MAX_THREADS);
		return 2;
	}
	pthread_barrier_init(&go, NULL, (unsigned int)n + 1);
	for (int i = 0; i < n; i++) {
		w[i].index = (unsigned int)i;
		w[i].ops = ops;
		w[i].rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
		if (pthread_create(&w[i].t, NULL, work, &w[i])) {
			fprintf(stderr, "threads: cannot create thread %d\n", i);
			return 1;
		}
	}
	t0 = now();
	pthread_barrier_wait(&go);
	for (int i = 0; i < n; i++) {
		pthread_join(w[i].t, NULL);
		sum += w[i].sum;
	}
	printf("elapsed %.6f s, %d threads x %ld operations, checksum %lu\n", now() - t0, n,
	       ops, sum);
	return 0;
}
