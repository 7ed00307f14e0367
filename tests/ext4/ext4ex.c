// SPDX-License-Identifier: GPL-2.0
/*
 * ext4ex: mount an image and exercise it, printing one "op=RESULT" line
 * per operation, for tests/ext4/run to compare with an image's .exp.
 *
 *   ext4ex mount DEV DIR ro|rw OPTIONS   mount(2) ext4; prints mount=OK|ERRNO
 *   ext4ex case CORPUS NAME MODE WORK    the whole check of one image in one
 *                                        mode (rw|ro,errors=...): copy to
 *                                        WORK/cur.img, loop, mount, OPS,
 *                                        write, unmount, ext4_error count and
 *                                        kernel log against CORPUS/NAME.exp;
 *                                        exit 0 when all match, 1 otherwise
 *   ext4ex klogtest                      self-test of the per-case kernel log
 *                                        window; exit 0 when it holds only
 *                                        what was logged inside it
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
#include <stdarg.h>
#include <strings.h>
#include <sys/mount.h>
#include <time.h>
#include "exercise.h"

#define TRACE "/sys/kernel/tracing/trace"

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

/* Run one op; returns its result (static storage), prints diagnostics. */
static const char *do_op(const char *mnt, const char *op)
{
	const char *arg = strchr(op, ':');
	const char *res;
	char bad[512] = "";
	struct stat st;
	struct walk w;
	ssize_t n;

	if (!strcmp(op, "walk")) {
		res = errname(op_walk(mnt, &w));
		printf("# walk: %d entries, %d errors\n", w.entries, w.errors);
		return res;
	}
	if (!strcmp(op, "fsmap"))
		return errname(op_fsmap(mnt));
	if (!arg)
		return "BADOP";
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

		if (!c)
			return "BADOP";
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

		if (!c)
			return "BADOP";
		res = num_or_err(op_dirscan(at(mnt, arg, c - arg), atol(c + 1) * 1024));
	} else if (!strncmp(op, "seekdir:", 8)) {
		int rewinds = 0, e = op_seekdir(at(mnt, arg, strlen(arg)), bad, sizeof(bad), &rewinds);

		res = e < 0 ? "WRONG" : errname(e);
		if (rewinds)
			printf("# %s: %d seekdir()s into a block's last entry restarted that block\n",
			       op, rewinds);
	} else {
		return "BADOP";
	}
	if (*bad)
		printf("# %s: %s\n", op, bad);
	return res;
}


/* ---- "case": one crafted image in one mount mode, checked in-process ----
 * (tests/ext4/run used to do this in shell; under TCG each exec over 9p
 * costs ~0.1 s, and 100+ cases of ~25 execs took 7 minutes.)
 */

static char exp_desc[512], exp_rw[32], exp_ro[32], exp_msg[256], exp_ops[1024];
static char exp_errs[32], exp_mopts[128];
static int problems;

__attribute__((format(printf, 1, 2)))
static void problem(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	problems++;
}

/* Read NAME.exp: KEY=VALUE or KEY='VALUE' lines written by ext4corrupt. */
static int load_exp(const char *path)
{
	struct { const char *key; char *val; size_t len; } keys[] = {
		{ "DESC", exp_desc, sizeof(exp_desc) }, { "RW", exp_rw, sizeof(exp_rw) },
		{ "RO", exp_ro, sizeof(exp_ro) }, { "MSG", exp_msg, sizeof(exp_msg) },
		{ "OPS", exp_ops, sizeof(exp_ops) }, { "ERRS", exp_errs, sizeof(exp_errs) },
		{ "MOPTS", exp_mopts, sizeof(exp_mopts) },
	};
	char line[2048];
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '='), *v;
		size_t n;

		if (!eq)
			continue;
		*eq = 0;
		v = eq + 1;
		n = strcspn(v, "\n");
		v[n] = 0;
		if (*v == '\'' && n >= 2 && v[n - 1] == '\'') {
			v[n - 1] = 0;
			v++;
		}
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (!strcmp(line, keys[k].key))
				snprintf(keys[k].val, keys[k].len, "%s", v);
	}
	fclose(f);
	return 0;
}

static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n = -1;

	if (in >= 0 && out >= 0)
		while ((n = read(in, rbuf, sizeof(rbuf))) > 0)
			if (write(out, rbuf, n) != n) {
				n = -1;
				break;
			}
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out))
		n = -1;
	return n == 0 ? 0 : -1;
}

/*
 * "klogtest": the window of klog_open()/klog_read() must hold a line
 * logged inside it and none logged before.  Logged in order: R, A, R,
 * window opens, B, window closes.  The window must show B and not A.
 * The old window (the text after the first copy of the last line of the
 * log read at the start) failed this: that last line, "<12>R", also
 * precedes A and, without timestamps, matches it, so A was taken in.  The
 * cases' own last lines repeat the same way: each case ends with the same
 * unmount line (same UUID, same loop device) as the first case.
 */
static int klog_test(void)
{
	char r[80], a[80], b[80], *log;
	int out = open("/dev/kmsg", O_WRONLY | O_CLOEXEC), win, got_a, got_b;
	long tag = (long)time(NULL) * 100000 + getpid(); /* unique to this run */

	/* Each ends with a newline, as the kernel's own lines do: a record
	 * without one stays open for a continuation, and neither /dev/kmsg
	 * nor syslog(2) shows it until the next record closes it. */
	snprintf(r, sizeof(r), "lk417 klogtest %ld: repeated\n", tag);
	snprintf(a, sizeof(a), "lk417 klogtest %ld: before the window\n", tag);
	snprintf(b, sizeof(b), "lk417 klogtest %ld: inside the window\n", tag);
	if (out < 0 || write(out, r, strlen(r)) < 0 || write(out, a, strlen(a)) < 0 ||
	    write(out, r, strlen(r)) < 0) {
		printf("# klogtest: writing /dev/kmsg: %s\n", strerror(errno));
		return 1;
	}
	win = klog_open();
	if (win < 0 || write(out, b, strlen(b)) < 0 || !(log = klog_read(win))) {
		printf("# klogtest: /dev/kmsg: %s\n", strerror(errno));
		return 1;
	}
	got_a = strstr(log, a) != NULL;
	got_b = strstr(log, b) != NULL;
	printf("# klogtest: window holds the line logged inside it: got %s, want yes\n"
	       "# klogtest: window holds the line logged before it: got %s, want no\n",
	       got_b ? "yes" : "no", got_a ? "yes" : "no");
	if (!got_b || got_a) {
		printf("# klogtest: the window read:\n");
		for (char *p = log, *nl; *p; p = nl + 1) {
			nl = strchrnul(p, '\n');
			printf("#   %.*s\n", (int)(nl - p), p);
			if (!*nl)
				break;
		}
	}
	free(log);
	close(win);
	close(out);
	return got_b && !got_a ? 0 : 1;
}

static int trace_count(void)
{
	static char buf[1 << 16];
	int fd = open(TRACE, O_RDONLY), count = 0;
	ssize_t n;
	size_t have = 0;

	if (fd < 0)
		return -1;
	/* Count across reads; keep a tail so a match split by reads is seen. */
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		char *p;

		have += n;
		buf[have] = 0;
		for (p = buf; (p = strstr(p, " ext4_error: ")); p++)
			count++;
		if (have > 32) {
			/* Matches in the kept tail were counted; drop them. */
			memmove(buf, buf + have - 12, 12);
			have = 12;
		}
	}
	close(fd);
	return count;
}

/*
 * The expectations are those of errors=continue.  A rw mount with
 * errors=remount-ro is shut down by 6.12 at the first error: that op
 * keeps its errno, later ops give their usual result or EIO (those that
 * check for a shutdown), writes fail with EIO, and only the first error
 * is traced.
 */
static int run_case(const char *corpus, const char *name, const char *mode, const char *work)
{
	char path[4096], img[4096], dev[64], opts[256], *ops, *save = NULL, *tok;
	int rw = !strncmp(mode, "rw,", 3), shut, down = 0, lfd, kfd, nerr, want_n, atleast;
	const char *want, *got;
	char errs[32], *log;

	snprintf(path, sizeof(path), "%s/%s.exp", corpus, name);
	if (load_exp(path)) {
		problem("no %s", path);
		return 1;
	}
	want = rw ? exp_rw : exp_ro;
	/* ERRS: "N", "N+" (at least N) or "RW/RO", each part of those forms. */
	snprintf(errs, sizeof(errs), "%s", !rw && strchr(exp_errs, '/') ?
		 strchr(exp_errs, '/') + 1 : exp_errs);
	errs[strcspn(errs, "/")] = 0;
	want_n = atoi(errs);
	atleast = strchr(errs, '+') != NULL;
	shut = rw && strstr(mode, "errors=remount-ro");
	snprintf(opts, sizeof(opts), "%s%s%s", mode + 3, *exp_mopts ? "," : "", exp_mopts);

	snprintf(path, sizeof(path), "%s/%s.img", corpus, name);
	snprintf(img, sizeof(img), "%s/cur.img", work);
	if (copy_file(path, img)) {
		problem("cannot copy %s", path);
		return 1;
	}
	kfd = klog_open();
	if (kfd < 0) {
		problem("/dev/kmsg: %s", strerror(errno));
		return 1;
	}
	close(open(TRACE, O_WRONLY | O_TRUNC));
	lfd = loop_attach(img, dev, sizeof(dev));
	if (lfd < 0) {
		problem("loop device: %s", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/mnt", work);
	got = errname(mount(dev, path, "ext4", rw ? 0 : MS_RDONLY, opts) ? errno : 0);
	if (strcasecmp(got, want))
		problem("mount: got %s, want %s", got, want);
	if (!strcmp(got, "OK")) {
		ops = strdup(exp_ops);
		for (tok = strtok_r(ops, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			char *eq = strrchr(tok, '=');
			const char *act;

			if (!eq)
				continue;
			*eq = 0;
			act = do_op(path, tok);
			if (down && !strcmp(act, "EIO"))
				continue;
			if (strcmp(act, eq + 1))
				problem("%s: got %s, want %s", tok, act, eq + 1);
			/* The first traced error shuts a rw,errors=remount-ro mount down. */
			if (shut && trace_count() > 0)
				down = 1;
		}
		free(ops);
		if (rw) {
			/* A writable mount takes a new file unless it was shut down. */
			char f[4200];
			const char *act;

			snprintf(f, sizeof(f), "%s/lk417-new", path);
			act = errname(op_write(f));
			if (strcmp(act, down ? "EIO" : "OK"))
				problem("write: got %s, want %s", act, down ? "EIO" : "OK");
		}
		if (umount2(path, 0))
			problem("umount: %s", strerror(errno));
	}
	if (ioctl(lfd, LOOP_CLR_FD, 0))
		problem("LOOP_CLR_FD: %s", strerror(errno));
	close(lfd);
	nerr = trace_count();
	if (down) {
		want_n = 1;
		atleast = 0;
	}
	if (atleast ? nerr < want_n : nerr != want_n)
		problem("ext4_error events: %d, want %s%d", nerr, atleast ? "at least " : "", want_n);
	log = klog_read(kfd);
	close(kfd);
	if (!log)
		problem("reading /dev/kmsg: %s", strerror(errno));
	else if (*exp_msg && !strstr(log, exp_msg))
		problem("kernel log lacks: %s", exp_msg);
	if (log && down && !strstr(log, "Remounting filesystem read-only"))
		problem("kernel log lacks: Remounting filesystem read-only");
	free(log);
	printf("# %s [%s]: %d ext4_error event(s)%s\n", name, mode, nerr, problems ? "" : ", as expected");
	return problems ? 1 : 0;
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
			printf("%s=%s\n", argv[i], do_op(argv[2], argv[i]));
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "case"))
		return run_case(argv[2], argv[3], argv[4], argv[5]);
	if (argc == 2 && !strcmp(argv[1], "klogtest"))
		return klog_test();
	fprintf(stderr, "usage: ext4ex mount DEV DIR ro|rw OPTIONS | ops MNT OP... |\n"
		"       case CORPUS NAME MODE WORKDIR | klogtest\n");
	return 2;
}
