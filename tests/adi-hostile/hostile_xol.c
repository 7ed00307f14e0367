// SPDX-License-Identifier: GPL-2.0
/*
 * xol: the page the kernel steps checked instructions in ("[adi_xol]",
 * issue 43), against a program that treats it as its own.
 *
 *   xol-map        a stepped access maps one read+execute [adi_xol] area
 *   xol-hostile    the program cannot make it writable, move it, or write
 *                  it through /proc/self/mem; unmapped, the next step maps
 *                  a new one; a forked child gets its own
 *   xol-threads    more threads than CPUs stepping at once, each through
 *                  its own versioned pointer: every access lands, once
 *
 * The instruction stepped is "lock xadd" through a versioned pointer: the
 * kernel checks it and single-steps it (it emulates plain movs instead).
 */
#include <pthread.h>
#include <sys/syscall.h>

#include "hostile.h"

#define XOL_VER		5

/* One checked, stepped read-modify-write: returns the old value. */
static uint64_t stepped_xadd(uint64_t *vptr, uint64_t add)
{
	__asm__ volatile("lock xaddq %0, (%1)" : "+r"(add) : "r"(vptr) : "memory");
	return add;
}

/* The [adi_xol] areas of this process: how many, the first's range. */
static int xol_areas(uintptr_t *start, uintptr_t *end, char perms[5])
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		char p[5];

		if (!strstr(line, "[adi_xol]") ||
		    sscanf(line, "%lx-%lx %4s", &s, &e, p) != 3)
			continue;
		if (!n++) {
			*start = s;
			*end = e;
			memcpy(perms, p, 5);
		}
	}
	fclose(f);
	return n;
}

static uint64_t *xol_block(void)
{
	static uint64_t *mem;

	if (!mem)
		mem = adi_region(4096, XOL_VER);
	return adi_make_ptr(mem, XOL_VER);
}

static void xol_map(void)
{
	uint64_t *v = xol_block();
	uintptr_t s = 0, e = 0;
	char perms[5] = "";
	int n;

	v[0] = 40;
	tap_eq_long((long)stepped_xadd(v, 2), 40,
		    "lock xadd through a matching versioned pointer returns the old value");
	tap_eq_long((long)v[0], 42, "... and the sum lands");
	n = xol_areas(&s, &e, perms);
	tap_eq_long(n, 1, "one [adi_xol] area after a step");
	tap_eq_str(perms, "r-xp", "[adi_xol] is read and execute only, private");
	tap_ok(n == 1 && e > s && (e - s) % 4096 == 0,
	       "[adi_xol] is whole pages (got %#lx-%#lx)", (unsigned long)s, (unsigned long)e);
}

/* The slots hold instructions the kernel checked: nobody else writes them. */
static void xol_hostile(void)
{
	uint64_t *v = xol_block();
	uintptr_t s = 0, e = 0, s2 = 0, e2 = 0;
	char perms[5], probe[16], before[16];
	void *dest, *moved;
	long ret;
	int fd, n, status = -1;
	pid_t pid, waited;

	stepped_xadd(v, 1);
	if (xol_areas(&s, &e, perms) != 1) {
		tap_ok(0, "set-up: no [adi_xol] area after a step");
		return;
	}
	tap_errno(mprotect((void *)s, e - s, PROT_READ | PROT_WRITE | PROT_EXEC), EACCES,
		  "mprotect() cannot make [adi_xol] writable");
	dest = mmap(NULL, e - s, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	moved = mremap((void *)s, e - s, e - s, MREMAP_MAYMOVE | MREMAP_FIXED, dest);
	tap_errno(moved == MAP_FAILED ? -1 : 0, EINVAL, "mremap() cannot move [adi_xol]");
	n = xol_areas(&s2, &e2, perms);
	tap_ok(n == 1 && s2 == s && e2 == e,
	       "[adi_xol] stays where it was (got %#lx-%#lx, want %#lx-%#lx)",
	       (unsigned long)s2, (unsigned long)e2, (unsigned long)s, (unsigned long)e);
	munmap(dest, e - s);

	memcpy(before, (void *)s, sizeof(before));
	memset(probe, 0xcc, sizeof(probe));
	fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ret = fd < 0 ? -2 : pwrite(fd, probe, sizeof(probe), (off_t)s);
	tap_errno(ret, EIO, "a forced write through /proc/self/mem into [adi_xol] fails");
	tap_eq_mem((void *)s, before, sizeof(before), "... and leaves the slots as they were");
	if (fd >= 0)
		close(fd);

	ret = munmap((void *)s, e - s);
	n = xol_areas(&s2, &e2, perms);
	tap_ok(!ret && n == 0, "the program may unmap [adi_xol] (munmap %ld, areas left %d)",
	       ret, n);
	v[1] = 7;
	tap_eq_long((long)stepped_xadd(v + 1, 1), 7, "the next step after the unmap works");
	tap_eq_long((long)v[1], 8, "... and its sum lands");
	tap_eq_long(xol_areas(&s2, &e2, perms), 1, "... through a new [adi_xol] area");

	pid = fork();
	if (!pid) {
		uintptr_t cs, ce;
		char cp[5];
		int before_step = xol_areas(&cs, &ce, cp);

		v[2] = 100;
		if (before_step != 0)
			_exit(3);	/* VM_DONTCOPY: not inherited */
		if (stepped_xadd(v + 2, 5) != 100 || v[2] != 105)
			_exit(4);
		_exit(xol_areas(&cs, &ce, cp) == 1 ? 0 : 5);
	}
	waited = pid > 0 ? waitpid(pid, &status, 0) : -1;
	tap_ok(waited == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "a forked child starts without [adi_xol], steps, and maps its own "
	       "(child status %#x; 3 inherited, 4 wrong sum, 5 no area)", status);
}

#define XOL_THREADS	8
#define XOL_ROUNDS	2000

static void *xol_thread(void *arg)
{
	uint64_t *v = arg;
	long i;

	for (i = 0; i < XOL_ROUNDS; i++) {
		if (stepped_xadd(v, 1) != (uint64_t)i)
			return (void *)1;
		if (!(i % 64))
			sched_yield();	/* move between CPUs mid-run */
	}
	return NULL;
}

static void xol_threads_child(void *arg)
{
	pthread_t t[XOL_THREADS];
	uint64_t *mem = adi_region(4096, -1);
	long bad = 0;
	int i;

	(void)arg;
	/* Each thread its own block and version. */
	for (i = 0; i < XOL_THREADS; i++) {
		if (adi_set_version(mem + 8 * i, 64, 1 + i))
			_exit(2);
		mem[8 * i] = 0;
	}
	for (i = 0; i < XOL_THREADS; i++)
		if (pthread_create(&t[i], NULL, xol_thread, adi_make_ptr(mem + 8 * i, 1 + i)))
			_exit(2);
	for (i = 0; i < XOL_THREADS; i++) {
		void *r;

		pthread_join(t[i], &r);
		bad += r != NULL || mem[8 * i] != XOL_ROUNDS;
	}
	_exit(bad ? 1 : 0);
}

static void xol_threads(void)
{
	struct bounded r;
	long limit = 120000L * hostile_slow();

	run_bounded(xol_threads_child, NULL, limit, &r);
	note_wedged(&r);
	check_finished("xol-threads", &r, limit);
	tap_ok(exited_zero(&r),
	       "%d threads x %d stepped xadds, each on its own versioned block: every one "
	       "returned the value before it and every sum landed (child %s)",
	       XOL_THREADS, XOL_ROUNDS, describe(&r));
}

int main(void)
{
	tap_init();
	hostile_group("xol-map", xol_map);
	hostile_group("xol-hostile", xol_hostile);
	hostile_group("xol-threads", xol_threads);
	return tap_done();
}
