// SPDX-License-Identifier: GPL-2.0
/*
 * Setting a version is a store: it changes what every process mapping the
 * page sees (a version-5 pointer of the owner stops working after someone
 * sets 7).  A process that may only read shared memory must not be able
 * to do it: a read-only tmpfs or hugetlbfs file, a memfd sealed against
 * writes, a SysV segment attached SHM_RDONLY.  Wanted: EACCES and the
 * owner's versions unchanged, or PROT_ADI refused on such a mapping in
 * the first place (also safe); and the owner, through its own writable
 * mapping, can still set versions.
 */
#include <grp.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/shm.h>
#include <sys/stat.h>

#include "hostile.h"

#define MEM	5	/* the owner's version */
#define OTHER	7	/* what the reader tries to set */
#define NOBODY	65534
#define LIMIT_MS 5000
#define HUGE_DIR "/run/adi-hostile-hugetlbfs"
#define HUGE_SIZE (2UL << 20)

/* A shared object as the reader gets it, and the owner's mapping of it. */
struct target {
	const char *name;
	const char *path;	/* open this O_RDONLY (after dropping root), */
	int fd;			/* or map this descriptor, */
	int shmid;		/* or shmat(SHM_RDONLY) this (when >= 0) */
	size_t map_len;
	int drop_root;
	char *owner;		/* the owner's ADI mapping (first 4 KiB versioned MEM) */
};

struct perm_result {
	int dropped;
	int map_err;		/* the reader's mmap/shmat failed with this */
	int mprotect_ret, mprotect_err;
	int set_ret, set_err;
	int segv_code;		/* a SIGSEGV the reader caught (SEGV_ACCADI) */
};

static struct perm_result *res;

static void catch_accadi(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	res->segv_code = si->si_code;
	if (si->si_code != SEGV_ACCADI)
		signal(sig, SIG_DFL);	/* a real fault: die of it */
}

static void reader(void *arg)
{
	const struct target *t = arg;
	struct sigaction sa = { .sa_sigaction = catch_accadi, .sa_flags = SA_SIGINFO };
	void *p;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	if (t->drop_root) {
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			return;
		res->dropped = 1;
	}
	if (t->shmid >= 0) {
		p = shmat(t->shmid, NULL, SHM_RDONLY);
	} else {
		int fd = t->path ? open(t->path, O_RDONLY) : t->fd;

		p = fd < 0 ? MAP_FAILED : mmap(NULL, t->map_len, PROT_READ, MAP_SHARED, fd, 0);
	}
	if (p == MAP_FAILED || p == (void *)-1) {
		res->map_err = errno;
		return;
	}
	res->mprotect_ret = mprotect(p, t->map_len, PROT_READ | PROT_ADI);
	res->mprotect_err = res->mprotect_ret ? errno : 0;
	if (res->mprotect_ret)
		return;
	res->set_ret = adi_set_version(p, 4096, OTHER);
	res->set_err = res->set_ret ? errno : 0;
}

/* Blocks of the owner's first 4 KiB whose version is not MEM. */
static int owner_blocks_changed(const struct target *t)
{
	int n = 0;

	for (int off = 0; off < 4096; off += BLK)
		n += adi_get_version(t->owner + off) != MEM;
	return n;
}

/* The owner's version-MEM pointer reads its data: in a child, in case not. */
static void owner_reads(void *arg)
{
	const struct target *t = arg;
	const volatile uint64_t *p = adi_make_ptr(t->owner, MEM);

	for (int i = 0; i < 4096 / 8; i++)
		if (p[i] != 0x0101010101010101ULL * (uint8_t)(i + 1))
			_exit(1);
}

static void owner_fill(char *p)
{
	for (int i = 0; i < 4096 / 8; i++)
		memset(p + 8 * i, (uint8_t)(i + 1), 8);
}

static void try_reader(const struct target *t)
{
	struct bounded r;
	int changed;

	memset(res, 0, sizeof(*res));
	run_bounded(reader, (void *)t, LIMIT_MS, &r);
	note_wedged(&r);
	check_finished(t->name, &r, LIMIT_MS);
	if (t->drop_root && !res->dropped) {
		tap_ok(0, "%s: the reader could not drop root to uid %d", t->name, NOBODY);
		return;
	}
	if (res->map_err) {
		tap_ok(0, "%s: the reader could not map it read-only (got %s, want a mapping)",
		       t->name, errno_name(res->map_err));
		return;
	}
	if (res->mprotect_ret) {
		tap_ok(res->mprotect_err == EACCES || res->mprotect_err == EINVAL,
		       "%s: PROT_ADI refused on the read-only mapping (got %s, want EACCES or EINVAL)",
		       t->name, errno_name(res->mprotect_err));
	} else {
		tap_diag("%s: mprotect(PROT_READ | PROT_ADI) on the read-only mapping succeeded",
			 t->name);
		errno = res->set_err;	/* the reader's, for tap_errno() */
		tap_errno(res->set_ret, EACCES,
			  "%s: setting version %d through the read-only mapping fails with EACCES%s",
			  t->name, OTHER,
			  res->segv_code == SEGV_ACCADI ? " (it raised SIGSEGV SEGV_ACCADI)" : "");
	}
	if (t->owner) {
		changed = owner_blocks_changed(t);
		tap_ok(changed == 0,
		       "%s: the owner's versions are unchanged (got %d of 64 blocks changed, want 0)",
		       t->name, changed);
		run_bounded(owner_reads, (void *)t, LIMIT_MS, &r);
		tap_ok(exited_zero(&r),
		       "%s: the owner's version-%d pointer still reads its data (got %s, want exit 0)",
		       t->name, MEM, describe(&r));
	}
}

/* The owner versions its writable shared ADI mapping: the positive control. */
static char *owner_map(const char *name, int fd, size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int ret;

	if (p == MAP_FAILED) {
		tap_ok(0, "%s: the owner maps it read/write (got %s)", name, strerror(errno));
		return NULL;
	}
	owner_fill(p);
	ret = adi_enable(p, len, PROT_READ | PROT_WRITE);
	if (!ret)
		ret = adi_set_version(p, 4096, MEM);
	tap_ok(ret == 0,
	       "%s: the owner's writable shared mapping can set versions (got %d %s, want 0)",
	       name, ret, ret ? errno_name(errno) : "");
	return ret ? NULL : p;
}

static void test_tmpfs(void)
{
	char path[] = "/dev/shm/adi-hostile-XXXXXX";
	struct target t = { .name = "tmpfs file 0644, reader uid 65534", .path = path,
			    .shmid = -1, .map_len = 4096, .drop_root = 1 };
	int fd = mkstemp(path);

	if (fd < 0 || fchmod(fd, 0644) || ftruncate(fd, 4096)) {
		tap_ok(0, "%s: create %s: %s", t.name, path, strerror(errno));
		return;
	}
	t.owner = owner_map(t.name, fd, 4096);
	if (t.owner)
		try_reader(&t);
	unlink(path);
	close(fd);
}

static int set_hugepages(int n)
{
	char text[32];
	int fd = open("/proc/sys/vm/nr_hugepages", O_RDWR), got = -1;
	ssize_t len;

	if (fd < 0)
		return -1;
	len = snprintf(text, sizeof(text), "%d\n", n);
	if (write(fd, text, len) != len) {
		/* fall through: read what there is */
	}
	memset(text, 0, sizeof(text));
	if (pread(fd, text, sizeof(text) - 1, 0) > 0)
		got = atoi(text);
	close(fd);
	return got;
}

static void test_hugetlbfs(void)
{
	const char *path = HUGE_DIR "/file";
	struct target t = { .name = "hugetlbfs file 0644, reader uid 65534", .path = path,
			    .shmid = -1, .map_len = HUGE_SIZE, .drop_root = 1 };
	int fd, pages;

	mkdir(HUGE_DIR, 0755);
	if (mount("none", HUGE_DIR, "hugetlbfs", 0, "mode=0755")) {
		tap_skip("no hugetlbfs", "%s: mount hugetlbfs: %s", t.name, strerror(errno));
		return;
	}
	pages = set_hugepages(4);
	if (pages < 2) {
		tap_skip("no huge pages", "%s: nr_hugepages is %d after asking for 4", t.name, pages);
		goto out;
	}
	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || fchmod(fd, 0644) || ftruncate(fd, HUGE_SIZE)) {
		tap_ok(0, "%s: create: %s", t.name, strerror(errno));
		goto out;
	}
	t.owner = owner_map(t.name, fd, HUGE_SIZE);
	if (t.owner) {
		try_reader(&t);
		munmap(t.owner, HUGE_SIZE);
	}
	close(fd);
	unlink(path);
out:
	umount(HUGE_DIR);
	set_hugepages(0);
}

static void test_memfd_future_write(void)
{
	struct target t = { .name = "memfd sealed F_SEAL_FUTURE_WRITE", .shmid = -1,
			    .map_len = 4096 };
	int fd = memfd_create("adi-hostile", MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, 4096)) {
		tap_ok(0, "%s: memfd_create: %s", t.name, strerror(errno));
		return;
	}
	t.fd = fd;
	/* Versioned before sealing; the owner's writable mapping may stay. */
	t.owner = owner_map(t.name, fd, 4096);
	if (!t.owner)
		return;
	tap_ok(fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE) == 0,
	       "%s: the seal is set (got %s)", t.name, strerror(errno));
	try_reader(&t);
	close(fd);
}

static void test_memfd_write(void)
{
	struct target t = { .name = "memfd sealed F_SEAL_WRITE", .shmid = -1, .map_len = 4096 };
	int fd = memfd_create("adi-hostile", MFD_ALLOW_SEALING);
	char *w;

	if (fd < 0 || ftruncate(fd, 4096)) {
		tap_ok(0, "%s: memfd_create: %s", t.name, strerror(errno));
		return;
	}
	t.fd = fd;
	w = owner_map(t.name, fd, 4096);
	if (!w)
		return;
	munmap(w, 4096);	/* F_SEAL_WRITE needs no writable mapping left */
	tap_ok(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) == 0, "%s: the seal is set (got %s)",
	       t.name, strerror(errno));
	/* The owner reads its versions through a read-only ADI mapping. */
	t.owner = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (t.owner == MAP_FAILED || mprotect(t.owner, 4096, PROT_READ | PROT_ADI)) {
		tap_diag("%s: the owner cannot map it read-only with PROT_ADI (%s): "
			 "versions not read back", t.name, strerror(errno));
		t.owner = NULL;
	}
	try_reader(&t);
	close(fd);
}

static void test_shm_rdonly(void)
{
	struct target t = { .name = "SysV shm attached SHM_RDONLY", .map_len = 4096 };
	int ret;

	t.shmid = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	if (t.shmid < 0) {
		tap_ok(0, "%s: shmget: %s", t.name, strerror(errno));
		return;
	}
	t.owner = shmat(t.shmid, NULL, 0);
	shmctl(t.shmid, IPC_RMID, NULL);	/* goes with the last detach */
	if (t.owner == (void *)-1) {
		tap_ok(0, "%s: shmat: %s", t.name, strerror(errno));
		return;
	}
	owner_fill(t.owner);
	ret = adi_enable(t.owner, 4096, PROT_READ | PROT_WRITE);
	if (!ret)
		ret = adi_set_version(t.owner, 4096, MEM);
	tap_ok(ret == 0, "%s: the owner's writable attachment can set versions (got %d %s, want 0)",
	       t.name, ret, ret ? errno_name(errno) : "");
	if (!ret)
		try_reader(&t);
	shmdt(t.owner);
}

static void test_set_version_permission(void)
{
	res = hostile_shared(sizeof(*res));
	test_tmpfs();
	test_hugetlbfs();
	test_memfd_future_write();
	test_memfd_write();
	test_shm_rdonly();
}

int main(void)
{
	tap_init();
	hostile_group("set-version-permission", test_set_version_permission);
	return tap_done();
}
