// SPDX-License-Identifier: GPL-2.0
/*
 * adi-profile: where the time of one kind of operation goes, by kernel
 * function.  The process samples its own CPU clock (a perf software event,
 * every 10 us of its CPU time, kernel and user IPs) while it repeats the
 * operation for a few seconds, then prints the share of samples in each
 * kernel function, most first, and the share in user mode; then the same
 * samples summed by stage of the trap (fetch, decode, version lookup,
 * emulation, ...).
 *
 *   adi_profile [-s SECONDS] OP...     (each OP in turn, 3 s each)
 *     OP: load, store (a checked 8-byte mov through a versioned pointer),
 *         umip (smsw: UMIP's #GP emulation, the floor adi_bench compares
 *         with), getppid.  The ADI memory is mapped at the first load
 *         or store: a umip given before them runs in a process that
 *         does not use ADI yet, as the floor should; after them it also
 *         pays ADI's decode, which comes first in such a process.
 *
 * The sample is taken in the timer interrupt, so code that runs with
 * interrupts off (the exception entry, before the handler enables them)
 * is counted where interrupts come back on: those shares say "this part
 * of the path", not "this function".  Under QEMU TCG the shares are TCG's
 * costs, which is also what adi_bench measures there.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libadi.h"
#include "ksyms.h"

#define SAMPLE_NS	10000
#define RING_PAGES	256		/* 1 MiB: 65536 samples between drains */
#define TOP		25

struct sampler {
	int fd;
	struct perf_event_mmap_page *meta;
	char *data;
	size_t data_size;
	uint64_t *ips;
	size_t n, cap;
	uint64_t lost;
};

static int sampler_open(struct sampler *s)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.sample_period = SAMPLE_NS,
		.sample_type = PERF_SAMPLE_IP,
		.disabled = 1,
		.exclude_hv = 1,
	};
	long page = sysconf(_SC_PAGESIZE);

	s->fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (s->fd < 0)
		return -errno;
	s->data_size = RING_PAGES * page;
	s->meta = mmap(NULL, (RING_PAGES + 1) * page, PROT_READ | PROT_WRITE,
		       MAP_SHARED, s->fd, 0);
	if (s->meta == MAP_FAILED)
		return -errno;
	s->data = (char *)s->meta + page;
	return 0;
}

/* Move the ring's samples into s->ips. */
static int sampler_drain(struct sampler *s)
{
	uint64_t head = __atomic_load_n(&s->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = s->meta->data_tail;

	while (tail < head) {
		struct perf_event_header h;
		size_t off = tail % s->data_size;
		char rec[64];

		/* A record may wrap around the ring's end: copy it in two. */
		for (size_t i = 0; i < sizeof(h); i++)
			((char *)&h)[i] = s->data[(off + i) % s->data_size];
		if (h.size > sizeof(rec) || h.size < sizeof(h))
			return -EPROTO;
		for (size_t i = 0; i < h.size; i++)
			rec[i] = s->data[(off + i) % s->data_size];
		if (h.type == PERF_RECORD_SAMPLE) {
			if (s->n == s->cap) {
				s->cap = s->cap ? 2 * s->cap : 65536;
				s->ips = realloc(s->ips, s->cap * sizeof(*s->ips));
				if (!s->ips)
					return -ENOMEM;
			}
			memcpy(&s->ips[s->n++], rec + sizeof(h), sizeof(uint64_t));
		} else if (h.type == PERF_RECORD_LOST) {
			uint64_t lost;

			memcpy(&lost, rec + sizeof(h) + sizeof(uint64_t), sizeof(lost));
			s->lost += lost;
		}
		tail += h.size;
	}
	__atomic_store_n(&s->meta->data_tail, tail, __ATOMIC_RELEASE);
	return 0;
}

static void op_load(volatile uint64_t *p, long n)
{
	uint64_t sum = 0;

	for (long i = 0; i < n; i++)
		sum += p[i & 63];
	(void)sum;
}

static void op_store(volatile uint64_t *p, long n)
{
	for (long i = 0; i < n; i++)
		p[i & 63] = i;
}

static void op_umip(long n)
{
	for (long i = 0; i < n; i++) {
		unsigned long msw;

		__asm__ volatile("smsw %k0" : "=r"(msw));
	}
}

static void op_getppid(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

struct share {
	const char *name;
	size_t count;
};

static int by_count(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	return (x->count < y->count) - (x->count > y->count);
}

/*
 * The stages of a trapped access, by the kernel functions that do them;
 * the first matching prefix wins.  Functions inlined into another count
 * as that one: adi_check_fast() as adi_check_access(), for example; the
 * lockless page walk (patch 44) counts with the version lookup, its
 * interrupts-off section included.
 */
static const struct {
	const char *prefix;
	const char *stage;
} stages[] = {
	{ "insn_fetch_from_user", "fetch the instruction" },
	{ "_copy_from_user", "fetch the instruction" },
	{ "rep_movs_alternative", "fetch the instruction" },
	{ "insn_", "decode (insn-decoder)" },
	{ "inat_", "decode (insn-decoder)" },
	{ "fixup_umip_exception", "UMIP (its checks and emulation)" },
	{ "umip_", "UMIP (its checks and emulation)" },
	{ "___ratelimit", "UMIP (its rate-limited log line)" },
	{ "gup_", "ADI version lookup (page walk, VMA, versions)" },
	{ "get_user_pages_fast", "ADI version lookup (page walk, VMA, versions)" },
	{ "lock_vma_under_rcu", "ADI version lookup (page walk, VMA, versions)" },
	{ "vma_end_read", "ADI version lookup (page walk, VMA, versions)" },
	{ "mas_", "ADI version lookup (page walk, VMA, versions)" },
	{ "xas_", "ADI version lookup (page walk, VMA, versions)" },
	{ "put_page", "ADI version lookup (page walk, VMA, versions)" },
	{ "adi_check_access", "ADI version lookup (page walk, VMA, versions)" },
	{ "adi_page_version", "ADI version lookup (page walk, VMA, versions)" },
	{ "adi_page_check_lockless", "ADI version lookup (page walk, VMA, versions)" },
	{ "adi_page_lockless", "ADI version lookup (page walk, VMA, versions)" },
	{ "adi_blocks_match", "ADI version lookup (page walk, VMA, versions)" },
	{ "xa_load", "ADI version lookup (page walk, VMA, versions)" },
	{ "adi_emulate", "ADI emulation (the access, registers, flags)" },
	{ "__get_user", "ADI emulation (the access, registers, flags)" },
	{ "__put_user", "ADI emulation (the access, registers, flags)" },
	{ "adi_mark_in_use", "ADI emulation (the access, registers, flags)" },
	{ "adi_", "ADI decode and classification" },
	{ "exc_", "exception entry and exit" },
	{ "asm_exc_", "exception entry and exit" },
	{ "irqentry_", "exception entry and exit" },
	{ "error_entry", "exception entry and exit" },
	{ "handle_softirqs", "interrupts (the sampler's own timer too)" },
	{ "__do_softirq", "interrupts (the sampler's own timer too)" },
	{ "[user mode]", "user mode (the loop)" },
};

static const char *stage_of(const char *name)
{
	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++)
		if (!strncmp(name, stages[i].prefix, strlen(stages[i].prefix)))
			return stages[i].stage;
	return "other";
}

/* The same samples summed by stage, most first. */
static void report_stages(const struct share *shares, size_t nshares, size_t total)
{
	struct share by_stage[sizeof(stages) / sizeof(stages[0]) + 1];
	size_t n = 0;

	for (size_t i = 0; i < nshares; i++) {
		const char *stage = stage_of(shares[i].name);
		size_t j;

		for (j = 0; j < n && strcmp(by_stage[j].name, stage); j++)
			;
		if (j == n)
			by_stage[n++] = (struct share){ stage, 0 };
		by_stage[j].count += shares[i].count;
	}
	qsort(by_stage, n, sizeof(*by_stage), by_count);
	printf("## by stage\n");
	for (size_t j = 0; j < n; j++)
		printf("%-48s %6.1f%%\n", by_stage[j].name, 100.0 * by_stage[j].count / total);
}

/* Samples per kernel symbol (and "[user]"), most first. */
static void report(const struct sampler *s, const struct ksyms *ks, const char *op)
{
	struct share *shares = calloc(ks->n + 2, sizeof(*shares));
	size_t nshares = 0, user = 0, unknown = 0;

	if (!shares) {
		perror("adi-profile");
		exit(1);
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct ksym *sym;
		size_t j;

		if (s->ips[i] < (1ULL << 63)) {
			user++;
			continue;
		}
		sym = ksyms_find(ks, s->ips[i]);
		if (!sym) {
			unknown++;
			continue;
		}
		for (j = 0; j < nshares && shares[j].name != sym->name; j++)
			;
		if (j == nshares)
			shares[nshares++].name = sym->name;
		shares[j].count++;
	}
	shares[nshares++] = (struct share){ "[user mode]", user };
	if (unknown)
		shares[nshares++] = (struct share){ "[kernel, no symbol]", unknown };
	qsort(shares, nshares, sizeof(*shares), by_count);
	printf("# %s: %zu samples of %d us CPU time, %llu lost\n", op, s->n,
	       SAMPLE_NS / 1000, (unsigned long long)s->lost);
	for (size_t j = 0; j < nshares && j < TOP; j++)
		printf("%-40s %7zu %6.1f%%\n", shares[j].name, shares[j].count,
		       100.0 * shares[j].count / s->n);
	report_stages(shares, nshares, s->n);
	free(shares);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *const ops[] = { "load", "store", "umip", "getppid" };

static int known_op(const char *op)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(op, ops[i]))
			return 1;
	return 0;
}

/* Repeat @op for @seconds with the sampler on; 0 or -errno. */
static int profile(struct sampler *s, const char *op, char *mem, double seconds)
{
	uint64_t *v = adi_make_ptr(mem, 5);
	double end;
	int err;

	s->n = 0;
	s->lost = 0;
	ioctl(s->fd, PERF_EVENT_IOC_ENABLE, 0);
	for (end = now_s() + seconds; now_s() < end;) {
		/* Chunks short enough that the ring never fills between drains. */
		if (!strcmp(op, "load"))
			op_load(v, 2000);
		else if (!strcmp(op, "store"))
			op_store(v, 2000);
		else if (!strcmp(op, "umip"))
			op_umip(2000);
		else
			op_getppid(2000);
		err = sampler_drain(s);
		if (err)
			return err;
	}
	ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0);
	return sampler_drain(s);
}

int main(int argc, char **argv)
{
	const char *usage = "usage: adi_profile [-s SECONDS (0-60, default 3)] load|store|umip|getppid...\n";
	double seconds = 3;
	size_t len = 64 * 1024;
	struct sampler s = { 0 };
	struct ksyms ks;
	char *mem = NULL;
	int i = 1, err;

	if (argc > 2 && !strcmp(argv[1], "-s")) {
		seconds = atof(argv[2]);
		i = 3;
	}
	if (i >= argc || seconds <= 0 || seconds > 60) {
		fputs(usage, stderr);
		return 2;
	}
	for (int j = i; j < argc; j++) {
		if (!known_op(argv[j])) {
			fprintf(stderr, "adi-profile: unknown operation '%s'\n%s", argv[j], usage);
			return 2;
		}
	}
	err = ksyms_load(&ks);
	if (err || ks.hidden) {
		fprintf(stderr, "adi-profile: no kernel symbols (%s)\n",
			err ? strerror(-err) : "kptr_restrict hides them");
		return 1;
	}
	err = sampler_open(&s);
	if (err) {
		fprintf(stderr, "adi-profile: perf_event_open: %s\n", strerror(-err));
		return 1;
	}
	for (; i < argc; i++) {
		/*
		 * ADI memory is mapped at the first checked operation: until
		 * then this process does not use ADI, and its smsw takes the
		 * path of any other process.
		 */
		if (!mem && (!strcmp(argv[i], "load") || !strcmp(argv[i], "store"))) {
			mem = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_ADI,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (mem == MAP_FAILED || adi_set_version(mem, len, 5)) {
				perror("adi-profile: ADI memory");
				return 1;
			}
			memset(mem, 1, len);
		}
		err = profile(&s, argv[i], mem, seconds);
		if (err || !s.n) {
			fprintf(stderr, "adi-profile: %s: %s\n", argv[i],
				err ? strerror(-err) : "no samples");
			return 1;
		}
		report(&s, &ks, argv[i]);
	}
	ksyms_free(&ks);
	free(s.ips);
	return 0;
}
