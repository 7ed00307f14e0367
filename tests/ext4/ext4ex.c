// SPDX-License-Identifier: GPL-2.0
/*
 * ext4ex: mount an image and exercise it, printing one "op=RESULT" line
 * per operation, for tests/ext4/run to compare with an image's .exp.
 *
 *   ext4ex mount DEV DIR ro|rw OPTIONS   mount(2) ext4; prints mount=OK|ERRNO
 *   ext4ex ops MNT OP...                 run each OP under MNT:
 *      walk                 read the whole tree (stat, xattrs, data, links)
 *      stat:P               lstat
 *      list:P               listxattr: number of names
 *      get:P:NAME           getxattr: value length
 *      read:P               bytes read
 *      write:P              create, write 8 KiB, fsync
 *      fsmap                FS_IOC_GETFSMAP (reads every block bitmap)
 *      dirscan:P            entries readdir returns (with . and ..)
 *      seekblock:P:N        entries readdir returns after seekdir(N * 1024)
 *      seekdir:P            the seekdir-into-an-entry revalidation check
 * Results are OK, a number, or an errno name (EUCLEAN is ext4's
 * EFSCORRUPTED, EBADMSG its EFSBADCRC).  Always exits 0 once the
 * arguments parse, so that the caller compares every result.
 */
#include <sys/mount.h>
#include "exercise.h"

static const char *num_or_err(long v)
{
	static char buf[32];

	if (v < 0)
		return errname((int)-v);
	snprintf(buf, sizeof(buf), "%ld", v);
	return buf;
}

/* MNT/P for an op argument P that starts with '/'. */
static const char *at(const char *mnt, const char *p, size_t n)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s%.*s", mnt, (int)n, p);
	return buf;
}

static void run_op(const char *mnt, const char *op)
{
	const char *arg = strchr(op, ':');
	const char *res;
	char bad[512] = "";
	struct stat st;
	struct walk w;
	ssize_t n;

	if (!strcmp(op, "walk")) {
		res = errname(op_walk(mnt, &w));
		printf("walk=%s\n# walk: %d entries, %d errors\n", res, w.entries, w.errors);
		return;
	}
	if (!strcmp(op, "fsmap")) {
		printf("fsmap=%s\n", errname(op_fsmap(mnt)));
		return;
	}
	if (!arg) {
		printf("%s=BADOP\n", op);
		return;
	}
	arg++;
	if (!strncmp(op, "stat:", 5)) {
		res = errname(lstat(at(mnt, arg, strlen(arg)), &st) ? errno : 0);
	} else if (!strncmp(op, "list:", 5)) {
		const char *p = at(mnt, arg, strlen(arg));
		static char names[65536];
		long cnt = 0;

		n = llistxattr(p, names, sizeof(names));
		for (ssize_t i = 0; i < n; i += strlen(names + i) + 1)
			cnt++;
		res = num_or_err(n < 0 ? -errno : cnt);
	} else if (!strncmp(op, "get:", 4)) {
		const char *c = strchr(arg, ':');

		if (!c) {
			printf("%s=BADOP\n", op);
			return;
		}
		n = lgetxattr(at(mnt, arg, c - arg), c + 1, xbuf, sizeof(xbuf) - 1);
		res = num_or_err(n < 0 ? -errno : n);
	} else if (!strncmp(op, "read:", 5)) {
		int fd = open(at(mnt, arg, strlen(arg)), O_RDONLY);
		long total = 0;

		if (fd < 0) {
			total = -errno;
		} else {
			while ((n = read(fd, rbuf, sizeof(rbuf))) > 0 && total < READ_MAX)
				total += n;
			if (n < 0)
				total = -errno;
			close(fd);
		}
		res = num_or_err(total);
	} else if (!strncmp(op, "write:", 6)) {
		res = errname(op_write(at(mnt, arg, strlen(arg))));
	} else if (!strncmp(op, "dirscan:", 8)) {
		res = num_or_err(op_dirscan(at(mnt, arg, strlen(arg)), -1));
	} else if (!strncmp(op, "seekblock:", 10)) {
		const char *c = strchr(arg, ':');

		if (!c) {
			printf("%s=BADOP\n", op);
			return;
		}
		res = num_or_err(op_dirscan(at(mnt, arg, c - arg), atol(c + 1) * 1024));
	} else if (!strncmp(op, "seekdir:", 8)) {
		int e = op_seekdir(at(mnt, arg, strlen(arg)), bad, sizeof(bad));

		res = e < 0 ? "WRONG" : errname(e);
	} else {
		printf("%s=BADOP\n", op);
		return;
	}
	printf("%s=%s\n", op, res);
	if (*bad)
		printf("# %s: %s\n", op, bad);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && !strcmp(argv[1], "mount")) {
		unsigned long fl = strcmp(argv[4], "ro") ? 0 : MS_RDONLY;

		printf("mount=%s\n", errname(mount(argv[2], argv[3], "ext4", fl, argv[5]) ? errno : 0));
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "ops")) {
		for (int i = 3; i < argc; i++)
			run_op(argv[2], argv[i]);
		return 0;
	}
	fprintf(stderr, "usage: ext4ex mount DEV DIR ro|rw OPTIONS | ops MNT OP...\n");
	return 2;
}
