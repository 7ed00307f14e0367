// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Leaks at exit (detect_leaks=1), as LeakSanitizer reports them.
 *
 * Every pointer adimalloc hands out carries its allocation's version in
 * bits 63:60, and nothing else in a program has a non-zero top nibble, so
 * a word is a reference to an allocation exactly when its top nibble is
 * that allocation's version and its address falls inside it.  The scan
 * starts from the roots (every private writable mapping outside the ADI
 * heap: data and bss of the program and its libraries, thread stacks, the
 * C library's own heap), marks what they reach, then what those blocks
 * reach, and so on.  A live block left unmarked is a leak: "direct" when
 * no other leaked block points to it, "indirect" otherwise.  Reads go
 * through addresses without a version: no ADI check, no trap.
 *
 * Nothing here allocates from the heap it inspects: its tables are
 * mmap()ed and freed again.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

enum { UNREACHED, REACHED, INDIRECT };

struct block {
	struct am_chunk c;
	uint8_t mark;
};

struct scan {
	struct block *b;	/* sorted by start */
	size_t n, cap;
	size_t *work;		/* indices still to scan */
	size_t nwork;
};

/* At least one page: mmap() refuses 0 bytes. */
static void *table(size_t bytes)
{
	void *p = mmap(NULL, bytes + 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void untable(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes + 1);
}

static void count_live(const struct am_chunk *c, void *arg)
{
	(void)c;
	(*(size_t *)arg)++;
}

static void add_live(const struct am_chunk *c, void *arg)
{
	struct scan *s = arg;

	if (s->n < s->cap)
		s->b[s->n++] = (struct block){ .c = *c };
}

static int by_start(const void *x, const void *y)
{
	const struct block *a = x, *b = y;

	return (a->c.start > b->c.start) - (a->c.start < b->c.start);
}

/* The block that contains @addr, or NULL; a 0-byte block holds its start. */
static struct block *containing(struct scan *s, uintptr_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct block *b = &s->b[mid];

		if (addr < b->c.start)
			hi = mid;
		else if (addr >= b->c.start + (b->c.size ? b->c.size : 1))
			lo = mid + 1;
		else
			return b;
	}
	return NULL;
}

/* Mark what the words of [lo, hi) refer to with @mark; queue it. */
static void scan_range(struct scan *s, uintptr_t lo, uintptr_t hi, uint8_t mark)
{
	for (uintptr_t a = am_round_up(lo, sizeof(uintptr_t)); a + sizeof(uintptr_t) <= hi;
	     a += sizeof(uintptr_t)) {
		uintptr_t w = *(const uintptr_t *)a;
		struct block *b;

		if (!(w >> 60))
			continue;
		b = containing(s, am_strip((const void *)w));
		if (!b || b->c.version != am_pver((const void *)w) || b->mark != UNREACHED)
			continue;
		b->mark = mark;
		s->work[s->nwork++] = (size_t)(b - s->b);
	}
}

static void drain(struct scan *s, uint8_t mark)
{
	while (s->nwork) {
		struct block *b = &s->b[s->work[--s->nwork]];

		scan_range(s, b->c.start, b->c.start + b->c.size, mark);
	}
}

/*
 * A private file mapping whose file shrank raises SIGBUS past the file's
 * end: the scan of that mapping stops there, as a reader would.  The jump
 * leaves the tables consistent: the load is the only access that can
 * fault, and it comes before a block is marked and queued.
 */
static sigjmp_buf bus_env;

static void on_bus(int sig)
{
	(void)sig;
	siglongjmp(bus_env, 1);
}

static bool scan_guarded(struct scan *s, uintptr_t lo, uintptr_t hi)
{
	if (sigsetjmp(bus_env, 1))
		return false;
	scan_range(s, lo, hi, REACHED);
	return true;
}

/*
 * The roots: private writable mappings that are anonymous (the stacks,
 * the C library's heap, bss) or of a regular file (data segments), not
 * devices, not memfds, not the ADI heap.
 */
static void scan_roots(struct scan *s)
{
	size_t cap = 1 << 20, len = 0;	/* maps of 10000 lines and more */
	char *buf = table(cap), *line, *end;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	struct sigaction bus = { .sa_handler = on_bus }, old_bus;
	ssize_t r;

	if (!buf || fd < 0) {
		am_printf("adimalloc: leak check: cannot read /proc/self/maps\n");
		if (fd >= 0)
			close(fd);
		untable(buf, cap);
		return;
	}
	sigaction(SIGBUS, &bus, &old_bus);
	while (len < cap - 1 && (r = read(fd, buf + len, cap - 1 - len)) > 0)
		len += (size_t)r;
	close(fd);
	buf[len] = 0;
	for (line = buf; line < buf + len; line = end + 1) {
		unsigned long lo, hi, inode;
		char perms[5], path[64] = "";

		end = strchr(line, '\n');
		if (!end)
			end = buf + len;
		*end = 0;
		if (sscanf(line, "%lx-%lx %4s %*s %*s %lu %63s", &lo, &hi, perms, &inode,
			   path) < 4)
			continue;
		if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p')
			continue;
		if (inode && (!strncmp(path, "/dev/", 5) || !strncmp(path, "/memfd:", 7)))
			continue;
		if (am_heap_owns(lo))
			continue;
		if (!scan_guarded(s, lo, hi))
			am_printf("adimalloc: leak check: %lx-%lx %s: SIGBUS, read up to "
				  "there\n", lo, hi, path);
	}
	sigaction(SIGBUS, &old_bus, NULL);
	untable(buf, cap);
}

static void report(struct scan *s)
{
	size_t direct = 0, indirect = 0, bytes = 0;

	am_printf("=================================================================\n"
		  "==%d==ERROR: adimalloc: detected memory leaks\n", (int)getpid());
	/* One entry per allocation stack and kind, largest first would need
	 * a sort; by stack, in address order of their first block. */
	for (size_t i = 0; i < s->n; i++) {
		struct block *b = &s->b[i];
		size_t n = 0, sum = 0;
		const uintptr_t *pcs;
		int depth;

		if (b->mark == REACHED)
			continue;
		for (size_t j = i; j < s->n; j++) {
			struct block *o = &s->b[j];

			if (o->mark != b->mark || o->c.hist.alloc_stack != b->c.hist.alloc_stack)
				continue;
			n++;
			sum += o->c.size;
			if (j != i)
				o->mark = REACHED;	/* counted in this group */
		}
		if (b->mark == INDIRECT)
			indirect += n;
		else
			direct += n;
		bytes += sum;
		am_printf("\n%s leak of %zu byte(s) in %zu object(s) allocated by thread %d here:\n",
			  b->mark == INDIRECT ? "Indirect" : "Direct", sum, n, (int)b->c.hist.alloc_tid);
		depth = am_stack_get(b->c.hist.alloc_stack, &pcs);
		am_stack_print(pcs, depth);
	}
	am_printf("\nSUMMARY: adimalloc: %zu byte(s) leaked in %zu allocation(s) "
		  "(%zu direct, %zu indirect).\n", bytes, direct + indirect, direct, indirect);
}

bool am_leak_check(void)
{
	struct scan s = { 0 };
	size_t live = 0, unreached = 0;
	bool leaked;

	/* Callee-saved registers of this thread onto its stack, a root. */
	__builtin_unwind_init();
	am_heap_lock();
	am_heap_for_each_live(count_live, &live);
	s.cap = live;
	s.b = table(live * sizeof(*s.b));
	s.work = table(live * sizeof(*s.work));
	if (!s.b || !s.work) {
		am_heap_unlock();
		am_printf("adimalloc: leak check: no memory for %zu blocks\n", live);
		untable(s.b, live * sizeof(*s.b));
		untable(s.work, live * sizeof(*s.work));
		return false;
	}
	am_heap_for_each_live(add_live, &s);
	qsort(s.b, s.n, sizeof(*s.b), by_start);
	scan_roots(&s);
	drain(&s, REACHED);
	/* What the leaked blocks reach is leaked too, but indirectly. */
	for (size_t i = 0; i < s.n; i++) {
		if (s.b[i].mark != UNREACHED)
			continue;
		scan_range(&s, s.b[i].c.start, s.b[i].c.start + s.b[i].c.size, INDIRECT);
		drain(&s, INDIRECT);
	}
	for (size_t i = 0; i < s.n; i++)
		unreached += s.b[i].mark != REACHED;
	leaked = unreached > 0;
	if (leaked)
		report(&s);
	am_heap_unlock();
	untable(s.b, live * sizeof(*s.b));
	untable(s.work, live * sizeof(*s.work));
	return leaked;
}
