// SPDX-License-Identifier: GPL-2.0
/*
 * Versions and the memory manager's sharing of pages: a transparent huge
 * page split into 512 pages (versions are kept per page: the split must
 * hand each subpage its own), the shared zero page (a page every process
 * reads: versioning it would version everyone's never-written memory),
 * copy-on-write (re-versioning one side must not re-version the
 * other), and the memory cgroup that pays for the versions' records.
 */
#include <poll.h>
#include <sys/stat.h>

#include "hostile.h"

#define LIMIT_MS 30000
#define HPAGE (2UL << 20)

/* rep movsb: the kernel checks and copies it whole, one trap for all. */
static void copy_rep(void *dst, const void *src, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

/* ---- thp-split ------------------------------------------------------------ */

/* AnonHugePages (kB) of the mapping that starts at @start, or -1. */
static long anon_huge_kb(void *start)
{
	char line[256], head[32];
	FILE *f = fopen("/proc/self/smaps", "r");
	long kb = -1;
	int in = 0;

	if (!f)
		return -1;
	snprintf(head, sizeof(head), "%lx-", (unsigned long)start);
	while (fgets(line, sizeof(line), f)) {
		/* Mapping lines start with a (lower-case hex) address, fields with a capital. */
		if ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f'))
			in = !strncmp(line, head, strlen(head));
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static void read_setting(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -1;
	ret = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
	close(fd);
	return ret;
}

static char *thp;

/* Read the 2 MiB through a version-6 pointer: byte 100 is 0x5a, the rest 0. */
static void thp_read_versioned(void *arg)
{
	char *copy = malloc(HPAGE);
	long bad = 0;

	(void)arg;
	copy_rep(copy, adi_make_ptr(thp, 6), HPAGE);
	for (size_t i = 0; i < HPAGE; i++)
		bad += copy[i] != (i == 100 ? 0x5a : 0);
	_exit(bad ? 1 : 0);
}

static void thp_child(void *arg)
{
	char *raw, setting[128], cmd[128];
	int not6 = 0, not6_all = 0, ret, err;
	struct bounded r;
	long kb;

	(void)arg;
	raw = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		exit(1);
	thp = (char *)(((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1));
	madvise(thp, HPAGE, MADV_HUGEPAGE);
	if (adi_enable(thp, HPAGE, PROT_READ | PROT_WRITE)) {
		tap_ok(0, "thp-split: mprotect(PROT_ADI) of 2 MiB (got %s)", strerror(errno));
		return;
	}
	thp[100] = 0x5a;
	kb = anon_huge_kb(thp);
	if (kb != 2048) {
		read_setting("/sys/kernel/mm/transparent_hugepage/enabled", setting, sizeof(setting));
		tap_skip("no THP", "thp-split: the touched region is not a huge page "
			 "(AnonHugePages %ld kB; THP enabled: %s)", kb, setting);
		return;
	}
	ret = adi_set_version(thp, HPAGE, 6);
	tap_ok(ret == 0, "thp-split: version 6 on the whole huge page (got %d %s, want 0)", ret,
	       ret ? strerror(errno) : "");
	for (int i = 0; i < 512; i++)
		not6 += adi_get_version(thp + i * 4096) != 6;
	tap_diag("thp-split: before the split, %d of 512 subpages' first block not version 6", not6);

	snprintf(cmd, sizeof(cmd), "%d,0x%lx,0x%lx", getpid(), (unsigned long)thp,
		 (unsigned long)thp + HPAGE);
	ret = write_file("/sys/kernel/debug/split_huge_pages", cmd);
	err = ret ? errno : 0;
	kb = anon_huge_kb(thp);
	tap_eq_long(ret, 0, "thp-split: the write of '%s' to split_huge_pages succeeds (errno %s)",
		    cmd, err ? errno_name(err) : "none");
	tap_eq_long(kb, 0, "thp-split: split_huge_pages split it: AnonHugePages kB");

	not6 = 0;
	for (int i = 0; i < 512; i++)
		not6 += adi_get_version(thp + i * 4096) != 6;
	for (size_t off = 0; off < HPAGE; off += BLK)
		not6_all += adi_get_version(thp + off) != 6;
	tap_ok(not6 == 0,
	       "thp-split: after the split every subpage keeps version 6 (got %d of 512 not 6, "
	       "%d of 32768 blocks; want 0)", not6, not6_all);
	run_bounded(thp_read_versioned, NULL, 10000, &r);
	tap_ok(exited_zero(&r),
	       "thp-split: a version-6 pointer reads the data: the written byte, the rest zero "
	       "(got %s, want exit 0)", describe(&r));
}

static void test_thp_split(void)
{
	struct bounded r;

	if (access("/sys/kernel/debug/split_huge_pages", W_OK)) {
		tap_skip("no split_huge_pages", "thp-split: /sys/kernel/debug/split_huge_pages: %s",
			 strerror(errno));
		return;
	}
	run_bounded(thp_child, NULL, LIMIT_MS, &r);
	check_finished("thp-split", &r, LIMIT_MS);
}

/* ---- zero-page -------------------------------------------------------------- */

struct zero_result {
	int b_plain_nonzero;	/* bytes of B's plain mapping that are not 0 */
	int b_adi_not0;		/* blocks of B's ADI mapping whose version is not 0 */
	int b_adi_nonzero;
	int a_set_ret, a_set_err;
	int a_not3;
	int a_nonzero;
};

static struct zero_result *zres;
#define ZLEN (4 * 4096)

/* Read every page (one load each): a never-written page maps the zero page. */
static long touch_read(const char *p, size_t len)
{
	long sum = 0;

	for (size_t off = 0; off < len; off += 4096)
		sum += ((const volatile char *)p)[off];
	return sum;
}

static long count_nonzero(const char *p, size_t len)
{
	long n = 0;

	for (size_t i = 0; i < len; i++)
		n += p[i] != 0;
	return n;
}

/* A: read its ADI memory first, then version it 3. */
static void zero_a(void *arg)
{
	char *p = adi_region(ZLEN, -1), copy[ZLEN];

	(void)arg;
	touch_read(p, ZLEN);
	zres->a_set_ret = adi_set_version(p, ZLEN, 3);
	zres->a_set_err = zres->a_set_ret ? errno : 0;
	for (size_t off = 0; off < ZLEN; off += BLK)
		zres->a_not3 += adi_get_version(p + off) != 3;
	copy_rep(copy, adi_make_ptr(p, 3), ZLEN);
	zres->a_nonzero = count_nonzero(copy, ZLEN);
}

static void test_zero_page(void)
{
	int ready[2], go[2];
	struct bounded r;
	char c = 0;
	pid_t b;
	int status;

	zres = hostile_shared(sizeof(*zres));
	if (pipe(ready) || pipe(go))
		exit(1);
	/* B, before A: plain and ADI memory that it only reads. */
	b = fork();
	if (b < 0) {
		/* Nobody would write to 'ready': the read below would wait forever. */
		tap_wait_exit0(b, "zero-page: B finishes");
		return;
	}
	if (b == 0) {
		char *plain = mmap(NULL, ZLEN, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *adi = adi_region(ZLEN, -1);
		struct pollfd pfd = { .fd = go[0], .events = POLLIN };

		touch_read(plain, ZLEN);
		touch_read(adi, ZLEN);
		if (write(ready[1], &c, 1) != 1 || poll(&pfd, 1, 20000) != 1)
			_exit(1);
		zres->b_plain_nonzero = count_nonzero(plain, ZLEN);
		zres->b_adi_nonzero = count_nonzero(adi, ZLEN);
		for (size_t off = 0; off < ZLEN; off += BLK)
			zres->b_adi_not0 += adi_get_version(adi + off) != 0;
		_exit(0);
	}
	if (read(ready[0], &c, 1) != 1)
		exit(1);
	run_bounded(zero_a, NULL, LIMIT_MS, &r);
	check_finished("zero-page: A versions memory it has only read", &r, LIMIT_MS);
	tap_ok(zres->a_set_ret == 0, "zero-page: A's adi_set_version succeeds (got %d %s, want 0)",
	       zres->a_set_ret, errno_name(zres->a_set_err));
	if (!exited_zero(&r)) {
		no_result(&r, "zero-page: A's memory has version 3");
		no_result(&r, "zero-page: A reads zeros through a version-3 pointer");
	} else {
		tap_eq_long(zres->a_not3, 0, "zero-page: A's memory has version 3: blocks not 3 "
			    "(of %d)", ZLEN / BLK);
		tap_eq_long(zres->a_nonzero, 0, "zero-page: A reads zeros through a version-3 "
			    "pointer: non-zero bytes");
	}
	if (write(go[1], &c, 1) != 1)
		exit(1);
	if (!reap_within(b, 20000, &status)) {
		kill(b, SIGKILL);
		tap_ok(0, "zero-page: B finishes (got no end within 20 s)");
		return;
	}
	tap_exit0(status, "zero-page: B finishes");
	tap_ok(zres->b_adi_not0 == 0,
	       "zero-page: B's read-only-faulted ADI memory still has version 0 "
	       "(got %d of %d blocks not 0, want 0)", zres->b_adi_not0, ZLEN / BLK);
	tap_eq_long(zres->b_plain_nonzero, 0,
		    "zero-page: B's never-written memory reads zeros: plain non-zero bytes");
	tap_eq_long(zres->b_adi_nonzero, 0,
		    "zero-page: B's never-written memory reads zeros: ADI non-zero bytes");
}

/* ---- cow-reversion ------------------------------------------------------------ */

#define CLEN (4 * 4096)

static void fill(char *p, size_t len, int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (char)(seed + i * 31);
}

/* Blocks of [p, p + len) whose version is not @v. */
static int not_version(const char *p, size_t len, int v)
{
	int n = 0;

	for (size_t off = 0; off < len; off += BLK)
		n += adi_get_version(p + off) != v;
	return n;
}

/* The data, read through a version-@v pointer, is what fill(seed) wrote. */
static int reads_as(const char *p, size_t len, int v, int seed)
{
	char *copy = malloc(len), *want = malloc(len);
	int same;

	copy_rep(copy, adi_make_ptr(p, v), len);
	fill(want, len, seed);
	same = !memcmp(copy, want, len);
	free(copy);
	free(want);
	return same;
}

/* Re-version to 7 and write new data through a version-7 pointer. */
static int reversion(char *p, size_t len, int seed)
{
	char *data = malloc(len);
	int ret = adi_set_version(p, len, 7);

	fill(data, len, seed);
	copy_rep(adi_make_ptr(p, 7), data, len);
	free(data);
	return ret;
}

static void side_checks(const char *who, const char *what, const char *p, int v, int seed)
{
	int n = not_version(p, CLEN, v);

	int same;

	tap_ok(n == 0, "cow-reversion: %s: %s has version %d (got %d of %d blocks not %d, want 0)",
	       who, what, v, n, CLEN / BLK, v);
	same = reads_as(p, CLEN, v, seed);
	tap_ok(same, "cow-reversion: %s: %s reads through a version-%d pointer as written "
	       "(got %s, want the same bytes)", who, what, v, same ? "the same bytes" : "other bytes");
}

static void cow_child(void *arg)
{
	char *a = adi_region(CLEN, 5), *b = adi_region(CLEN, 5), c = 0;
	int to_child[2], to_parent[2], n;
	pid_t pid;

	(void)arg;
	fill(a, CLEN, 1);
	fill(b, CLEN, 2);
	if (pipe(to_child) || pipe(to_parent))
		exit(1);
	pid = fork();
	if (pid < 0) {
		/* No child to hand the pipe to: the parent would wait for it forever. */
		tap_wait_exit0(pid, "cow-reversion: the child finishes");
		exit(1);
	}
	if (pid == 0) {
		if (read(to_child[0], &c, 1) != 1)
			_exit(1);
		/* The parent re-versioned a: our copy is untouched. */
		side_checks("the child", "its copy of the parent's re-versioned region", a, 5, 1);
		n = reversion(b, CLEN, 20);
		tap_ok(n == 0, "cow-reversion: the child re-versions its region (got %d, want 0)", n);
		side_checks("the child", "its re-versioned region", b, 7, 20);
		if (write(to_parent[1], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	n = reversion(a, CLEN, 10);
	tap_ok(n == 0, "cow-reversion: the parent re-versions its region (got %d, want 0)", n);
	if (write(to_child[1], &c, 1) != 1 || read(to_parent[0], &c, 1) != 1)
		exit(1);
	side_checks("the parent", "its re-versioned region", a, 7, 10);
	side_checks("the parent", "its copy of the child's re-versioned region", b, 5, 2);
	tap_wait_exit0(pid, "cow-reversion: the child finishes");
}

static void test_cow_reversion(void)
{
	struct bounded r;

	run_bounded(cow_child, NULL, LIMIT_MS, &r);
	check_finished("cow-reversion", &r, LIMIT_MS);
}

/* ---- memcg-charge ------------------------------------------------------- */

/*
 * Setting versions makes the kernel keep a record per page.  Those records
 * must count against the caller's memory cgroup, or a process grows kernel
 * memory past its limit; freeing the pages must give the charge back.
 */
#define MEMCG		"/sys/fs/cgroup/adi-hostile"
#define MEMCG_LEN	(16UL << 20)
#define MEMCG_PAGES	(MEMCG_LEN / 4096)
#define RECORD_BYTES	32	/* one version per 64-byte block, 4 bits each */

struct memcg_result {
	int set_ret, set_err;
	long before, versioned, freed;	/* slab_unreclaimable, bytes */
};

static struct memcg_result *mres;

static long memcg_slab(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen(MEMCG "/memory.stat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "slab_unreclaimable %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void memcg_child(void *arg)
{
	char *p;

	(void)arg;
	if (write_file(MEMCG "/cgroup.procs", "0"))
		_exit(2);
	p = mmap(NULL, MEMCG_LEN, PROT_READ | PROT_WRITE | PROT_ADI,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		_exit(3);
	mres->before = memcg_slab();
	mres->set_ret = adi_set_version(p, MEMCG_LEN, 5);
	mres->set_err = errno;
	mres->versioned = memcg_slab();
	munmap(p, MEMCG_LEN);
	mres->freed = memcg_slab();
}

static void test_memcg_charge(void)
{
	long want = MEMCG_PAGES * RECORD_BYTES, grew, kept;
	struct bounded r;

	write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	if (mkdir(MEMCG, 0755) && errno != EEXIST) {
		tap_skip("no cgroup v2", "memcg-charge: mkdir %s: %s", MEMCG, strerror(errno));
		return;
	}
	if (access(MEMCG "/memory.stat", R_OK)) {
		tap_skip("no memory controller", "memcg-charge: %s/memory.stat: %s", MEMCG,
			 strerror(errno));
		rmdir(MEMCG);
		return;
	}
	mres = hostile_shared(sizeof(*mres));
	run_bounded(memcg_child, NULL, LIMIT_MS, &r);
	check_finished("memcg-charge", &r, LIMIT_MS);
	grew = mres->versioned - mres->before;
	kept = mres->freed - mres->before;
	tap_ok(mres->set_ret == 0, "memcg-charge: versions set on %lu pages (got %d %s, want 0)",
	       MEMCG_PAGES, mres->set_ret, mres->set_ret ? strerror(mres->set_err) : "");
	tap_ok(grew >= want,
	       "memcg-charge: the cgroup pays for the version records (slab grew %ld bytes, want at least %ld)",
	       grew, want);
	tap_ok(kept < want / 2,
	       "memcg-charge: freeing the pages gives the charge back (still %ld bytes over, want under %ld)",
	       kept, want / 2);
	rmdir(MEMCG);
}

int main(void)
{
	tap_init();
	hostile_group("thp-split", test_thp_split);
	hostile_group("zero-page", test_zero_page);
	hostile_group("cow-reversion", test_cow_reversion);
	hostile_group("memcg-charge", test_memcg_charge);
	return tap_done();
}
