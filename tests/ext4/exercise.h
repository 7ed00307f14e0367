/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the ext4 suite does to a mounted image, shared by ext4ex (crafted
 * images, one operation per argument) and ext4mut (random mutants).
 *
 * Every operation returns a short result string: "OK", a count, or an
 * errno name.  Walks are bounded (depth, entries, bytes read) because a
 * damaged directory can loop back on itself; a bounded walk ends, and a
 * hang is then the kernel's.
 */
#ifndef LK417_EXERCISE_H
#define LK417_EXERCISE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/fsmap.h>
#include <linux/loop.h>

#define WALK_MAX_DEPTH 12
#define WALK_MAX_ENTRIES 4000
#define READ_MAX (1 << 20)

static inline const char *errname(int e)
{
	static char buf[16];

	switch (e) {
	case 0: return "OK";
	case EUCLEAN: return "EUCLEAN"; /* EFSCORRUPTED inside ext4 */
	case EBADMSG: return "EBADMSG"; /* EFSBADCRC inside ext4 */
	case ENODATA: return "ENODATA";
	case EROFS: return "EROFS";
	case EIO: return "EIO";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	case ESTALE: return "ESTALE";
	case ENOSPC: return "ENOSPC";
	case ERANGE: return "ERANGE";
	case ENOTDIR: return "ENOTDIR";
	case ELOOP: return "ELOOP";
	case ENOMEM: return "ENOMEM";
	case EFBIG: return "EFBIG";
	case EOVERFLOW: return "EOVERFLOW";
	case E2BIG: return "E2BIG";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case ENXIO: return "ENXIO";
	case EBUSY: return "EBUSY";
	case ENOTSUP: return "EOPNOTSUPP";
	}
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static char xbuf[65536 + 1];
static char rbuf[65536];

/*
 * Result counters of one walk; first_err is the first errno seen, badcrc
 * counts EBADMSG (ext4's EFSBADCRC: a checksum stopped the access),
 * xerrors the errors of xattr reads.
 */
struct walk {
	int entries, errors, first_err, badcrc, xerrors;
};

static inline void walk_err(struct walk *w, int e)
{
	w->errors++;
	w->badcrc += e == EBADMSG;
	if (!w->first_err)
		w->first_err = e;
}

/* Read every xattr of PATH: list, then get each name. */
static inline void walk_xattrs(struct walk *w, const char *path)
{
	static char names[65536];
	ssize_t n = llistxattr(path, names, sizeof(names));

	if (n < 0) {
		if (errno != ENOTSUP) {
			walk_err(w, errno);
			w->xerrors++;
		}
		return;
	}
	for (ssize_t i = 0; i < n; i += strlen(names + i) + 1)
		if (lgetxattr(path, names + i, xbuf, sizeof(xbuf) - 1) < 0) {
			walk_err(w, errno);
			w->xerrors++;
		}
}

static inline void walk_file(struct walk *w, const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	ssize_t n, total = 0;

	if (fd < 0) {
		walk_err(w, errno);
		return;
	}
	while (total < READ_MAX && (n = read(fd, rbuf, sizeof(rbuf))) > 0)
		total += n;
	if (n < 0 && total < READ_MAX)
		walk_err(w, errno);
	close(fd);
}

static inline void walk_tree(struct walk *w, const char *dir, int depth)
{
	char path[4096];
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (depth > WALK_MAX_DEPTH)
		return;
	d = opendir(dir);
	if (!d) {
		walk_err(w, errno);
		return;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				walk_err(w, errno);
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++w->entries > WALK_MAX_ENTRIES)
			break;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st)) {
			walk_err(w, errno);
			continue;
		}
		walk_xattrs(w, path);
		if (S_ISREG(st.st_mode))
			walk_file(w, path);
		else if (S_ISLNK(st.st_mode)) {
			if (readlink(path, rbuf, sizeof(rbuf)) < 0)
				walk_err(w, errno);
		} else if (S_ISDIR(st.st_mode))
			walk_tree(w, path, depth + 1);
	}
	closedir(d);
}

/* Walk the whole mount: the mount point's own xattrs, then the tree. */
static inline int op_walk(const char *mnt, struct walk *w)
{
	memset(w, 0, sizeof(*w));
	walk_xattrs(w, mnt);
	walk_tree(w, mnt, 0);
	return w->first_err;
}

/* FS_IOC_GETFSMAP over the whole device: reads every group's block bitmap. */
static inline int op_fsmap(const char *mnt)
{
	enum { NR = 32 };
	struct fsmap_head *h = calloc(1, sizeof(*h) + NR * sizeof(struct fsmap));
	int fd = open(mnt, O_RDONLY | O_DIRECTORY), e = 0, rounds = 0;

	if (!h || fd < 0) {
		free(h);
		return fd < 0 ? errno : ENOMEM;
	}
	h->fmh_count = NR;
	h->fmh_keys[1].fmr_device = ~0u;
	h->fmh_keys[1].fmr_physical = ~0ull;
	h->fmh_keys[1].fmr_owner = ~0ull;
	h->fmh_keys[1].fmr_offset = ~0ull;
	h->fmh_keys[1].fmr_flags = ~0u;
	while (rounds++ < 1000) {
		if (ioctl(fd, FS_IOC_GETFSMAP, h)) {
			e = errno;
			break;
		}
		if (!h->fmh_entries || (h->fmh_recs[h->fmh_entries - 1].fmr_flags & FMR_OF_LAST))
			break;
		fsmap_advance(h);
	}
	close(fd);
	free(h);
	return e;
}

/* Create, write 8 KiB, fsync: what a writable mount must allow. */
static inline int op_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = 0;

	if (fd < 0)
		return errno;
	memset(rbuf, 'w', 8192);
	if (write(fd, rbuf, 8192) != 8192 || fsync(fd))
		e = errno ? errno : EIO;
	if (close(fd) && !e)
		e = errno;
	return e;
}

/* Entries readdir returns from position POS (-1: from the start), or -errno. */
static inline long op_dirscan(const char *path, long pos)
{
	DIR *d = opendir(path);
	long n = 0;

	if (!d)
		return -errno;
	if (pos >= 0)
		seekdir(d, pos);
	for (;;) {
		errno = 0;
		if (!readdir(d)) {
			if (errno)
				n = -errno;
			break;
		}
		if (++n > WALK_MAX_ENTRIES)
			break;
	}
	closedir(d);
	return n;
}

/*
 * The 4.17 seekdir fix: after seekdir() ext4 must rescan the block from
 * its start and resume at an entry boundary, never parse a dirent at an
 * arbitrary offset.  On a linear directory telldir() is the byte offset of
 * the next entry.  For each entry i, seekdir() into the middle of it
 * (offsets 1..7 and the middle of its name) must make the next readdir()
 * return entry i+1; an error or a garbage name is a failure.
 *
 * One exception, seen on 6.12 and the same in 4.17's code: inside the last
 * entry of a block the rescan ends at offset == blocksize, and
 * "pos & ~(bs - 1) | offset" then equals the start of the same block, so
 * readdir() starts that block again (entries are listed twice).  That is
 * still a valid entry, so it is accepted and counted in *rewinds.
 * Returns 0, an errno, or -1 (wrong entry, detail in *bad).
 */
static inline int op_seekdir(const char *path, char *bad, size_t badlen, int *rewinds)
{
	enum { MAX = 512 };
	static long pos[MAX];
	static char name[MAX][256];
	struct dirent *de;
	int n = 0, e = 0;
	DIR *d = opendir(path);

	struct stat st;
	long bs;

	if (!d)
		return errno;
	/* st_blksize of an ext4 directory is the file system block size. */
	bs = fstat(dirfd(d), &st) ? 1024 : st.st_blksize;
	for (;;) {
		long p = telldir(d);

		errno = 0;
		de = readdir(d);
		if (!de) {
			e = errno;
			break;
		}
		if (n == MAX)
			break;
		pos[n] = p;
		snprintf(name[n], sizeof(name[n]), "%s", de->d_name);
		n++;
	}
	for (int i = 0; !e && i + 1 < n; i++) {
		long len = pos[i + 1] - pos[i];

		/* Entries run back to back inside a block; skip block ends. */
		if (len <= 8 || len > 4096)
			continue;
		long offs[] = { 1, 2, 3, 4, 5, 6, 7, len / 2 };

		for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
			long off = offs[k];

			seekdir(d, pos[i] + off);
			errno = 0;
			de = readdir(d);
			/* The first entry of entry i's block, for the rewind case. */
			int first = i;

			while (first > 0 && pos[first - 1] >= (pos[i] & ~(bs - 1)))
				first--;
			if (de && pos[i + 1] % bs == 0 && pos[first] == (pos[i] & ~(bs - 1)) &&
			    !strcmp(de->d_name, name[first])) {
				(*rewinds)++;
				continue;
			}
			if (!de || strcmp(de->d_name, name[i + 1])) {
				if (!de && errno) {
					e = errno;
					break;
				}
				snprintf(bad, badlen, "seekdir(%ld+%ld) gave %.100s, not %.100s", pos[i], off,
					 de ? de->d_name : "the end", name[i + 1]);
				closedir(d);
				return -1;
			}
		}
	}
	closedir(d);
	if (!e && n < 3) {
		snprintf(bad, badlen, "only %d entries", n);
		return -1;
	}
	return e;
}

/*
 * The kernel log of one case (ext4ex) or one mutant (ext4mut).  The log has no text unique to a case
 * (CONFIG_PRINTK_TIME is off, every image has the same UUID and the loop
 * device is reused), so a case cannot find its start by searching for
 * text.  A /dev/kmsg descriptor keeps its own position in the sequence
 * of records instead: moved to the end when the case starts, it then
 * reads exactly the records logged since.
 */
static inline int klog_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The text of every record since klog_open(FD), one line each; malloc'ed,
 * NULL on a read error.  A record reads as "prio,seq,ts,flags;text\n"
 * then " KEY=value" lines, and only whole (one per read()).
 */
static inline char *klog_read(int fd)
{
	static char rec[8192 + 1]; /* the kernel's largest record: smaller is EINVAL */
	char *text = NULL, *semi;
	size_t len;
	FILE *m = open_memstream(&text, &len);
	ssize_t n;
	int err = 0;

	if (!m)
		return NULL;
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		/* EPIPE: records overwritten before we read them; reading goes on
		 * from the oldest one left. */
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0) {
			err = n < 0 && errno != EAGAIN; /* EAGAIN: no more records */
			break;
		}
		rec[n] = 0;
		semi = strchr(rec, ';');
		if (semi)
			fprintf(m, "%.*s\n", (int)strcspn(semi + 1, "\n"), semi + 1);
	}
	if (fclose(m) || err) {
		free(text);
		return NULL;
	}
	return text;
}

/* Attach IMG to a free loop device; returns the device fd, or -1. */
static inline int loop_attach(const char *img, char *dev, size_t devlen)
{
	struct loop_config cfg;
	int ctl, n, lfd, ffd;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -1;
	n = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (n < 0)
		return -1;
	snprintf(dev, devlen, "/dev/loop%d", n);
	/* Read-write, or the loop device itself becomes read-only. */
	lfd = open(dev, O_RDWR | O_CLOEXEC);
	ffd = open(img, O_RDWR | O_CLOEXEC);
	if (lfd < 0 || ffd < 0)
		return -1;
	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = ffd;
	if (ioctl(lfd, LOOP_CONFIGURE, &cfg)) {
		close(ffd);
		close(lfd);
		return -1;
	}
	/*
	 * Keep only a read-only descriptor (for LOOP_CLR_FD): with
	 * BLK_DEV_WRITE_MOUNTED off, a block device that someone holds open
	 * for writing cannot be mounted (EBUSY).
	 */
	close(lfd);
	lfd = open(dev, O_RDONLY | O_CLOEXEC);
	close(ffd);
	return lfd;
}

#endif
