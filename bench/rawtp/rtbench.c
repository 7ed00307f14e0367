// SPDX-License-Identifier: GPL-2.0
/*
 * The seed's overhead experiment: how many times per second a tight loop
 * fires a tracepoint with no program attached, with a raw tracepoint
 * program, with a classic tracepoint program and with a kprobe program on
 * the kernel function that fires it.  Every program increments one per-CPU
 * counter.  Rounds interleave the variants; medians are reported, the
 * ratios and added costs as medians of per-round values.
 *
 * Usage: rtbench [--seconds S] [--rounds R]
 * Prints a table and, per line prefixed "raw:", every measurement.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "rtbench.skel.h"
#include "../lib/stats.h"

#define MAX_ROUNDS 64

enum variant { NONE, RAW_TP, TP, KPROBE, NVARIANTS };
static const char *const variant_name[] = {
	"no program", "raw tracepoint", "tracepoint", "kprobe",
};

struct source {
	const char *name;		/* what the table calls it */
	const char *raw_tp;		/* raw tracepoint name */
	const char *tp_group, *tp;	/* classic tracepoint */
	const char *kfunc;		/* kprobe target */
	void (*op)(void);
};

static void op_rename(void)
{
	prctl(PR_SET_NAME, "rtbench");
}

static void op_getppid(void)
{
	syscall(SYS_getppid);	/* not cached by libc: a real syscall */
}

static const struct source sources[] = {
	{ "task_rename (prctl PR_SET_NAME)", "task_rename", "task", "task_rename",
	  "__set_task_comm", op_rename },
	{ "sys_enter (getppid)", "sys_enter", "raw_syscalls", "sys_enter",
	  "__x64_sys_getppid", op_getppid },
};
#define NSOURCES (sizeof(sources) / sizeof(sources[0]))

static int ncpus;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long long hits(struct rtbench *s)
{
	unsigned long long sum = 0;
	__u64 v[ncpus];
	__u32 key = 0;
	int i;

	if (bpf_map_lookup_elem(bpf_map__fd(s->maps.hits), &key, v))
		return 0;
	for (i = 0; i < ncpus; i++)
		sum += v[i];
	return sum;
}

static void reset_hits(struct rtbench *s)
{
	__u64 zero[ncpus];
	__u32 key = 0;

	memset(zero, 0, sizeof(zero));
	bpf_map_update_elem(bpf_map__fd(s->maps.hits), &key, zero, BPF_ANY);
}

static struct bpf_link *attach(struct rtbench *s, const struct source *src,
			       enum variant v)
{
	switch (v) {
	case RAW_TP:
		return bpf_program__attach_raw_tracepoint(s->progs.bench_raw_tp,
							  src->raw_tp);
	case TP:
		return bpf_program__attach_tracepoint(s->progs.bench_tp,
						      src->tp_group, src->tp);
	case KPROBE:
		return bpf_program__attach_kprobe(s->progs.bench_kprobe, false,
						  src->kfunc);
	default:
		return NULL;
	}
}

/* Operations per second of src->op for about @secs seconds. */
static double measure(const struct source *src, double secs,
		      unsigned long long *ops)
{
	double t0 = now(), t;
	unsigned long long n = 0;
	int i;

	do {
		for (i = 0; i < 1024; i++)
			src->op();
		n += 1024;
		t = now();
	} while (t - t0 < secs);
	*ops = n;
	return n / (t - t0);
}

/*
 * The program must run once per operation, or the rates compare nothing:
 * no hit without a program, and one per operation with one.  Other tasks
 * of the idle guest (and our own bpf() calls around the window) add a few
 * sys_enter hits, hence up to 1.10 per operation is accepted, never fewer
 * than 1.
 */
static int check_hits(const struct source *src, enum variant v, int round,
		      unsigned long long got, unsigned long long ops)
{
	double ratio = (double)got / ops;
	int ok = v == NONE ? got == 0 : ratio >= 1.0 && ratio <= 1.10;

	if (!ok)
		fprintf(stderr,
			"rtbench: round %d, %s, %s: %llu program runs for %llu operations (%.3f per operation), want %s\n",
			round, src->name, variant_name[v], got, ops, ratio,
			v == NONE ? "0 runs" : "1.000-1.100 per operation");
	return ok;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double rate[NSOURCES][NVARIANTS][MAX_ROUNDS], secs = 2;
	double hitratio[NSOURCES][NVARIANTS] = { { 0 } };
	struct rtbench *s;
	int c, rounds = 5, r, err, wrong_hits = 0;
	size_t si;

	while ((c = getopt_long(argc, argv, "s:r:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			secs = atof(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'h':
			printf("Usage: rtbench [--seconds S (2)] [--rounds R (5, max %d)]\n",
			       MAX_ROUNDS);
			return 0;
		default:
			return 2;
		}
	}
	if (secs <= 0 || secs > 60 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "rtbench: --seconds 0-60, --rounds 1-%d\n", MAX_ROUNDS);
		return 2;
	}
	ncpus = libbpf_num_possible_cpus();
	s = rtbench__open_and_load();
	if (!s) {
		fprintf(stderr, "rtbench: loading the programs: %s\n", strerror(errno));
		return 1;
	}

	for (r = 0; r < rounds; r++) {
		for (si = 0; si < NSOURCES; si++) {
			for (int v = 0; v < NVARIANTS; v++) {
				const struct source *src = &sources[si];
				struct bpf_link *link = NULL;
				unsigned long long ops, ran;

				if (v != NONE) {
					link = attach(s, src, v);
					err = libbpf_get_error(link);
					if (err) {
						fprintf(stderr, "rtbench: attaching %s to %s: %s\n",
							variant_name[v], src->name, strerror(-err));
						return 1;
					}
				}
				reset_hits(s);
				rate[si][v][r] = measure(src, secs, &ops);
				ran = hits(s);
				hitratio[si][v] = (double)ran / ops;
				wrong_hits += !check_hits(src, v, r + 1, ran, ops);
				bpf_link__destroy(link);
				printf("raw: round %d %-32s %-15s %10.0f ops/s hits/op %.3f\n",
				       r + 1, src->name, variant_name[v], rate[si][v][r],
				       hitratio[si][v]);
				fflush(stdout);
			}
		}
	}

	printf("\n%-32s %-15s %12s %9s %12s %8s\n", "event source", "program",
	       "events/s", "of base", "added ns/ev", "hits/ev");
	/*
	 * Ratios and added costs are taken within each round (the variants
	 * of a round run back to back) and then the median across rounds, so
	 * that drift of the shared host between rounds cancels out.
	 */
	for (si = 0; si < NSOURCES; si++) {
		for (int v = 0; v < NVARIANTS; v++) {
			double ratio[MAX_ROUNDS], added[MAX_ROUNDS];

			for (r = 0; r < rounds; r++) {
				double base = rate[si][NONE][r];

				ratio[r] = rate[si][v][r] / base;
				added[r] = 1e9 / rate[si][v][r] - 1e9 / base;
			}
			printf("%-32s %-15s %12.0f %8.1f%% %12.1f %8.3f\n",
			       sources[si].name, variant_name[v],
			       bench_median(rate[si][v], rounds, NULL, NULL), 100 * bench_median(ratio, rounds, NULL, NULL),
			       bench_median(added, rounds, NULL, NULL), hitratio[si][v]);
		}
	}
	rtbench__destroy(s);
	if (wrong_hits) {
		fprintf(stderr, "rtbench: %d measurement(s) where the program did not run once per operation: the table above is not a fair comparison\n",
			wrong_hits);
		return 1;
	}
	printf("\nevery measurement: the program ran once per operation (none without one)\n");
	return 0;
}
